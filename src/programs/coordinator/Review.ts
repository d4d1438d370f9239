/**
 * JP's result review (`result = "ask" | "edit" | "skip"` on a tool;
 * docs/tools.md#reviewing-a-result): what a call's tool returned is shown to
 * the person at this terminal before the model sees it — `y` delivers it,
 * `n` skips it (`Result delivery skipped by user.`), `e` opens it in the
 * editor (`result = "edit"` starts there) and delivers what was saved; an
 * emptied edit, or an editor that fails, delivers the result as it was
 * (JP's rule). `skip` never delivers it (`Result delivery skipped by
 * configuration.`). With nobody at the terminal the result is delivered as
 * it is (JP's rule). How it went is recorded on the `tool_call_response`
 * (`EventMetadata.resultReview`), whose content is what the model sees: a
 * resumed turn reads it as recorded.
 *
 * @example
 * ```ts
 * import * as Review from "parley/programs/coordinator/Review"
 * import type { Env } from "parley/programs/coordinator/Env"
 * import type { ToolCallRequest } from "parley"
 * declare const env: Env, call: ToolCallRequest
 * const reviewed = Review.review(env, call, { content: "3 files", is_error: false })
 * // Effect<{ response, metadata }>: the response the model gets, and the metadata that records the review
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as EventMetadata from "../../domain/event/EventMetadata.ts"
import type { ToolCallRequest } from "../../domain/event/ToolCallRequest.ts"
import * as ConfigData from "../../domain/tool/Config.ts"
import type { ToolResponse } from "../../services/Executor.ts"
import { type Env, positionOf } from "./Env.ts"

/** JP's words for a result that was not delivered. */
export const ReviewTexts = {
  skippedByConfig: "Result delivery skipped by configuration.",
  skippedByUser: "Result delivery skipped by user.",
  cancelled: "Result delivery cancelled."
} as const

/** How the review went, as recorded. */
export type Outcome = "delivered" | "edited" | "skipped" | "cancelled"

/** The response the model gets, and the metadata of its `tool_call_response` (empty when nothing was reviewed). */
export interface Reviewed {
  readonly response: ToolResponse
  readonly metadata: EventMetadata.EventMetadata
}

const as = (response: ToolResponse, outcome: Outcome): Reviewed => ({
  response,
  metadata: { [EventMetadata.resultReview]: outcome }
})

/** The editor's file for a result. */
const RESULT_FILE = "RESULT.md"

/** The person's side: the prompt (or the editor first), under the prompt lock. */
const atTerminal = (env: Env, call: ToolCallRequest, response: ToolResponse, edit: boolean) =>
  Effect.gen(function* () {
    const editing = Effect.map(env.prompts.edit(response.content, RESULT_FILE), (edited) =>
      // An emptied edit, or an editor that failed, delivers the result as it was (JP's rule).
      edited === undefined ? as(response, "delivered") : as({ content: edited, is_error: false }, "edited")
    )
    if (edit) return yield* editing
    const key = yield* env.prompts.review({
      toolName: call.name,
      content: response.content,
      position: positionOf(env, call)
    })
    if (key === "e") return yield* editing
    return key === "y"
      ? as(response, "delivered")
      : as({ content: ReviewTexts.skippedByUser, is_error: false }, "skipped")
  }).pipe(
    // Ctrl-C at the prompt, or a prompt that failed: JP's "cancelled" (the result is not delivered).
    Effect.catch(() => Effect.succeed(as({ content: ReviewTexts.cancelled, is_error: false }, "cancelled"))),
    env.promptLock.withPermits(1)
  )

/** Reviews `response`, the result of `call`'s tool, as the tool's `result` mode says. */
export const review = (env: Env, call: ToolCallRequest, response: ToolResponse): Effect.Effect<Reviewed> => {
  const mode = ConfigData.resultMode(env.config, call.name)
  switch (mode) {
    case "unattended":
      return Effect.succeed({ response, metadata: {} })
    case "skip":
      return Effect.succeed(as({ content: ReviewTexts.skippedByConfig, is_error: false }, "skipped"))
    case "ask":
    case "edit":
      // Nobody at this terminal: delivered as it is (JP's rule).
      return env.prompts.interactive
        ? atTerminal(env, call, response, mode === "edit")
        : Effect.succeed({ response, metadata: {} })
  }
}
