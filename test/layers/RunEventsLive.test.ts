// The live view's bounds (domain/run/LiveView.ts) on the hub itself: a follower that stops reading is
// dropped with the last event it was given and costs the others nothing; one that resumes after it gets
// the rest without a gap or a duplicate while the replay holds it; past the replay, or after the run's
// end, it is told where the run is or ended.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as LiveView from "../../src/domain/run/LiveView.ts"
import * as RunEvent from "../../src/domain/run/RunEvent.ts"
import * as RunEventsLive from "../../src/layers/RunEventsLive.ts"

const delta = (i: number) => RunEvent.make.TextDelta({ text: `t${i} ` })
const stopped = RunEvent.make.Stopped({ ending: "completed", incomplete: null })
const seqs = (items: Iterable<RunEvent.Sequenced>) => [...items].map((e) => e.seq)
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

describe("the live view's bounds", () => {
  it.effect("a follower that stops reading is dropped with the last event it got; a reader gets every event", () =>
    Effect.gen(function* () {
      const hub = RunEventsLive.makeHub({ events: 50, bytes: 1 << 20 })
      const bound = { events: 10, bytes: 1 << 20 }
      let lostCalls = 0
      // A reader that keeps up, and one that takes three events and then stops reading.
      const reader = yield* Effect.forkChild(Stream.runCollect(hub.follow(0, { bound })))
      const stuck = yield* Stream.toPull(hub.follow(0, { bound, onLost: () => lostCalls++ }))
      yield* Effect.yieldNow
      for (let i = 1; i <= 3; i++) hub.publish(delta(i))
      expect(seqs(yield* stuck)).toStrictEqual([1, 2, 3])
      for (let i = 4; i <= 30; i++) {
        hub.publish(delta(i))
        yield* Effect.yieldNow // the reader reads as events come
      }
      hub.publish(stopped)
      expect(lostCalls).toBe(1)
      const lost = yield* Effect.flip(stuck)
      expect(lost).toStrictEqual(new LiveView.LiveViewLagged({ last: 3 }))
      if (!(lost instanceof LiveView.LiveViewLagged)) return
      expect(seqs(yield* Fiber.join(reader))).toStrictEqual(range(1, 31))
      // It resumes after the last event it got: the rest, no gap, no duplicate, through the end.
      expect(seqs(yield* Stream.runCollect(hub.follow(lost.last, { bound })))).toStrictEqual(range(4, 31))
    }).pipe(Effect.scoped)
  )

  it.effect("a follower is bounded by bytes too, and a replay on resume does not count against it", () =>
    Effect.gen(function* () {
      const hub = RunEventsLive.makeHub({ events: 1000, bytes: 1 << 20 })
      const big = RunEvent.make.TextDelta({ text: "x".repeat(1000) })
      const pull = yield* Stream.toPull(hub.follow(0, { bound: { events: 1000, bytes: 5000 } }))
      for (let i = 0; i < 4; i++) hub.publish(big)
      expect(seqs(yield* pull)).toStrictEqual([1, 2, 3, 4])
      for (let i = 0; i < 5; i++) hub.publish(big) // the fifth is past 5000 bytes behind
      expect(yield* Effect.flip(pull)).toStrictEqual(new LiveView.LiveViewLagged({ last: 4 }))
      // Nine kept events replayed to a follower whose bound is two: it is not dropped for them.
      const resumed = yield* Stream.toPull(hub.follow(0, { bound: { events: 2, bytes: 1 << 20 } }))
      hub.publish(delta(10))
      expect(seqs(yield* resumed)).toStrictEqual(range(1, 10))
    }).pipe(Effect.scoped)
  )

  it.effect("past the replay, or after the run's end, a follower is told where the run is or ended", () =>
    Effect.gen(function* () {
      const hub = RunEventsLive.makeHub({ events: 5, bytes: 1 << 20 })
      for (let i = 1; i <= 12; i++) hub.publish(delta(i))
      // Events 1–7 are no longer kept.
      const gone = yield* Effect.flip(Stream.runCollect(hub.follow(3)))
      expect(gone).toStrictEqual(new LiveView.LiveViewGone({ after: 3, latest: 12, ended: null }))
      expect(gone.message).toContain("the stored conversation is the record")
      // Without a cursor: from the first kept.
      const whole = yield* Effect.forkChild(Stream.runCollect(hub.follow(0)))
      yield* Effect.yieldNow
      hub.publish(stopped)
      expect(seqs(yield* Fiber.join(whole))).toStrictEqual(range(8, 13))
      expect(seqs(yield* Stream.runCollect(hub.follow(10)))).toStrictEqual([11, 12, 13])
      expect(yield* Effect.flip(Stream.runCollect(hub.follow(13)))).toStrictEqual(
        new LiveView.LiveViewGone({ after: 13, latest: 13, ended: 13 })
      )
      // A cursor past anything published is not waited on.
      expect(yield* Effect.flip(Stream.runCollect(hub.follow(99)))).toBeInstanceOf(LiveView.LiveViewGone)
    })
  )

  it.effect(
    "the ring keeps the newest event whatever its size; closing ends followers after what they were handed",
    () =>
      Effect.gen(function* () {
        const hub = RunEventsLive.makeHub({ events: 100, bytes: 100 })
        hub.publish(RunEvent.make.TextDelta({ text: "y".repeat(500) }))
        const pull = yield* Stream.toPull(hub.follow(0))
        expect(seqs(yield* pull)).toStrictEqual([1])
        hub.publish(delta(2))
        hub.close(({ last }) => new LiveView.LiveViewGone({ after: last, latest: 2, ended: null }))
        expect(seqs(yield* pull)).toStrictEqual([2])
        expect(yield* Effect.flip(pull)).toStrictEqual(new LiveView.LiveViewGone({ after: 2, latest: 2, ended: null }))
        const exit = yield* Effect.exit(Stream.runCollect(RunEventsLive.makeHub().whole.pipe(Stream.take(0))))
        expect(Exit.isSuccess(exit)).toBe(true)
      }).pipe(Effect.scoped)
  )

  it.effect(
    "every follower is handed the same entry for an event, live or replayed (a server caches its frame on it)",
    () =>
      Effect.gen(function* () {
        const hub = RunEventsLive.makeHub()
        hub.publish(delta(1)) // kept before anyone follows
        const live = yield* Stream.toPull(hub.follow(0))
        hub.publish(delta(2)) // handed live
        const first = [...(yield* live)]
        const replayA = [...(yield* Stream.runCollect(Stream.take(hub.follow(0), 2)))]
        const replayB = [...(yield* Stream.runCollect(Stream.take(hub.follow(0), 2)))]
        expect(seqs(first)).toStrictEqual([1, 2])
        for (let i = 0; i < 2; i++) {
          expect(replayA[i]).toBe(first[i])
          expect(replayB[i]).toBe(first[i])
        }
      }).pipe(Effect.scoped)
  )

  it.effect(
    "nobody following, a tool call's sizes wait to be measured; a follower gets just what the byte bound keeps",
    () =>
      Effect.gen(function* () {
        const bytes = 10_000
        const hub = RunEventsLive.makeHub({ events: 100_000, bytes })
        // Past the batch in which waiting sizes are measured (8,192), and some more that wait; text measured as it comes.
        const events = Array.from({ length: 20_000 }, (_, i) =>
          i % 3 === 0
            ? RunEvent.make.TextDelta({ text: "x".repeat(i % 37) })
            : RunEvent.make.ToolStarted({
                call: { id: `call_${i}`, name: "t", arguments: { x: "y".repeat(i % 41) } },
                resumed: false
              })
        )
        for (const e of events) hub.publish(e)
        // What measuring each event as it came keeps: the longest run of the newest within the bound.
        let first = events.length
        for (let total = 0; first > 0; first--) {
          total += LiveView.sizeOf(events[first - 1]!)
          if (total > bytes) break
        }
        // What the bound let go of is not found either, measured or not.
        expect(hub.find((e) => e === events[first - 1])).toBeUndefined()
        expect(hub.find((e) => e === events[first])).toBe(events[first])
        const replay = yield* Stream.runCollect(Stream.take(hub.follow(0), events.length - first))
        expect(seqs(replay)).toStrictEqual(range(first + 1, events.length))
        expect([...replay].map((e) => ("size" in e ? e.size : undefined))).toStrictEqual(
          events.slice(first).map((e) => LiveView.sizeOf(e))
        )
        // A cursor the bound let go of is gone, though its event was not measured when it came.
        expect(yield* Effect.flip(Stream.runCollect(hub.follow(first - 1)))).toBeInstanceOf(LiveView.LiveViewGone)
      })
  )
})
