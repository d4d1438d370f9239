/**
 * Whole-process benchmarks (issue 16: scale), each against a floor measured
 * in the same run:
 *
 * - `conversation ls --format json` over 1,000 and 10,000 conversations
 *   (warm index) vs a node process that reads every `metadata.json` and
 *   stats every `events.json`; each side's start-up (the same process over
 *   an empty storage) is subtracted from it;
 * - `query --continue-turn` on a ~94 MB conversation (built from the largest
 *   corpus conversation), run to exit, vs a node process that reads the
 *   file, JSON.parses it and decodes the same base64 fields: time and peak
 *   memory;
 * - `conversation check` on the same, against the same floor;
 * - how both grow from 1.8 → 10 → 94 MB.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Goal } from "./Harness.ts"
import { eventsText } from "./listing.ts"
import { cleanup, interleaved, memoryProbe, runNode, type Sample } from "./Process.ts"

const repo = path.resolve(import.meta.dirname, "..")
/** The bundle measured (`PARLEY_BENCH_BIN` measures another build, e.g. the one before a change). */
const bin = process.env["PARLEY_BENCH_BIN"] ?? path.join(repo, "dist", "parley.mjs")
const corpusConversation = path.join(
  repo,
  "test",
  "fixtures",
  "corpus",
  "jp",
  "conversations",
  "17738399468-rfd-review-and-phase-1-planning"
)

/** The floor of `ls`: what any listing must do, in plain synchronous node. */
const LS_FLOOR = `
const fs = require("fs"), path = require("path")
const dir = process.argv[1]
let names = []
try { names = fs.readdirSync(dir) } catch {}
let bytes = 0
for (const name of names) {
  if (name.startsWith(".")) continue
  const d = path.join(dir, name)
  const metadata = JSON.parse(fs.readFileSync(path.join(d, "metadata.json"), "utf8"))
  bytes += fs.statSync(path.join(d, "events.json")).size + (metadata.title === undefined ? 0 : 1)
}
console.log(bytes)
`

/** The floor of reading a conversation: read, JSON.parse, undo the storage base64 (as bench/storage.ts). */
const READ_FLOOR = `
const fs = require("fs")
const utf8 = new TextDecoder("utf-8", { fatal: true })
const b64 = (s) => {
  if (s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return s
  try { return utf8.decode(Buffer.from(s, "base64")) } catch { return s }
}
const leaves = (v) => typeof v === "string" ? b64(v) : Array.isArray(v) ? v.map(leaves)
  : v !== null && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, leaves(x)])) : v
const entries = JSON.parse(fs.readFileSync(process.argv[1], "utf8"))
for (const e of entries) {
  if (e.metadata !== undefined) e.metadata = leaves(e.metadata)
  if (e.type === "tool_call_request" && e.arguments !== undefined) e.arguments = leaves(e.arguments)
  if (e.type === "tool_call_response" && typeof e.content === "string") e.content = b64(e.content)
}
console.log(entries.length)
`

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`

// --- ls ------------------------------------------------------------------------

/**
 * `count` conversations; every `events.json` is a hard link to one file (the
 * warm listing never reads it, only stats it), so 10,000 cost no disk.
 */
export const listingStorage = (root: string, count: number, events: string): string => {
  const storage = path.join(root, `ls-${count}`)
  const conversations = path.join(storage, "conversations")
  fs.mkdirSync(conversations, { recursive: true })
  const template = path.join(storage, "events-template.json")
  fs.writeFileSync(template, events)
  for (let i = 0; i < count; i++) {
    const dir = path.join(conversations, `${17000000000 + i}-synthetic-conversation-${i}`)
    fs.mkdirSync(dir)
    fs.writeFileSync(
      path.join(dir, "metadata.json"),
      JSON.stringify(
        { title: `Synthetic conversation ${i}`, last_activated_at: `2026-03-01 10:00:0${i % 10}.0` },
        null,
        2
      ) + "\n"
    )
    fs.writeFileSync(path.join(dir, "base_config.json"), "{}\n")
    try {
      fs.linkSync(template, path.join(dir, "events.json"))
    } catch {
      fs.copyFileSync(template, path.join(dir, "events.json"))
    }
  }
  return storage
}

const lsGoal = (root: string, count: number, events: string, runs: number): Goal => {
  const storage = listingStorage(root, count, events)
  const empty = path.join(root, "ls-empty")
  fs.mkdirSync(path.join(empty, "conversations"), { recursive: true })
  const ls = (s: string) => () => runNode([bin, "--storage", s, "conversation", "ls", "--format", "json"])
  const floor = (s: string) => () => runNode(["-e", LS_FLOOR, path.join(s, "conversations")])
  const t0 = performance.now()
  ls(storage)() // cold: parses every log once and writes the index
  const coldMs = performance.now() - t0
  const [subject, subjectStart, floorRun, floorStart] = interleaved(
    [{ run: ls(storage) }, { run: ls(empty) }, { run: floor(storage) }, { run: floor(empty) }],
    runs
  )
  fs.rmSync(storage, { recursive: true, force: true })
  return {
    name: `conversation ls --format json, whole process, ${count.toLocaleString("en")} conversations (warm index), start-up subtracted`,
    subject: { name: "parley ls − parley ls of an empty storage", medianMs: subject!.ms - subjectStart!.ms },
    floor: {
      name: "read every metadata.json + stat every events.json − the same over nothing",
      medianMs: floorRun!.ms - floorStart!.ms
    },
    maxRatio: 2,
    note:
      `whole process: parley ${subject!.ms.toFixed(0)} ms (start-up ${subjectStart!.ms.toFixed(0)} ms), floor ${floorRun!.ms.toFixed(0)} ms (start-up ${floorStart!.ms.toFixed(0)} ms); ` +
      `peak ${subject!.peakMb.toFixed(0)} MB vs ${floorRun!.peakMb.toFixed(0)} MB; cold first listing ${coldMs.toFixed(0)} ms (logs of ${mb(Buffer.byteLength(events))})`
  }
}

// --- resume and check ---------------------------------------------------------------

export const ID = "17738399468"

/**
 * A copy of the largest corpus conversation grown to ~`targetMb` by repeating
 * its entries (the packed base config once), ending in an incomplete turn
 * (a question with no reply yet). Returns the storage and the pristine files.
 */
export const bigConversation = (root: string, targetMb: number) => {
  const source = fs.readFileSync(path.join(corpusConversation, "events.json"), "utf8")
  const entries = JSON.parse(source) as Array<unknown>
  const piece = (e: unknown) => "  " + JSON.stringify(e, null, 2).replaceAll("\n", "\n  ")
  const [base, ...rest] = entries.map(piece)
  const restBytes = rest.reduce((n, p) => n + Buffer.byteLength(p) + 2, 0)
  const copies = Math.max(1, Math.round((targetMb * 1e6 - Buffer.byteLength(base!)) / restBytes))
  const ts = "2026-04-01 10:00:00.0"
  const parts = [base!]
  for (let i = 0; i < copies; i++) parts.push(...rest)
  parts.push(
    piece({ timestamp: ts, type: "turn_start" }),
    piece({ timestamp: ts, type: "chat_request", content: "and then?" })
  )
  const events = "[\n" + parts.join(",\n") + "\n]\n"
  const metadata = fs.readFileSync(path.join(corpusConversation, "metadata.json"), "utf8")
  const storage = path.join(root, `resume-${targetMb}`)
  const dir = path.join(storage, "conversations", path.basename(corpusConversation))
  fs.mkdirSync(dir, { recursive: true })
  const pristine = path.join(storage, "pristine-events.json")
  fs.writeFileSync(pristine, events)
  fs.writeFileSync(path.join(storage, "script.json"), JSON.stringify({ steps: [{ message: "ok" }] }))
  /** Puts the conversation back as generated (a resumed turn completes it). */
  const reset = () => {
    fs.copyFileSync(pristine, path.join(dir, "events.json"))
    fs.writeFileSync(path.join(dir, "metadata.json"), metadata)
    fs.rmSync(path.join(dir, "events.json.journal"), { force: true })
  }
  reset()
  return { storage, events: path.join(dir, "events.json"), bytes: Buffer.byteLength(events), reset }
}

interface SizeRow {
  readonly bytes: number
  readonly resume: Sample
  readonly check: Sample
  readonly floor: Sample
}

const measureSize = (root: string, targetMb: number, runs: number): SizeRow => {
  const c = bigConversation(root, targetMb)
  const resume = () => {
    const s = runNode([
      bin,
      "--storage",
      c.storage,
      "query",
      "--continue-turn",
      "--id",
      ID,
      "--model",
      "scripted",
      "--script",
      path.join(c.storage, "script.json")
    ])
    // The run must have resumed and completed the turn: the reply is on disk.
    if (fs.statSync(c.events).size <= c.bytes) throw new Error("--continue-turn did not record the reply")
    return s
  }
  const [r, k, f] = interleaved(
    [
      { before: c.reset, run: resume },
      { run: () => runNode([bin, "--storage", c.storage, "conversation", "check", ID]) },
      { run: () => runNode(["-e", READ_FLOOR, c.events]) }
    ],
    runs
  )
  fs.rmSync(c.storage, { recursive: true, force: true })
  return { bytes: c.bytes, resume: r!, check: k!, floor: f! }
}

const growth = (rows: ReadonlyArray<SizeRow>, pick: (r: SizeRow) => Sample): string => {
  const ms = rows.map((r) => `${(pick(r).ms / 1000).toFixed(2)} s`).join(" → ")
  const peak = rows.map((r) => `${pick(r).peakMb.toFixed(0)} MB`).join(" → ")
  return `time ${ms}; peak ${peak}`
}

/** `npm run bench -- whole ls` (or `size`) runs only those cases. */
const only = process.argv[3]

export const run = async (): Promise<ReadonlyArray<Goal>> => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-whole-"))
  try {
    const goals: Array<Goal> = []
    if (only === undefined || only === "ls") {
      // Fifteen runs at 1,000: the listing is ~30 ms on top of ~170 ms of start-up, so the difference is noisy.
      goals.push(lsGoal(root, 1_000, eventsText(1), 15))
      // 10,000 logs of ~20 KB: the warm listing only stats them; the cold one parses them once.
      goals.push(lsGoal(root, 10_000, eventsText(1, 20_000), 7))
    }
    if (only !== undefined && only !== "size") return goals
    const rows = [measureSize(root, 1.8, 5), measureSize(root, 10, 3), measureSize(root, 94, 3)]
    const big = rows.at(-1)!
    const sizes = rows.map((r) => mb(r.bytes)).join(" → ")
    console.log(`  (peak memory by ${memoryProbe})`)
    console.log(`  growth over ${sizes}:`)
    console.log(`    query --continue-turn:  ${growth(rows, (r) => r.resume)}`)
    console.log(`    conversation check:     ${growth(rows, (r) => r.check)}`)
    console.log(`    floor (read+parse+b64): ${growth(rows, (r) => r.floor)}`)
    const floorTime = { name: "node: read + JSON.parse + base64 decode", medianMs: big.floor.ms }
    const floorPeak = { name: "the same node process", medianMs: big.floor.peakMb }
    goals.push({
      name: `query --continue-turn on a ${mb(big.bytes)} conversation, whole process to exit: time`,
      subject: { name: "parley query --continue-turn (scripted reply, fold on close)", medianMs: big.resume.ms },
      floor: floorTime,
      maxRatio: 1.2,
      note: `CPU ${big.resume.cpuMs.toFixed(0)} ms vs ${big.floor.cpuMs.toFixed(0)} ms`
    })
    goals.push({
      name: `query --continue-turn on a ${mb(big.bytes)} conversation: peak memory`,
      subject: { name: "parley query --continue-turn", medianMs: big.resume.peakMb },
      floor: floorPeak,
      maxRatio: 1.5,
      unit: "MB"
    })
    goals.push({
      name: `conversation check on a ${mb(big.bytes)} conversation, whole process: time (decodes and re-encodes, so twice the floor's work)`,
      subject: { name: "parley conversation check", medianMs: big.check.ms },
      floor: floorTime,
      maxRatio: 2.5
    })
    goals.push({
      name: `conversation check on a ${mb(big.bytes)} conversation: peak memory`,
      subject: { name: "parley conversation check", medianMs: big.check.peakMb },
      floor: floorPeak,
      maxRatio: 1.5,
      unit: "MB"
    })
    return goals
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
    cleanup()
  }
}
