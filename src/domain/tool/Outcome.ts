/**
 * What one run of a tool produced (`jp_tool::Outcome`), tagged by `type`:
 * `{"type":"success","content":…}`, `{"type":"error","message":…,"trace"?:[…],"transient":…}`
 * or `{"type":"needs_input","question":{…}}`.
 *
 * {@link decode} reads a tool's JSON leniently the way JP does (`null` for an
 * absent optional, `transient` defaulting to false, legacy answer types) and
 * reports an invalid question id separately, because that is a tool-level
 * error rather than "not an outcome".
 *
 * @example
 * ```ts
 * import * as Outcome from "parley/domain/tool/Outcome"
 * Outcome.parseJson('{"type":"success","content":"ok"}')
 * // { _tag: "Valid", outcome: { type: "success", content: "ok" } }
 * ```
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { AnswerType } from "./AnswerType.ts"
import { AnswerReusePolicy } from "../event/InquiryQuestion.ts"
import { Question, QuestionId, questionIdProblem } from "./Question.ts"
import * as JsonText from "../storage/JsonText.ts"

/** The tool succeeded with `content`. */
export const Success = Schema.Struct({ type: Schema.tag("success"), content: Schema.String })
export type Success = typeof Success.Type

export const Failure = Schema.Struct({
  type: Schema.tag("error"),
  message: Schema.String,
  trace: Schema.optionalKey(Schema.Array(Schema.String)),
  /** A transient error may succeed when retried. */
  transient: Schema.Boolean
})
export type Failure = typeof Failure.Type

/** The tool needs an answer to `question` before it can finish. */
export const NeedsInput = Schema.Struct({ type: Schema.tag("needs_input"), question: Question })
export type NeedsInput = typeof NeedsInput.Type

/**
 * What one run of a tool produced (`jp_tool::Outcome`), tagged by `type`:
 * `{"type":"success","content":…}`, `{"type":"error","message":…,"trace"?:[…],"transient":…}`
 * or `{"type":"needs_input","question":{…}}`.
 *
 * @example
 * ```ts
 * import * as Outcome from "parley/domain/tool/Outcome"
 * Outcome.parseJson('{"type":"success","content":"ok"}')
 * // { _tag: "Valid", outcome: { type: "success", content: "ok" } }
 * ```
 */
export const Outcome = Schema.Union([Success, Failure, NeedsInput])
export type Outcome = typeof Outcome.Type

/** A success outcome. */
export const success = (content: string): Outcome => ({ type: "success", content })

export const failure = (
  message: string,
  options?: { readonly transient?: boolean; readonly trace?: ReadonlyArray<string> }
): Outcome =>
  options?.trace === undefined
    ? { type: "error", message, transient: options?.transient ?? false }
    : { type: "error", message, trace: options.trace, transient: options.transient ?? false }

/** A needs-input outcome. */
export const needsInput = (question: Question): Outcome => ({ type: "needs_input", question })

// The wire shape tools print: optional fields may be `null` (JP serializes
// `Option::None` as null), and the question id is checked after decoding.
const WireQuestion = Schema.Struct({
  id: Schema.String,
  text: Schema.String,
  context: Schema.optionalKey(Schema.NullOr(Schema.String)),
  /** JP's name for `context` before RFD 083. */
  pre_amble: Schema.optionalKey(Schema.NullOr(Schema.String)),
  answer_type: AnswerType,
  default: Schema.optionalKey(Schema.Json),
  exclusive: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
  persistence: Schema.optionalKey(Schema.NullOr(AnswerReusePolicy))
})
const Wire = Schema.Union([
  Success,
  Schema.Struct({
    type: Schema.tag("error"),
    message: Schema.String,
    trace: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
    transient: Schema.optionalKey(Schema.NullOr(Schema.Boolean))
  }),
  Schema.Struct({ type: Schema.tag("needs_input"), question: WireQuestion })
])
const decodeWire = Schema.decodeUnknownResult(Wire)

/** The result of reading a tool's output as an {@link Outcome}. */
export type Decoded =
  | { readonly _tag: "Valid"; readonly outcome: Outcome }
  | { readonly _tag: "InvalidQuestionId"; readonly id: string; readonly problem: string }
  | { readonly _tag: "NotAnOutcome"; readonly reason: string }

/** Reads an already-parsed JSON value as an outcome. */
export const decode = (input: unknown): Decoded => {
  const result = decodeWire(input)
  if (Result.isFailure(result)) return { _tag: "NotAnOutcome", reason: result.failure.message }
  const wire = result.success
  switch (wire.type) {
    case "success":
      return { _tag: "Valid", outcome: wire }
    case "error":
      return {
        _tag: "Valid",
        outcome: failure(wire.message, {
          transient: wire.transient ?? false,
          ...(wire.trace == null ? {} : { trace: wire.trace })
        })
      }
    case "needs_input": {
      const q = wire.question
      const id = QuestionId.makeOption(q.id)
      if (id._tag === "None") return { _tag: "InvalidQuestionId", id: q.id, problem: questionIdProblem(q.id) ?? "" }
      const question = new Question({
        id: id.value,
        text: q.text,
        answer_type: q.answer_type,
        ...(q.context != null ? { context: q.context } : q.pre_amble != null ? { context: q.pre_amble } : {}),
        ...(q.exclusive === true ? { exclusive: true } : {}),
        ...(q.persistence === "none" ? { persistence: "none" as const } : {}),
        ...(q.default === undefined || q.default === null ? {} : { default: q.default })
      })
      return { _tag: "Valid", outcome: needsInput(question) }
    }
  }
}

/** Reads a tool's stdout (surrounding whitespace ignored) as an outcome. */
export const parseJson = (text: string): Decoded => {
  let json: unknown
  try {
    json = JsonText.parse(text)
  } catch (e) {
    return { _tag: "NotAnOutcome", reason: e instanceof Error ? e.message : String(e) }
  }
  return decode(json)
}
