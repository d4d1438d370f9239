/**
 * The script of the scripted model (contract §4): `{ "steps": [...] }`, one
 * step consumed per model request (main turn or inquiry side call).
 *
 * A step is a reply — `reasoning`, `message` and/or `tool_calls` — or a
 * `structured` answer (optionally with `reasoning`), or an `error`; any of
 * them may wait `delay_ms` first. Unknown keys are rejected so a typo does
 * not silently become an empty reply. Tool calls without an `id` get
 * `call_<n>`, n counting the script's tool calls from 1 in file order.
 *
 * @example
 * ```ts
 * import * as ScriptedModel from "parley/domain/model/ScriptedModel"
 * const steps = ScriptedModel.parse('{"steps":[{"tool_calls":[{"name":"write_note"}]}]}')
 * // Result.succeed([{ toolCalls: [{ id: "call_1", name: "write_note", arguments: {} }], delayMs: 0 }])
 * ```
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as JsonText from "../storage/JsonText.ts"

/** A tool call in a script step (`id` defaults to `call_<n>`). */
export const ScriptToolCall = Schema.Struct({
  id: Schema.optionalKey(Schema.String),
  name: Schema.String,
  arguments: Schema.optionalKey(Schema.JsonObject)
})

const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** One step of a script: what one request to the scripted model gets (contract §4). */
export const ScriptStep = Schema.Struct({
  reasoning: Schema.optionalKey(Schema.String),
  message: Schema.optionalKey(Schema.String),
  tool_calls: Schema.optionalKey(Schema.Array(ScriptToolCall)),
  structured: Schema.optionalKey(Schema.Json),
  error: Schema.optionalKey(Schema.String),
  delay_ms: Schema.optionalKey(NonNegativeInt)
})
export type ScriptStep = typeof ScriptStep.Type

/** A script for the scripted model: `{ "steps": [...] }`. */
export const Script = Schema.Struct({ steps: Schema.Array(ScriptStep) })
export type Script = typeof Script.Type

/** A tool call with its id resolved. */
export interface ToolCall {
  readonly id: string
  readonly name: string
  readonly arguments: Schema.JsonObject
}

/** One step, validated, with default ids filled in. */
export interface Step {
  readonly reasoning?: string
  readonly message?: string
  readonly toolCalls: ReadonlyArray<ToolCall>
  /** Present when the step is a structured answer (the value may be JSON `null`). */
  readonly structured?: { readonly value: Schema.Json }
  readonly error?: string
  readonly delayMs: number
}

/** Why a step is malformed, or `undefined`. */
const stepProblem = (step: ScriptStep): string | undefined => {
  const reply = step.reasoning !== undefined || step.message !== undefined || step.tool_calls !== undefined
  const structured = "structured" in step
  if (step.error !== undefined) {
    return reply || structured ? "`error` cannot be combined with a reply or `structured`" : undefined
  }
  if (structured && (step.message !== undefined || step.tool_calls !== undefined)) {
    return "`structured` can only be combined with `reasoning` and `delay_ms`"
  }
  if (!reply && !structured) return "a step needs one of `message`, `reasoning`, `tool_calls`, `structured` or `error`"
  return undefined
}

/** Validates a decoded script and resolves default tool-call ids. */
export const resolve = (script: Script): Result.Result<ReadonlyArray<Step>, string> => {
  const steps: Array<Step> = []
  let n = 0
  for (const [i, step] of script.steps.entries()) {
    const problem = stepProblem(step)
    if (problem !== undefined) return Result.fail(`steps[${i}]: ${problem}`)
    const toolCalls = (step.tool_calls ?? []).map((call) => {
      n++
      return { id: call.id ?? `call_${n}`, name: call.name, arguments: call.arguments ?? {} }
    })
    steps.push({
      ...(step.reasoning !== undefined ? { reasoning: step.reasoning } : {}),
      ...(step.message !== undefined ? { message: step.message } : {}),
      toolCalls,
      ...("structured" in step ? { structured: { value: step.structured ?? null } } : {}),
      ...(step.error !== undefined ? { error: step.error } : {}),
      delayMs: step.delay_ms ?? 0
    })
  }
  return Result.succeed(steps)
}

const decodeScript = Schema.decodeUnknownResult(Script, { onExcessProperty: "error", errors: "all" })

/** Decodes and validates a script from parsed JSON. */
export const decode = (json: unknown): Result.Result<ReadonlyArray<Step>, string> =>
  Result.match(decodeScript(json), {
    // One line per problem is noisy in a CLI error: "Expected string at ["steps"][1]["message"]; …".
    onFailure: (error) => Result.fail(error.message.replace(/\n\s+at /g, " at ").replace(/\n/g, "; ")),
    onSuccess: resolve
  })

/** Parses a script file's text. */
export const parse = (text: string): Result.Result<ReadonlyArray<Step>, string> => {
  let json: unknown
  try {
    json = JsonText.parse(text)
  } catch (e) {
    return Result.fail(`not JSON: ${e instanceof Error ? e.message : String(e)}`)
  }
  return decode(json)
}
