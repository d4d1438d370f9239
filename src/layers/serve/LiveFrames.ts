/**
 * A run's live view as an SSE response (`GET /api/conversations/:id/events`,
 * served alone or by a cluster's runner), as `services/ServeApi.ts`
 * `EventFrame` describes it: each event with its sequence number as `id:`,
 * and, when the stream cannot go on, a last `lagged` or `gone` frame saying
 * why.
 *
 * Each event is written to text once, whatever the number of clients: the
 * hub hands every follower the same kept objects, and the frame is cached
 * on the object. Encoding it for each client through the endpoint's schema
 * cost a quarter of a millisecond per event per client: with 20 clients
 * the server fell behind a run the scripted model streams, the host
 * dropped its subscription, and every client lost the run.
 *
 * @example
 * ```ts
 * import type * as Stream from "effect/Stream"
 * import type * as LiveView from "parley/domain/run/LiveView"
 * import type * as RunEvent from "parley/domain/run/RunEvent"
 * import * as LiveFrames from "parley/layers/serve/LiveFrames"
 * declare const events: Stream.Stream<RunEvent.Sequenced, LiveView.Lost>
 * const response = LiveFrames.response(events)
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as LiveView from "../../domain/run/LiveView.ts"
import * as RunEvent from "../../domain/run/RunEvent.ts"
import * as Bytes from "./Bytes.ts"

const frames = new WeakMap<RunEvent.Sequenced, Uint8Array>()
const encodeLost = Schema.encodeSync(LiveView.LostSchema)
const utf8 = new TextEncoder()

/** The `message` frame of one event as bytes (as Effect's SSE encoder writes it: `event:` left out). */
const frameOf = (e: RunEvent.Sequenced): Uint8Array => {
  let frame = frames.get(e)
  if (frame === undefined) {
    frame = utf8.encode(`id: ${e.seq}\ndata: ${JSON.stringify(RunEvent.encode(e.event))}\n\n`)
    frames.set(e, frame)
  }
  return frame
}

/**
 * A chunk's bytes: the one cached frame itself when the chunk holds one
 * event (the usual case for a client that keeps up: the same bytes go to
 * every client, nothing is allocated per client), else one copy of them.
 */
const bytesOf = (chunk: ReadonlyArray<RunEvent.Sequenced>): Uint8Array => {
  return chunk.length === 1 ? frameOf(chunk[0]!) : Bytes.concat(chunk.map(frameOf))
}

/** The last frame of a stream that cannot go on: `lagged` or `gone`, without an `id:` (a reconnect resumes after the last event). */
export const lostFrame = (lost: LiveView.Lost): string =>
  `event: ${lost._tag === "LiveViewLagged" ? "lagged" : "gone"}\ndata: ${JSON.stringify(encodeLost(lost))}\n\n`

/** The SSE response of a follower's stream: its events, then why it stopped early, if it did; `onEnd` once it is over. */
export const response = (events: Stream.Stream<RunEvent.Sequenced, LiveView.Lost>, onEnd: () => void = () => {}) =>
  HttpServerResponse.stream(
    events.pipe(
      Stream.mapArray((chunk) => [bytesOf(chunk)] as const),
      Stream.catch((lost) => Stream.make(utf8.encode(lostFrame(lost)))),
      Stream.ensuring(Effect.sync(onEnd))
    ),
    { contentType: "text/event-stream", headers: { "cache-control": "no-cache" } }
  )
