/**
 * JP's result review (`result = "ask" | "edit" | "skip"` on a tool;
 * docs/tools.md#reviewing-a-result): what a call's tool returned is shown to
 * the person at this terminal before the model sees it — `y` delivers it,
 * `n` skips it (`Result delivery skipped by user.`), `e` opens it in the
 * editor (`result = "edit"` starts there) and delivers what was saved; an
 * emptied edit, or an editor that fails, delivers the result as it was
 * (JP's rule). `skip` never delivers it (`Result delivery skipped by
 * configuration.`). With nobody at the terminal, where an approval would be
 * asked (`asked`: the detached policy waits, defers or denies, or someone
 * is attached), the review is asked as an approval from anywhere
 * (docs/tools.md#reviewing-a-result-from-anywhere): `<call>.__result__.<n>`,
 * its request recording the result, answered deliver, skip or
 * `{"edit": {"result": "…"}}`; deferred, the turn waits and a resumed turn
 * reviews the recorded result without running the tool again. Otherwise the
 * result is delivered as it is (JP's rule). How it went is recorded on the `tool_call_response`
 * (`EventMetadata.resultReview`), whose content is what the model sees: a
 * resumed turn reads it as recorded.
 *
 * @example
 * ```ts
 * import * as Review from "parley/programs/coordinator/Review"
 * import type { Env } from "parley/programs/coordinator/Env"
 * import type { ToolCallRequest } from "parley"
 * declare const env: Env, call: ToolCallRequest
 * const reviewed = Review.review(env, call, { content: "3 files", is_error: false }, false)
 * // Effect<Reviewed (the response the model gets, its metadata) | Deferred, RecordError>
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as EventMetadata from "../../domain/event/EventMetadata.ts"
import type { InquiryId } from "../../domain/event/InquiryId.ts"
import type { InquiryRequest } from "../../domain/event/InquiryRequest.ts"
import type { InquiryResponse } from "../../domain/event/InquiryResponse.ts"
import { InquirySource } from "../../domain/event/InquirySource.ts"
import * as PermissionInquiry from "../../domain/event/PermissionInquiry.ts"
import type { ToolCallRequest } from "../../domain/event/ToolCallRequest.ts"
import * as TurnState from "../../domain/stream/TurnState.ts"
import * as ConfigData from "../../domain/tool/Config.ts"
import { fromInquiryQuestion } from "../../domain/tool/Question.ts"
import type { ToolResponse } from "../../services/Executor.ts"
import { type Env, positionOf, type RecordError } from "./Env.ts"
import * as Inquiry from "./Inquiry.ts"

/** JP's words for a result that was not delivered. */
export const ReviewTexts = {
  skippedByConfig: "Result delivery skipped by configuration.",
  skippedByUser: "Result delivery skipped by user.",
  cancelled: "Result delivery cancelled.",
  nobody: (detached: string) =>
    `Result delivery skipped: the result needed a person's review, and nobody could be asked (the detached policy is "${detached}").`
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

/** The review asked as an approval: a boolean question that is never remembered (each result is its own). */
const reviewQuestion = (toolName: string) =>
  fromInquiryQuestion(PermissionInquiry.reviewQuestionId, {
    text: PermissionInquiry.reviewText(toolName),
    answer_type: { type: "boolean" },
    persistence: "none"
  })

/** A review recorded by an earlier run of the turn: its request (which holds the result) and its response, if any. */
export interface RecordedReview {
  readonly request: InquiryRequest
  readonly response: InquiryResponse | null
}

/** The tool's result a review's request recorded. */
export const recordedResult = (request: InquiryRequest): ToolResponse => {
  const shown = PermissionInquiry.approves(request, {}) ?? {}
  return { content: typeof shown["result"] === "string" ? shown["result"] : "", is_error: shown["is_error"] === true }
}

/** How an answered review ends: delivered, edited or skipped. */
const answered = (response: ToolResponse, answer: InquiryResponse): Reviewed => {
  const read = PermissionInquiry.reviewedOf(answer, response.content)
  if (read === undefined) return as({ content: ReviewTexts.skippedByUser, is_error: false }, "skipped")
  return read.edited ? as({ content: read.content, is_error: false }, "edited") : as(response, "delivered")
}

/**
 * The review asked from anywhere (an approval: `conversation answer`, the
 * API, the page, an attached terminal); `recorded`: its request an earlier
 * run left open, asked again under its id. Deferred: the turn waits for it.
 */
const fromAnywhere = (
  env: Env,
  call: ToolCallRequest,
  response: ToolResponse,
  recorded?: InquiryRequest
): Effect.Effect<Reviewed | { readonly _tag: "Deferred"; readonly inquiryId: InquiryId }, RecordError> =>
  Effect.gen(function* () {
    const approves = PermissionInquiry.reviewApproves(response.content, response.is_error)
    const opening =
      recorded !== undefined
        ? Inquiry.Opening.Recorded({ id: recorded.id, source: recorded.source, approval: true, approves })
        : Inquiry.Opening.Record({
            id: yield* Ref.modify(env.state, (s) =>
              TurnState.nextInquiryId(s, call.id, PermissionInquiry.reviewQuestionId)
            ),
            source: InquirySource.tool(call.name),
            metadata: PermissionInquiry.approvalMetadata(approves),
            approval: true,
            approves
          })
    const routed = yield* Inquiry.ask(env, call, reviewQuestion(call.name), opening)
    switch (routed._tag) {
      case "Deferred":
        return { _tag: "Deferred", inquiryId: routed.inquiryId } as const
      case "End": {
        // Refused (the detached policy is deny): a result nobody reviewed is not delivered.
        const detached = ConfigData.detachedPolicy(env.config, env.prompts.detachedDefault)
        return as({ content: ReviewTexts.nobody(detached), is_error: false }, "skipped")
      }
      case "Answer": {
        const edit = PermissionInquiry.editOf(routed.answer)
        const result = edit !== undefined && "arguments" in edit ? edit.arguments["result"] : undefined
        if (typeof result === "string") return as({ content: result, is_error: false }, "edited")
        return routed.answer === true
          ? as(response, "delivered")
          : as({ content: ReviewTexts.skippedByUser, is_error: false }, "skipped")
      }
    }
  })

/**
 * Reviews `response`, the result of `call`'s tool, as the tool's `result`
 * mode says. `asked`: nobody is at this terminal, and an approval would be
 * asked from anywhere. `recorded`: the review an earlier run of the turn
 * recorded (its answer ends it; left open, it is asked again).
 */
export const review = (
  env: Env,
  call: ToolCallRequest,
  response: ToolResponse,
  asked: boolean,
  recorded?: RecordedReview
): Effect.Effect<Reviewed | { readonly _tag: "Deferred"; readonly inquiryId: InquiryId }, RecordError> => {
  if (recorded?.response?.outcome === "answered") return Effect.succeed(answered(response, recorded.response))
  // Left open by an earlier run: asked again under its id, at this terminal too (its request needs its response).
  if (recorded !== undefined && recorded.response === null) return fromAnywhere(env, call, response, recorded.request)
  const mode = ConfigData.resultMode(env.config, call.name)
  switch (mode) {
    case "unattended":
      return Effect.succeed({ response, metadata: {} })
    case "skip":
      return Effect.succeed(as({ content: ReviewTexts.skippedByConfig, is_error: false }, "skipped"))
    case "ask":
    case "edit":
      if (env.prompts.interactive) return atTerminal(env, call, response, mode === "edit")
      // Nobody here, and nobody to ask from elsewhere: delivered as it is (JP's rule).
      if (!asked) return Effect.succeed({ response, metadata: {} })
      // One cancelled by a stopped run is asked anew.
      return fromAnywhere(env, call, response)
  }
}
