/**
 * A question a tool asks when it needs input (`jp_tool::Question`, RFD 082).
 *
 * The question id keys the answer in `tool.answers` and is the middle segment
 * of the inquiry id `<call>.<question>.<attempt>`, so it must be non-empty and
 * must not contain `.`. RFD 083 adds `context` (renamed from `context`),
 * `exclusive` and `persistence`; all but `id` are persisted (see
 * {@link toInquiryQuestion}), the new ones only when they differ from their
 * defaults, so a question that does not use them is written as before.
 *
 * @example
 * ```ts
 * import * as Schema from "effect/Schema"
 * import { Question, toInquiryQuestion } from "parley/domain/tool/Question"
 * // Decoding checks the id (non-empty, no "."); `new Question` wants an id already branded `QuestionId`.
 * const q = Schema.decodeUnknownSync(Question)({ id: "overwrite", text: "Overwrite a.txt?", answer_type: { type: "boolean" }, default: false })
 * toInquiryQuestion(q) // { text: "Overwrite a.txt?", answer_type: { type: "boolean" }, default: false }
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { AnswerType } from "./AnswerType.ts"
import { InquiryAnswerType } from "../event/InquiryAnswerType.ts"
import { AnswerReusePolicy, type InquiryQuestion } from "../event/InquiryQuestion.ts"

export { AnswerReusePolicy } from "../event/InquiryQuestion.ts"

/** Why a question id is invalid, or `undefined` when it is valid. */
export const questionIdProblem = (id: string): string | undefined =>
  id.length === 0
    ? "question ids must not be empty"
    : id.includes(".")
      ? "question ids must not contain '.'"
      : undefined

/** A question id: non-empty, no `.` (it is the middle segment of the inquiry id). */
export const QuestionId = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter((s: string) => {
      const problem = questionIdProblem(s)
      return problem === undefined || `Invalid question id ${JSON.stringify(s)}: ${problem}`
    })
  ),
  Schema.brand("QuestionId")
)
export type QuestionId = typeof QuestionId.Type

/** Whether `s` is a valid question id. */
export const isQuestionId = (s: string): s is QuestionId => questionIdProblem(s) === undefined

/**
 * A question a tool asks when it needs input (`jp_tool::Question`, RFD 082).
 *
 * @example
 * ```ts
 * import * as Schema from "effect/Schema"
 * import { Question, toInquiryQuestion } from "parley/domain/tool/Question"
 * // Decoding checks the id (non-empty, no "."); `new Question` wants an id already branded `QuestionId`.
 * const q = Schema.decodeUnknownSync(Question)({ id: "overwrite", text: "Overwrite a.txt?", answer_type: { type: "boolean" }, default: false })
 * toInquiryQuestion(q) // { text: "Overwrite a.txt?", answer_type: { type: "boolean" }, default: false }
 * ```
 */
export class Question extends Schema.Class<Question>("parley/Question")({
  id: QuestionId,
  /** What is asked; one line by convention (tools do not always keep it). */
  text: Schema.String,
  /** Context shown above the question (e.g. a diff); RFD 083's name for JP's `context`. */
  context: Schema.optionalKey(Schema.String),
  answer_type: AnswerType,
  /** A display hint: the pre-selected or suggested answer. */
  default: Schema.optionalKey(Schema.Json),
  /**
   * Only a person may answer (RFD 083, a subset of RFD 049): never the
   * assistant — not with nobody to ask, not with `target = "assistant"`.
   * Default `false`.
   */
  exclusive: Schema.optionalKey(Schema.Boolean),
  /** Whether `Y`/`N` may remember the answer for the turn (RFD 083 `AnswerReusePolicy`); default `turn`. */
  persistence: Schema.optionalKey(AnswerReusePolicy)
}) {}

/**
 * The persisted form of a tool question (JP `tool_question_to_inquiry_question`):
 * select options become `{ value }` without description; `id` is dropped;
 * `default` is kept verbatim, even for secret questions (RFD 082: tool
 * authors must not put a secret there). RFD 083's `context`, `exclusive` and
 * `persistence` are written only when set away from their defaults (JP's
 * `skip_serializing_if`), in JP's field order.
 */
export const toInquiryQuestion = (q: Question): InquiryQuestion => {
  // The three without options are shared (`InquiryAnswerType.boolean`…): every recorded question holds one.
  const answer_type: InquiryQuestion["answer_type"] =
    q.answer_type.type === "select"
      ? { type: "select", options: q.answer_type.options.map((value) => ({ value })) }
      : InquiryAnswerType[q.answer_type.type]
  // The common question sets none of the optional fields: one literal, no copies.
  if (q.default === undefined && q.context === undefined && q.exclusive !== true && q.persistence !== "none") {
    return { text: q.text, answer_type }
  }
  const out: { -readonly [K in keyof InquiryQuestion]: InquiryQuestion[K] } = { text: q.text, answer_type }
  if (q.default !== undefined) out.default = q.default
  if (q.context !== undefined) out.context = q.context
  if (q.exclusive === true) out.exclusive = true
  if (q.persistence === "none") out.persistence = "none"
  return out
}

/**
 * The tool question behind a recorded one (its id from the inquiry id): what
 * a resumed turn or an answerer checks an answer against. Select options
 * that are not strings are compared in their JSON text.
 */
export const fromInquiryQuestion = (id: string, q: InquiryQuestion): Question =>
  new Question({
    id: QuestionId.make(id),
    text: q.text,
    answer_type:
      q.answer_type.type === "select"
        ? {
            type: "select",
            options: q.answer_type.options.map((o) => (typeof o.value === "string" ? o.value : JSON.stringify(o.value)))
          }
        : { type: q.answer_type.type },
    ...(q.default !== undefined ? { default: q.default } : {}),
    ...(q.context !== undefined ? { context: q.context } : {}),
    ...(q.exclusive !== undefined ? { exclusive: q.exclusive } : {}),
    ...(q.persistence !== undefined ? { persistence: q.persistence } : {})
  })
