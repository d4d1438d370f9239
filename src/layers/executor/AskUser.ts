/**
 * `ask_user`, the built-in through which the model asks the person a typed
 * question mid-turn (RFD 083; docs/questions-and-approvals.md#how-a-question-is-answered-rfd-082).
 *
 * Arguments: `question` (one line), `context` (shown above it),
 * `answer_type` `boolean` | `select` | `text` (default `text`), `options`
 * (select only), `default` (checked against the type and the options). A
 * mistake in them is a tool error that says what to fix. The tool asks one
 * question, id `answer`, recorded with source `assistant`; the question is
 * `exclusive` (only a person answers it: with nobody to ask it follows the
 * `detached` policy but never goes to the model) and its answer is never
 * remembered for the turn (`persistence = "none"`). The prompt is headed
 * "Assistant" (its `prompt_label`). The answer comes back as the JSON body
 * `{"answer_type": …, "answer": …}`, checked again against the question.
 *
 * @example
 * ```ts
 * import * as AskUser from "parley/layers/executor/AskUser"
 * AskUser.checkArguments({ question: "Proceed?", answer_type: "boolean" }) // { question: "Proceed?", answerType: { type: "boolean" } }
 * AskUser.checkArguments({ question: "Which?", answer_type: "select" }) // "answer_type is \"select\" but options is missing or empty: …"
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import { InquirySource } from "../../domain/event/InquirySource.ts"
import * as AnswerFit from "../../domain/tool/AnswerFit.ts"
import { AnswerType } from "../../domain/tool/AnswerType.ts"
import * as Outcome from "../../domain/tool/Outcome.ts"
import { Question, QuestionId } from "../../domain/tool/Question.ts"
import type { Arguments, BuiltinTool } from "./BuiltinTool.ts"

/** The id of `ask_user`'s one question (the key of `conversation.tools.ask_user.questions.answer`). */
export const ANSWER = QuestionId.make("answer")

/** What `ask_user` was asked to ask, once its arguments are checked. */
export interface Checked {
  readonly question: string
  readonly context?: string
  readonly answerType: AnswerType
  readonly default?: Schema.Json
}

const TYPES = ["boolean", "select", "text"] as const
/** {@link TYPES} as texts, to look any text up in. */
const TYPES_TEXT: ReadonlyArray<string> = TYPES

/** The arguments as a question, or what the model must fix (RFD 083 "Arguments"). */
export const checkArguments = (args: Arguments): Checked | string => {
  const question = args["question"]
  if (typeof question !== "string" || question.trim() === "")
    return "question is missing or empty: pass the question to ask as one line of text."
  if (/[\r\n]/.test(question))
    return "question contains a line break: keep the question to one line and put anything longer in context."
  const context = args["context"]
  if (context !== undefined && typeof context !== "string") return "context must be text."
  const type = args["answer_type"] ?? "text"
  if (typeof type !== "string" || !TYPES_TEXT.includes(type)) return `answer_type must be one of ${TYPES.join(", ")}.`
  const options = args["options"]
  let answerType: AnswerType
  if (type === "select") {
    if (!Array.isArray(options) || options.length === 0)
      return 'answer_type is "select" but options is missing or empty: pass the choices as a list of strings.'
    if (!options.every((o) => typeof o === "string")) return "options must be a list of strings."
    answerType = AnswerType.select(options)
  } else {
    if (options !== undefined)
      return `options is only for answer_type "select" (answer_type is "${type}"): leave options out or use "select".`
    answerType = type === "boolean" ? AnswerType.boolean : AnswerType.text
  }
  const dflt = args["default"]
  if (dflt !== undefined) {
    const fits = AnswerFit.fit(answerType, dflt)
    if (Result.isFailure(fits)) {
      return type === "select"
        ? `default ${JSON.stringify(dflt)} is not one of the options (${Array.isArray(options) ? options.join(", ") : ""}).`
        : `default ${JSON.stringify(dflt)} does not fit answer_type "${type}" (${type === "boolean" ? "true or false" : "a string"}).`
    }
  }
  return {
    question,
    ...(context !== undefined ? { context } : {}),
    answerType,
    ...(dflt !== undefined ? { default: dflt } : {})
  }
}

/** The question `ask_user` asks: exclusive, never remembered (RFD 083 "Execution flow"). */
export const questionOf = (checked: Checked): Question =>
  new Question({
    id: ANSWER,
    text: checked.question,
    ...(checked.context !== undefined ? { context: checked.context } : {}),
    answer_type: checked.answerType,
    ...(checked.default !== undefined ? { default: checked.default } : {}),
    exclusive: true,
    persistence: "none"
  })

/** The success body: the answer with its type, so `true` and `"true"` stay apart. */
export const body = (answerType: AnswerType, answer: Schema.Json): string =>
  JSON.stringify({ answer_type: answerType.type, answer })

const DESCRIPTION = [
  "Ask the user a typed question (boolean, select, or text) and receive their answer.",
  "Use only when the conversation does not provide the information you need and the user can reasonably be expected to answer.",
  "When in doubt, answer the user's original question directly; do not call `ask_user` for clarification you can derive from context or for confirmation of obvious next steps.",
  "Do not use `ask_user` to collect secrets (passwords, API keys, SSH passphrases): answers are returned to the model and persisted in the conversation stream."
].join("\n")

/** `ask_user` (RFD 083): enabled by default, runs unattended (the question is the interaction). */
export const askUser: BuiltinTool = {
  name: "ask_user",
  description: DESCRIPTION,
  // Provider-valid: no conditional requiredness; cross-field rules are checked in `checkArguments`.
  parameters: {
    type: "object",
    properties: {
      question: { type: "string", description: "The question, on one line." },
      context: { type: "string", description: "Optional context shown above the question (may span lines)." },
      answer_type: { type: "string", enum: [...TYPES], description: 'The kind of answer; default "text".' },
      options: {
        type: "array",
        items: { type: "string" },
        description: 'The choices; required when answer_type is "select", not allowed otherwise.'
      },
      default: {
        type: ["boolean", "string"],
        description: "Pre-fills the prompt; must fit answer_type (and be one of options for a select)."
      }
    },
    required: ["question"]
  },
  inquirySource: () => InquirySource.assistant,
  questions: { answer: { promptLabel: "Assistant" } },
  run: (args, answers) =>
    Effect.sync(() => {
      const checked = checkArguments(args)
      if (typeof checked === "string") return Outcome.failure(`ask_user: ${checked}`)
      const answer = answers[ANSWER]
      if (answer === undefined) return Outcome.needsInput(questionOf(checked))
      // Defensive: whatever answered, the body must keep the question's type (RFD 083).
      return Result.isSuccess(AnswerFit.fit(checked.answerType, answer))
        ? Outcome.success(body(checked.answerType, answer))
        : Outcome.failure("ask_user: the accumulated answer does not match the requested answer type.")
    })
}
