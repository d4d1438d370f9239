/**
 * What a built-in tool is (RFD 082 `BuiltinTool`): its definition, its
 * questions' source and known questions, and how one run of a call goes.
 * The registry and the built-ins themselves are in `BuiltinTools.ts`.
 *
 * @example
 * ```ts
 * import * as BuiltinTool from "parley/layers/executor/BuiltinTool"
 * import * as BuiltinTools from "parley/layers/executor/BuiltinTools"
 * BuiltinTool.inquirySourceOf(BuiltinTools.readFile) // { source: "tool", name: "read_file" }
 * ```
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import { InquirySource } from "../../domain/event/InquirySource.ts"
import type { AnswerType } from "../../domain/tool/AnswerType.ts"
import type * as Outcome from "../../domain/tool/Outcome.ts"
import type { Answers, ExecutionContext } from "../../services/Executor.ts"

/** A call's arguments, as the model sent them. */
export type Arguments = Readonly<Record<string, Schema.Json>>

/** A tool implemented in parley: its definition and how one run of a call goes. */
export interface BuiltinTool {
  readonly name: string
  readonly description: string
  /** JSON Schema of the arguments; the executor validates before `run`. */
  readonly parameters: Schema.JsonObject
  /** Who asks this tool's questions; default `tool{name}`. Not configurable. */
  readonly inquirySource?: (name: string) => InquirySource
  /**
   * The questions the tool always asks the same way, by id: their answer
   * type (a static answer configured for one is checked when config loads,
   * RFD 083) and the default "who's asking" label (under a configured
   * `prompt_label`).
   */
  readonly questions?: Readonly<Record<string, { readonly answerType?: AnswerType; readonly promptLabel?: string }>>
  readonly run: (args: Arguments, answers: Answers, context: ExecutionContext) => Effect.Effect<Outcome.Outcome>
}

/** The persisted source of a built-in's questions. */
export const inquirySourceOf = (tool: BuiltinTool): InquirySource =>
  tool.inquirySource?.(tool.name) ?? InquirySource.tool(tool.name)
