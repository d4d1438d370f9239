/**
 * A run's live view as SSE frames (`GET /api/conversations/:id/events`,
 * served alone or by a cluster's runner): each event with its sequence
 * number as `id:`, and, when the stream cannot go on, a last `lagged` or
 * `gone` frame saying why (`services/ServeApi.ts` `EventFrame`).
 *
 * @example
 * ```ts
 * import * as LiveFrames from "./LiveFrames.ts"
 * const frames = LiveFrames.of(hub.since(0))
 * ```
 */
import * as Stream from "effect/Stream"
import type * as LiveView from "../../domain/run/LiveView.ts"
import type * as RunEvent from "../../domain/run/RunEvent.ts"
import type { EventFrame } from "../../services/ServeApi.ts"

/** The frames of a follower's stream: its events, then why it stopped early, if it did. */
export const of = (events: Stream.Stream<RunEvent.Sequenced, LiveView.Lost>): Stream.Stream<EventFrame> =>
  Stream.map(events, (e): EventFrame => ({ id: String(e.seq), event: "message", data: e.event })).pipe(
    Stream.catchTags({
      LiveViewLagged: (lost) => Stream.make<Array<EventFrame>>({ event: "lagged", data: lost }),
      LiveViewGone: (lost) => Stream.make<Array<EventFrame>>({ event: "gone", data: lost })
    })
  )
