/**
 * Compactions (docs/models.md#long-conversations-compactions-and-context-windows-rfd-064) from outside (built binary; the real Anthropic SDK against the
 * fake server on 127.0.0.1): JP's compactions applied to what the model is
 * sent, `conversation compact`, and context windows.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
import * as EventsFile from "../../src/domain/storage/EventsFile.ts"
import { turns } from "../../src/domain/stream/Turns.ts"
import { SUMMARY_INSTRUCTIONS, SUMMARY_REQUEST } from "../../src/programs/CompactConversation.ts"
import { binary, runParley } from "../support/Cli.ts"
import * as FakeLlmServer from "../support/FakeLlmServer.ts"
import { copyToTemp, fixtureCorpus } from "../support/Fixtures.ts"
import { exited, killGroup, makeProject, type Project, spawnParley, waitFor, writeScript } from "../support/Project.ts"

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const dirs: Array<string> = []
const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
const groups: Array<number> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  for (const g of groups.splice(0)) killGroup(g)
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})

/** Runs parley without blocking the event loop (the fake server lives in this process). */
const parleyAt = (
  storage: string,
  fake: FakeLlmServer.FakeLlmServer | undefined,
  args: ReadonlyArray<string>,
  cwd = path.dirname(storage)
): Effect.Effect<Run> =>
  Effect.callback<Run>((resume) => {
    const env: Record<string, string | undefined> = {
      ...process.env,
      PARLEY_STORAGE: undefined,
      PARLEY_SCRIPT: undefined,
      ANTHROPIC_API_KEY: "test-key",
      ANTHROPIC_BASE_URL: fake?.url ?? "http://127.0.0.1:9",
      OPENAI_API_KEY: undefined,
      OPENAI_BASE_URL: undefined
    }
    for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k]
    const child = spawn(process.execPath, [binary, "--storage", storage, ...args], {
      cwd,
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

const b64 = (s: string) => Buffer.from(s).toString("base64")

/** Appends entries to an events.json as JP's writer lays them out (pretty, 2 spaces, one array). */
const appendEntries = (file: string, entries: ReadonlyArray<object>) => {
  const text = fs.readFileSync(file, "utf8")
  const rendered = entries.map((e) => "  " + JSON.stringify(e, null, 2).replaceAll("\n", "\n  ")).join(",\n")
  fs.writeFileSync(file, text.replace(/\n\]\n$/, `,\n${rendered}\n]\n`))
}

/** A message's blocks, whatever form the SDK sent them in. */
type Block = {
  type: string
  text?: string
  id?: string
  name?: string
  input?: unknown
  tool_use_id?: string
  content?: unknown
  is_error?: boolean
}
const blocksOf = (message: { content: unknown }): Array<Block> =>
  typeof message.content === "string" ? [{ type: "text", text: message.content }] : (message.content as Array<Block>)
const resultText = (b: Block): string =>
  typeof b.content === "string" ? b.content : (b.content as Array<{ text: string }>).map((c) => c.text).join("")

const checkIdentical = (storage: string, id: string) =>
  Effect.map(parleyAt(storage, undefined, ["conversation", "check", id, "--format", "json"]), (r) => {
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject([{ id, ok: true, roundtrip: "identical" }])
  })

describe("a corpus conversation with JP-shaped compactions, queried against a fake provider", () => {
  it.live(
    "the model sees the summary instead of turns 1–4, turns 5–8 with stripped calls, the rest as stored; check stays byte-identical",
    () =>
      Effect.gen(function* () {
        const storage = copyToTemp(fixtureCorpus.dir)
        dirs.push(storage)
        const id = "17738399468"
        const file = path.join(storage, "conversations", "17738399468-rfd-review-and-phase-1-planning", "events.json")
        const entries = EventsFile.parse(fs.readFileSync(file, "utf8"), file)
        const byTurn = turns(entries)
        expect(byTurn.length).toBeGreaterThan(9)
        appendEntries(file, [
          {
            type: "compaction",
            timestamp: "2026-03-18 16:00:00.123456",
            from_turn: 0,
            to_turn: 3,
            summary: { summary: "SUMMARY-OF-TURNS-0-3: the RFDs were reviewed." }
          },
          {
            type: "compaction",
            timestamp: "2026-03-18 16:00:01.5",
            from_turn: 4,
            to_turn: 7,
            reasoning: "strip",
            tool_calls: { policy: "strip", request: true, response: true }
          }
        ])
        yield* checkIdentical(storage, id)

        const fake = yield* FakeLlmServer.make
        fake.enqueueAnthropic({ blocks: [{ type: "text", text: "Next we plan phase 2." }] })
        const r = yield* parleyAt(storage, fake, [
          "query",
          "--id",
          id,
          "--model",
          "anthropic/claude-test",
          "What next?"
        ])
        expect(r.stderr).toBe(`conversation ${id}\n`)
        expect(r).toMatchObject({ code: 0, stdout: "Next we plan phase 2.\n" })

        const messages = fake.requests[0]!.body.messages as Array<{ role: string; content: unknown }>
        const body = JSON.stringify(messages)
        expect(blocksOf(messages[0]!)[0]).toMatchObject({ type: "text", text: "[Summary of previous conversation]" })
        expect(messages[1]!.role).toBe("assistant")
        expect(
          blocksOf(messages[1]!)
            .map((b) => b.text)
            .join("")
        ).toBe("SUMMARY-OF-TURNS-0-3: the RFDs were reviewed.")
        // Not one request of the summarised turns reaches the model.
        for (const turn of byTurn.slice(0, 4)) {
          for (const e of turn.entries)
            if (e.type === "chat_request")
              expect(body).not.toContain(JSON.stringify(e.content).slice(1, -1).slice(0, 200))
        }
        // Turns 5–8: calls kept with {} and a status line; later turns as stored.
        const blocks = messages.flatMap(blocksOf)
        const callsOf = (from: number, to: number) =>
          byTurn
            .slice(from, to + 1)
            .flatMap((t) => t.entries.flatMap((e) => (e.type === "tool_call_request" ? [e] : [])))
        const stripped = callsOf(4, 7)
        const kept = callsOf(8, byTurn.length - 1)
        expect(stripped.length).toBeGreaterThan(0)
        expect(kept.length).toBeGreaterThan(0)
        for (const call of stripped) {
          expect(blocks.find((b) => b.type === "tool_use" && b.id === call.id)?.input).toStrictEqual({})
          const result = blocks.find((b) => b.type === "tool_result" && b.tool_use_id === call.id)!
          expect(resultText(result)).toMatch(new RegExp(`^\\[compacted\\] ${call.name}: (success|error)$`))
          const stored = byTurn
            .flatMap((t) => t.entries)
            .find((e) => e.type === "tool_call_response" && e.id === call.id)!
          expect(
            resultText(result).endsWith(stored.type === "tool_call_response" && stored.is_error ? "error" : "success")
          ).toBe(true)
        }
        for (const call of kept)
          expect(blocks.find((b) => b.type === "tool_use" && b.id === call.id)?.input).toStrictEqual(call.arguments)
        yield* checkIdentical(storage, id)
      }),
    120_000
  )
})

/** `count` turns, each a tool call whose result holds `size` characters, as JP writes them. */
const bigTurns = (count: number, size = 2000, offset = 0): Array<Record<string, unknown>> => {
  const out: Array<Record<string, unknown>> = []
  for (let t = offset; t < offset + count; t++) {
    const at = (s: number) => `2026-03-01 10:${String(t).padStart(2, "0")}:${String(s).padStart(2, "0")}.5`
    out.push(
      { timestamp: at(0), type: "turn_start" },
      { timestamp: at(1), type: "chat_request", content: `question ${t}` },
      { timestamp: at(2), type: "chat_response", reasoning: `thinking about ${t}` },
      {
        timestamp: at(3),
        type: "tool_call_request",
        id: `call_${t}`,
        name: "read",
        arguments: { path: b64(`file_${t}.txt`) }
      },
      {
        timestamp: at(4),
        type: "tool_call_response",
        id: `call_${t}`,
        content: b64(`${t}:` + "x".repeat(size)),
        is_error: false
      },
      { timestamp: at(5), type: "chat_response", message: `answer ${t}` }
    )
  }
  return out
}

/** Writes a conversation as JP does (current format) and returns its events.json. */
const writeConversation = (storage: string, id: string, entries: ReadonlyArray<object>): string => {
  const dir = path.join(storage, "conversations", `${id}-big`)
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(
    path.join(dir, "metadata.json"),
    JSON.stringify({ title: "big", last_activated_at: "2026-03-01 11:00:00.0" }, null, 2) + "\n"
  )
  fs.writeFileSync(path.join(dir, "base_config.json"), "{}\n")
  const file = path.join(dir, "events.json")
  fs.writeFileSync(
    file,
    "[\n" + entries.map((e) => "  " + JSON.stringify(e, null, 2).replaceAll("\n", "\n  ")).join(",\n") + "\n]\n"
  )
  return file
}

const project = (config = ""): Project => {
  const p = makeProject()
  dirs.push(p.root)
  if (config !== "") fs.appendFileSync(path.join(p.storage, "config.toml"), config)
  return p
}

const readEntries = (file: string) => JSON.parse(fs.readFileSync(file, "utf8")) as Array<Record<string, unknown>>

describe("parley conversation compact", () => {
  it.live(
    "appends JP's built-in mechanical rule in JP's writer shape; --dry-run and an empty range change nothing",
    () =>
      Effect.gen(function* () {
        const p = project()
        const id = "17000000501"
        const file = writeConversation(p.storage, id, bigTurns(8))
        const before = fs.readFileSync(file, "utf8")
        const dry = yield* parleyAt(p.storage, undefined, ["conversation", "compact", id, "--dry-run"])
        expect(dry.code).toBe(0)
        expect(dry.stdout).toMatch(
          /^Would compact turns 2–5 of jp-c17000000501 \(reasoning stripped, tool calls stripped\): about 4,\d{3} tokens → [12],\d{3} tokens\.\n$/
        )
        expect(fs.readFileSync(file, "utf8")).toBe(before)

        const done = yield* parleyAt(p.storage, undefined, ["conversation", "compact", id, "--format", "json"])
        expect(done.code).toBe(0)
        const report = JSON.parse(done.stdout) as {
          outcome: string
          from_turn: number
          to_turn: number
          tokens_before: number
          tokens_after: number
        }
        expect(report).toMatchObject({ id, outcome: "compacted", from_turn: 1, to_turn: 4 })
        expect(report.tokens_after).toBeLessThan(report.tokens_before)
        const last = readEntries(file).at(-1)!
        // JP's writer shape, today's id first (JP RFD 097: `{"event_id","type":"compaction",…}`).
        expect(Object.keys(last)).toStrictEqual([
          "event_id",
          "type",
          "timestamp",
          "from_turn",
          "to_turn",
          "reasoning",
          "tool_calls"
        ])
        expect(last).toMatchObject({
          type: "compaction",
          from_turn: 1,
          to_turn: 4,
          reasoning: "strip",
          tool_calls: { policy: "strip", request: true, response: true }
        })
        expect(Object.keys(last["tool_calls"] as object)).toStrictEqual(["policy", "request", "response"])
        expect(last["timestamp"]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{1,9}$/)
        expect(fs.readFileSync(file, "utf8").startsWith(before.slice(0, -3))).toBe(true) // nothing before it changed
        yield* checkIdentical(p.storage, id)
        // ls reports the compacted size.
        const ls = yield* parleyAt(p.storage, undefined, ["conversation", "ls", "--format", "json"])
        expect((JSON.parse(ls.stdout) as Array<{ id: string; tokens: number }>).find((r) => r.id === id)!.tokens).toBe(
          report.tokens_after
        )

        const small = "17000000502"
        const smallFile = writeConversation(p.storage, small, bigTurns(4))
        const smallBefore = fs.readFileSync(smallFile, "utf8")
        const nothing = yield* parleyAt(p.storage, undefined, ["conversation", "compact", small])
        expect(nothing).toMatchObject({ code: 0, stderr: "" })
        expect(nothing.stdout).toMatch(/^Nothing to compact: jp-c17000000502 has 4 turns/)
        expect(fs.readFileSync(smallFile, "utf8")).toBe(smallBefore)
      }),
    60_000
  )

  it.live(
    "--summary: the model reads the raw turns of the range (earlier compactions ignored), the summary is stored as JP stores it",
    () =>
      Effect.gen(function* () {
        const p = project()
        const id = "17000000503"
        const file = writeConversation(p.storage, id, [
          ...bigTurns(8, 300),
          {
            type: "compaction",
            timestamp: "2026-03-01 12:00:00.0",
            from_turn: 0,
            to_turn: 7,
            tool_calls: { policy: "omit" }
          }
        ])
        const fake = yield* FakeLlmServer.make
        fake.enqueueAnthropic({ blocks: [{ type: "text", text: "Files 1 to 4 were read." }] })
        const r = yield* parleyAt(p.storage, fake, [
          "conversation",
          "compact",
          id,
          "--summary",
          "--model",
          "anthropic/claude-test"
        ])
        expect(r.stderr).toBe("")
        expect(r.code).toBe(0)
        expect(r.stdout).toMatch(
          /^Compacted turns 2–5 of jp-c17000000503 \(replaced by a summary\): about \d+ tokens → \d+ tokens\.\n$/
        )
        const body = fake.requests[0]!.body as { system: unknown; messages: Array<{ role: string; content: unknown }> }
        expect(JSON.stringify(body.system)).toContain(JSON.stringify(SUMMARY_INSTRUCTIONS).slice(1, 60))
        // Per turn: the question; the call; its result; the answer. Then the request for the summary.
        expect(body.messages.map((m) => m.role)).toStrictEqual([
          ...Array(4).fill(["user", "assistant", "user", "assistant"]).flat(),
          "user"
        ])
        const text = JSON.stringify(body.messages)
        // Raw: turns 2–5 with their tool results (the omit compaction does not apply to the summariser), nothing else.
        for (let t = 1; t <= 4; t++) expect(text).toContain(`${t}:xxx`)
        expect(text).not.toContain("question 0")
        expect(text).not.toContain("question 5")
        expect(
          blocksOf(body.messages.at(-1)!)
            .map((b) => b.text)
            .join("")
        ).toBe(SUMMARY_REQUEST)
        const last = readEntries(file).at(-1)!
        expect(Object.keys(last)).toStrictEqual(["event_id", "type", "timestamp", "from_turn", "to_turn", "summary"])
        expect(last).toMatchObject({ from_turn: 1, to_turn: 4, summary: { summary: "Files 1 to 4 were read." } })
        yield* checkIdentical(p.storage, id)
      }),
    60_000
  )

  it("takes the conversation's lock: while a query runs on it, compact fails at once naming the pid", async () => {
    const p = project()
    fs.writeFileSync(path.join(p.root, "hold.block"), "")
    const first = spawnParley(p, [
      "query",
      "hold",
      "--script",
      writeScript(p, "s.json", [
        { tool_calls: [{ id: "hold_1", name: "counter", arguments: { name: "hold" } }] },
        { message: "Done." }
      ])
    ])
    children.push(first)
    await waitFor("the tool running", () => /^\d+\n$/.test(fs.readFileSync(path.join(p.root, "hold.pid"), "utf8")))
    groups.push(Number(fs.readFileSync(path.join(p.root, "hold.pid"), "utf8")))
    const id = fs
      .readdirSync(path.join(p.storage, "conversations"))
      .find((n) => /^\d/.test(n))!
      .split("-")[0]!
    const r = await Effect.runPromise(parleyAt(p.storage, undefined, ["conversation", "compact", id]))
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`Conversation ${id} is being written by another parley process (pid ${first.pid})`)
    fs.rmSync(path.join(p.root, "hold.block"))
    expect(await exited(first)).toBe(0)
  }, 60_000)

  it.live(
    "fork keeps JP's retain rule, both ways: a cut in turn N drops exactly the compactions reaching N",
    () =>
      Effect.gen(function* () {
        const p = project()
        const id = "17000000504"
        writeConversation(p.storage, id, [
          ...bigTurns(6, 10),
          // Stamped after the cut, covers turns before it: kept.
          { type: "compaction", timestamp: "2026-03-01 12:00:00.0", from_turn: 0, to_turn: 2, reasoning: "strip" },
          // Stamped before the cut, reaches the cut turn: dropped.
          { type: "compaction", timestamp: "2026-03-01 10:00:00.0", from_turn: 1, to_turn: 3, reasoning: "strip" }
        ])
        const r = yield* parleyAt(p.storage, undefined, [
          "conversation",
          "fork",
          id,
          "--until",
          "2026-03-01 10:03:02.0",
          "--format",
          "json"
        ])
        expect(r.code).toBe(0)
        const forked = (JSON.parse(r.stdout) as { id: string }).id
        const dir = fs.readdirSync(path.join(p.storage, "conversations")).find((n) => n.startsWith(forked))!
        const compactions = readEntries(path.join(p.storage, "conversations", dir, "events.json")).filter(
          (e) => e["type"] === "compaction"
        )
        expect(compactions).toStrictEqual([
          { type: "compaction", timestamp: "2026-03-01 12:00:00.0", from_turn: 0, to_turn: 2, reasoning: "strip" }
        ])
      }),
    60_000
  )
})

const WINDOWS = `
[providers.anthropic.models."claude-test"]
context_window = 3000

[providers.anthropic.models."claude-small"]
context_window = 1500
`

describe("context windows", () => {
  it.live(
    "the inquiry side call is cut to its model's window; the main request (no known window) is sent whole",
    () =>
      Effect.gen(function* () {
        const p = project(`${WINDOWS}\n[conversation.inquiry.assistant]\nmodel = "anthropic/claude-small"\n`)
        const id = "17000000601"
        writeConversation(p.storage, id, bigTurns(8))
        fs.writeFileSync(path.join(p.root, "a.txt"), "old")
        const fake = yield* FakeLlmServer.make
        fake.enqueueAnthropic(
          {
            blocks: [{ type: "tool_use", id: "w1", name: "write_note", input: { path: "a.txt", text: "new" } }],
            stopReason: "tool_use"
          },
          { blocks: [{ type: "text", text: '{"answer":true}' }] },
          { blocks: [{ type: "text", text: "Written." }] }
        )
        const r = yield* parleyAt(
          p.storage,
          fake,
          ["query", "--id", id, "--model", "anthropic/claude-big", "Overwrite a.txt"],
          p.root
        )
        expect(r.stderr).toBe(`conversation ${id}\n`)
        expect(r).toMatchObject({ code: 0, stdout: "Written.\n" })
        expect(fs.readFileSync(path.join(p.root, "a.txt"), "utf8")).toBe("new")
        const [main, inquiry] = fake.requests
        expect(main!.body.model).toBe("claude-big")
        expect(JSON.stringify(main!.body.messages)).toContain("question 0")
        expect(inquiry!.body.model).toBe("claude-small")
        const text = JSON.stringify(inquiry!.body.messages)
        expect(text).not.toContain("question 0")
        expect(text).toContain("Overwrite a.txt?")
        // What the fake provider received is under the window: system, tools and messages, by RFD 034's 3 characters per token.
        const chars =
          JSON.stringify(inquiry!.body.system ?? "").length +
          JSON.stringify(inquiry!.body.tools ?? []).length +
          text.length
        expect(chars / 3).toBeLessThan(1500)
      }),
    60_000
  )

  it.live(
    "a main request over the window with automatic compaction off: nothing sent, exit 1, the sizes and the compact command; compact, then resume",
    () =>
      Effect.gen(function* () {
        const p = project(WINDOWS)
        const id = "17000000602"
        writeConversation(p.storage, id, bigTurns(8))
        const fake = yield* FakeLlmServer.make
        const r = yield* parleyAt(
          p.storage,
          fake,
          ["query", "--id", id, "--model", "anthropic/claude-test", "and now?"],
          p.root
        )
        expect(r.code).toBe(1)
        expect(fake.requests).toHaveLength(0)
        const lines = r.stderr.trimEnd().split("\n")
        expect(lines[0]).toBe(`conversation ${id}`)
        expect(lines[1]).toMatch(
          /^parley: The conversation is too large for anthropic\/claude-test: about 4,\d{3} tokens, and its context window is 3,000 tokens \(automatic compaction is off\)\.$/
        )
        expect(lines[2]).toBe(`Compact it with: parley conversation compact ${id} --storage ${p.storage}`)
        expect(lines[3]).toBe(
          `The turn is saved; resume it with: parley query --continue-turn --id ${id} --storage ${p.storage}`
        )
        expect(lines).toHaveLength(4)

        const compacted = yield* parleyAt(p.storage, fake, ["conversation", "compact", id], p.root)
        expect(compacted.code).toBe(0)
        fake.enqueueAnthropic({ blocks: [{ type: "text", text: "Now it fits." }] })
        const resumed = yield* parleyAt(p.storage, fake, ["query", "--continue-turn", "--id", id], p.root)
        expect(resumed).toMatchObject({ code: 0, stdout: "Now it fits.\n" })
        expect(JSON.stringify(fake.requests[0]!.body.messages)).toContain("[compacted] read: success")
      }),
    60_000
  )

  it.live(
    "automatic compaction on: compacts once, says so, and the request goes out compacted",
    () =>
      Effect.gen(function* () {
        const p = project(`${WINDOWS}\n[conversation.compaction.auto]\nenabled = true\n`)
        const id = "17000000603"
        const file = writeConversation(p.storage, id, bigTurns(8))
        const fake = yield* FakeLlmServer.make
        fake.enqueueAnthropic({ blocks: [{ type: "text", text: "Compacted and answered." }] })
        const r = yield* parleyAt(
          p.storage,
          fake,
          ["query", "--id", id, "--model", "anthropic/claude-test", "and now?"],
          p.root
        )
        expect(r).toMatchObject({ code: 0, stdout: "Compacted and answered.\n" })
        expect(r.stderr).toMatch(
          new RegExp(
            `^conversation ${id}\\nparley: compacted turns 2–6 automatically \\(\\[conversation\\.compaction\\.auto\\]\\): about 4,\\d{3} → 2,\\d{3} tokens of a 3,000-token window\\.\\n$`
          )
        )
        const compactions = readEntries(file).filter((e) => e["type"] === "compaction")
        expect(compactions).toHaveLength(1)
        expect(compactions[0]).toMatchObject({
          from_turn: 1,
          to_turn: 5,
          reasoning: "strip",
          tool_calls: { policy: "strip", request: true, response: true }
        })
        expect(fake.requests).toHaveLength(1)
        const sent = JSON.stringify(fake.requests[0]!.body.messages)
        expect(sent.split("[compacted] read: success").length - 1).toBe(5)
        yield* checkIdentical(p.storage, id)
      }),
    60_000
  )
})

/** JP's key order for a compaction (`compaction.rs`, with draft D50's `source` last); the event id first. */
const JP_KEYS = [
  "event_id",
  "type",
  "timestamp",
  "from_turn",
  "to_turn",
  "summary",
  "reasoning",
  "tool_calls",
  "source"
]

/**
 * What JP's serde reader accepts of a compaction: the keys it knows, in the
 * order it writes them, each of its type (`source`, which JP does not know
 * yet, is ignored by it and must be D50's spelling).
 */
const expectJpReads = (e: Record<string, unknown>) => {
  const keys = Object.keys(e)
  expect(keys.filter((k) => !JP_KEYS.includes(k))).toStrictEqual([])
  expect(keys).toStrictEqual(JP_KEYS.filter((k) => keys.includes(k)))
  expect(e["type"]).toBe("compaction")
  expect(e["timestamp"]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{1,9}$/)
  for (const k of ["from_turn", "to_turn"]) expect(Number.isSafeInteger(e[k]) && (e[k] as number) >= 0).toBe(true)
  if ("summary" in e) expect(Object.keys(e["summary"] as object)).toStrictEqual(["summary"])
  if ("reasoning" in e) expect(e["reasoning"]).toBe("strip")
  if ("tool_calls" in e) {
    const calls = e["tool_calls"] as Record<string, unknown>
    expect(calls["policy"] === "omit" ? ["policy"] : ["policy", "request", "response"]).toStrictEqual(
      Object.keys(calls)
    )
  }
  if ("source" in e) expect(["manual", "auto"]).toContain(e["source"])
}

const compactionsIn = (file: string) => readEntries(file).filter((e) => e["type"] === "compaction")

/** `count` turns of {@link bigTurns}, turn t started `count − t` hours ago (for duration bounds). */
const recentTurns = (count: number, size = 300): Array<Record<string, unknown>> => {
  const now = Date.now()
  return bigTurns(count, size).map((e, i) => {
    const turn = Math.floor(i / 6)
    const at = (now - (count - turn) * 3_600_000 + (i % 6) * 1000) * 1000
    return { ...e, timestamp: Timestamp.fromEpochMicros(at) }
  })
}

describe("RFD 064 and draft D50: the compaction statements, through the built binary", () => {
  it.live(
    "RFD 064: compact --from/--to compacts only the turns in range (1-based turns, -N, a duration, last-compaction)",
    () =>
      Effect.gen(function* () {
        const p = project()
        const id = "17000000701"
        const file = writeConversation(p.storage, id, recentTurns(8))
        const compact = (...args: Array<string>) =>
          parleyAt(p.storage, undefined, ["conversation", "compact", id, ...args, "--format", "json"])
        // Turn t started 8 − t hours ago: 5h30m ago is in turn 3 (1-based), so --from starts after it, at turn 4.
        const first = yield* compact("--from", "5h30m", "--to", "-2")
        expect(first.code).toBe(0)
        expect(JSON.parse(first.stdout)).toMatchObject({ outcome: "compacted", from_turn: 3, to_turn: 6 })
        const second = yield* compact("--from", "last-compaction", "--to", "8")
        expect(JSON.parse(second.stdout)).toMatchObject({ outcome: "compacted", from_turn: 7, to_turn: 7 })
        const third = yield* compact("--from", "2", "--to", "3")
        expect(JSON.parse(third.stdout)).toMatchObject({ outcome: "compacted", from_turn: 1, to_turn: 2 })
        // The built-in rule's policies, over exactly those turns.
        const made = compactionsIn(file)
        expect(made.map((c) => [c["from_turn"], c["to_turn"], c["reasoning"]])).toStrictEqual([
          [3, 6, "strip"],
          [7, 7, "strip"],
          [1, 2, "strip"]
        ])
        for (const c of made) expectJpReads(c)
        const bad = yield* parleyAt(p.storage, undefined, ["conversation", "compact", id, "--to", "last-compaction"])
        expect(bad.code).toBe(2)
        expect(bad.stderr).toContain("--to: `last-compaction` is only valid for --from")
        yield* checkIdentical(p.storage, id)
      }),
    120_000
  )

  it.live(
    "RFD 064: compact --reasoning and --tools[=MODE] append one rule of exactly those policies",
    () =>
      Effect.gen(function* () {
        const p = project()
        const id = "17000000702"
        const file = writeConversation(p.storage, id, bigTurns(8, 100))
        for (const args of [["--reasoning"], ["--tools"], ["--tools=sreq", "--keep-last", "1"], ["--tools=omit"]]) {
          const r = yield* parleyAt(p.storage, undefined, ["conversation", "compact", id, ...args])
          expect([args, r.code, r.stderr]).toStrictEqual([args, 0, ""])
        }
        const made = compactionsIn(file)
        expect(made.map(({ event_id: _, timestamp: __, ...rest }) => rest)).toStrictEqual([
          { type: "compaction", from_turn: 1, to_turn: 4, reasoning: "strip" },
          {
            type: "compaction",
            from_turn: 1,
            to_turn: 4,
            tool_calls: { policy: "strip", request: true, response: true }
          },
          {
            type: "compaction",
            from_turn: 1,
            to_turn: 6,
            tool_calls: { policy: "strip", request: true, response: false }
          },
          { type: "compaction", from_turn: 1, to_turn: 4, tool_calls: { policy: "omit" } }
        ])
        for (const c of made) expectJpReads(c)
        const bad = yield* parleyAt(p.storage, undefined, ["conversation", "compact", id, "--tools=shred"])
        expect(bad.code).toBe(2)
        expect(bad.stderr).toContain('--tools: "shred" is not one of strip, strip-requests, strip-responses, omit.')
        expect(compactionsIn(file)).toHaveLength(4)
        yield* checkIdentical(p.storage, id)
      }),
    120_000
  )

  it.live(
    "RFD 064: compact --reset removes every compaction, --reset=N only the N-th; every other entry keeps its bytes",
    () =>
      Effect.gen(function* () {
        const p = project()
        const id = "17000000703"
        const stored = [
          { type: "compaction", timestamp: "2026-03-01 12:00:00.0", from_turn: 0, to_turn: 2, reasoning: "strip" },
          {
            type: "compaction",
            timestamp: "2026-03-01 12:00:01.0",
            from_turn: 1,
            to_turn: 3,
            tool_calls: { policy: "omit" }
          },
          {
            type: "compaction",
            timestamp: "2026-03-01 12:00:02.0",
            from_turn: 0,
            to_turn: 1,
            summary: { summary: "S" }
          }
        ]
        const file = writeConversation(p.storage, id, [...bigTurns(6, 50), ...stored])
        const without = (drop: ReadonlyArray<number>) =>
          fs.readFileSync(
            writeConversation(p.storage, "17000000799", [
              ...bigTurns(6, 50),
              ...stored.filter((_, i) => !drop.includes(i))
            ]),
            "utf8"
          )
        const original = fs.readFileSync(file, "utf8")
        const dry = yield* parleyAt(p.storage, undefined, ["conversation", "compact", id, "--reset=2", "--dry-run"])
        expect(dry.stdout).toBe(`Would remove the compaction of turns 2–4 from jp-c${id}.\n`)
        expect(fs.readFileSync(file, "utf8")).toBe(original)
        const one = yield* parleyAt(p.storage, undefined, ["conversation", "compact", id, "--reset=2"])
        expect(one).toMatchObject({ code: 0, stdout: `Removed the compaction of turns 2–4 from jp-c${id}.\n` })
        expect(fs.readFileSync(file, "utf8")).toBe(without([1]))
        const missing = yield* parleyAt(p.storage, undefined, ["conversation", "compact", id, "--reset=3"])
        expect(missing.code).toBe(1)
        expect(missing.stderr).toContain("compaction 3 out of range (the conversation has 2 compactions)")
        const mixed = yield* parleyAt(p.storage, undefined, ["conversation", "compact", id, "--reset", "--reasoning"])
        expect(mixed.code).toBe(2)
        const all = yield* parleyAt(p.storage, undefined, ["conversation", "compact", id, "--reset"])
        expect(all).toMatchObject({ code: 0, stdout: `Removed 2 compactions from jp-c${id}.\n` })
        expect(fs.readFileSync(file, "utf8")).toBe(without([0, 1, 2]))
        yield* checkIdentical(p.storage, id)
      }),
    120_000
  )

  it.live(
    "RFD 064: query --compact[=SPEC] compacts before the turn as JP's DSL says (bare: the configured rules; s: a summary by the run's model)",
    () =>
      Effect.gen(function* () {
        const p = project()
        const id = "17000000704"
        const file = writeConversation(p.storage, id, bigTurns(8, 100))
        const fake = yield* FakeLlmServer.make
        const bad = yield* parleyAt(p.storage, fake, ["query", "--id", id, "-k=q:..-3", "hi"])
        expect(bad.code).toBe(2)
        expect(bad.stderr).toContain("--compact: invalid compact spec 'q:..-3': unknown policy 'q'.")
        fake.enqueueAnthropic(
          { blocks: [{ type: "text", text: "SUMMARY OF TURN 1" }] },
          { blocks: [{ type: "text", text: "Carrying on." }] }
        )
        // s:..1 summarises turn 1; t=o:2..-3 omits the calls of turns 2 … 3 before the end (2–5).
        const r = yield* parleyAt(p.storage, fake, [
          "query",
          "--id",
          id,
          "--model",
          "anthropic/claude-test",
          "--compact=s:..1",
          "-k=t=o:2..-3",
          "and now?"
        ])
        expect(r).toMatchObject({ code: 0, stdout: "Carrying on.\n" })
        expect(fake.requests).toHaveLength(2)
        const [summarizer, main] = fake.requests
        expect(summarizer!.body.model).toBe("claude-test")
        expect(JSON.stringify(summarizer!.body.messages)).toContain(SUMMARY_REQUEST)
        const sent = JSON.stringify(main!.body.messages)
        expect(sent).toContain("[Summary of previous conversation]")
        expect(sent).toContain("SUMMARY OF TURN 1")
        expect(sent).not.toContain("question 0")
        for (let t = 1; t <= 4; t++) expect(sent).not.toContain(`"call_${t}"`)
        for (let t = 5; t <= 7; t++) expect(sent).toContain(`"call_${t}"`)
        const entries = readEntries(file)
        const made = entries.filter((e) => e["type"] === "compaction")
        expect(made.map(({ event_id: _, timestamp: __, ...rest }) => rest)).toStrictEqual([
          { type: "compaction", from_turn: 0, to_turn: 0, summary: { summary: "SUMMARY OF TURN 1" } },
          { type: "compaction", from_turn: 1, to_turn: 4, tool_calls: { policy: "omit" } }
        ])
        // Appended before the new turn.
        expect(entries.findIndex((e) => e["type"] === "compaction")).toBeLessThan(
          entries.findIndex((e) => e["content"] === "and now?")
        )
        for (const c of made) expectJpReads(c)
        yield* checkIdentical(p.storage, id)

        // A bare --compact: the configured rules (here JP's built-in one) over the 9 turns.
        fake.enqueueAnthropic({ blocks: [{ type: "text", text: "Again." }] })
        const bare = yield* parleyAt(p.storage, fake, ["query", "--id", id, "--compact", "more?"])
        expect(bare).toMatchObject({ code: 0, stdout: "Again.\n" })
        expect(compactionsIn(file).at(-1)).toMatchObject({ from_turn: 1, to_turn: 5, reasoning: "strip" })
      }),
    120_000
  )

  it.live(
    "RFD 064: print --compacted shows what the model is sent, print alone the stored history",
    () =>
      Effect.gen(function* () {
        const p = project()
        const id = "17000000705"
        writeConversation(p.storage, id, [
          ...bigTurns(5, 40),
          {
            type: "compaction",
            timestamp: "2026-03-01 12:00:00.0",
            from_turn: 0,
            to_turn: 1,
            summary: { summary: "EARLY TURNS" }
          },
          {
            type: "compaction",
            timestamp: "2026-03-01 12:00:01.0",
            from_turn: 2,
            to_turn: 3,
            reasoning: "strip",
            tool_calls: { policy: "omit" }
          }
        ])
        const full = yield* parleyAt(p.storage, undefined, ["conversation", "print", id])
        const compacted = yield* parleyAt(p.storage, undefined, ["conversation", "print", id, "--compacted"])
        expect([full.code, compacted.code]).toStrictEqual([0, 0])
        for (const s of ["question 0", "thinking about 2", "call_3", "thinking about 4", "call_4"])
          expect(full.stdout).toContain(s)
        expect(compacted.stdout).toContain("[Summary of previous conversation]")
        expect(compacted.stdout).toContain("EARLY TURNS")
        for (const s of ["question 0", "question 1", "thinking about 2", "call_2", "call_3"])
          expect(compacted.stdout).not.toContain(s)
        for (const s of ["question 2", "answer 3", "thinking about 4", "call_4"]) expect(compacted.stdout).toContain(s)
        const json = yield* parleyAt(p.storage, undefined, [
          "conversation",
          "print",
          id,
          "--compacted",
          "--format",
          "json"
        ])
        const types = (JSON.parse(json.stdout) as Array<{ type: string }>).map((e) => e.type)
        expect(types).not.toContain("compaction")
        expect(types.filter((t) => t === "tool_call_request")).toHaveLength(1)
      }),
    120_000
  )

  it.live(
    "RFD 064: [[conversation.compaction.rules]] in config: each rule appends one compaction, in place of the built-in rule",
    () =>
      Effect.gen(function* () {
        const p = project(
          [
            "[[conversation.compaction.rules]]",
            "keep_last = 5",
            'reasoning = "strip"',
            "",
            "[[conversation.compaction.rules]]",
            "keep_first = 0",
            "keep_last = 2",
            'tool_calls = "strip-responses"',
            ""
          ].join("\n")
        )
        const id = "17000000706"
        const file = writeConversation(p.storage, id, bigTurns(8, 100))
        const dry = yield* parleyAt(p.storage, undefined, ["conversation", "compact", id, "--dry-run"])
        expect(dry.stdout).toMatch(
          /^Would compact turns 2–3 \(reasoning stripped\), compact turns 1–6 \(tool results stripped\) of jp-c17000000706: about \d+ tokens → \d+ tokens\.\n$/
        )
        const r = yield* parleyAt(p.storage, undefined, ["conversation", "compact", id])
        expect(r.code).toBe(0)
        expect(r.stdout).toMatch(
          /^Compacted turns 2–3 \(reasoning stripped\), turns 1–6 \(tool results stripped\) of jp-c/
        )
        const made = compactionsIn(file)
        expect(made.map(({ event_id: _, timestamp: __, ...rest }) => rest)).toStrictEqual([
          { type: "compaction", from_turn: 1, to_turn: 2, reasoning: "strip" },
          {
            type: "compaction",
            from_turn: 0,
            to_turn: 5,
            tool_calls: { policy: "strip", request: false, response: true }
          }
        ])
        for (const c of made) expectJpReads(c)
        // --compact=SPEC alone replaces the configured rules; with a bare --compact it adds to them.
        const both = yield* parleyAt(p.storage, undefined, [
          "conversation",
          "compact",
          id,
          "-k",
          "-k=r:..",
          "--dry-run"
        ])
        expect(both.stdout).toMatch(
          /^Would compact turns 2–3 .*, compact turns 1–6 .*, compact turns 1–8 \(reasoning stripped\) of /
        )
        const bad = project('[[conversation.compaction.rules]]\ntool_calls = "shred"\n')
        writeConversation(bad.storage, id, bigTurns(8, 10))
        const refused = yield* parleyAt(bad.storage, undefined, ["conversation", "compact", id])
        expect(refused.code).not.toBe(0)
        expect(refused.stderr).toContain("tool_calls")
        yield* checkIdentical(p.storage, id)
      }),
    120_000
  )

  it.live(
    'D50: automatic compactions are marked source = "auto" (print says so), manual ones are written as JP writes them',
    () =>
      Effect.gen(function* () {
        const p = project(`${WINDOWS}\n[conversation.compaction.auto]\nenabled = true\n`)
        const id = "17000000707"
        const file = writeConversation(p.storage, id, bigTurns(8))
        const fake = yield* FakeLlmServer.make
        fake.enqueueAnthropic({ blocks: [{ type: "text", text: "Fine." }] })
        const r = yield* parleyAt(
          p.storage,
          fake,
          ["query", "--id", id, "--model", "anthropic/claude-test", "go"],
          p.root
        )
        expect(r).toMatchObject({ code: 0, stdout: "Fine.\n" })
        const manual = yield* parleyAt(p.storage, undefined, [
          "conversation",
          "compact",
          id,
          "--from",
          "1",
          "--to",
          "1",
          "--reasoning"
        ])
        expect(manual.code).toBe(0)
        const [auto, byHand] = compactionsIn(file)
        expect(auto).toMatchObject({ from_turn: 1, to_turn: 5, source: "auto" })
        expect(Object.keys(auto!).at(-1)).toBe("source")
        expect(byHand).toMatchObject({ from_turn: 0, to_turn: 0, reasoning: "strip" })
        expect(byHand).not.toHaveProperty("source")
        expectJpReads(auto!)
        expectJpReads(byHand!)
        const printed = yield* parleyAt(p.storage, undefined, ["conversation", "print", id])
        expect(printed.stdout).toContain("> **Compaction** (automatic) of turns 2–6")
        expect(printed.stdout).toContain("> **Compaction** of turn 1 ")
        yield* checkIdentical(p.storage, id)
      }),
    120_000
  )

  it.live(
    "D50: an auto rule with a summary table: its summary.model writes the summary from the raw turns, stored as JP stores one",
    () =>
      Effect.gen(function* () {
        const p = project(
          `${WINDOWS}\n[conversation.compaction.auto]\nenabled = true\n\n[conversation.compaction.auto.rule.summary.model]\nid = "anthropic/claude-small"\n`
        )
        const id = "17000000708"
        const file = writeConversation(p.storage, id, bigTurns(8))
        const fake = yield* FakeLlmServer.make
        fake.enqueueAnthropic(
          { blocks: [{ type: "text", text: "AUTO SUMMARY of files 1 to 5." }] },
          { blocks: [{ type: "text", text: "Summarised and answered." }] }
        )
        const r = yield* parleyAt(
          p.storage,
          fake,
          ["query", "--id", id, "--model", "anthropic/claude-test", "go"],
          p.root
        )
        expect(r).toMatchObject({ code: 0, stdout: "Summarised and answered.\n" })
        expect(r.stderr).toContain("compacted turns 2–6 automatically")
        const [summarizer, main] = fake.requests
        expect(summarizer!.body.model).toBe("claude-small")
        const read = JSON.stringify(summarizer!.body.messages)
        for (let t = 1; t <= 5; t++) expect(read).toContain(`${t}:xxx`)
        expect(read).not.toContain("question 0")
        expect(main!.body.model).toBe("claude-test")
        const sent = JSON.stringify(main!.body.messages)
        expect(sent).toContain("AUTO SUMMARY of files 1 to 5.")
        expect(sent).not.toContain("question 3")
        const [made] = compactionsIn(file)
        const { event_id: _, timestamp: __, ...rest } = made!
        expect(rest).toStrictEqual({
          type: "compaction",
          from_turn: 1,
          to_turn: 5,
          summary: { summary: "AUTO SUMMARY of files 1 to 5." },
          source: "auto"
        })
        expectJpReads(made!)
        yield* checkIdentical(p.storage, id)
      }),
    120_000
  )

  it("one --script flag: compact reads --script, and $PARLEY_SCRIPT without it, as query does", () => {
    const p = project()
    const id = "17000000709"
    const file = writeConversation(p.storage, id, bigTurns(10, 20))
    const script = (text: string) => writeScript(p, `${text}.json`, [{ message: text }])
    const env = { PARLEY_SCRIPT: undefined, ANTHROPIC_API_KEY: undefined, OPENAI_API_KEY: undefined }
    const flag = runParley(
      [
        "--storage",
        p.storage,
        "conversation",
        "compact",
        id,
        "--summary",
        "--keep-last",
        "6",
        "--script",
        script("FROM FLAG")
      ],
      { env }
    )
    expect(flag).toMatchObject({ code: 0, stderr: "" })
    const fromEnv = runParley(
      ["--storage", p.storage, "conversation", "compact", id, "-k=s:7..8", "--model", "scripted"],
      { env: { ...env, PARLEY_SCRIPT: script("FROM ENV") } }
    )
    expect(fromEnv).toMatchObject({ code: 0, stderr: "" })
    expect(
      compactionsIn(file).map((c) => [c["from_turn"], c["to_turn"], (c["summary"] as { summary: string }).summary])
    ).toStrictEqual([
      [1, 3, "FROM FLAG"],
      [6, 7, "FROM ENV"]
    ])
  }, 60_000)
})
