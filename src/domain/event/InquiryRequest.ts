/**
 * A question a tool (or the assistant) asked during a turn (RFD 005/082).
 * Internal: never shown to a provider.
 *
 * @example
 * ```ts
 * import { InquiryRequest } from "parley/domain/event/InquiryRequest"
 * import * as InquiryId from "parley/domain/event/InquiryId"
 * import * as Timestamp from "parley/domain/event/Timestamp"
 * new InquiryRequest({
 *   timestamp: Timestamp.now(),
 *   id: InquiryId.forToolQuestion("call_1", "overwrite", 1),
 *   source: { source: "tool", name: "write_note" },
 *   question: { text: "Overwrite a.txt?", answer_type: { type: "boolean" }, default: true }
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { metadataField } from "./EventMetadata.ts"
import { InquiryId } from "./InquiryId.ts"
import { InquiryQuestion } from "./InquiryQuestion.ts"
import { InquirySource } from "./InquirySource.ts"
import { Timestamp } from "./Timestamp.ts"

/**
 * A question a tool (or the assistant) asked during a turn (RFD 005/082).
 * Internal: never shown to a provider.
 *
 * @example
 * ```ts
 * import { InquiryRequest } from "parley/domain/event/InquiryRequest"
 * import * as InquiryId from "parley/domain/event/InquiryId"
 * import * as Timestamp from "parley/domain/event/Timestamp"
 * new InquiryRequest({
 *   timestamp: Timestamp.now(),
 *   id: InquiryId.forToolQuestion("call_1", "overwrite", 1),
 *   source: { source: "tool", name: "write_note" },
 *   question: { text: "Overwrite a.txt?", answer_type: { type: "boolean" }, default: true }
 * })
 * ```
 */
export class InquiryRequest extends Schema.Class<InquiryRequest>("parley/InquiryRequest")({
  timestamp: Timestamp,
  type: Schema.tag("inquiry_request"),
  id: InquiryId,
  source: InquirySource,
  question: InquiryQuestion,
  metadata: metadataField
}) {}
