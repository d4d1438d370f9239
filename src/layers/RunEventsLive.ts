/**
 * The run-event hub (issue 21 §1): a `PubSub` for live events and the
 * current run's events kept for late subscribers (RFD 027: "a late client
 * sees the turn whole").
 *
 * A subscription is taken before the kept events are read, and live events
 * already among them are dropped by sequence number: nothing is missed and
 * nothing is seen twice, whenever a subscriber arrives. Publishing is one
 * synchronous step (keep, then offer), so nothing can interrupt it halfway
 * and the order of the kept events is the order of the live ones.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Stream from "effect/Stream"
 * import * as RunEventsLive from "parley/layers/RunEventsLive"
 * import * as RunEvent from "parley/domain/run/RunEvent"
 * import { RunEvents } from "parley/services/RunEvents"
 *
 * const program = Effect.gen(function*() {
 *   const hub = yield* RunEvents
 *   yield* hub.publish(RunEvent.make.TextDelta({ text: "hi" }))
 *   yield* hub.publish(RunEvent.make.Stopped({ ending: "completed", incomplete: null }))
 *   return yield* Stream.runCollect(hub.events) // [TextDelta, Stopped]
 * }).pipe(Effect.provide(RunEventsLive.layer))
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Stream from "effect/Stream"
import * as RunEvent from "../domain/run/RunEvent.ts"
import { RunEvents } from "../services/RunEvents.ts"

/**
 * The current run as kept: its events in order (the first numbered `first`,
 * the rest gapless after it), the last number given, and whether the run
 * has stopped. The events are kept bare and numbered when replayed, so a
 * run that nobody watches keeps no wrapper per event.
 */
interface Kept {
  events: Array<RunEvent.RunEvent>
  first: number
  seq: number
  stopped: boolean
}

/** A hub; its `PubSub` is shut down with the scope (open streams end). */
export const make: Effect.Effect<RunEvents["Service"], never, import("effect/Scope").Scope> = Effect.gen(function* () {
  const pubsub = yield* Effect.acquireRelease(PubSub.unbounded<RunEvent.Sequenced>(), PubSub.shutdown)
  const kept: Kept = { events: [], first: 1, seq: 0, stopped: false }
  // An unbounded PubSub always takes an offer (it has no surplus to handle),
  // so PubSub.publishUnsafe is what PubSub.publish would do, synchronously.
  const publishUnsafe = (event: RunEvent.RunEvent): void => {
    // The first event after a Stopped starts a new run: late subscribers see only that one.
    if (kept.stopped) {
      kept.events = []
      kept.first = kept.seq + 1
      kept.stopped = false
    }
    kept.events.push(event)
    if (RunEvent.isEnd(event)) kept.stopped = true
    PubSub.publishUnsafe(pubsub, { seq: ++kept.seq, event })
  }
  /** The kept events numbered after `after`. */
  const keptAfter = (after: number): Array<RunEvent.Sequenced> => {
    const from = Math.max(0, after + 1 - kept.first)
    return kept.events.slice(from).map((event, i) => ({ seq: kept.first + from + i, event }))
  }
  const since = (after: number): Stream.Stream<RunEvent.Sequenced> =>
    Stream.unwrap(
      Effect.gen(function* () {
        const live = yield* PubSub.subscribe(pubsub)
        const past = keptAfter(after)
        const last = past.length > 0 ? past[past.length - 1]!.seq : Math.max(after, kept.seq)
        const replay = Stream.fromIterable(past)
        const rest = Stream.fromSubscription(live).pipe(Stream.filter((e) => e.seq > last))
        // A run that already stopped ends the stream after its replay.
        const body = past.some((e) => RunEvent.isEnd(e.event)) ? replay : Stream.concat(replay, rest)
        return body.pipe(Stream.takeUntil((e) => RunEvent.isEnd(e.event)))
      })
    )
  const sequenced = since(0)
  return RunEvents.of({
    publish: (event) => Effect.sync(() => publishUnsafe(event)),
    publishUnsafe,
    sequenced,
    events: Stream.map(sequenced, (e) => e.event),
    since,
    latest: Effect.sync(() => kept.seq)
  })
})

/** A fresh hub for each build of the layer. */
export const layer: Layer.Layer<RunEvents> = Layer.effect(RunEvents, make)
