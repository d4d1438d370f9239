/**
 * Answers a tool's question from the conversation context, without the user
 * (RFD 028): the assistant-targeted (or non-interactive) branch of the
 * coordinator's question routing.
 *
 * Cancellation is interruption: interrupting the fiber that runs `inquire`
 * aborts the model call; the caller that awaits that fiber maps the
 * interruption to a cancelled inquiry. An interruption that happens inside
 * the backend (the provider call was cut off) comes back as
 * `InquiryCancelledError`.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { InquiryBackend } from "parley/services/InquiryBackend"
 * import type { StreamEntry } from "parley/domain/event/ConversationEvent"
 * import type { InquiryId } from "parley/domain/event/InquiryId"
 * import type { InquiryQuestion } from "parley/domain/event/InquiryQuestion"
 * declare const entries: ReadonlyArray<StreamEntry>, inquiryId: InquiryId, question: InquiryQuestion
 * const answer = Effect.gen(function*() {
 *   const backend = yield* InquiryBackend
 *   return yield* backend.inquire({ entries, inquiryId, toolCallId: "call_1", toolName: "write_note", question })
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { StreamEntry } from "../domain/event/ConversationEvent.ts"
import type { InquiryId } from "../domain/event/InquiryId.ts"
import type { InquiryQuestion } from "../domain/event/InquiryQuestion.ts"
import type { InquiryAssistant } from "../domain/tool/Config.ts"

/** One question for the backend: the conversation as it stands, the inquiry id, the paused call, the question. */
export interface InquiryBackendRequest {
  /** The conversation as it is now (taken just in time, after the `inquiry_request` was appended). */
  readonly entries: ReadonlyArray<StreamEntry>
  readonly inquiryId: InquiryId
  /** The paused tool call the question belongs to. */
  readonly toolCallId: string
  readonly toolName: string
  readonly question: InquiryQuestion
  /** A per-question model override (`provider/model`); wins over the backend's configured models. */
  readonly model?: string
  /**
   * The question's own side-call settings (RFD 034: its `target` table),
   * merged over the backend's `conversation.inquiry.assistant`, which is
   * merged over the main assistant.
   */
  readonly assistant?: InquiryAssistant
}

/** The model call failed. */
export class InquiryProviderError extends Schema.TaggedError<InquiryProviderError>()("InquiryProviderError", {
  provider: Schema.String,
  status: Schema.optionalKey(Schema.Number),
  detail: Schema.String,
  attempts: Schema.Number
}) {
  override get message() {
    return `LLM provider error: ${this.detail}`
  }
}

/** The model replied without structured data. */
export class MissingStructuredData extends Schema.TaggedError<MissingStructuredData>()("MissingStructuredData", {}) {
  override get message() {
    return "No structured data in the LLM response"
  }
}

/** The structured reply held no valid answer (missing, null, wrong type, not an option). */
export class AnswerExtraction extends Schema.TaggedError<AnswerExtraction>()("AnswerExtraction", {
  reason: Schema.String
}) {
  override get message() {
    return `Failed to extract answer from structured response: ${this.reason}`
  }
}

/** The inquiry was cut off before it had an answer. */
export class InquiryCancelledError extends Schema.TaggedError<InquiryCancelledError>()("InquiryCancelledError", {}) {
  override get message() {
    return "Inquiry cancelled"
  }
}

/** Anything else (a mock without an answer, a question no model may answer). */
export class InquiryOtherError extends Schema.TaggedError<InquiryOtherError>()("InquiryOtherError", {
  detail: Schema.String
}) {
  override get message() {
    return this.detail
  }
}

/** Why the backend gave no answer; the coordinator records `Cancelled` with the matching reason. */
export type InquiryError =
  | InquiryProviderError
  | MissingStructuredData
  | AnswerExtraction
  | InquiryCancelledError
  | InquiryOtherError

/**
 * Answers tool questions without the person (RFD 028), as a service. Live:
 * `LlmInquiryBackend.layer` (a structured side call to the model); tests:
 * `MockInquiryBackend.layer({ "<inquiry id>": answer })`.
 *
 * @example
 * ```ts
 * import { MockInquiryBackend } from "parley"
 * const layer = MockInquiryBackend.layer({ "call_1.overwrite.1": true }) // Layer<InquiryBackend>
 * ```
 */
export class InquiryBackend extends Context.Service<
  InquiryBackend,
  {
    /** The answer (boolean, a select option's value, or text); never `null`. */
    inquire(request: InquiryBackendRequest): Effect.Effect<Schema.Json, InquiryError>
  }
>()("parley/InquiryBackend") {}
