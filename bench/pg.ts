/**
 * The PostgreSQL store's numbers (issue 24), each against the file store in
 * the same run, on a throwaway server this suite starts and stops (skipped,
 * saying why, when the server binaries are missing):
 *
 * - append: p50/p99 of one event appended into a 10,000-event conversation
 *   whose 10,000 events are one open turn (the listing's incomplete state
 *   is of that turn): goal p99 ≤ 5 ms;
 * - `conversation ls --format json` over 10,000 conversations, whole
 *   process: ≤ 1.5× the file store's warm listing;
 * - `query --continue-turn` on the ~94 MB conversation (whole.ts builds it
 *   from the largest corpus conversation; imported with `Transfer`), whole
 *   process to exit: ≤ 1.5× the file store, time and peak memory.
 *
 * `npm run bench -- pg append` (or `ls`, `resume`) runs one case.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import { ChatRequest } from "../src/domain/event/ChatRequest.ts"
import type { StreamEntry } from "../src/domain/event/ConversationEvent.ts"
import * as Timestamp from "../src/domain/event/Timestamp.ts"
import { ToolCallRequest } from "../src/domain/event/ToolCallRequest.ts"
import { ToolCallResponse } from "../src/domain/event/ToolCallResponse.ts"
import { TurnStart } from "../src/domain/event/TurnStart.ts"
import * as ConversationId from "../src/domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../src/domain/storage/ConversationMetadata.ts"
import * as FileConversationStore from "../src/layers/store/FileConversationStore.ts"
import * as PgConversationStore from "../src/layers/store/pg/PgConversationStore.ts"
import * as Transfer from "../src/layers/store/pg/Transfer.ts"
import { ConversationStore } from "../src/services/ConversationStore.ts"
import { freshDatabase, type PgServer, pgSkip, psql, startPg } from "../test/support/Pg.ts"
import type { Goal } from "./Harness.ts"
import { eventsText } from "./listing.ts"
import { cleanup, interleaved, memoryProbe, runNode, type Sample } from "./Process.ts"
import { bigConversation, ID, listingStorage } from "./whole.ts"

const repo = path.resolve(import.meta.dirname, "..")
const bin = process.env["PARLEY_BENCH_BIN"] ?? path.join(repo, "dist", "parley.mjs")

// --- append ------------------------------------------------------------------------

const BASE = 1_773_800_000n * 1_000_000_000n
const at = (i: number) => Timestamp.fromEpochNanos(BASE + BigInt(i) * 1_000_000n)
const call = (i: number) =>
  new ToolCallRequest({
    timestamp: at(i),
    id: `call_${i}`,
    name: "write_note",
    arguments: { path: `notes/${i}.md`, text: "lorem ipsum dolor sit amet" }
  })
const result = (i: number) =>
  new ToolCallResponse({ timestamp: at(i), id: `call_${i - 1}`, content: "written", is_error: false })

/** One open turn of `n` entries: a question, then tool calls with their results, none answered by the model yet. */
const openTurn = (n: number): Array<StreamEntry> => {
  const entries: Array<StreamEntry> = [
    new TurnStart({ timestamp: at(0) }),
    new ChatRequest({ timestamp: at(1), content: "go" })
  ]
  for (let i = 2; entries.length < n; i++) entries.push(i % 2 === 0 ? call(i) : result(i))
  return entries
}

const percentile = (xs: ReadonlyArray<number>, p: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]!
}

/** Times `runs` single-event appends (after `warmup`) into a conversation of `size` entries, one session. */
const appendTimes = (layer: Layer.Layer<ConversationStore>, size: number, runs: number, warmup: number) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const store = yield* ConversationStore
        const id = ConversationId.parse("17738000001")!
        const entries = openTurn(size)
        yield* Effect.scoped(
          store.create({
            id,
            metadata: ConversationMetadata.make({ title: "append bench", last_activated_at: at(0) }),
            entries
          })
        )
        const session = yield* store.open(id)
        const times: Array<number> = []
        for (let k = 0; k < warmup + runs; k++) {
          const i = size + k
          const e = i % 2 === 0 ? call(i) : result(i)
          const t0 = performance.now()
          yield* session.append([e])
          if (k >= warmup) times.push(performance.now() - t0)
        }
        return times
      })
    ).pipe(Effect.provide(layer))
  )

/**
 * What one round trip to the server costs on this machine (`SELECT 1`, the
 * same runs): the part of an append's tail that is the machine's (the
 * server process waiting to be scheduled), not the store's.
 */
const roundTrips = (url: string, runs: number, warmup: number) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const sql = yield* SqlClient
        const times: Array<number> = []
        for (let k = 0; k < warmup + runs; k++) {
          const t0 = performance.now()
          yield* sql`SELECT 1`
          if (k >= warmup) times.push(performance.now() - t0)
        }
        return times
      })
    ).pipe(Effect.provide(Layer.orDie(PgConversationStore.clientLayer({ url, maxConnections: 1 }))))
  )

const appendGoals = async (server: PgServer, root: string): Promise<Array<Goal>> => {
  const size = 10_000
  const runs = 2000
  const url = freshDatabase(server)
  const pg = await appendTimes(Layer.orDie(PgConversationStore.layer({ url })), size, runs, 50)
  const trip = await roundTrips(url, runs, 50)
  const file = await appendTimes(
    FileConversationStore.layer({ storageDir: fs.mkdtempSync(path.join(root, "append-")) }),
    size,
    runs,
    50
  )
  const [p50, p99, f50, f99] = [
    percentile(pg, 0.5),
    percentile(pg, 0.99),
    percentile(file, 0.5),
    percentile(file, 0.99)
  ]
  const tail = (xs: ReadonlyArray<number>) =>
    [0.5, 0.9, 0.99, 0.999].map((p) => percentile(xs, p).toFixed(2)).join(" / ")
  const note =
    `${runs} appends, p50 / p90 / p99 / p99.9 in ms: PostgreSQL ${tail(pg)}; file store ${tail(file)} (ratio p50 ${(p50 / f50).toFixed(2)}, p99 ${(p99 / f99).toFixed(2)}); ` +
    `a bare round trip (SELECT 1) ${tail(trip)}; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} CPUs`
  return [
    {
      name: `append of one event into a ${size.toLocaleString("en")}-event conversation (one open turn), PostgreSQL: p99`,
      subject: { name: "PostgreSQL append p99", medianMs: p99 },
      floor: { name: "the goal", medianMs: 5 },
      maxRatio: 1,
      note
    }
  ]
}

// --- ls ------------------------------------------------------------------------------

/** A database holding `storage`'s conversations, imported as `conversation import` does. */
const imported = (server: PgServer, storage: string): Promise<string> => {
  const url = freshDatabase(server)
  const db = Layer.provideMerge(
    Layer.effectDiscard(PgConversationStore.migrate),
    PgConversationStore.clientLayer({ url })
  )
  return Effect.runPromise(Transfer.importDir(storage).pipe(Effect.provide(db), Effect.as(url)))
}

const lsGoal = async (server: PgServer, root: string, cwd: string): Promise<Goal> => {
  const count = 10_000
  const storage = listingStorage(root, count, eventsText(1, 5_000))
  const t0 = performance.now()
  const url = await imported(server, storage)
  const importMs = performance.now() - t0
  const ls = (s: string) => () => runNode([bin, "--storage", s, "conversation", "ls", "--format", "json"], { cwd })
  ls(storage)() // the file store's cold listing writes its index: both sides are then warm
  const [pg, file] = interleaved([{ run: ls(url) }, { run: ls(storage) }], 7)
  fs.rmSync(storage, { recursive: true, force: true })
  return {
    name: `conversation ls --format json over ${count.toLocaleString("en")} conversations, whole process: PostgreSQL vs the file store (warm index)`,
    subject: { name: "parley --storage postgres://… ls", medianMs: pg!.ms },
    floor: { name: "parley --storage DIR ls", medianMs: file!.ms },
    maxRatio: 1.5,
    note: `peak ${pg!.peakMb.toFixed(0)} MB vs ${file!.peakMb.toFixed(0)} MB; import of the ${count.toLocaleString("en")} conversations ${(importMs / 1000).toFixed(1)} s`
  }
}

// --- resume --------------------------------------------------------------------------

const resumeGoals = async (server: PgServer, root: string, cwd: string): Promise<Array<Goal>> => {
  const c = bigConversation(root, 94)
  const url = await imported(server, c.storage)
  const sql = (command: string) => psql(url, command)
  const entries = Number(sql(`SELECT entries FROM parley_conversations WHERE id = '${ID}'`).trim())
  sql(`CREATE TABLE bench_pristine AS SELECT * FROM parley_conversations WHERE id = '${ID}'`)
  /** Puts the conversation back as imported (a resumed turn completes it). */
  const reset = () =>
    sql(`DELETE FROM parley_events WHERE conversation_id = '${ID}' AND seq >= ${entries};
      UPDATE parley_conversations c SET metadata = p.metadata, title = p.title, entries = p.entries, events = p.events, last_event_at = p.last_event_at,
        last_activated_at = p.last_activated_at, incomplete_state = p.incomplete_state, incomplete_tool = p.incomplete_tool, tokens = p.tokens
        FROM bench_pristine p WHERE c.id = p.id`)
  const script = path.join(c.storage, "script.json")
  const resume = (storage: string, grew: () => boolean) => (): Sample => {
    const s = runNode(
      [bin, "--storage", storage, "query", "--continue-turn", "--id", ID, "--model", "scripted", "--script", script],
      { cwd }
    )
    // The run must have resumed and completed the turn: the reply is stored.
    if (!grew()) throw new Error(`--continue-turn on ${storage} did not record the reply`)
    return s
  }
  const [pg, file] = interleaved(
    [
      {
        before: reset,
        run: resume(
          url,
          () => Number(sql(`SELECT count(*) FROM parley_events WHERE conversation_id = '${ID}'`).trim()) > entries
        )
      },
      { before: c.reset, run: resume(c.storage, () => fs.statSync(c.events).size > c.bytes) }
    ],
    3
  )
  fs.rmSync(c.storage, { recursive: true, force: true })
  const size = `${(c.bytes / 1e6).toFixed(1)} MB`
  return [
    {
      name: `query --continue-turn on a ${size} conversation, whole process to exit: time, PostgreSQL vs the file store`,
      subject: { name: "parley --storage postgres://… query --continue-turn", medianMs: pg!.ms },
      floor: { name: "parley --storage DIR query --continue-turn", medianMs: file!.ms },
      maxRatio: 1.5
    },
    {
      name: `query --continue-turn on a ${size} conversation: peak memory, PostgreSQL vs the file store (${memoryProbe})`,
      subject: { name: "parley --storage postgres://… query --continue-turn", medianMs: pg!.peakMb },
      floor: { name: "parley --storage DIR query --continue-turn", medianMs: file!.peakMb },
      maxRatio: 1.5,
      unit: "MB"
    }
  ]
}

/** `npm run bench -- pg append` (or `ls`, `resume`) runs only that case. */
const only = process.argv[3]

export const run = async (): Promise<ReadonlyArray<Goal>> => {
  if (pgSkip !== undefined) {
    console.log(`  skipped: ${pgSkip}`)
    return []
  }
  const server = await startPg()
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-pg-"))
  // The working directory of the runs: no .parley/config.toml, as for the file store's runs.
  const cwd = fs.mkdtempSync(path.join(root, "cwd-"))
  try {
    const goals: Array<Goal> = []
    if (only === undefined || only === "append") goals.push(...(await appendGoals(server, root)))
    if (only === undefined || only === "ls") goals.push(await lsGoal(server, root, cwd))
    if (only === undefined || only === "resume") goals.push(...(await resumeGoals(server, root, cwd)))
    return goals
  } finally {
    server.stop()
    fs.rmSync(root, { recursive: true, force: true })
    cleanup()
  }
}
