// The CLI's words (docs/cli.md#status-lines) from outside, without a terminal (the built binary): usage errors
// are short and on stderr, a failing command creates no directory, `query
// --format json` prints one document, the conversation remembers its model,
// and the resume command parley prints works when pasted into a shell.
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { binary, runParley } from "../support/Cli.ts"
import * as FakeLlmServer from "../support/FakeLlmServer.ts"
import { tempDir } from "../support/Fixtures.ts"
import {
  conversationDir,
  conversationIdOf,
  exited,
  killGroup,
  makeProject,
  parley,
  persisted,
  type Project,
  waitFor,
  waitForLines,
  writeScript
} from "../support/Project.ts"

const dirs: Array<string> = []
const groups: Array<number> = []
const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  for (const g of groups.splice(0)) killGroup(g)
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})

const project = (): Project => {
  const p = makeProject()
  dirs.push(p.root)
  return p
}

const lines = (text: string) =>
  text
    .trimEnd()
    .split("\n")
    .filter((l) => l !== "")

describe("usage errors and arguments (built binary, no TTY)", () => {
  it("an unknown flag: exit 2, nothing on stdout, what is wrong and where to look on stderr", () => {
    const r = runParley(["query", "--no-such-flag"], { env: { PARLEY_STORAGE: undefined } })
    expect(r.code).toBe(2)
    expect(r.stdout).toBe("")
    expect(lines(r.stderr)).toStrictEqual([
      "parley: unrecognized flag --no-such-flag for `parley query`",
      "Run `parley query --help` for usage."
    ])
    const typo = runParley(["query", "--neww", "x"])
    expect(typo.code).toBe(2)
    expect(lines(typo.stderr)[0]).toBe("parley: unrecognized flag --neww for `parley query` (did you mean --new?)")
    const missing = runParley(["conversation"])
    expect(missing.code).toBe(2)
    expect(missing.stdout).toBe("")
    expect(lines(missing.stderr)).toStrictEqual([
      "parley: `parley conversation` needs a subcommand: ls, print, check, fork, answer, attach, send, kill, compact, export, import",
      "Run `parley conversation --help` for usage."
    ])
    // --help is asked for: the whole help, on stdout.
    const help = runParley(["query", "--help"])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain("--continue-turn")
  })

  it("conflicting flags and a malformed id are usage errors with the same hint", () => {
    for (const args of [
      ["query", "hi", "--new", "--id", "17000000001"],
      ["query", "--continue-turn", "--discard-turn"],
      ["query", "hi", "--id", "bogus"]
    ]) {
      const r = runParley(args)
      expect(r.code).toBe(2)
      expect(r.stdout).toBe("")
      expect(lines(r.stderr)).toHaveLength(2)
      expect(lines(r.stderr)[1]).toBe("Run `parley query --help` for usage.")
    }
  })

  it("a bad --model or a malformed id or time of a conversation command: two lines, the second where to look, exit 2", () => {
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [["query", "hi", "--model", "nope/x"], "Run `parley query --help` for usage."],
      [["query", "hi", "--model", "scripted"], "Run `parley query --help` for usage."],
      [["conversation", "print", "abc"], "Run `parley conversation print --help` for usage."],
      [["conversation", "check", "abc"], "Run `parley conversation check --help` for usage."],
      [
        ["conversation", "fork", "17000000001", "--until", "tomorrow"],
        "Run `parley conversation fork --help` for usage."
      ]
    ]
    for (const [args, hint] of cases) {
      const r = runParley(args, { env: { PARLEY_SCRIPT: undefined } })
      expect([r.code, r.stdout], args.join(" ")).toStrictEqual([2, ""])
      expect(lines(r.stderr), args.join(" ")).toHaveLength(2)
      expect(lines(r.stderr)[1], args.join(" ")).toBe(hint)
    }
  })

  it("a command that fails on its arguments creates no directory", () => {
    const cwd = tempDir("parley-nodir-")
    dirs.push(cwd)
    const env = { PARLEY_STORAGE: undefined, PARLEY_SCRIPT: undefined }
    const script = path.join(cwd, "s.json")
    fs.writeFileSync(script, JSON.stringify({ steps: [{ message: "x" }] }))
    const cases = [
      ["query", "hi", "--id", "17000000001", "--model", "scripted", "--script", script], // no such conversation
      ["query", "hi", "--id", "bogus"],
      ["query", "hi", "--model", "nope/x"],
      ["query", "hi"], // no model chosen
      ["query", "--no-such-flag"],
      ["conversation", "print", "17000000001"],
      ["conversation", "fork", "17000000001"]
    ]
    for (const args of cases) {
      const r = runParley(args, { cwd, env })
      expect(r.code, args.join(" ")).not.toBe(0)
      expect(fs.readdirSync(cwd), args.join(" ")).toStrictEqual(["s.json"])
    }
  })
})

describe("hostile text on stderr (built binary)", () => {
  it("a provider's error text is printed with its escape sequences made visible", () => {
    const p = project()
    const r = parley(p, [
      "query",
      "Hi",
      "--script",
      writeScript(p, "s.json", [{ error: "down\u001b]0;pwned\u0007\u001b[2J now" }])
    ])
    expect(r.code).toBe(1)
    expect(r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/)
    expect(r.stderr).toContain("down␛]0;pwned␇␛[2J now")
  })
})

describe("query --format json (built binary)", () => {
  it("prints one JSON document with the id, the reply, the stop reason, the calls and who answered; the id is on stderr too", () => {
    const p = project()
    fs.writeFileSync(path.join(p.root, "a.txt"), "old")
    const script = writeScript(p, "s.json", [
      {
        message: "Writing.",
        tool_calls: [{ id: "call_1", name: "write_note", arguments: { path: "a.txt", text: "new" } }]
      },
      { structured: { answer: true } },
      { message: "Done." }
    ])
    const r = parley(p, ["query", "Write it", "--new", "--format", "json", "--script", script])
    expect(r.code).toBe(0)
    const doc = JSON.parse(r.stdout) as Record<string, unknown>
    const id = conversationIdOf(p)
    expect(r.stderr).toBe(`conversation ${id} (new)\n`)
    expect(doc).toStrictEqual({
      conversation_id: id,
      created: true,
      model: "scripted",
      outcome: "completed",
      reply: "Writing.\nDone.",
      stop_reason: "end_turn",
      tool_calls: [
        {
          id: "call_1",
          name: "write_note",
          arguments: { path: "a.txt", text: "new" },
          outcome: "success",
          content: expect.stringContaining("a.txt")
        }
      ],
      questions: [
        {
          id: "call_1.overwrite.1",
          inquiry_id: "call_1.overwrite.1",
          kind: "question",
          tool_call_id: "call_1",
          tool: "write_note",
          question: expect.stringContaining("a.txt"),
          answer_type: "boolean",
          answered_by: "assistant",
          outcome: "answered",
          answer: true
        }
      ],
      incomplete: null
    })
  })

  it("a failed run still prints its document: the error, how the turn was left, the command that resumes it", () => {
    const p = project()
    const r = parley(p, [
      "query",
      "Hi",
      "--format",
      "json",
      "--script",
      writeScript(p, "s.json", [{ error: "provider unavailable" }])
    ])
    expect(r.code).toBe(1)
    const doc = JSON.parse(r.stdout) as Record<string, unknown>
    expect(doc).toMatchObject({
      conversation_id: conversationIdOf(p),
      outcome: "failed",
      reply: "",
      incomplete: { state: "pending-llm-response" },
      resume: `parley query --continue-turn --id ${conversationIdOf(p)} --script ${path.join(p.root, "s.json")} --storage ${p.storage}`
    })
    expect(String(doc["error"])).toContain("provider unavailable")
    expect(String(doc["error"])).not.toContain("resume it with")
  })
})

/** Runs `line` in a shell where `parley` is the built binary: what pasting it does. */
const paste = (line: string, cwd: string, env: Record<string, string>) => {
  const bin = tempDir("parley-bin-")
  dirs.push(bin)
  fs.writeFileSync(path.join(bin, "parley"), `#!/bin/sh\nexec "${process.execPath}" "${binary}" "$@"\n`, {
    mode: 0o755
  })
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn("sh", ["-c", line], {
      cwd,
      env: { PATH: `${bin}:${process.env["PATH"] ?? "/usr/bin:/bin"}`, HOME: process.env["HOME"] ?? "/tmp", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })
}

describe("the conversation remembers its model; printed commands work when pasted", () => {
  it.live(
    "openai run killed mid-tool; `query next` prints the resume command; pasted as printed, it completes the turn",
    () =>
      Effect.gen(function* () {
        const fake = yield* FakeLlmServer.make
        const p = project()
        const env = { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "test-key" }
        fake.enqueueOpenAi({
          content: "Counting.",
          toolCalls: [{ id: "call_1", name: "counter", arguments: JSON.stringify({ name: "slow" }) }]
        })
        fs.writeFileSync(path.join(p.root, "slow.block"), "")
        const child = spawn(
          process.execPath,
          [binary, "--storage", p.storage, "query", "count", "--model", "openai/gpt-test"],
          {
            cwd: p.root,
            env: { ...process.env, ...env, PARLEY_STORAGE: "", PARLEY_SCRIPT: "" },
            stdio: ["ignore", "pipe", "pipe"]
          }
        )
        children.push(child)
        yield* Effect.promise(() => waitForLines("the tool running", path.join(p.root, "slow.pid")))
        groups.push(Number(fs.readFileSync(path.join(p.root, "slow.pid"), "utf8")))
        child.kill("SIGKILL")
        yield* Effect.promise(() => exited(child))
        killGroup(groups[0]!)
        const base = JSON.parse(fs.readFileSync(path.join(conversationDir(p), "base_config.json"), "utf8"))
        expect(base).toStrictEqual({ assistant: { model: { id: { provider: "openai", name: "gpt-test" } } } })

        // No TTY, no flag: the error names the command to run (no --model: the conversation remembers it).
        const next = yield* Effect.promise(() => paste(`parley --storage ${p.storage} query next`, p.root, env))
        expect(next.code).toBe(1)
        const id = conversationIdOf(p)
        const printed = /^\s+(parley query --continue-turn .*?)\s{2,}Resume the incomplete turn\.$/m.exec(
          next.stderr
        )?.[1]
        expect(printed).toBe(`parley query --continue-turn --id ${id} --storage ${p.storage}`)

        fs.rmSync(path.join(p.root, "slow.block"))
        fake.enqueueOpenAi({ content: "Counted." })
        const resumed = yield* Effect.promise(() => paste(printed!, p.root, env))
        expect(resumed.stderr).toBe(`conversation ${id}\n`)
        expect(resumed.code).toBe(0)
        expect(resumed.stdout).toBe("Counted.\n")
        expect(fake.requests.map((r) => r.body.model)).toStrictEqual(["gpt-test", "gpt-test"])
        expect(persisted(p).map((e) => e.type)).toStrictEqual([
          "turn_start",
          "chat_request",
          "chat_response",
          "tool_call_request",
          "tool_call_response",
          "chat_response"
        ])
      }).pipe(Effect.scoped)
  )

  it.live(
    "another --model appends a config_delta at the start of its turn; later plain runs keep to it, ahead of config",
    () =>
      Effect.gen(function* () {
        const fake = yield* FakeLlmServer.make
        const p = project()
        const env = { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "test-key" }
        const run = (args: ReadonlyArray<string>) =>
          paste(["parley", "--storage", p.storage, "query", ...args].join(" "), p.root, env)
        const script = writeScript(p, "s.json", [{ message: "one" }])
        expect((yield* Effect.promise(() => run(["first", "--model", "scripted", "--script", script]))).code).toBe(0)
        fake.enqueueOpenAi({ content: "two" }, { content: "three" })
        const second = yield* Effect.promise(() => run(["second", "--model", "openai/gpt-test"]))
        expect([second.code, second.stdout]).toStrictEqual([0, "two\n"])
        // config.toml names another model: the conversation's own comes first.
        fs.appendFileSync(path.join(p.storage, "config.toml"), `\n[assistant]\nmodel = "anthropic/claude-test"\n`)
        const third = yield* Effect.promise(() => run(["third"]))
        expect([third.code, third.stdout]).toStrictEqual([0, "three\n"])
        const events = JSON.parse(fs.readFileSync(path.join(conversationDir(p), "events.json"), "utf8")) as Array<
          Record<string, unknown>
        >
        expect(events.map((e) => e["type"])).toStrictEqual([
          "turn_start",
          "chat_request",
          "chat_response",
          "config_delta",
          "turn_start",
          "chat_request",
          "chat_response",
          "turn_start",
          "chat_request",
          "chat_response"
        ])
        expect(events[3]).toStrictEqual({
          event_id: expect.stringMatching(/^[0-9a-z]{7}$/),
          type: "config_delta",
          timestamp: expect.any(String),
          delta: { assistant: { model: { id: { provider: "openai", name: "gpt-test" } } } }
        })
        expect(fake.requests.map((r) => r.body.model)).toStrictEqual(["gpt-test", "gpt-test"])
      }).pipe(Effect.scoped)
  )

  it.live("Ctrl-C while the reply streams keeps the partial reply: the turn is complete, so no resume command", () =>
    Effect.gen(function* () {
      const fake = yield* FakeLlmServer.make
      const p = project()
      fake.enqueueOpenAi({ content: "Hello there, this reply is slow to arrive.", chunkSize: 2, delayMs: 150 })
      const child = spawn(
        process.execPath,
        [binary, "--storage", p.storage, "query", "Greet", "--model", "openai/gpt-test"],
        {
          cwd: p.root,
          env: {
            ...process.env,
            OPENAI_BASE_URL: `${fake.url}/v1`,
            OPENAI_API_KEY: "test-key",
            PARLEY_STORAGE: "",
            PARLEY_SCRIPT: ""
          },
          stdio: ["ignore", "pipe", "pipe"]
        }
      )
      children.push(child)
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
      yield* Effect.promise(() => waitFor("some of the reply", () => stdout.length >= 4))
      child.kill("SIGINT")
      expect(yield* Effect.promise(() => exited(child))).toBe(130)
      yield* Effect.promise(() => waitFor("stderr closed", () => child.stderr.readableEnded))
      expect(stderr).toContain("parley: interrupted. The reply so far is saved; the turn is complete.")
      expect(stderr).not.toContain("--continue-turn")
      const events = persisted(p)
      expect(events.map((e) => e.type)).toStrictEqual(["turn_start", "chat_request", "chat_response"])
      // What was printed is what was kept, and the line is ended.
      expect(stdout).toBe(`${String(events[2]!["message"])}\n`)
      expect(stdout.startsWith("Hell")).toBe(true)
      const list = runParley(["--storage", p.storage, "conversation", "ls", "--format", "json"])
      expect((JSON.parse(list.stdout) as Array<{ incomplete: unknown }>)[0]!.incomplete).toBeNull()
    }).pipe(Effect.scoped)
  )

  it.live(
    "--format json, interrupted while the model answers after a tool: stop_reason is not the previous reply's",
    () =>
      Effect.gen(function* () {
        const fake = yield* FakeLlmServer.make
        const p = project()
        fake.enqueueOpenAi(
          {
            content: "Counting.",
            toolCalls: [{ id: "call_1", name: "counter", arguments: JSON.stringify({ name: "a" }) }]
          },
          { content: "Counted.", headersDelayMs: 60_000 }
        )
        const child = spawn(
          process.execPath,
          [binary, "--storage", p.storage, "query", "count", "--model", "openai/gpt-test", "--format", "json"],
          {
            cwd: p.root,
            env: {
              ...process.env,
              OPENAI_BASE_URL: `${fake.url}/v1`,
              OPENAI_API_KEY: "test-key",
              PARLEY_STORAGE: "",
              PARLEY_SCRIPT: ""
            },
            stdio: ["ignore", "pipe", "pipe"]
          }
        )
        children.push(child)
        let stdout = ""
        child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
        yield* Effect.promise(() => waitFor("the second model request", () => fake.requests.length === 2))
        child.kill("SIGINT")
        expect(yield* Effect.promise(() => exited(child))).toBe(130)
        yield* Effect.promise(() => waitFor("stdout closed", () => child.stdout.readableEnded))
        const doc = JSON.parse(stdout) as Record<string, unknown>
        expect(doc).toMatchObject({
          outcome: "interrupted",
          reply: "Counting.",
          stop_reason: null,
          incomplete: { state: "pending-follow-up" }
        })
      }).pipe(Effect.scoped)
  )

  it.live("the resume command printed for a storage path with a space, a quote and a tab works when pasted", () =>
    Effect.gen(function* () {
      const root = tempDir("parley-odd-")
      dirs.push(root)
      const dir = path.join(root, "it's a\tdir")
      const storage = path.join(dir, ".parley")
      fs.mkdirSync(storage, { recursive: true })
      const script = path.join(dir, "s.json")
      fs.writeFileSync(script, JSON.stringify({ steps: [{ error: "provider unavailable" }] }))
      const r = runParley(["--storage", storage, "query", "Hi", "--script", script], {
        cwd: root,
        env: { PARLEY_STORAGE: undefined, PARLEY_SCRIPT: undefined }
      })
      expect(r.code).toBe(1)
      const printed = r.stderr.trimEnd().split("The turn is saved; resume it with: ")[1]!
      expect(printed).toContain("\t")
      fs.writeFileSync(script, JSON.stringify({ steps: [{ message: "Hello." }] }))
      const resumed = yield* Effect.promise(() => paste(printed, root, {}))
      expect([resumed.code, resumed.stdout]).toStrictEqual([0, "Hello.\n"])
    })
  )

  it("a conversation on the scripted model names --script in the resume command", () => {
    const p = project()
    const script = writeScript(p, "s.json", [{ error: "provider unavailable" }])
    const r = parley(p, ["query", "Hi", "--script", script])
    expect(r.code).toBe(1)
    expect(lines(r.stderr).at(-1)).toBe(
      `The turn is saved; resume it with: parley query --continue-turn --id ${conversationIdOf(p)} --script ${script} --storage ${p.storage}`
    )
    const ok = spawnSync("sh", ["-n", "-c", lines(r.stderr).at(-1)!.split(": ").slice(1).join(": ")])
    expect(ok.status).toBe(0) // a well-formed shell command
  })
})
