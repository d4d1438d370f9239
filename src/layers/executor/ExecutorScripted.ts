/**
 * A scripted `Executor` for coordinator and turn-loop tests: each tool name
 * maps to a list of outcomes (one per call) or a function of the call.
 *
 * Outcomes go through the same rules as real tools (invalid question ids are
 * tool-level errors, transient errors become `{"message","trace"}` JSON,
 * unknown tools get JP's "not available" text). Like JP's mock executor, a
 * scripted tool may set the `source` its questions carry, so tests can
 * exercise the assistant-source path.
 *
 * @example
 * ```ts
 * import * as ExecutorScripted from "parley/layers/executor/ExecutorScripted"
 * const layer = ExecutorScripted.layer({
 *   write_note: {
 *     respond: ExecutorScripted.askThen(
 *       { id: "overwrite", text: "Overwrite?", answer_type: { type: "boolean" } },
 *       (answer) => ({ type: "success", content: answer === true ? "written" : "kept" })
 *     )
 *   },
 *   fails: { outcomes: [{ type: "error", message: "boom", transient: false }] }
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import { InquirySource } from "../../domain/event/InquirySource.ts"
import * as Outcome from "../../domain/tool/Outcome.ts"
import { noParameters, type RunMode, type ToolKind } from "../../domain/tool/ToolDefinition.ts"
import { error, Executor, fromOutcome, notAvailable } from "../../services/Executor.ts"
import type { Answers, ExecutionContext, ExecutorResult, ToolCall } from "../../services/Executor.ts"

/** An outcome as a tool would print it (wire JSON) or as a domain `Outcome`. */
export type ScriptedOutcome = Outcome.Outcome | Schema.Json

/** One scripted tool: its definition, run mode and kind, and its outcomes (a list, one per call, or a function of the call). */
export interface ScriptedTool {
  readonly description?: string
  readonly parameters?: Schema.JsonObject
  /** Run mode reported by `permission` (default `unattended`). */
  readonly run?: RunMode
  /** Reported by `kind` (default `builtin`). */
  readonly kind?: ToolKind
  /** The source of this tool's questions (default `tool{name}`). */
  readonly source?: InquirySource
  /** One outcome per call, in order; a call past the end is a tool error. */
  readonly outcomes?: ReadonlyArray<ScriptedOutcome>
  /** Computes the outcome (may be an Effect, e.g. one that sleeps, to test interruption). */
  readonly respond?: (
    call: ToolCall,
    answers: Answers,
    context: ExecutionContext
  ) => ScriptedOutcome | Effect.Effect<ScriptedOutcome>
}

/** A call the scripted executor received, with the answers it was given. */
export interface RecordedCall {
  readonly call: ToolCall
  readonly answers: Answers
}

/** A tool that asks `question` until it is answered, then returns `then(answer)`. */
export const askThen =
  (
    question: {
      readonly id: string
      readonly text: string
      readonly answer_type: Schema.Json
      readonly default?: Schema.Json
    },
    then: (answer: Schema.Json, answers: Answers) => ScriptedOutcome
  ) =>
  (_call: ToolCall, answers: Answers): ScriptedOutcome => {
    const answer = answers[question.id]
    return answer === undefined ? { type: "needs_input", question } : then(answer, answers)
  }

/** The executor and the calls it received (in order), for assertions. */
export const make = (
  tools: Readonly<Record<string, ScriptedTool>>
): {
  readonly executor: Executor["Service"]
  readonly calls: ReadonlyArray<RecordedCall>
} => {
  const calls: Array<RecordedCall> = []
  const used = new Map<string, number>()
  const names = Object.keys(tools).sort()

  const execute = (call: ToolCall, answers: Answers, context: ExecutionContext): Effect.Effect<ExecutorResult> =>
    Effect.suspend(() => {
      const tool = tools[call.name]
      if (tool === undefined) return Effect.succeed<ExecutorResult>(notAvailable(call.name))
      calls.push({ call, answers: { ...answers } })
      let produced: Effect.Effect<ScriptedOutcome>
      if (tool.respond !== undefined) {
        const value = tool.respond(call, answers, context)
        produced = Effect.isEffect(value) ? value : Effect.succeed(value)
      } else {
        const n = used.get(call.name) ?? 0
        used.set(call.name, n + 1)
        const next = tool.outcomes?.[n]
        if (next === undefined) {
          return Effect.succeed<ExecutorResult>(error(`Scripted tool '${call.name}' has no outcome for call ${n + 1}.`))
        }
        produced = Effect.succeed(next)
      }
      return Effect.map(produced, (value): ExecutorResult => {
        const decoded = Outcome.decode(value)
        return decoded._tag === "NotAnOutcome"
          ? error(`Scripted tool '${call.name}' returned something that is not an outcome: ${decoded.reason}`)
          : fromOutcome(call.name, decoded, answers, tool.source ?? InquirySource.tool(call.name))
      })
    })

  const executor = Executor.of({
    definitions: names.map((name) => ({
      name,
      description: tools[name]!.description ?? "",
      parameters: tools[name]!.parameters ?? noParameters
    })),
    execute,
    permission: (name) => tools[name]?.run ?? "unattended",
    kind: (name) => (tools[name] === undefined ? undefined : (tools[name]!.kind ?? "builtin"))
  })
  return { executor, calls }
}

/** A layer with scripted tools. */
export const layer = (tools: Readonly<Record<string, ScriptedTool>>): Layer.Layer<Executor> =>
  Layer.sync(Executor, () => make(tools).executor)
