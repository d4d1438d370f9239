/**
 * The correlation key of an inquiry request/response pair.
 *
 * Readers treat it as opaque (RFD 082); only the coordinator builds one, as
 * `<tool_call_id>.<question_id>.<attempt>`. Legacy streams hold two-segment ids.
 *
 * @example
 * ```ts
 * import * as InquiryId from "parley/domain/event/InquiryId"
 * InquiryId.forToolQuestion("call_1", "overwrite", 1) // "call_1.overwrite.1"
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The correlation key of an inquiry request/response pair.
 *
 * @example
 * ```ts
 * import * as InquiryId from "parley/domain/event/InquiryId"
 * InquiryId.forToolQuestion("call_1", "overwrite", 1) // "call_1.overwrite.1"
 * ```
 */
export const InquiryId = Schema.String.pipe(Schema.brand("InquiryId"))
export type InquiryId = typeof InquiryId.Type

/** An inquiry id from text read elsewhere (not checked). */
export const make = (id: string): InquiryId => id as InquiryId

/**
 * The three-segment id RFD 082 writes: unique per turn by construction.
 * Joined, not concatenated: V8 makes a string of 13 characters or more by
 * `+` a chain of pieces (four here), kept as long as the id is (every
 * recorded request and response holds one); `join` makes one flat string.
 */
export const forToolQuestion = (toolCallId: string, questionId: string, attempt: number): InquiryId =>
  make([toolCallId, questionId, attempt].join("."))
