/**
 * How an inquiry closed (RFD 082), tagged by `outcome` on disk:
 * `Answered{id, answer}` (the answer may be JSON `null`), `Cancelled{id, reason}`
 * or `Redacted{id}` (a secret answer that was delivered but never persisted).
 * Legacy flat `{id, answer}` responses read as `Answered` and are written back
 * in the shape they were read in.
 *
 * @example
 * ```ts
 * import { InquiryResponse } from "parley/domain/event/InquiryResponse"
 * import * as InquiryId from "parley/domain/event/InquiryId"
 * import * as Timestamp from "parley/domain/event/Timestamp"
 * const r = InquiryResponse.cancelled(Timestamp.now(), InquiryId.make("call_1.token.1"), "no_prompt_backend")
 * r.outcome // "cancelled"
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { type EventMetadata, metadataField } from "./EventMetadata.ts"
import { InquiryId } from "./InquiryId.ts"
import type { InquiryId as InquiryIdType } from "./InquiryId.ts"
import { CancellationReason } from "./CancellationReason.ts"
import type { CancellationReason as CancellationReasonType } from "./CancellationReason.ts"
import { Timestamp } from "./Timestamp.ts"
import type { Timestamp as TimestampType } from "./Timestamp.ts"

/** An inquiry answered, with the answer (never a secret: those are `InquiryRedacted`). */
export class InquiryAnswered extends Schema.Class<InquiryAnswered>("parley/InquiryAnswered")({
  timestamp: Timestamp,
  type: Schema.tag("inquiry_response"),
  outcome: Schema.tag("answered"),
  id: InquiryId,
  answer: Schema.Json,
  metadata: metadataField
}) {}

/** An inquiry that got no answer, and why (`user`, `backend_error`, …). */
export class InquiryCancelled extends Schema.Class<InquiryCancelled>("parley/InquiryCancelled")({
  timestamp: Timestamp,
  type: Schema.tag("inquiry_response"),
  outcome: Schema.tag("cancelled"),
  id: InquiryId,
  reason: CancellationReason,
  metadata: metadataField
}) {}

/** A secret answered; the answer is not recorded. */
export class InquiryRedacted extends Schema.Class<InquiryRedacted>("parley/InquiryRedacted")({
  timestamp: Timestamp,
  type: Schema.tag("inquiry_response"),
  outcome: Schema.tag("redacted"),
  id: InquiryId,
  metadata: metadataField
}) {}

/**
 * How an inquiry closed (RFD 082), tagged by `outcome` on disk:
 * `Answered{id, answer}` (the answer may be JSON `null`), `Cancelled{id, reason}`
 * or `Redacted{id}` (a secret answer that was delivered but never persisted).
 * Legacy flat `{id, answer}` responses read as `Answered` and are written back
 * in the shape they were read in.
 *
 * @example
 * ```ts
 * import { InquiryResponse } from "parley/domain/event/InquiryResponse"
 * import * as InquiryId from "parley/domain/event/InquiryId"
 * import * as Timestamp from "parley/domain/event/Timestamp"
 * const r = InquiryResponse.cancelled(Timestamp.now(), InquiryId.make("call_1.token.1"), "no_prompt_backend")
 * r.outcome // "cancelled"
 * ```
 */
export type InquiryResponse = InquiryAnswered | InquiryCancelled | InquiryRedacted

export const InquiryResponse = Object.assign(Schema.Union([InquiryAnswered, InquiryCancelled, InquiryRedacted]), {
  answered: (timestamp: TimestampType, id: InquiryIdType, answer: Schema.Json, metadata: EventMetadata = {}) =>
    new InquiryAnswered({ timestamp, id, answer, metadata }),
  cancelled: (
    timestamp: TimestampType,
    id: InquiryIdType,
    reason: CancellationReasonType,
    metadata: EventMetadata = {}
  ) => new InquiryCancelled({ timestamp, id, reason, metadata }),
  redacted: (timestamp: TimestampType, id: InquiryIdType, metadata: EventMetadata = {}) =>
    new InquiryRedacted({ timestamp, id, metadata })
})
