/**
 * The live providers' replies (docs/models.md#replies-and-errors), from outside: the built binary against the fake Anthropic
 * and OpenAI servers. Exact stderr lines for provider errors, no SDK console
 * noise, an empty reply that completes the turn, a cut-off reply that leaves
 * it resumable.
 *
 * The token-limit warning is printed by the CLI from the turn loop's
 * `onWarning` (`replyWarning(...)`).
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { binary } from "../support/Cli.ts"
import * as FakeLlmServer from "../support/FakeLlmServer.ts"
import { conversationIdOf, makeProject, persisted, type Project } from "../support/Project.ts"

const projects: Array<Project> = []
afterEach(() => {
  for (const p of projects.splice(0)) fs.rmSync(p.root, { recursive: true, force: true })
})

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs parley without blocking the event loop (the fake server lives in this process). */
const run = (p: Project, fake: FakeLlmServer.FakeLlmServer, args: ReadonlyArray<string>): Effect.Effect<Run> =>
  Effect.callback<Run>((resume) => {
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

const setup = Effect.gen(function* () {
  const fake = yield* FakeLlmServer.make
  const p = makeProject()
  projects.push(p)
  return { fake, p, parley: (args: ReadonlyArray<string>) => run(p, fake, args) }
})

const ANTHROPIC = ["query", "--model", "anthropic/claude-test"]
const OPENAI = ["query", "--model", "openai/gpt-test"]
/** The binary's default backoff is 200 ms doubling; the servers ask for 1 ms so 4 attempts stay fast. */
const FAST = { "retry-after-ms": "1" }

/** The line every run starts with on stderr (docs/cli.md#status-lines): the conversation's id. */
const idLine = (p: Project) => new RegExp(`^conversation ${conversationIdOf(p)}( \\(new\\))?\n`)

/** stderr of a failed turn: the conversation's id, exactly the error line, then one line with the resume command. */
const expectProviderFailure = (r: Run, p: Project, line: string) => {
  expect(r.code).toBe(1)
  expect(r.stderr).toMatch(idLine(p))
  const lines = r.stderr.trimEnd().split("\n").slice(1)
  expect(lines[0]).toBe(line)
  expect(lines).toHaveLength(2)
  expect(lines[1]).toContain(`parley query --continue-turn --id ${conversationIdOf(p)}`)
}

describe("parley query against a fake provider: replies are judged (built binary)", () => {
  it.live("an empty reply completes the turn: exit 0, nothing printed, and the next plain query works", () =>
    Effect.gen(function* () {
      const { fake, p, parley } = yield* setup
      fake.enqueueAnthropic({ blocks: [] }, { blocks: [{ type: "text", text: "Still here." }] })
      const first = yield* parley([...ANTHROPIC, "Say nothing"])
      const id = conversationIdOf(p)
      expect(first).toStrictEqual({ code: 0, stdout: "", stderr: `conversation ${id} (new)\n` })
      const second = yield* parley([...ANTHROPIC, "--id", id, "Again"])
      expect(second).toStrictEqual({ code: 0, stdout: "Still here.\n", stderr: `conversation ${id}\n` })
      const events = persisted(p)
      expect(events.map((e) => e.type)).toStrictEqual([
        "turn_start",
        "chat_request",
        "chat_response",
        "turn_start",
        "chat_request",
        "chat_response"
      ])
      expect(events[2]).toMatchObject({ type: "chat_response", message: "" })
    })
  )

  it.live(
    "a reply cut off mid-stream fails (exit 1, resumable); --continue-turn then stores only the whole reply",
    () =>
      Effect.gen(function* () {
        const { fake, p, parley } = yield* setup
        fake.enqueueAnthropic({ blocks: [{ type: "text", text: "Hello world" }], endAfterEvents: 3 })
        const cut = yield* parley([...ANTHROPIC, "Greet"])
        expect(cut.stdout).toBe("Hell\n") // the error goes on its own line
        expectProviderFailure(cut, p, "parley: anthropic: the reply was cut off: the stream ended before message_stop.")
        expect(persisted(p).map((e) => e.type)).toStrictEqual(["turn_start", "chat_request"])

        fake.enqueueAnthropic({ blocks: [{ type: "text", text: "Hello world" }] })
        const resumed = yield* parley([...ANTHROPIC, "--continue-turn", "--id", conversationIdOf(p)])
        expect(resumed).toStrictEqual({
          code: 0,
          stdout: "Hello world\n",
          stderr: `conversation ${conversationIdOf(p)}\n`
        })
        expect(persisted(p).map((e) => e.type)).toStrictEqual(["turn_start", "chat_request", "chat_response"])
      })
  )

  it.live("openai: a stream with neither finish_reason nor [DONE] is cut off", () =>
    Effect.gen(function* () {
      const { fake, p, parley } = yield* setup
      fake.enqueueOpenAi({ content: "Hello world", omitFinish: true, omitDone: true })
      const r = yield* parley([...OPENAI, "Greet"])
      expect(r.stdout).toBe("Hello world\n")
      expectProviderFailure(
        r,
        p,
        "parley: openai: the reply was cut off: the stream ended before a finish_reason or [DONE]."
      )
    })
  )

  it.live("HTTP 500 four times: provider, status and attempt count", () =>
    Effect.gen(function* () {
      const { fake, p, parley } = yield* setup
      fake.enqueueAnthropic(
        ...Array.from({ length: 4 }, () => ({ status: 500, message: "fake 500 error", headers: FAST }))
      )
      const r = yield* parley([...ANTHROPIC, "Hi"])
      expect(fake.requests).toHaveLength(4)
      expectProviderFailure(r, p, "parley: anthropic: HTTP 500 after 4 attempts: fake 500 error")
    })
  )

  it.live("HTTP 401 names the key variable to check", () =>
    Effect.gen(function* () {
      const { fake, p, parley } = yield* setup
      fake.enqueueAnthropic({ status: 401, message: "invalid x-api-key" })
      const r = yield* parley([...ANTHROPIC, "Hi"])
      expectProviderFailure(
        r,
        p,
        "parley: anthropic: HTTP 401 after 1 attempt: invalid x-api-key. Check ANTHROPIC_API_KEY."
      )
    })
  )

  it.live("an HTML 502 page is summarised, not printed", () =>
    Effect.gen(function* () {
      const { fake, p, parley } = yield* setup
      const page =
        "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>"
      fake.enqueueOpenAi(...Array.from({ length: 4 }, () => ({ status: 502, body: page, headers: FAST })))
      const r = yield* parley([...OPENAI, "Hi"])
      expectProviderFailure(r, p, 'parley: openai: HTTP 502 after 4 attempts: HTML error page "502 Bad Gateway"')
    })
  )

  it.live("malformed server-sent events: one error line, no SDK output (both providers)", () =>
    Effect.gen(function* () {
      const { fake, p, parley } = yield* setup
      const start = JSON.stringify({
        type: "message_start",
        message: {
          id: "m",
          type: "message",
          role: "assistant",
          model: "x",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 }
        }
      })
      fake.enqueueAnthropic({
        sse: `event: message_start\ndata: ${start}\n\nevent: content_block_start\ndata: {not json\n\n`
      })
      const a = yield* parley([...ANTHROPIC, "Hi"])
      expect(a.stdout).toBe("")
      expectProviderFailure(a, p, "parley: anthropic: the reply stream is malformed: an event is not valid JSON.")

      fake.enqueueOpenAi({ sse: "data: {not json\n\n" })
      const o = yield* parley([...OPENAI, "--continue-turn", "--id", conversationIdOf(p)])
      expect(o.stdout).toBe("")
      expectProviderFailure(o, p, "parley: openai: the reply stream is malformed: an event is not valid JSON.")
    })
  )

  // Needs the turn loop / CLI to print `parley: ${replyWarning(model, reply.stopReason)}` (lead's part).
  it("a max_tokens stop is stored and warned about on stderr (anthropic)", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { fake, p, parley } = yield* setup
          fake.enqueueAnthropic({ blocks: [{ type: "text", text: "Hello wor" }], stopReason: "max_tokens" })
          const r = yield* parley([...ANTHROPIC, "Greet"])
          expect(persisted(p).map((e) => e.type)).toStrictEqual(["turn_start", "chat_request", "chat_response"])
          expect(r).toStrictEqual({
            code: 0,
            stdout: "Hello wor\n",
            stderr: `conversation ${conversationIdOf(p)} (new)\nparley: warning: anthropic/claude-test stopped at its output token limit; the reply is cut short (saved as it is).\n`
          })
        })
      )
    ))

  it("a length stop is stored and warned about on stderr (openai)", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { fake, p, parley } = yield* setup
          fake.enqueueOpenAi({ content: "Hello wor", finishReason: "length" })
          const r = yield* parley([...OPENAI, "Greet"])
          expect(persisted(p).map((e) => e.type)).toStrictEqual(["turn_start", "chat_request", "chat_response"])
          expect(r).toStrictEqual({
            code: 0,
            stdout: "Hello wor\n",
            stderr: `conversation ${conversationIdOf(p)} (new)\nparley: warning: openai/gpt-test stopped at its output token limit; the reply is cut short (saved as it is).\n`
          })
        })
      )
    ))
})
