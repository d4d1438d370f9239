/**
 * The structured-output side of an LLM inquiry (RFD 028, jp-reference §5.5):
 * the answer schema for a question's answer type, the question prompt, and
 * answer extraction.
 *
 * The schema is `{"type":"object","properties":{"answer":S},"required":["answer"],"additionalProperties":false}`
 * with S = `{"type":"boolean"}` | `{"type":"string","enum":[values]}` |
 * `{"type":"string"}`. It is stable per answer type (and option list): it
 * carries no inquiry id, so a provider's prompt and grammar caches survive
 * from one inquiry to the next (contract §1, after JP's RFD 034). The inquiry
 * id goes into the prompt text instead.
 *
 * @example
 * ```ts
 * import * as InquirySchema from "parley/domain/tool/InquirySchema"
 * InquirySchema.schemaFor({ type: "boolean" })
 * // { type: "object", properties: { answer: { type: "boolean" } }, required: ["answer"], additionalProperties: false }
 * InquirySchema.extractAnswer({ answer: true }, { type: "boolean" }) // Result.succeed(true)
 * ```
 *
 * @since 0.1.0
 */
import * as JsonText from "../storage/JsonText.ts"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import type { InquiryAnswerType } from "../event/InquiryAnswerType.ts"
import type { InquiryId } from "../event/InquiryId.ts"
import type { InquiryQuestion } from "../event/InquiryQuestion.ts"

/** Answer types an assistant may answer; secrets never go to a model. */
export type AnswerableType = Exclude<InquiryAnswerType, { readonly type: "secret" }>

/** Whether a model may answer this question (not a secret). */
export const isAnswerable = (answerType: InquiryAnswerType): answerType is AnswerableType =>
  answerType.type !== "secret"

/** The JSON Schema of the `answer` value. Select options that are not all strings get an untyped `enum`. */
export const answerSchemaFor = (answerType: AnswerableType): Schema.JsonObject => {
  switch (answerType.type) {
    case "boolean":
      return { type: "boolean" }
    case "text":
      return { type: "string" }
    case "select": {
      const values = answerType.options.map((o) => o.value)
      return values.every((v) => typeof v === "string") ? { type: "string", enum: values } : { enum: values }
    }
  }
}

/** The structured-output schema of an inquiry: the same bytes for the same answer type. */
export const schemaFor = (answerType: AnswerableType): Schema.JsonObject => ({
  type: "object",
  properties: { answer: answerSchemaFor(answerType) },
  required: ["answer"],
  additionalProperties: false
})

/**
 * The question as the user turn of the side call: JP's text, then the
 * inquiry id line.
 *
 * @example
 * ```ts
 * import { promptFor } from "parley/domain/tool/InquirySchema"
 * promptFor("write_note", "Overwrite a.txt?", "call_1.overwrite.1")
 * // "The tool `write_note` requires additional input.\n\nOverwrite a.txt?\n\nProvide your answer based on the conversation context.\n\nInquiry ID: call_1.overwrite.1"
 * ```
 */
export const promptFor = (toolName: string, questionText: string, inquiryId: InquiryId | string): string =>
  `The tool \`${toolName}\` requires additional input.\n\n${questionText}\n\nProvide your answer based on the conversation context.\n\nInquiry ID: ${inquiryId}`

/** The synthetic result the paused tool call gets in the inquiry's copy of the stream. */
export const pausedToolContent = (question: InquiryQuestion): string => `Tool paused: ${question.text}`

const describe = (value: unknown): string => (value === undefined ? "nothing" : JSON.stringify(value))

const jsonEquals = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

/**
 * Takes the `answer` out of a structured reply and checks it against the
 * answer type. Fails with the reason (for "Failed to extract answer from
 * structured response: <reason>").
 */
export const extractAnswer = (data: Schema.Json, answerType: AnswerableType): Result.Result<Schema.Json, string> => {
  if (!JsonText.isObject(data)) {
    return Result.fail(`expected an object with an \`answer\` field, got ${describe(data)}`)
  }
  const answer = data["answer"]
  if (answer === undefined) return Result.fail(`no \`answer\` field in ${describe(data)}`)
  if (answer === null) return Result.fail("the answer is null")
  switch (answerType.type) {
    case "boolean":
      return typeof answer === "boolean"
        ? Result.succeed(answer)
        : Result.fail(`expected a boolean answer, got ${describe(answer)}`)
    case "text":
      return typeof answer === "string"
        ? Result.succeed(answer)
        : Result.fail(`expected a text answer, got ${describe(answer)}`)
    case "select": {
      const values = answerType.options.map((o) => o.value)
      return values.some((v) => jsonEquals(v, answer))
        ? Result.succeed(answer)
        : Result.fail(`${describe(answer)} is not one of the options ${values.map(describe).join(", ")}`)
    }
  }
}
