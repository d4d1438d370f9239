/** The run events published so far on the hub in context, for assertions. */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type * as RunEvent from "../../src/domain/run/RunEvent.ts"
import { RunEvents } from "../../src/services/RunEvents.ts"

export const publishedSoFar: Effect.Effect<ReadonlyArray<RunEvent.RunEvent>, never, RunEvents> = RunEvents.use((hub) =>
  Effect.flatMap(hub.latest, (n) => Effect.map(Stream.runCollect(Stream.take(hub.events, n)), (chunk) => [...chunk]))
)

/** The text deltas published so far. */
export const textSoFar: Effect.Effect<ReadonlyArray<string>, never, RunEvents> = Effect.map(publishedSoFar, (events) =>
  events.flatMap((e) => (e._tag === "TextDelta" ? [e.text] : []))
)
