/**
 * Storage benchmarks (issue: Foundation):
 * - load + decode of the largest corpus conversation vs a floor of plain
 *   JSON.parse plus the same base64 decoding in plain JS;
 * - append of one event to a 2 MB conversation vs the same append to an
 *   empty one (per-event persistence must cost O(event)).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as ConversationMetadata from "../src/domain/storage/ConversationMetadata.ts"
import { ChatRequest } from "../src/domain/event/ChatRequest.ts"
import { ChatResponse } from "../src/domain/event/ChatResponse.ts"
import type { StreamEntry } from "../src/domain/event/ConversationEvent.ts"
import * as ConversationId from "../src/domain/storage/ConversationId.ts"
import * as EventsFile from "../src/domain/storage/EventsFile.ts"
import * as Timestamp from "../src/domain/event/Timestamp.ts"
import { ToolCallRequest } from "../src/domain/event/ToolCallRequest.ts"
import { ToolCallResponse } from "../src/domain/event/ToolCallResponse.ts"
import { TurnStart } from "../src/domain/event/TurnStart.ts"
import * as FileConversationStore from "../src/layers/store/FileConversationStore.ts"
import { ConversationStore } from "../src/services/ConversationStore.ts"
import { type Goal, measure, median } from "./Harness.ts"

const corpus = path.resolve(import.meta.dirname, "..", "test", "fixtures", "corpus", "jp", "conversations")
const largest = path.join(corpus, "17738399468-rfd-review-and-phase-1-planning", "events.json")

const utf8 = new TextDecoder("utf-8", { fatal: true })
const plainB64 = (s: string): string => {
  if (s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return s
  try {
    return utf8.decode(Buffer.from(s, "base64"))
  } catch {
    return s
  }
}
const plainLeaves = (v: unknown): unknown =>
  typeof v === "string"
    ? plainB64(v)
    : Array.isArray(v)
      ? v.map(plainLeaves)
      : v !== null && typeof v === "object"
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plainLeaves(x)]))
        : v

/** The floor: what any reader must do (parse, and undo the storage base64). */
const floorLoad = (text: string) => {
  const arr = JSON.parse(text) as Array<Record<string, unknown>>
  for (const e of arr) {
    if (e["metadata"] !== undefined) e["metadata"] = plainLeaves(e["metadata"])
    if (e["type"] === "tool_call_request" && e["arguments"] !== undefined) e["arguments"] = plainLeaves(e["arguments"])
    if (e["type"] === "tool_call_response" && typeof e["content"] === "string") e["content"] = plainB64(e["content"])
  }
  return arr
}

/**
 * Closing a session after one turn: on a ~94 MB conversation vs an empty
 * one. The close folds the journal in place (only the new tail of
 * events.json is written), so it must not cost a rewrite of the file.
 */
const closeGoal = async (storage: string, template: ReadonlyArray<StreamEntry>): Promise<Goal> => {
  const huge = ConversationId.parse("17000000003")!
  const small = ConversationId.parse("17000000004")!
  const copies = Math.ceil(94e6 / Buffer.byteLength(EventsFile.render(template)))
  const entries: Array<StreamEntry> = []
  for (let i = 0; i < copies; i++) entries.push(...template)
  const layer = FileConversationStore.layer({ storageDir: storage })
  return Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* ConversationStore
      const meta = (title: string) => ConversationMetadata.make({ title, last_activated_at: Timestamp.now() })
      yield* Effect.scoped(store.create({ id: huge, metadata: meta("huge"), entries }))
      yield* Effect.scoped(store.create({ id: small, metadata: meta("small") }))
      const sizeMb = fs.statSync(path.join(storage, "conversations", "17000000003-huge", "events.json")).size / 1e6
      /** Opens a session and appends one turn; the scope, when closed, closes it. */
      const openWithTurn = (cid: ConversationId.ConversationId) =>
        Effect.gen(function* () {
          const scope = yield* Scope.make()
          const session = yield* store.open(cid).pipe(Scope.provide(scope))
          const at = Timestamp.now()
          yield* session.append([
            new TurnStart({ timestamp: at }),
            new ChatRequest({ timestamp: at, content: "one more" }),
            ChatResponse.message(at, "ok")
          ])
          return scope
        })
      const timeClose = (scope: Scope.Closeable) =>
        Effect.gen(function* () {
          const t0 = performance.now()
          yield* Scope.close(scope, Exit.void)
          return performance.now() - t0
        })
      const hugeTimes: Array<number> = []
      const smallTimes: Array<number> = []
      // Both sessions are open before either is closed, so both closes run in
      // the same heap (the huge one's decoded entries alive, the garbage of
      // decoding it not yet collected) and only the files differ; which closes
      // first alternates. Eleven rounds: a close is a few fdatasyncs, and
      // their latency is what varies.
      for (let round = 0; round < 11; round++) {
        const hugeScope = yield* openWithTurn(huge)
        const smallScope = yield* openWithTurn(small)
        if (round % 2 === 0) {
          hugeTimes.push(yield* timeClose(hugeScope))
          smallTimes.push(yield* timeClose(smallScope))
        } else {
          smallTimes.push(yield* timeClose(smallScope))
          hugeTimes.push(yield* timeClose(hugeScope))
        }
      }
      return {
        name: `closing the session of a ${sizeMb.toFixed(0)} MB conversation after one turn vs an empty one`,
        subject: { name: `close (${sizeMb.toFixed(0)} MB)`, medianMs: median(hugeTimes) },
        floor: { name: "close (empty)", medianMs: median(smallTimes) },
        maxRatio: 1.5,
        note: "the fold writes only the new tail of events.json; each close waits for fdatasync, whose latency varies with other writers on the disk"
      }
    }).pipe(Effect.provide(layer))
  )
}

export const run = async (): Promise<ReadonlyArray<Goal>> => {
  const goals: Array<Goal> = []

  // 1. Load + decode of the largest conversation (text already in memory for both sides: both read the same file).
  const text = fs.readFileSync(largest, "utf8")
  const decode = await measure("EventsFile.parse (typed, validated)", () => EventsFile.parse(text, largest), {
    runs: 31
  })
  const floor = await measure("JSON.parse + base64", () => floorLoad(text), { runs: 31 })
  goals.push({
    name: `load + decode of the largest corpus conversation (${(text.length / 1e6).toFixed(1)} MB)`,
    subject: decode,
    floor,
    maxRatio: 1.5
  })

  // 2. Append to a 2 MB conversation vs an empty one (each through an open session).
  const storage = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-"))
  const big = ConversationId.parse("17000000001")!
  const empty = ConversationId.parse("17000000002")!
  const bigEntries = EventsFile.parse(text, largest)
  const layer = FileConversationStore.layer({ storageDir: storage })
  let n = 0
  const results = await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const store = yield* ConversationStore
        const meta = (title: string) => ConversationMetadata.make({ title, last_activated_at: Timestamp.now() })
        const sessions = {
          [big]: yield* store.create({ id: big, metadata: meta("big"), entries: bigEntries }),
          [empty]: yield* store.create({ id: empty, metadata: meta("empty") })
        }
        for (const session of Object.values(sessions))
          yield* session.append([new TurnStart({ timestamp: Timestamp.now() })])
        const appendOne = (cid: ConversationId.ConversationId) => () => {
          const callId = `bench_${n++}`
          const session = sessions[cid]!
          return Effect.runPromise(
            session
              .append([
                new ToolCallRequest({ timestamp: Timestamp.now(), id: callId, name: "t", arguments: { path: "a.txt" } })
              ])
              .pipe(
                Effect.andThen(
                  session.append([
                    new ToolCallResponse({ timestamp: Timestamp.now(), id: callId, content: "ok", is_error: false })
                  ])
                )
              )
          )
        }
        // Interleaved rounds, so disk and JIT warm-up favour neither side.
        const bigTimes: Array<number> = []
        const emptyTimes: Array<number> = []
        for (let round = 0; round < 5; round++) {
          bigTimes.push((yield* Effect.promise(() => measure("big", appendOne(big), { runs: 9, warmup: 2 }))).medianMs)
          emptyTimes.push(
            (yield* Effect.promise(() => measure("empty", appendOne(empty), { runs: 9, warmup: 2 }))).medianMs
          )
        }
        const onBig = { name: "append to a 1.8 MB conversation", medianMs: median(bigTimes) }
        const onEmpty = { name: "append to an empty conversation", medianMs: median(emptyTimes) }
        return { onBig, onEmpty }
      })
    ).pipe(Effect.provide(layer))
  )
  goals.push({
    name: "append (one tool call request + response, each durable) to a 2 MB conversation vs an empty one",
    subject: results.onBig,
    floor: results.onEmpty,
    maxRatio: 3,
    note: "each append is journaled and fdatasync'd; JP rewrites the whole file instead"
  })
  goals.push(await closeGoal(storage, bigEntries))
  fs.rmSync(storage, { recursive: true, force: true })
  return goals
}
