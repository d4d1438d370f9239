/**
 * Constructors for the events a turn records, from values that are already
 * valid (a clock reading, ids the turn allocated, answers and questions the
 * executor validated): built with `trusted`, so recording an event costs
 * no second parse (the coordinator records several per tool call).
 *
 * @example
 * ```ts
 * import { Events, InquiryId, Timestamp } from "parley"
 *
 * const at = Timestamp.make("2026-03-05 19:31:45.7")
 * Events.answered(at, InquiryId.forToolQuestion("call_1", "overwrite", 1), true).outcome // "answered"
 * ```
 *
 * @since 0.1.0
 */
import type { Json } from "effect/Schema"
import { ChatRequest } from "./ChatRequest.ts"
import type { CancellationReason } from "./CancellationReason.ts"
import * as EventMetadata from "./EventMetadata.ts"
import type { InquiryId } from "./InquiryId.ts"
import type { InquiryQuestion } from "./InquiryQuestion.ts"
import { InquiryRequest } from "./InquiryRequest.ts"
import { InquiryAnswered, InquiryCancelled, InquiryRedacted } from "./InquiryResponse.ts"
import type { InquirySource } from "./InquirySource.ts"
import type { Timestamp } from "./Timestamp.ts"
import { ToolCallResponse } from "./ToolCallResponse.ts"
import { trusted } from "./Trusted.ts"
import { TurnStart } from "./TurnStart.ts"

/** A tool's question, recorded before anyone answers it (RFD 082); `metadata` as given (see `EventMetadata.executorState`). */
export const inquiryRequest = (
  timestamp: Timestamp,
  id: InquiryId,
  source: InquirySource,
  question: InquiryQuestion,
  metadata: EventMetadata.EventMetadata = EventMetadata.empty
): InquiryRequest => trusted(InquiryRequest, { timestamp, type: "inquiry_request", id, source, question, metadata })

/** An inquiry answered with `answer` (which may be JSON `null`). */
export const answered = (
  timestamp: Timestamp,
  id: InquiryId,
  answer: Json,
  metadata: EventMetadata.EventMetadata = EventMetadata.empty
): InquiryAnswered =>
  trusted(InquiryAnswered, { timestamp, type: "inquiry_response", outcome: "answered", id, answer, metadata })

/** A secret inquiry that was answered; the answer is never recorded. */
export const redacted = (timestamp: Timestamp, id: InquiryId): InquiryRedacted =>
  trusted(InquiryRedacted, {
    timestamp,
    type: "inquiry_response",
    outcome: "redacted",
    id,
    metadata: EventMetadata.empty
  })

/** An inquiry closed without an answer, and why. */
export const cancelled = (timestamp: Timestamp, id: InquiryId, reason: CancellationReason): InquiryCancelled =>
  trusted(InquiryCancelled, {
    timestamp,
    type: "inquiry_response",
    outcome: "cancelled",
    id,
    reason,
    metadata: EventMetadata.empty
  })

/** A tool call's result. */
export const toolCallResponse = (
  timestamp: Timestamp,
  id: string,
  response: { readonly content: string; readonly is_error: boolean },
  metadata: EventMetadata.EventMetadata = EventMetadata.empty
): ToolCallResponse =>
  trusted(ToolCallResponse, {
    timestamp,
    type: "tool_call_response",
    id,
    content: response.content,
    is_error: response.is_error,
    metadata
  })

/** The start of a turn. */
export const turnStart = (timestamp: Timestamp): TurnStart =>
  trusted(TurnStart, { timestamp, type: "turn_start", metadata: EventMetadata.empty })

/** The person's message (`metadata`: who sent it, for a queued one). */
export const chatRequest = (
  timestamp: Timestamp,
  content: string,
  metadata: EventMetadata.EventMetadata = EventMetadata.empty
): ChatRequest => new ChatRequest({ timestamp, content, metadata })
