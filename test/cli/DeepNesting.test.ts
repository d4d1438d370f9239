/**
 * Deep nesting, from outside (docs/decisions.md#json-depth): what `JSON.parse` read is
 * printed, checked and written back at any depth, or refused in one line
 * naming the entry; a model's tool call whose arguments nest 10,000 deep is
 * a tool error for the model, recorded with a marker, and the turn ends
 * complete. The real SDKs against the fake servers.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { binary, runParley } from "../support/Cli.ts"
import * as FakeLlmServer from "../support/FakeLlmServer.ts"
import { copyToTemp, fixtureCorpus } from "../support/Fixtures.ts"
import { conversationIdOf, makeProject, persisted, type Project } from "../support/Project.ts"

const ID = "17738399468"
const EVENTS = path.join("conversations", "17738399468-rfd-review-and-phase-1-planning", "events.json")

/** A copy of the corpus whose first entry holds an unknown key nested `depth` arrays deep. */
const deepStorage = (depth: number): string => {
  const storage = copyToTemp(fixtureCorpus.dir, "parley-deep-")
  const file = path.join(storage, EVENTS)
  const text = fs.readFileSync(file, "utf8")
  fs.writeFileSync(
    file,
    text.replace('"timestamp"', `"deep_unknown": ${"[".repeat(depth)}${"]".repeat(depth)}, "timestamp"`)
  )
  return storage
}

describe("a stored entry nested deeply", () => {
  it("5,000 levels: every format prints, check passes, and a new turn writes it back byte for byte", () => {
    const storage = deepStorage(5_000)
    const before = fs.readFileSync(path.join(storage, EVENTS), "utf8")
    const json = runParley(["conversation", "print", ID, "--storage", storage, "--format", "json"])
    expect([json.code, json.stderr]).toStrictEqual([0, ""])
    expect(json.stdout.startsWith('[\n  {\n    "type": "config_delta",\n    "deep_unknown": [\n      [\n')).toBe(true)
    expect(json.stdout.replace(/\s+/g, "")).toContain(`"deep_unknown":${"[".repeat(5_000)}${"]".repeat(5_000)}`)
    for (const format of ["markdown", "html"])
      expect(runParley(["conversation", "print", ID, "--storage", storage, "--format", format]).code).toBe(0)
    const check = runParley(["conversation", "check", ID, "--storage", storage, "--format", "json"])
    expect([check.code, JSON.parse(check.stdout)[0].roundtrip]).toStrictEqual([0, "identical"])
    const script = path.join(storage, "script.json")
    fs.writeFileSync(script, JSON.stringify({ steps: [{ message: "ok" }] }))
    expect(
      runParley(["query", "--storage", storage, "--id", ID, "--model", "scripted", "--script", script, "more"]).code
    ).toBe(0)
    const after = fs.readFileSync(path.join(storage, EVENTS), "utf8")
    expect(after.startsWith(before.slice(0, -"\n]\n".length))).toBe(true)
    expect(runParley(["conversation", "check", ID, "--storage", storage]).code).toBe(0)
    fs.rmSync(storage, { recursive: true, force: true })
  })

  it("100,000 levels: JSON print is one line naming the entry (exit 1); the rest prints, checks and writes back", () => {
    const storage = deepStorage(100_000)
    const json = runParley(["conversation", "print", ID, "--storage", storage, "--format", "json"])
    expect(json).toStrictEqual({
      code: 1,
      stdout: "",
      stderr: `parley: conversation ${ID}: entry 0 is nested 100001 levels deep, too deep to print as JSON; --format markdown or html shows the other entries.\n`
    })
    for (const format of ["markdown", "html"]) {
      const r = runParley(["conversation", "print", ID, "--storage", storage, "--format", format])
      expect([r.code, r.stderr]).toStrictEqual([0, ""])
    }
    expect(runParley(["conversation", "ls", "--storage", storage]).code).toBe(0)
    const script = path.join(storage, "script.json")
    fs.writeFileSync(script, JSON.stringify({ steps: [{ message: "ok" }] }))
    expect(
      runParley(["query", "--storage", storage, "--id", ID, "--model", "scripted", "--script", script, "more"]).code
    ).toBe(0)
    expect(fs.readFileSync(path.join(storage, EVENTS), "utf8")).toContain(`"deep_unknown": ${"[".repeat(100_000)}`)
    const check = runParley(["conversation", "check", ID, "--storage", storage, "--format", "json"])
    expect([check.code, JSON.parse(check.stdout)[0].roundtrip]).toStrictEqual([0, "identical"])
    fs.rmSync(storage, { recursive: true, force: true })
  })
})

/** Runs parley without blocking the event loop (the fake server lives in this process). */
const run = (p: Project, fake: FakeLlmServer.FakeLlmServer, args: ReadonlyArray<string>) =>
  Effect.callback<{ code: number | null; stdout: string; stderr: string }>((resume) => {
    const env: Record<string, string | undefined> = {
      ...process.env,
      PARLEY_STORAGE: undefined,
      PARLEY_SCRIPT: undefined,
      ANTHROPIC_API_KEY: "test-key",
      ANTHROPIC_BASE_URL: fake.url,
      OPENAI_API_KEY: "test-key",
      OPENAI_BASE_URL: `${fake.url}/v1`
    }
    for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k]
    const child = spawn(process.execPath, [binary, "--storage", p.storage, ...args], {
      cwd: p.root,
      env: env as NodeJS.ProcessEnv,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
    return Effect.sync(() => void child.kill("SIGKILL"))
  })

const DEEP_ARGS = `{"path":${"[".repeat(10_000)}${"]".repeat(10_000)}}`
const MARKER = { parley_arguments_replaced: "nested 10001 levels deep; the limit is 100" }
const TOOL_ERROR =
  "The call to tool `read_file` was not run: its arguments were nested 10001 levels deep; the limit is 100. Call it again with flatter arguments."

describe("a model's tool call with arguments nested 10,000 deep", () => {
  for (const provider of ["anthropic", "openai"] as const) {
    it.live(`${provider}: a tool error for the model, the call recorded with a marker, the turn complete`, () =>
      Effect.gen(function* () {
        const fake = yield* FakeLlmServer.make
        const p = makeProject()
        if (provider === "anthropic") {
          fake.enqueueAnthropic(
            {
              blocks: [{ type: "tool_use", id: "toolu_1", name: "read_file", input: {}, inputJson: DEEP_ARGS }],
              stopReason: "tool_use",
              chunkSize: 4096
            },
            { blocks: [{ type: "text", text: "Sorry." }] }
          )
        } else {
          fake.enqueueOpenAi(
            {
              toolCalls: [{ id: "toolu_1", name: "read_file", arguments: DEEP_ARGS }],
              finishReason: "tool_calls",
              chunkSize: 4096
            },
            { content: "Sorry." }
          )
        }
        const r = yield* run(p, fake, ["query", "--model", `${provider}/test-model`, "read it"])
        expect([r.code, r.stdout]).toStrictEqual([0, "Sorry.\n"])
        expect(r.stderr).toBe(`conversation ${conversationIdOf(p)} (new)\n`)
        const events = persisted(p)
        expect(events.map((e) => e.type)).toStrictEqual([
          "turn_start",
          "chat_request",
          "tool_call_request",
          "tool_call_response",
          "chat_response"
        ])
        const ls = JSON.parse(runParley(["conversation", "ls", "--storage", p.storage, "--format", "json"]).stdout)
        expect(ls[0].incomplete).toBe(null)
        const printed = JSON.parse(
          runParley(["conversation", "print", conversationIdOf(p), "--storage", p.storage, "--format", "json"]).stdout
        )
        expect(printed[2].arguments).toStrictEqual(MARKER)
        expect(printed[3]).toMatchObject({ content: TOOL_ERROR, is_error: true })
        // What went back to the model: the marker and the error, never the deep arguments.
        expect(fake.requests).toHaveLength(2)
        const followUp = JSON.stringify(fake.requests[1]!.body)
        expect(followUp).toContain("parley_arguments_replaced")
        expect(followUp).toContain("was not run: its arguments were nested 10001 levels deep")
        expect(followUp).not.toContain("[[[[")
        fs.rmSync(p.root, { recursive: true, force: true })
      })
    )
  }
})
