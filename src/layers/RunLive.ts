/**
 * What every run needs beside its store, executor, provider and prompters
 * (docs/decisions.md#one-run-event-stream): the run-event hub (`RunEvents`) and the open-question registry
 * (`PendingAnswers`), fresh for each build.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as RunLive from "parley/layers/RunLive"
 * import { RunEvents } from "parley/services/RunEvents"
 * const latest = RunEvents.use((hub) => hub.latest).pipe(Effect.provide(RunLive.layer))
 * ```
 *
 * @since 0.1.0
 */
import * as Layer from "effect/Layer"
import type { PendingAnswers } from "../services/PendingAnswers.ts"
import type { RunEvents } from "../services/RunEvents.ts"
import * as PendingAnswersLive from "./PendingAnswersLive.ts"
import * as RunEventsLive from "./RunEventsLive.ts"

/** A run-event hub and an open-question registry. */
export const layer: Layer.Layer<RunEvents | PendingAnswers> = Layer.mergeAll(
  RunEventsLive.layer,
  PendingAnswersLive.layer
)
