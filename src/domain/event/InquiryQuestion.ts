/**
 * The question as persisted in an `inquiry_request`: `text`, `answer_type`
 * and an optional `default` (any JSON; JP writes `null` when absent on some paths).
 *
 * @example
 * ```ts
 * import { InquiryQuestion } from "parley/domain/event/InquiryQuestion"
 * InquiryQuestion.make({ text: "Overwrite?", answer_type: { type: "boolean" }, default: true })
 * ```
 */
import * as Schema from "effect/Schema"
import { InquiryAnswerType } from "./InquiryAnswerType.ts"

/**
 * The question as persisted in an `inquiry_request`: `text`, `answer_type`
 * and an optional `default` (any JSON; JP writes `null` when absent on some paths).
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
  default: Schema.optionalKey(Schema.Json)
})
export type InquiryQuestion = typeof InquiryQuestion.Type
