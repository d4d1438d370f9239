/**
 * The session's append is durable first, then visible, and atomic with
 * respect to interruption (docs/storage.md#durable-appends). The first block interrupts an append at
 * every point where an interrupt can land, deterministically, with gates
 * inside the persistence step; the second does it against real files with
 * the file store, many times, and checks that every entry that reached the
 * journal is in `events.json` once the session closes.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import { ChatRequest } from "../../src/domain/event/ChatRequest.ts"
import type { StreamEntry } from "../../src/domain/event/ConversationEvent.ts"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
import { ToolCallRequest } from "../../src/domain/event/ToolCallRequest.ts"
import { ToolCallResponse } from "../../src/domain/event/ToolCallResponse.ts"
import { TurnStart } from "../../src/domain/event/TurnStart.ts"
import * as Conversation from "../../src/domain/storage/Conversation.ts"
import * as ConversationId from "../../src/domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../src/domain/storage/ConversationMetadata.ts"
import * as EventsFile from "../../src/domain/storage/EventsFile.ts"
import * as FileConversationStore from "../../src/layers/store/FileConversationStore.ts"
import * as ConversationSession from "../../src/services/ConversationSession.ts"
import { ConversationStore } from "../../src/services/ConversationStore.ts"
import { StoreIoError } from "../../src/services/StoreErrors.ts"
import { tempDir } from "../support/Fixtures.ts"

const id = ConversationId.parse("17000000500")!
const at = Timestamp.make("2026-03-18 13:19:06.8")
const opening = [new TurnStart({ timestamp: at }), new ChatRequest({ timestamp: at, content: "go" })]
const callOf = (n: number) => new ToolCallRequest({ timestamp: at, id: `c${n}`, name: "t", arguments: { n } })
const ids = (entries: ReadonlyArray<StreamEntry>) =>
  entries.flatMap((e) => (e.type === "tool_call_request" ? [e.id] : []))

/** Where an interrupt lands during `append`. */
type Point = "waiting for the permit" | "inside the durable write" | "after the write, before visibility"

/**
 * A session over an in-memory "disk" whose write is gated: the test learns
 * when a write started and decides when it finishes.
 */
const gatedSession = Effect.gen(function* () {
  const disk: Array<StreamEntry> = [...opening]
  const started = yield* Deferred.make<void>()
  const release = yield* Deferred.make<void>()
  const written = yield* Deferred.make<void>()
  let gated = true
  const session = yield* ConversationSession.make(
    { ...Conversation.make({ id, now: at }), entries: opening },
    {
      appendDurable: (entries) =>
        Effect.gen(function* () {
          if (gated) {
            gated = false
            yield* Deferred.succeed(started, undefined)
            yield* Deferred.await(release)
          }
          disk.push(...entries)
          yield* Deferred.succeed(written, undefined)
        }),
      rewrite: () => Effect.die("not used")
    }
  )
  return { session, disk, started, release, written }
})

describe("ConversationSession.append under interruption", () => {
  const points: ReadonlyArray<Point> = [
    "waiting for the permit",
    "inside the durable write",
    "after the write, before visibility"
  ]
  for (const point of points) {
    it.effect(`interrupted ${point}: what is on disk is exactly what is visible`, () =>
      Effect.gen(function* () {
        const g = yield* gatedSession
        // The first append holds the permit inside its gated write.
        const first = yield* Effect.forkChild(g.session.append([callOf(1)]))
        yield* Deferred.await(g.started)
        let target = first
        if (point === "waiting for the permit") {
          target = yield* Effect.forkChild(g.session.append([callOf(2)]))
          yield* Effect.yieldNow
        }
        const interrupting = yield* Effect.forkChild(Fiber.interrupt(target))
        yield* Effect.yieldNow
        if (point === "after the write, before visibility") {
          yield* Deferred.succeed(g.release, undefined)
          yield* Deferred.await(g.written)
        } else {
          yield* Deferred.succeed(g.release, undefined)
        }
        yield* Fiber.join(interrupting)
        yield* Fiber.await(first)
        const visible = ids((yield* g.session.snapshot).entries)
        expect(visible).toStrictEqual(ids(g.disk))
        // A started write always finishes; one still waiting for the permit never starts.
        expect(visible).toStrictEqual(["c1"])
      })
    )
  }

  it.effect("interrupting after every number of scheduler steps never splits durable from visible", () =>
    Effect.gen(function* () {
      for (let steps = 0; steps < 12; steps++) {
        const disk: Array<StreamEntry> = [...opening]
        const session = yield* ConversationSession.make(
          { ...Conversation.make({ id, now: at }), entries: opening },
          {
            appendDurable: (entries) =>
              Effect.gen(function* () {
                for (let i = 0; i < 3; i++) yield* Effect.yieldNow
                disk.push(...entries)
              }),
            rewrite: () => Effect.die("not used")
          }
        )
        const fiber = yield* Effect.forkChild(
          Effect.forEach([1, 2, 3], (n) => session.append([callOf(n)]), { discard: true })
        )
        for (let i = 0; i < steps; i++) yield* Effect.yieldNow
        yield* Fiber.interrupt(fiber)
        expect(ids((yield* session.snapshot).entries)).toStrictEqual(ids(disk))
      }
    })
  )
})

describe("ConversationSession's writer lock", () => {
  it.effect("writers that wait are served in arrival order", () =>
    Effect.gen(function* () {
      const g = yield* gatedSession
      const first = yield* Effect.forkChild(g.session.append([callOf(1)]))
      yield* Deferred.await(g.started)
      const waiting: Array<Fiber.Fiber<void, unknown>> = []
      for (const n of [2, 3, 4]) {
        waiting.push(yield* Effect.forkChild(g.session.append([callOf(n)])))
        yield* Effect.yieldNow
      }
      yield* Deferred.succeed(g.release, undefined)
      for (const f of [first, ...waiting]) yield* Fiber.join(f)
      expect(ids(g.disk)).toStrictEqual(["c1", "c2", "c3", "c4"])
      expect(ids((yield* g.session.snapshot).entries)).toStrictEqual(["c1", "c2", "c3", "c4"])
    })
  )

  // Live clock: a lock left held would hang the writers behind it, and the timeouts say so.
  it.live("a waiter interrupted in the queue leaves it; the writers behind it still get their turn", () =>
    Effect.gen(function* () {
      const g = yield* gatedSession
      const first = yield* Effect.forkChild(g.session.append([callOf(1)]))
      yield* Deferred.await(g.started)
      const second = yield* Effect.forkChild(g.session.append([callOf(2)]))
      yield* Effect.yieldNow
      const third = yield* Effect.forkChild(g.session.append([callOf(3)]))
      yield* Effect.yieldNow
      yield* Fiber.interrupt(second)
      yield* Deferred.succeed(g.release, undefined)
      yield* Fiber.join(first)
      yield* Fiber.join(third).pipe(Effect.timeout("2 seconds"))
      yield* g.session.append([callOf(4)]).pipe(Effect.timeout("2 seconds"))
      expect(ids(g.disk)).toStrictEqual(["c1", "c3", "c4"])
    })
  )

  it.live("a waiter interrupted after the lock was handed to it, before it ran, passes the lock on", () =>
    Effect.gen(function* () {
      const g = yield* gatedSession
      const first = yield* Effect.forkChild(g.session.append([callOf(1)]))
      yield* Deferred.await(g.started)
      const second = yield* Effect.forkChild(g.session.append([callOf(2)]))
      yield* Effect.yieldNow
      // Releasing the gate finishes the first write at once: the lock is handed to the second writer,
      // whose wake-up is only scheduled; it is interrupted before it runs.
      yield* Deferred.succeed(g.release, undefined)
      expect(ids(g.disk)).toStrictEqual(["c1"])
      yield* Fiber.interrupt(second)
      yield* Fiber.join(first)
      yield* g.session.append([callOf(3)]).pipe(Effect.timeout("2 seconds"))
      expect(ids(g.disk)).toStrictEqual(["c1", "c3"])
    })
  )
})

describe("a store that writes at once", () => {
  it.live(
    "its Exit is the write: a success is visible at once, a failure leaves nothing visible and the lock free",
    () =>
      Effect.gen(function* () {
        const disk: Array<StreamEntry> = [...opening]
        let failNext = false
        const session = yield* ConversationSession.make(
          { ...Conversation.make({ id, now: at }), entries: opening },
          {
            appendDurable: (entries) => {
              if (failNext) return Exit.fail(new StoreIoError({ path: "disk", reason: "full" }))
              disk.push(...entries)
              return Exit.void
            },
            rewrite: () => Effect.die("not used")
          }
        )
        yield* session.append([callOf(1)])
        expect(ids((yield* session.snapshot).entries)).toStrictEqual(["c1"])
        failNext = true
        const failed = yield* Effect.flip(session.append([callOf(2)]))
        expect(failed).toStrictEqual(new StoreIoError({ path: "disk", reason: "full" }))
        expect(ids((yield* session.snapshot).entries)).toStrictEqual(["c1"])
        failNext = false
        yield* session.append([callOf(3)]).pipe(Effect.timeout("2 seconds"))
        expect(ids((yield* session.snapshot).entries)).toStrictEqual(ids(disk))
        expect(ids(disk)).toStrictEqual(["c1", "c3"])
      })
  )
})

describe("the file store's session under interruption (real files)", () => {
  it.live(
    "40 appends interrupted at random instants: every journaled entry is in events.json after close, none doubled",
    () =>
      Effect.gen(function* () {
        const storage = tempDir()
        const layer = FileConversationStore.layer({ storageDir: storage })
        const dir = path.join(storage, "conversations", "17000000500-s")
        yield* ConversationStore.use((s) =>
          Effect.scoped(
            s.create({
              id,
              metadata: ConversationMetadata.make({ title: "s", last_activated_at: at }),
              entries: opening
            })
          )
        ).pipe(Effect.provide(layer))
        let n = 0
        for (let trial = 0; trial < 40; trial++) {
          const scope = yield* Scope.make()
          const session = yield* ConversationStore.use((s) => s.open(id)).pipe(
            Scope.provide(scope),
            Effect.provide(layer)
          )
          const before = n
          const fiber = yield* Effect.forkChild(
            Effect.forEach(
              [0, 1, 2],
              () => {
                const k = ++n
                return session
                  .append([callOf(k)])
                  .pipe(
                    Effect.andThen(
                      session.append([
                        new ToolCallResponse({ timestamp: at, id: `c${k}`, content: "ok", is_error: false })
                      ])
                    )
                  )
              },
              { discard: true }
            )
          )
          yield* Effect.sleep(`${(trial * 13) % 7} millis`)
          yield* Fiber.interrupt(fiber)
          const journal = fs.existsSync(path.join(dir, "events.json.journal"))
            ? fs.readFileSync(path.join(dir, "events.json.journal"), "utf8")
            : ""
          const journaled = [...journal.matchAll(/"type":"tool_call_request","id":"(c\d+)"/g)].map((m) => m[1]!)
          const visible = ids((yield* session.snapshot).entries).filter((x) => Number(x.slice(1)) > before)
          expect(visible).toStrictEqual(journaled)
          yield* Scope.close(scope, Exit.void)
          const onDisk = ids(EventsFile.parse(fs.readFileSync(path.join(dir, "events.json"), "utf8"), "events.json"))
          for (const x of journaled) expect(onDisk).toContain(x)
          expect(new Set(onDisk).size).toBe(onDisk.length)
          expect(fs.existsSync(path.join(dir, "events.json.journal"))).toBe(false)
          // Calls the interrupt cut off keep their ids unused: the next trial starts after them.
          n = Math.max(n, ...onDisk.map((x) => Number(x.slice(1))))
        }
      })
  )
})
