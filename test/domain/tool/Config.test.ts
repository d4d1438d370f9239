import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Config from "../../../src/domain/tool/Config.ts"

const ok = (input: unknown) => {
  const r = Config.decode(input)
  if (Result.isFailure(r)) throw new Error(JSON.stringify(r.failure))
  return r.success
}
const problems = (input: unknown) => {
  const r = Config.decode(input)
  if (Result.isSuccess(r)) throw new Error("expected config problems")
  return r.failure.map((i) => `${Config.formatPath(i.path)}: ${i.message}`)
}

// contract.md §5, as smol-toml parses it.
const contractExample = {
  assistant: { model: "anthropic/claude-sonnet-4-5", system_prompt: "You are a helpful assistant." },
  providers: { openai: { base_url: "http://127.0.0.1:11434/v1" } },
  conversation: {
    inquiry: { assistant: { model: "openai/gpt-5-mini" } },
    tools: {
      write_note: {
        source: "local",
        command: "python3 tools/write_note.py",
        description: "Write a note to a file.",
        parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
        run: "unattended",
        questions: { overwrite: { target: "user", answer: true } }
      }
    }
  }
}

describe("Config.decode", () => {
  it("accepts the contract example unchanged", () => {
    expect(ok(contractExample)).toStrictEqual(contractExample)
  })

  it("accepts an empty document and ignores keys parley does not know", () => {
    expect(ok({})).toStrictEqual({})
    expect(ok({ style: { code: { theme: "x" } }, conversation: { title: { generate: true } } })).toStrictEqual({
      conversation: {}
    })
  })

  it("reads JP's table form of a model id", () => {
    expect(
      ok({ assistant: { model: { id: { provider: "anthropic", name: "claude-haiku-4-5" }, parameters: {} } } })
    ).toStrictEqual({
      assistant: { model: "anthropic/claude-haiku-4-5" }
    })
    expect(ok({ conversation: { inquiry: { assistant: { model: { id: "openai/gpt-5-mini" } } } } })).toStrictEqual({
      conversation: { inquiry: { assistant: { model: "openai/gpt-5-mini" } } }
    })
  })

  it("draft D16 [server.web]: bind and port decode; a bad port or an empty bind names its key", () => {
    expect(Config.decode({ server: { web: { bind: "0.0.0.0", port: 0 } } })).toStrictEqual(
      Result.succeed({ server: { web: { bind: "0.0.0.0", port: 0 } } })
    )
    expect(problems({ server: { web: { bind: "", port: "x" } } })).toStrictEqual([
      `server.web.bind: expected a value with a length of at least 1, got ""`,
      `server.web.port: expected number, got "x"`
    ])
    expect(problems({ server: { web: { port: 65536 } } })).toStrictEqual([
      "server.web.port: expected a port number from 0 to 65535, got 65536"
    ])
  })

  it("names the key path, what was expected and what was found", () => {
    expect(problems({ conversation: { tools: { write_note: { command: "x", run: "sometimes" } } } })).toStrictEqual([
      `conversation.tools.write_note.run: expected "ask" | "edit" | "unattended" | "skip", got "sometimes"`
    ])
    expect(
      problems({
        assistant: { model: 5 },
        providers: { openai: "http://x" },
        conversation: { tools: { t: { command: "x", timeout_ms: 0, questions: { q: { target: "bot" } } } } }
      })
    ).toStrictEqual([
      `assistant.model: expected a model name such as "anthropic/claude-sonnet-4-5", got 5`,
      `providers.openai: expected a table, got "http://x"`,
      `conversation.tools.t.timeout_ms: expected a value greater than 0, got 0`,
      `conversation.tools.t.questions.q.target: expected "user" | "assistant", got "bot"`
    ])
  })

  it("rejects any attempt to configure the inquiry source", () => {
    const message =
      "the inquiry source cannot be configured: it is decided by the tool kind (local tools always ask as tool{name})"
    expect(
      problems({
        conversation: {
          tools: {
            note: {
              command: "x",
              inquiry_source: "assistant",
              questions: { q: { target: "assistant", inquiry_source: { source: "assistant" } } }
            }
          }
        }
      })
    ).toStrictEqual([
      `conversation.tools.note.inquiry_source: ${message}`,
      `conversation.tools.note.questions.q.inquiry_source: ${message}`
    ])
    // `source` is the tool kind, so an inquiry-source value there is just invalid.
    expect(problems({ conversation: { tools: { note: { source: "assistant", command: "x" } } } })).toStrictEqual([
      `conversation.tools.note.source: expected "local", "builtin" or "mcp.NAME" (NAME a server under [mcp.servers]), got "assistant"`
    ])
  })

  it("checks what a schema cannot: local tools need a command, question ids are valid", () => {
    expect(
      problems({
        conversation: {
          tools: {
            a: { source: "local" },
            b: { source: "builtin", command: "x" },
            "c.d": { command: "x", questions: { "x.y": {} } }
          }
        }
      })
    ).toStrictEqual([
      `conversation.tools.a.command: missing (required for source = "local")`,
      `conversation.tools.b.command: only a local tool has a command (source is "builtin")`,
      `conversation.tools."c.d".questions."x.y": question ids must not contain '.'`
    ])
  })

  it("rejects values TOML can hold but JSON cannot, in parameters and answers", () => {
    expect(
      problems({ conversation: { tools: { t: { command: "x", questions: { q: { answer: new Date(0) } } } } } })
    ).toStrictEqual([
      `conversation.tools.t.questions.q.answer: expected JSON value, got a date (1970-01-01T00:00:00.000Z)`
    ])
  })
})

describe("Config lookups", () => {
  const config = ok({
    conversation: {
      tools: {
        "*": { run: "ask" },
        write_note: {
          command: "x",
          run: "unattended",
          questions: { overwrite: { target: "assistant", answer: false }, other: {} }
        },
        read_file: { description: "custom" }
      }
    }
  })

  it("run mode: the tool's, else the `*` default, else the fallback", () => {
    expect(Config.runMode(config, "write_note", "skip")).toBe("unattended")
    expect(Config.runMode(config, "read_file", "skip")).toBe("ask")
    expect(Config.runMode({}, "read_file", "unattended")).toBe("unattended")
  })

  it("tool kind: source, else local with a command, else builtin; `*` is not a tool", () => {
    expect(Config.configuredTools(config).map(([name, t]) => [name, Config.toolKind(t)])).toStrictEqual([
      ["write_note", "local"],
      ["read_file", "builtin"]
    ])
    expect(Config.toolConfig(config, "*")).toBeUndefined()
  })

  it("tool limits: the tool's, else the `*` default, else 10 minutes and 1 MiB", () => {
    const limited = ok({
      conversation: {
        tools: {
          "*": { max_output_bytes: 5000 },
          a: { command: "x", timeout_ms: 100 },
          b: { command: "y", max_output_bytes: 7 }
        }
      }
    })
    expect(Config.toolLimits(limited, "a")).toStrictEqual({ timeoutMs: 100, maxOutputBytes: 5000 })
    expect(Config.toolLimits(limited, "b")).toStrictEqual({ timeoutMs: 600_000, maxOutputBytes: 7 })
    expect(Config.toolLimits({}, "c")).toStrictEqual({
      timeoutMs: Config.DEFAULT_TIMEOUT_MS,
      maxOutputBytes: Config.DEFAULT_MAX_OUTPUT_BYTES
    })
    expect([Config.DEFAULT_TIMEOUT_MS, Config.DEFAULT_MAX_OUTPUT_BYTES]).toStrictEqual([600_000, 1_048_576])
    expect(problems({ conversation: { tools: { a: { command: "x", max_output_bytes: 1.5 } } } })).toStrictEqual([
      "conversation.tools.a.max_output_bytes: expected an integer, got 1.5"
    ])
  })

  it("question target defaults to user; static answers are returned as configured", () => {
    expect(Config.questionTarget(config, "write_note", "overwrite")).toBe("assistant")
    expect(Config.questionTarget(config, "write_note", "other")).toBe("user")
    expect(Config.questionTarget(config, "nope", "x")).toBe("user")
    expect(Config.staticAnswer(config, "write_note", "overwrite")).toBe(false)
    expect(Config.staticAnswer(config, "write_note", "other")).toBeUndefined()
  })
})

// MCP servers (docs/mcp.md): [mcp.servers.NAME] and tools pinned with source = "mcp.NAME".
describe("Config: MCP servers", () => {
  const servers = {
    everything: { command: "node", args: ["server.js", "stdio"], env: { KEY: "value" } },
    remote: { url: "http://127.0.0.1:3000/mcp", headers: { Authorization: "Bearer x" } },
    off: { url: "http://127.0.0.1:1/mcp", enable: false }
  }

  it("accepts the contract example, tools pinned to a server, and lists enabled servers in file order", () => {
    const input = {
      mcp: { servers },
      conversation: {
        tools: {
          echo: { source: "mcp.everything", run: "unattended", questions: { name: { answer: "Ada" } } },
          "get-sum": { run: "skip" }
        }
      }
    }
    const config = ok(input)
    expect(config).toStrictEqual(input)
    expect(Config.mcpServers(config).map(([name]) => name)).toStrictEqual(["everything", "remote"])
    expect(Config.pinnedServer(Config.toolConfig(config, "echo"))).toBe("everything")
    expect(Config.pinnedServer(Config.toolConfig(config, "get-sum"))).toBeUndefined()
    expect(Config.configuredTools(config).map(([name, t]) => [name, Config.toolKind(t)])).toStrictEqual([
      ["echo", "mcp"],
      ["get-sum", "builtin"]
    ])
  })

  it("a server has exactly one of command and url, and only that kind's keys", () => {
    expect(
      problems({
        mcp: {
          servers: {
            both: { command: "x", url: "http://a/mcp" },
            none: { args: ["x"] },
            stdio: { command: "x", headers: {} },
            http: { url: "ftp://a", env: {}, cwd: "." },
            "a.b": { command: "x" },
            typed: { command: 5, args: "x", startup_timeout_ms: 0 }
          }
        }
      })
    ).toStrictEqual([
      "mcp.servers.typed.command: expected string, got 5",
      'mcp.servers.typed.args: expected array, got "x"',
      "mcp.servers.typed.startup_timeout_ms: expected a value greater than 0, got 0",
      "mcp.servers.both: set either command (a stdio server parley starts) or url (a streamable HTTP server), not both",
      "mcp.servers.none: missing command (a stdio server parley starts) or url (a streamable HTTP server)",
      "mcp.servers.stdio.headers: only an HTTP server (url) has headers",
      "mcp.servers.http.env: only a stdio server (command) has env",
      "mcp.servers.http.cwd: only a stdio server (command) has cwd",
      'mcp.servers.http.url: expected an http:// or https:// URL, got "ftp://a"',
      "mcp.servers.\"a.b\": a server name may only hold letters, digits, '_' and '-' (it is written source = \"mcp.NAME\")"
    ])
  })

  it("source is local, builtin or mcp.NAME of a configured server; an MCP tool has no command or parameters", () => {
    expect(
      problems({
        mcp: { servers: { everything: servers.everything } },
        conversation: {
          tools: {
            a: { source: "remote" },
            b: { source: "mcp.nope" },
            c: { source: "mcp.everything", command: "x", parameters: {} }
          }
        }
      })
    ).toStrictEqual([
      'conversation.tools.a.source: expected "local", "builtin" or "mcp.NAME" (NAME a server under [mcp.servers]), got "remote"',
      'conversation.tools.b.source: there is no MCP server named "nope" (configure it under [mcp.servers.nope]; configured: everything)',
      "conversation.tools.c.command: an MCP tool has no command of its own: its server provides it",
      "conversation.tools.c.parameters: an MCP tool has no parameters of its own: its server provides it"
    ])
  })
})

describe("RFD 034: inquiry assistant config and per-question targets", () => {
  it("a target table is the assistant with overrides; JP's model.id form reads as provider/model", () => {
    const config = Result.getOrThrow(
      Config.decode({
        conversation: {
          inquiry: {
            assistant: {
              model: { id: "anthropic/haiku" },
              system_prompt: "Short.",
              request: { max_response_bytes: 4096, cache: "10m" }
            }
          },
          tools: { t: { questions: { q: { target: { model: { id: "openai/small" } } }, u: { target: "user" } } } }
        }
      })
    )
    expect(Config.questionTarget(config, "t", "q")).toBe("assistant")
    expect(Config.questionAssistant(config, "t", "q")).toStrictEqual({ model: "openai/small" })
    expect(Config.questionTarget(config, "t", "u")).toBe("user")
    expect(Config.questionAssistant(config, "t", "u")).toBeUndefined()
    expect(
      Config.mergeAssistant(Config.questionAssistant(config, "t", "q"), config.conversation?.inquiry?.assistant)
    ).toStrictEqual({
      model: "openai/small",
      system_prompt: "Short.",
      request: { max_response_bytes: 4096, cache: "10m" }
    })
  })

  it("a bad value in the table is a config error naming it; an unknown key is a warning naming it (the config loads)", () => {
    // The dotted key and every allowed value, whatever the wrong value is (a string got only the three words).
    const allowed = 'expected true, false, "off", "short", "long" or a duration such as "10m"'
    expect(
      problems({
        conversation: { tools: { t: { questions: { q: { target: { request: { cache: "sometimes" } } } } } } }
      })
    ).toStrictEqual([`conversation.tools.t.questions.q.target.request.cache: ${allowed}, got "sometimes"`])
    expect(problems({ conversation: { inquiry: { assistant: { request: { cache: "10x" } } } } })).toStrictEqual([
      `conversation.inquiry.assistant.request.cache: ${allowed}, got "10x"`
    ])
    expect(problems({ conversation: { inquiry: { assistant: { request: { cache: 5 } } } } })).toStrictEqual([
      `conversation.inquiry.assistant.request.cache: ${allowed}, got 5`
    ])
    expect(
      ok({ conversation: { inquiry: { assistant: { request: { cache: "long" } } } } }).conversation?.inquiry?.assistant
        ?.request?.cache
    ).toBe("long")
    expect(
      ok({ conversation: { inquiry: { assistant: { request: { cache: false } } } } }).conversation?.inquiry?.assistant
        ?.request?.cache
    ).toBe(false)
    expect(
      ok({ conversation: { inquiry: { assistant: { request: { cache: "1.5h" } } } } }).conversation?.inquiry?.assistant
        ?.request?.cache
    ).toBe("1.5h")
    const input = {
      conversation: {
        inquiry: {
          assistant: {
            model: { id: "a/b", parameters: { temperature: 0 } },
            tool_choice: "none",
            request: { cache: true, retries: 3 }
          }
        },
        tools: { t: { questions: { q: { target: { name: "helper" } } } } }
      }
    }
    expect(Result.isSuccess(Config.decode(input))).toBe(true)
    expect(Config.warnings(input).map((w) => Config.formatPath(w.path))).toStrictEqual([
      "conversation.inquiry.assistant.model.parameters",
      "conversation.inquiry.assistant.tool_choice",
      "conversation.inquiry.assistant.request.retries",
      "conversation.tools.t.questions.q.target.name"
    ])
  })
})
