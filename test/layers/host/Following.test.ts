/**
 * A host's drain (`layers/host/Following.ts`) on the TestClock: it ends the
 * moment the last subscription does (the clock standing still: polled, it
 * needed 20 ms of it), waits for a subscriber that makes progress, gives up
 * on one that stalls, and waits a resume's grace after one fell behind.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import * as Following from "../../../src/layers/host/Following.ts"

/** Lets every fiber that can run do so, the clock standing still. */
const settle = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* Effect.yieldNow
})

const done = (fiber: Fiber.Fiber<unknown, unknown>) => fiber.pollUnsafe() !== undefined

/** The drain, started as a run's end starts it (`uninterruptible`: as a finalizer runs it), once it has looked. */
const draining = (following: Following.Following, uninterruptible = false) =>
  Effect.tap(
    Effect.forkChild(uninterruptible ? Effect.uninterruptible(following.drained) : following.drained),
    () => settle
  )

/** A subscription fed from a queue: `send` an event, `end` it, or `fail` it (a subscriber fallen behind). */
const subscription = (following: Following.Following) =>
  Effect.gen(function* () {
    const queue = yield* Queue.make<number, Cause.Done | "lagged">()
    const started = yield* Deferred.make<void>()
    const stream = following.track(Stream.fromQueue(queue)).pipe(Stream.onStart(Deferred.succeed(started, undefined)))
    yield* Effect.forkChild(Stream.runDrain(stream).pipe(Effect.ignore))
    yield* Deferred.await(started)
    return {
      send: Queue.offer(queue, 1),
      end: Queue.end(queue),
      fail: Queue.fail(queue, "lagged" as const)
    }
  })

describe("a host's drain", () => {
  it.effect("with no subscription, it ends at once", () =>
    Effect.gen(function* () {
      const drain = yield* draining(Following.make())
      assert.isTrue(done(drain))
    })
  )

  it.effect("it ends the moment the last subscription ends, the clock standing still", () =>
    Effect.gen(function* () {
      const following = Following.make()
      const a = yield* subscription(following)
      const b = yield* subscription(following)
      const drain = yield* draining(following)
      assert.isFalse(done(drain))
      yield* a.end
      yield* settle
      assert.isFalse(done(drain), "one subscription still open")
      yield* b.end
      yield* settle
      assert.isTrue(done(drain))
    })
  )

  it.effect("a subscriber that stalls is given up after STALL_MS; one that makes progress is waited for", () =>
    Effect.gen(function* () {
      const following = Following.make()
      const s = yield* subscription(following)
      const drain = yield* draining(following)
      yield* TestClock.adjust(2000)
      yield* s.send
      yield* TestClock.adjust(2000)
      assert.isFalse(done(drain), "progress at 2 s postpones the stall past 3 s")
      yield* TestClock.adjust(Following.STALL_MS - 2000 - 1)
      assert.isFalse(done(drain))
      yield* TestClock.adjust(Following.STALL_MS)
      assert.isTrue(done(drain), "no progress for STALL_MS after the last")
    })
  )

  it.effect("after a subscriber fell behind, it waits the resume's grace, and for the one that resumed", () =>
    Effect.gen(function* () {
      const following = Following.make()
      const lagging = yield* subscription(following)
      yield* lagging.fail
      yield* settle
      const drain = yield* draining(following)
      yield* TestClock.adjust(Following.RESUME_GRACE_MS / 2)
      assert.isFalse(done(drain), "within the grace")
      const resumed = yield* subscription(following)
      yield* TestClock.adjust(Following.RESUME_GRACE_MS)
      assert.isFalse(done(drain), "the resumed subscription is still open")
      yield* resumed.end
      yield* settle
      assert.isTrue(done(drain))
    })
  )

  it.effect("run as a finalizer runs it (uninterruptible), a stalled subscriber still costs STALL_MS, no more", () =>
    Effect.gen(function* () {
      const following = Following.make()
      yield* subscription(following)
      const drain = yield* draining(following, true)
      yield* TestClock.adjust(Following.STALL_MS - 1)
      assert.isFalse(done(drain))
      yield* TestClock.adjust(Following.STALL_MS)
      assert.isTrue(done(drain))
    })
  )

  it.effect("one subscriber falling behind while another is open: it waits for the open one, then the grace", () =>
    Effect.gen(function* () {
      const following = Following.make()
      const open = yield* subscription(following)
      const lagging = yield* subscription(following)
      const drain = yield* draining(following)
      yield* lagging.fail
      yield* open.end
      yield* settle
      assert.isFalse(done(drain), "within the grace of the one that fell behind")
      yield* TestClock.adjust(Following.RESUME_GRACE_MS)
      yield* settle
      assert.isTrue(done(drain))
    })
  )

  it.effect("a lagged subscriber that never comes back costs the grace, no more", () =>
    Effect.gen(function* () {
      const following = Following.make()
      const lagging = yield* subscription(following)
      yield* lagging.fail
      yield* settle
      const drain = yield* draining(following)
      yield* TestClock.adjust(Following.RESUME_GRACE_MS - 1)
      assert.isFalse(done(drain))
      yield* TestClock.adjust(1)
      yield* settle
      assert.isTrue(done(drain))
    })
  )
})
