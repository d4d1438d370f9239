import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Config from "../../../src/domain/tool/Config.ts"
import * as ToolEnv from "../../../src/domain/tool/ToolEnv.ts"

const TOKEN = "cluster-token-0123456789abcdef0123456789abcdef"
const parent = {
  PATH: "/usr/bin:/bin",
  HOME: "/home/me",
  ANTHROPIC_API_KEY: "sk-ant-1",
  PARLEY_TOKEN: TOKEN,
  PARLEY_STORAGE: "/p/.parley",
  PARLEY_ANNOUNCE: "/p/.parley/run/.announce-1",
  COPY_OF_TOKEN: `Bearer ${TOKEN}`,
  UNSET: undefined
}
const made = (setting: ToolEnv.Setting) => Result.getOrThrow(ToolEnv.forTool(parent, setting))

const problems = (tools: Record<string, unknown>, rest: Record<string, unknown> = {}) => {
  const r = Config.decode({ ...rest, conversation: { tools } })
  return Result.isFailure(r) ? r.failure.map((i) => `${Config.formatPath(i.path)}: ${i.message}`) : []
}

describe("ToolEnv.forTool", () => {
  it("inherit: parley's environment less PARLEY_* and anything carrying the token's value", () => {
    expect(made(ToolEnv.inherit)).toStrictEqual({
      PATH: "/usr/bin:/bin",
      HOME: "/home/me",
      ANTHROPIC_API_KEY: "sk-ant-1"
    })
  })

  it("clear: exactly env_keep (those set) and env_set; PARLEY_* never, even when named", () => {
    expect(
      made({ mode: "clear", keep: ["PATH", "UNSET", "NOT_THERE", "PARLEY_TOKEN", "COPY_OF_TOKEN"], set: { A: "1" } })
    ).toStrictEqual({ PATH: "/usr/bin:/bin", A: "1" })
    expect(made({ mode: "clear", keep: [], set: {} })).toStrictEqual({})
  })

  it("env_set: set last, ${env:NAME} expanded; a missing or parley's variable fails naming the key", () => {
    expect(
      made({ mode: "inherit", keep: [], set: { HOME: "/elsewhere", KEY: "x-${env:ANTHROPIC_API_KEY}" } })
    ).toStrictEqual({
      PATH: "/usr/bin:/bin",
      HOME: "/elsewhere",
      ANTHROPIC_API_KEY: "sk-ant-1",
      KEY: "x-sk-ant-1"
    })
    expect(ToolEnv.forTool(parent, { mode: "clear", keep: [], set: { K: "${env:NOPE}" } })).toStrictEqual(
      Result.fail({ key: "K", name: "NOPE" })
    )
    expect(ToolEnv.forTool(parent, { mode: "clear", keep: [], set: { K: "${env:PARLEY_TOKEN}" } })).toStrictEqual(
      Result.fail({ key: "K", name: "PARLEY_TOKEN" })
    )
  })

  it("a short PARLEY_TOKEN is not searched for in other values (it would match unrelated text)", () => {
    const env = Result.getOrThrow(ToolEnv.forTool({ PARLEY_TOKEN: "ab", X: "cabd" }, ToolEnv.inherit))
    expect(env).toStrictEqual({ X: "cabd" })
  })
})

describe("ToolEnv.withoutToken (serve's runs)", () => {
  it("drops $PARLEY_TOKEN and every variable carrying its value, keeps the rest of parley's variables", () => {
    const token = "k".repeat(40)
    const env = { PATH: "/usr/bin", PARLEY_TOKEN: token, PARLEY_STORAGE: "/s", COPY: `x${token}y`, EMPTY: undefined }
    expect(ToolEnv.withoutToken(env)).toStrictEqual({ PATH: "/usr/bin", PARLEY_STORAGE: "/s" })
  })
})

describe("config: env, env_keep, env_set", () => {
  it("loads and resolves per key: the tool's own, else '*', else inherit", () => {
    const r = Config.decode({
      conversation: {
        tools: {
          "*": { env: "clear", env_keep: ["PATH"] },
          a: { command: "a", env_keep: ["HOME"], env_set: { X: "1" } },
          b: { command: "b", env: "inherit" },
          c: { command: "c" }
        }
      }
    })
    const config = Result.getOrThrow(r)
    expect(Config.toolEnv(config, "a")).toStrictEqual({ mode: "clear", keep: ["HOME"], set: { X: "1" } })
    expect(Config.toolEnv(config, "b")).toStrictEqual({ mode: "inherit", keep: ["PATH"], set: {} })
    expect(Config.toolEnv(config, "c")).toStrictEqual({ mode: "clear", keep: ["PATH"], set: {} })
    expect(Config.toolEnv({}, "d")).toStrictEqual(ToolEnv.inherit)
  })

  it("bad values name the tool and the field", () => {
    expect(
      problems({
        t: { command: "t", env: "foo", env_keep: "PATH", env_set: { A: 3 } },
        u: { command: "u", env: "clear", env_keep: ["PATH", 7, "1BAD"] },
        v: { command: "v", env_set: ["A=1"] }
      })
    ).toStrictEqual([
      'conversation.tools.t.env: expected "inherit" | "clear", got "foo"',
      'conversation.tools.t.env_keep: expected array, got "PATH"',
      "conversation.tools.t.env_set.A: expected string, got 3",
      "conversation.tools.u.env_keep[1]: expected string, got 7",
      'conversation.tools.u.env_keep[2]: expected a variable name (letters, digits and _, not starting with a digit), got "1BAD"',
      'conversation.tools.v.env_set: expected a table, got ["A=1"]'
    ])
  })

  it("PARLEY_* in env_keep or env_set, and ${env:PARLEY_…} anywhere, are config errors naming tool and key", () => {
    const found = problems(
      {
        t: {
          command: "t",
          env: "clear",
          env_keep: ["PATH", "PARLEY_TOKEN"],
          env_set: { PARLEY_STORAGE: "/x", OK: "${env:PARLEY_TOKEN}", "bad name": "1" }
        }
      },
      {
        mcp: {
          servers: {
            s: { command: "node", env: { T: "${env:PARLEY_TOKEN}" } },
            h: { url: "http://127.0.0.1:1/mcp", headers: { Authorization: "Bearer ${env:PARLEY_TOKEN}" } }
          }
        },
        assistant: { system_prompt: "${env:PARLEY_STORAGE}" }
      }
    )
    expect(found).toStrictEqual([
      "mcp.servers.s.env.T: ${env:PARLEY_TOKEN} names parley's own variable: parley never passes PARLEY_* variables to a tool or an MCP server (see docs/security.md)",
      "mcp.servers.h.headers.Authorization: ${env:PARLEY_TOKEN} names parley's own variable: parley never passes PARLEY_* variables to a tool or an MCP server (see docs/security.md)",
      "assistant.system_prompt: ${env:PARLEY_STORAGE} names parley's own variable: parley never passes PARLEY_* variables to a tool or an MCP server (see docs/security.md)",
      "conversation.tools.t.env_set.OK: ${env:PARLEY_TOKEN} names parley's own variable: parley never passes PARLEY_* variables to a tool or an MCP server (see docs/security.md)",
      "conversation.tools.t.env_keep[1]: PARLEY_TOKEN is parley's own variable: local tools never receive PARLEY_* variables (see docs/security.md)",
      "conversation.tools.t.env_set.PARLEY_STORAGE: PARLEY_STORAGE is parley's own variable: local tools never receive PARLEY_* variables (see docs/security.md)",
      'conversation.tools.t.env_set."bad name": expected a variable name (letters, digits and _, not starting with a digit)'
    ])
  })

  it('env_keep needs env = "clear"; only local tools have the keys', () => {
    expect(
      problems(
        {
          a: { command: "a", env_keep: ["PATH"] },
          b: { env: "clear" },
          m: { source: "mcp.s", env_set: { A: "1" } }
        },
        { mcp: { servers: { s: { command: "node" } } } }
      )
    ).toStrictEqual([
      'conversation.tools.a.env_keep: needs env = "clear" (with env = "inherit" a tool already gets every variable but parley\'s own)',
      "conversation.tools.b.env: only a local tool (one with a command) has env; without one this is a built-in tool, which runs inside parley and starts no process, or an MCP server's, which runs with its server's environment ([mcp.servers.NAME] env)",
      "conversation.tools.m.env_set: only a local tool (one with a command) has env_set; an MCP tool runs with its server's environment ([mcp.servers.NAME] env)"
    ])
    expect(problems({ write_file: { source: "builtin", env: "clear" } })).toStrictEqual([
      "conversation.tools.write_file.env: only a local tool (one with a command) has env; a built-in tool runs inside parley and starts no process"
    ])
  })

  it('env_keep under "*" that no tool uses (nothing says env = "clear") is an error; one a clearing tool takes is not', () => {
    expect(problems({ "*": { env_keep: ["PATH"] }, a: { command: "a" } })).toStrictEqual([
      'conversation.tools."*".env_keep: needs env = "clear" here or in a local tool without its own env_keep (with env = "inherit" a tool already gets every variable but parley\'s own)'
    ])
    // A clearing tool with its own env_keep does not take the default either.
    expect(
      problems({ "*": { env_keep: ["PATH"] }, a: { command: "a", env: "clear", env_keep: ["HOME"] } })
    ).toHaveLength(1)
    expect(problems({ "*": { env_keep: ["PATH"] }, a: { command: "a", env: "clear" } })).toStrictEqual([])
    expect(problems({ "*": { env: "clear", env_keep: ["PATH"] }, a: { command: "a" } })).toStrictEqual([])
    const config = Result.getOrThrow(
      Config.decode({ conversation: { tools: { "*": { env_keep: ["PATH"] }, a: { command: "a", env: "clear" } } } })
    )
    expect(Config.toolEnv(config, "a")).toStrictEqual({ mode: "clear", keep: ["PATH"], set: {} })
  })
})
