/**
 * The question as persisted in an `inquiry_request`: `text`, `answer_type`
 * and an optional `default` (any JSON; JP writes `null` when absent on some
 * paths), and RFD 083's optional `context`, `exclusive`, `persistence`.
 *
 * @example
 * ```ts
 * import { InquiryQuestion } from "parley/domain/event/InquiryQuestion"
 * InquiryQuestion.make({ text: "Overwrite?", answer_type: { type: "boolean" }, default: true })
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { InquiryAnswerType } from "./InquiryAnswerType.ts"

/**
 * Whether an answer may be remembered for the rest of the turn (RFD 083
 * `InquiryAnswerReusePolicy`): `turn` (the default: `Y`/`N` remember a
 * boolean answer) or `none` (asked again every time; no `Y`/`N`).
 */
export const AnswerReusePolicy = Schema.Literals(["none", "turn"])
export type AnswerReusePolicy = typeof AnswerReusePolicy.Type

/**
 * The question as persisted in an `inquiry_request`: `text`, `answer_type`
 * and an optional `default` (any JSON; JP writes `null` when absent on some
 * paths), and RFD 083's optional `context`, `exclusive`, `persistence`.
 *
 * @example
 * ```ts
 * import { InquiryQuestion } from "parley/domain/event/InquiryQuestion"
 * InquiryQuestion.make({ text: "Overwrite?", answer_type: { type: "boolean" }, default: true })
 * ```
 */
export const InquiryQuestion = Schema.Struct({
  text: Schema.String,
  answer_type: InquiryAnswerType,
  default: Schema.optionalKey(Schema.Json),
  /** RFD 083: context shown above the question; absent when there was none. */
  context: Schema.optionalKey(Schema.String),
  /** RFD 083: only a person may answer; absent means `false`. */
  exclusive: Schema.optionalKey(Schema.Boolean),
  /** RFD 083: whether `Y`/`N` may remember the answer; absent means `turn`. */
  persistence: Schema.optionalKey(AnswerReusePolicy)
})
export type InquiryQuestion = typeof InquiryQuestion.Type
