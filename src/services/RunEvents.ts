/**
 * The one channel out of a run (docs/decisions.md#one-run-event-stream): the programs publish every
 * {@link RunEvent.RunEvent} here, and whoever watches — the terminal's status
 * lines, `query --format json`, an attached terminal, the web page —
 * consumes the stream. The programs take no callbacks.
 *
 * A subscriber sees the current run whole, whenever it subscribes: the
 * events the run keeps (its last `LiveView.REPLAY`), then live ones, each
 * once, in order, with gapless sequence numbers (`since(seq)` resumes after
 * a dropped connection without gaps or duplicates). The stream ends after
 * the run's `Stopped` event; the next event published starts a new run.
 * A follower from outside the process (`since`) may fall `LiveView.BEHIND`
 * behind, then its stream fails with `LiveViewLagged`; one whose cursor is
 * no longer kept fails with `LiveViewGone` (see `domain/run/LiveView.ts`).
 *
 * Live: `RunEventsLive.layer` (a `PubSub` and the current run's events).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Stream from "effect/Stream"
 * import { RunEvents } from "parley/services/RunEvents"
 *
 * const printText = RunEvents.use((events) =>
 *   Stream.runForEach(events.events, (e) => Effect.sync(() => e._tag === "TextDelta" && process.stdout.write(e.text))))
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type * as LiveView from "../domain/run/LiveView.ts"
import type * as RunEvent from "../domain/run/RunEvent.ts"

export class RunEvents extends Context.Service<
  RunEvents,
  {
    /** Publishes one event of the current run (after a `Stopped`, the first event starts a new run). */
    publish(event: RunEvent.RunEvent): Effect.Effect<void>
    /**
     * `publish`, done as it is called: for a program already inside a
     * step, which publishes in that step instead of adding one (the
     * coordinator announces six events per tool call, each in the step that
     * records what it announces, so nothing can come between the two).
     */
    publishUnsafe(event: RunEvent.RunEvent): void
    /** The current run's events from the start, then live, ending after `Stopped`. */
    readonly events: Stream.Stream<RunEvent.RunEvent>
    /** `events` with sequence numbers. */
    readonly sequenced: Stream.Stream<RunEvent.Sequenced>
    /**
     * The current run's events after `seq` (an SSE `Last-Event-ID`), then
     * live, for a follower outside the process: bounded by `LiveView.BEHIND`.
     */
    since(seq: number): Stream.Stream<RunEvent.Sequenced, LiveView.Lost>
    /** The sequence number of the last event published (0 before any). */
    readonly latest: Effect.Effect<number>
    /**
     * The sequence number of the current run's `Stopped` once it is
     * published, else null: a host still serving the run's end to its
     * followers is no longer running it (`HostInfo.ended`).
     */
    readonly ended: Effect.Effect<number | null>
  }
>()("parley/RunEvents") {}
