/**
 * `parley query --format jsonl` and `--persist-on-sigpipe` (RFD 027), from
 * outside: the built binary against a slow fake Anthropic server, its stdout
 * read line by line as a pipeline's reader reads it, and a real pipe closed
 * early by `head -1`.
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as readline from "node:readline"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { binary } from "../support/Cli.ts"
import * as FakeLlmServer from "../support/FakeLlmServer.ts"
import {
  conversationIdOf,
  copyProject,
  addLeakTool,
  makeProject,
  parley,
  type Project,
  persisted,
  waitFor,
  writeScript
} from "../support/Project.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
})

/** The environment of a run against the fake server. */
const envFor = (fake: FakeLlmServer.FakeLlmServer) => ({
  ...process.env,
  ANTHROPIC_API_KEY: "k",
  ANTHROPIC_BASE_URL: fake.url,
  PARLEY_STORAGE: "",
  PARLEY_SCRIPT: ""
})

/** A run to its end: exit code and stdout. */
const run = (p: Project, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  Effect.callback<{ code: number | null; stdout: string }>((resume) => {
    const child = spawn(process.execPath, [binary, "--storage", p.storage, ...args], {
      cwd: p.root,
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(child)
    let stdout = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
    child.on("close", (code) => {
      clearTimeout(timer)
      resume(Effect.succeed({ code, stdout }))
    })
  })

/** The model's turn: a slow reply that calls `write_note`, then a short one. */
const replies = (delayMs: number): ReadonlyArray<FakeLlmServer.AnthropicReply> => [
  {
    blocks: [
      { type: "text", text: "I'll write the note now, one slow piece at a time." },
      { type: "tool_use", id: "toolu_1", name: "write_note", input: { path: "a.txt", text: "hi" } }
    ],
    stopReason: "tool_use",
    chunkSize: 4,
    delayMs
  },
  { blocks: [{ type: "text", text: "Done." }] }
]

describe("RFD 027: parley query --format jsonl", () => {
  it.live(
    "RFD 027 `--format jsonl`: events arrive as they happen (the first before the model's reply ends), one object a line, and the last line equals `--format json`'s document",
    () =>
      Effect.gen(function* () {
        const fake = yield* FakeLlmServer.make
        const p = makeProject()
        // A conversation both runs continue, so both documents name the same one.
        const first = writeScript(p, "first.json", [{ message: "Hello." }])
        expect((yield* run(p, ["query", "hi", "--new", "--script", first], envFor(fake))).code).toBe(0)
        const id = conversationIdOf(p)
        const twin = copyProject(p)
        fake.enqueueAnthropic(...replies(80), ...replies(0))
        const args = ["query", "write a note", "--id", id, "--model", "anthropic/claude-test"]

        // The reader: each line as it arrives, with whether the model's first reply had ended by then.
        const lines = yield* Effect.callback<Array<{ line: string; replyEnded: boolean }>>((resume) => {
          const child = spawn(process.execPath, [binary, "--storage", p.storage, ...args, "--format", "jsonl"], {
            cwd: p.root,
            env: envFor(fake),
            stdio: ["ignore", "pipe", "pipe"]
          })
          children.push(child)
          const seen: Array<{ line: string; replyEnded: boolean }> = []
          let replyEnded = false
          const watchReply = setInterval(() => {
            const request = fake.requests[0]
            if (request !== undefined) {
              clearInterval(watchReply)
              void request.ended.then(() => (replyEnded = true))
            }
          }, 5)
          readline.createInterface({ input: child.stdout }).on("line", (line) => seen.push({ line, replyEnded }))
          const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
          child.on("close", (code) => {
            clearTimeout(timer)
            clearInterval(watchReply)
            expect(code).toBe(0)
            resume(Effect.succeed(seen))
          })
        })
        const objects = lines.map((l) => JSON.parse(l.line) as Record<string, unknown>)
        // Every line but the last is a run event, named by `type`.
        const events = objects.slice(0, -1)
        expect(events.every((e) => typeof e["type"] === "string")).toBe(true)
        expect(events.at(-1)!["type"]).toBe("stopped")
        const firstDelta = lines.findIndex((_, i) => objects[i]!["type"] === "text_delta")
        expect(firstDelta).toBeGreaterThan(0)
        // The first line, and the first piece of the reply, were read while the model was still replying.
        expect(lines[0]!.replyEnded).toBe(false)
        expect(lines[firstDelta]!.replyEnded).toBe(false)
        expect(lines.at(-1)!.replyEnded).toBe(true)
        expect(events.map((e) => e["type"])).toEqual(
          expect.arrayContaining(["tool_calls_announced", "tool_started", "tool_finished", "reply_finished"])
        )

        const json = yield* run(twin, [...args, "--format", "json"], envFor(fake))
        expect(json.code).toBe(0)
        const document = JSON.parse(json.stdout)
        expect(objects.at(-1)).toStrictEqual(document)
        expect(document).toMatchObject({
          conversation_id: id,
          outcome: "completed",
          reply: "I'll write the note now, one slow piece at a time.\nDone."
        })
      })
  )

  it.live("RFD 027 `--format jsonl`: a secret answered from config and echoed by the tool is not on the stream", () =>
    Effect.gen(function* () {
      const secret = "s3cr3t-Value-42!"
      const fake = yield* FakeLlmServer.make
      const p = makeProject()
      addLeakTool(p, secret)
      fake.enqueueAnthropic(
        { blocks: [{ type: "tool_use", id: "toolu_1", name: "leak", input: {} }], stopReason: "tool_use" },
        { blocks: [{ type: "text", text: "Done." }] }
      )
      const out = yield* run(
        p,
        ["query", "leak it", "--model", "anthropic/claude-test", "--format", "jsonl"],
        envFor(fake)
      )
      expect(out.code).toBe(0)
      const bytes = Buffer.from(secret)
      for (const form of [secret, bytes.toString("base64"), bytes.toString("hex"), JSON.stringify(secret).slice(1, -1)])
        expect(out.stdout.includes(form), form).toBe(false)
      const objects = out.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>)
      expect(objects.find((o) => o["type"] === "question_closed")).toMatchObject({
        by: "config",
        outcome: { _tag: "Redacted" }
      })
      expect(objects.find((o) => o["type"] === "tool_finished")).toMatchObject({
        response: { content: expect.stringContaining("[redacted]") }
      })
    })
  )
})

/** A turn with two tool rounds, the first blocked until the test lets it go. */
const twoRounds = (p: Project): string => {
  fs.writeFileSync(path.join(p.root, "slow.block"), "")
  return writeScript(p, "s.json", [
    { message: "first\n", tool_calls: [{ id: "c1", name: "counter", arguments: { name: "slow" } }] },
    { message: "second\n", tool_calls: [{ id: "c2", name: "counter", arguments: { name: "again" } }] },
    { message: "done" }
  ])
}

/**
 * `parley query … | head -1` in bash: the reader takes one line and closes
 * the pipe; the tool is let go once it runs, so what follows meets the
 * closed pipe. Resolves to parley's exit code and head's output.
 */
const pipedToHead = (p: Project, script: string, extra: ReadonlyArray<string>) =>
  Effect.callback<{ code: string; head: string }>((resume) => {
    const rc = path.join(p.root, "parley.rc")
    const child = spawn(
      "bash",
      [
        "-c",
        '"$@" | head -1; echo "${PIPESTATUS[0]}" > "$RC"',
        "bash",
        process.execPath,
        binary,
        "--storage",
        p.storage,
        "query",
        "go",
        "--script",
        script,
        "--format",
        "jsonl",
        ...extra
      ],
      { cwd: p.root, env: { ...process.env, PARLEY_STORAGE: "", RC: rc }, stdio: ["ignore", "pipe", "pipe"] }
    )
    children.push(child)
    let head = ""
    child.stdout.on("data", (d: Buffer) => (head += d.toString()))
    void waitFor("the tool running", () => /^\d+\n$/.test(fs.readFileSync(path.join(p.root, "slow.pid"), "utf8")))
      .then(() => waitFor("head to end", () => head.endsWith("\n")))
      .then(
        () => fs.rmSync(path.join(p.root, "slow.block")),
        () => child.kill("SIGKILL")
      )
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
    child.on("close", () => {
      clearTimeout(timer)
      resume(Effect.succeed({ code: fs.readFileSync(rc, "utf8").trim(), head }))
    })
  })

describe("RFD 027: --persist-on-sigpipe", () => {
  it.live(
    "RFD 027 `--persist-on-sigpipe`: a reader that closes stdout early (`| head -1`) leaves the turn to finish",
    () =>
      Effect.gen(function* () {
        const p = makeProject()
        const script = twoRounds(p)
        const out = yield* pipedToHead(p, script, ["--persist-on-sigpipe"])
        expect(JSON.parse(out.head)).toMatchObject({ type: "model_chosen" })
        expect(out.code).toBe("0")
        // Both rounds ran and the last reply is recorded: the turn is complete.
        expect(fs.readFileSync(path.join(p.root, "again.count"), "utf8").trim()).toBe("1")
        const types = persisted(p).map((e) => e.type)
        expect(types.filter((t) => t === "tool_call_response").length).toBe(2)
        expect(types.at(-1)).toBe("chat_response")
        expect(persisted(p).at(-1)!["message"]).toBe("done")
      })
  )

  it.live("RFD 027 pipeline semantics (the default): a reader that closes stdout early stops the run, exit 0", () =>
    Effect.gen(function* () {
      const p = makeProject()
      const script = twoRounds(p)
      const out = yield* pipedToHead(p, script, [])
      expect(JSON.parse(out.head)).toMatchObject({ type: "model_chosen" })
      expect(out.code).toBe("0")
      // The second round never ran: the run stopped at the closed pipe.
      expect(fs.existsSync(path.join(p.root, "again.count"))).toBe(false)
      expect(persisted(p).some((e) => e.type === "chat_response" && e["message"] === "done")).toBe(false)
    })
  )
})

describe("causes as data: a failed run's error and resume command", () => {
  it("causes as data: stderr's error and `The turn is saved` line and the report's `error` and `resume` are one value, never split from text", () => {
    const p = makeProject()
    const script = writeScript(p, "s.json", [{ error: "provider unavailable" }])
    const r = parley(p, ["query", "Hi", "--format", "jsonl", "--script", script])
    expect(r.code).toBe(1)
    const report = JSON.parse(r.stdout.trimEnd().split("\n").at(-1)!) as Record<string, unknown>
    expect(report).toMatchObject({ outcome: "failed", incomplete: { state: "pending-llm-response" } })
    expect(String(report["error"])).toContain("provider unavailable")
    expect(String(report["error"])).not.toContain("\n")
    expect(report["resume"]).toBe(
      `parley query --continue-turn --id ${conversationIdOf(p)} --script ${script} --storage ${p.storage}`
    )
    // stderr: the same error, then the same command on its own line.
    expect(r.stderr).toContain(
      `parley: ${String(report["error"])}\nThe turn is saved; resume it with: ${String(report["resume"])}\n`
    )
  })
})

describe("a reader that stops reading", () => {
  it.live("does not hold the run: its reply waits in the pipe, and SIGINT still ends the process at once", () =>
    Effect.callback<{ ended: string; afterSignalMs: number; stderr: string }>((resume) => {
      const p = makeProject()
      // A reply four times a pipe's buffer: written into a reader that never reads, it fills the pipe.
      const script = writeScript(p, "big.json", [{ message: "x".repeat(256 * 1024) }])
      const fifo = path.join(p.root, "out.fifo")
      spawnSyncMkfifo(fifo)
      // The read end is opened (so the write end can be) and never read.
      const reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
      const writer = fs.openSync(fifo, "w")
      const child = spawn(
        process.execPath,
        [binary, "--storage", p.storage, "query", "--new", "hi", "--script", script],
        {
          cwd: p.root,
          env: { ...process.env, PARLEY_STORAGE: "", PARLEY_SCRIPT: "" },
          stdio: ["ignore", writer, "pipe"]
        }
      )
      fs.closeSync(writer)
      children.push(child)
      let stderr = ""
      let signalledAt = 0
      child.stderr!.on("data", (d: Buffer) => {
        stderr += d.toString()
        // The run has started writing its reply: give it time to fill the pipe, then interrupt it.
        if (signalledAt === 0 && stderr.includes("(new)")) {
          signalledAt = -1
          setTimeout(() => {
            signalledAt = performance.now()
            child.kill("SIGINT")
          }, 1500)
        }
      })
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
      child.on("close", (code, signal) => {
        clearTimeout(timer)
        fs.closeSync(reader)
        resume(
          Effect.succeed({ ended: signal ?? `exit ${code}`, afterSignalMs: performance.now() - signalledAt, stderr })
        )
      })
    }).pipe(
      Effect.map((r) => {
        // Interrupted mid-run (130), or, its turn over and its reply still waiting for the pipe to drain, ended by
        // the signal's default action, as any program is. A run blocked in a write to the full pipe would handle
        // the signal only when the reader went away (never here: the test's SIGKILL at 30 s).
        expect(["exit 130", "SIGINT"], r.stderr).toContain(r.ended)
        expect(r.afterSignalMs).toBeLessThan(5_000)
      })
    )
  )
})

/** Makes a named pipe at `file` (mkfifo(1): Node has no call for it). */
const spawnSyncMkfifo = (file: string): void => {
  const made = spawnSync("mkfifo", ["-m", "600", file])
  if (made.status !== 0) throw new Error(`mkfifo ${file}: ${made.stderr}`)
}
