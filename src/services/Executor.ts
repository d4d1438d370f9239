/**
 * Runs one tool call with the answers gathered so far.
 *
 * The result is either the tool's response or a question it needs answered,
 * together with the already-resolved `InquirySource` (RFD 082 "Crossing the
 * executor boundary"): built-ins may declare their source, local tools are
 * always `tool{name}`, and config has no say. The coordinator records that
 * source verbatim. Cancellation is fiber interruption; a live executor kills
 * a local tool's whole process group when interrupted.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { Executor } from "parley/services/Executor"
 * const program = Effect.gen(function*() {
 *   const executor = yield* Executor
 *   const result = yield* executor.execute(
 *     { id: "call_1", name: "write_note", arguments: { path: "a.txt" } },
 *     { overwrite: true },
 *     { conversationId: "17738399468", root: "/work/project" }
 *   )
 *   return result._tag === "NeedsInput" ? result.question.text : result.response.content
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InquirySource } from "../domain/event/InquirySource.ts"
import type * as Outcome from "../domain/tool/Outcome.ts"
import { Question } from "../domain/tool/Question.ts"
import type { RunMode, ToolDefinition, ToolKind } from "../domain/tool/ToolDefinition.ts"

/** The call as the model made it. */
export interface ToolCall {
  readonly id: string
  readonly name: string
  readonly arguments: Readonly<Record<string, Schema.Json>>
}

/** Answers by bare question id (`overwrite`), the latest answer per id. */
export type Answers = Readonly<Record<string, Schema.Json>>

/** Where a call runs: the conversation it belongs to and the project directory. */
export interface ExecutionContext {
  /** The bare decisecond id (`17738399468`), passed to local tools as `conversation_id`. */
  readonly conversationId: string
  /** The project directory: local tools run here, built-ins resolve paths against it. */
  readonly root: string
  /**
   * What the executor asked to keep with this call's latest question
   * ({@link NeedsInput.resume}), handed back when the call runs again —
   * in particular after a crash, from the recorded question.
   */
  readonly resume?: Schema.Json
  /**
   * Nobody is at the run's terminal, and a person's approval is asked all
   * the same (the detached policy waits, defers or denies, or someone is
   * attached): what the tool would otherwise decide alone for the person —
   * an MCP server's URL request (declined) or its filled-in form (sent
   * unreviewed) — it asks as an approval instead ({@link NeedsInput.approval}).
   */
  readonly approvals?: boolean
}

/** What a finished call records in its `tool_call_response` (and what the model reads). */
export const ToolResponse = Schema.Struct({ content: Schema.String, is_error: Schema.Boolean })
export type ToolResponse = typeof ToolResponse.Type

/** The tool finished: this is what goes into the `tool_call_response`. */
export class Completed extends Schema.TaggedClass<Completed>()("Completed", { response: ToolResponse }) {}

/** The tool asked a question; re-run it with `answers` plus the answer under `question.id`. */
export class NeedsInput extends Schema.TaggedClass<NeedsInput>()("NeedsInput", {
  question: Question,
  /** Who asked, resolved by the executor; persisted verbatim. */
  source: InquirySource,
  /** The answers this run was given. */
  answers: Schema.Record(Schema.String, Schema.Json),
  /**
   * Opaque state the executor needs to carry this call on in another
   * process (an MCP server's open `input_required` round, docs/mcp.md#rounds-2026-07-28). The
   * coordinator records it with the question and hands the latest back as
   * {@link ExecutionContext.resume}.
   */
  resume: Schema.optionalKey(Schema.Json),
  /**
   * The question is asked again because the last answer to it was
   * rejected (an MCP form field's check), and why. A configured answer is
   * then not given again: the call ends with `invalid_static_answer`
   * (docs/decisions.md#static-answer-rejected) instead of the same answer rejected up to `max_attempts`.
   */
  rejected: Schema.optionalKey(Schema.String),
  /**
   * The question is a person's approval of what these arguments show (an
   * MCP server's page: its URL and message; its form: the values), asked
   * when {@link ExecutionContext.approvals} says so: listed and answered as
   * an approval (`kind: "approval"`), never by config or the assistant.
   */
  approval: Schema.optionalKey(Schema.Record(Schema.String, Schema.Json))
}) {}

/** The outcome of one run of a tool: it finished, or it asks a question first. */
export type ExecutorResult = Completed | NeedsInput

/**
 * A successful result with `content` (at the root: `Executor.ok`).
 *
 * @example
 * ```ts
 * import { Executor } from "parley"
 * Executor.ok("written").response // { content: "written", is_error: false }
 * ```
 */
export const ok = (content: string): Completed => new Completed({ response: { content, is_error: false } })
/**
 * A failed result with `content` (at the root: `Executor.error`): the model reads it as a tool error.
 *
 * @example
 * ```ts
 * import { Executor } from "parley"
 * Executor.error("no such file").response // { content: "no such file", is_error: true }
 * ```
 */
export const error = (content: string): Completed => new Completed({ response: { content, is_error: true } })

/** JP's response for a call to a tool that is not (or no longer) enabled; its typo kept. */
export const notAvailable = (name: string): Completed =>
  error(
    `Tool '${name}' is not available. It may have been available earlier in this conversation but is no longer enabled. Do not retry this tool until it it is available again in the list of enabled tools.`
  )

/**
 * Turns a decoded outcome into a result (JP `ExecutionOutcome` → `ExecutorResult`):
 * a non-transient error is its message, a transient one `{"message","trace"}` JSON,
 * and an invalid question id a tool-level error with no question at all.
 * `NotAnOutcome` is the caller's to handle (local tools look at the exit code).
 */
export const fromOutcome = (
  toolName: string,
  decoded: Exclude<Outcome.Decoded, { readonly _tag: "NotAnOutcome" }>,
  answers: Answers,
  source: InquirySource
): ExecutorResult => {
  if (decoded._tag === "InvalidQuestionId") {
    return error(
      `Tool '${toolName}' asked a question with an invalid id ${JSON.stringify(decoded.id)}: ${decoded.problem}.`
    )
  }
  const outcome = decoded.outcome
  switch (outcome.type) {
    case "success":
      return ok(outcome.content)
    case "error":
      return error(
        outcome.transient ? JSON.stringify({ message: outcome.message, trace: outcome.trace ?? [] }) : outcome.message
      )
    case "needs_input":
      return new NeedsInput({ question: outcome.question, source, answers: { ...answers } })
  }
}

/** The run mode of one call, and whether the tool's author requires a person's approval for it. */
export interface CallPermission {
  readonly mode: RunMode
  readonly approval: boolean
}

/**
 * Runs tool calls, as a service: the tool definitions the model is offered,
 * one run of a call with the answers so far, the run mode and the kind of
 * each tool. Live: `ExecutorLive.layer` (built-ins, local commands); tests:
 * `ExecutorScripted.layer`; effect/ai toolkits: `executorFromToolkit` from
 * `parley/ai`.
 *
 * @example
 * ```ts
 * import { ExecutorScripted } from "parley"
 *
 * const layer = ExecutorScripted.layer({ deploy: { outcomes: [{ type: "success", content: "deployed" }] } }) // Layer<Executor>
 * ```
 */
export class Executor extends Context.Service<
  Executor,
  {
    /** What providers are told about the enabled tools, sorted by name. */
    readonly definitions: ReadonlyArray<ToolDefinition>
    /** Runs one call. Never fails: tool problems are `Completed` with `is_error`. */
    execute(call: ToolCall, answers: Answers, context: ExecutionContext): Effect.Effect<ExecutorResult>
    /** The configured run mode (built-ins default to `unattended`, local tools to `ask`). */
    permission(name: string): RunMode
    /**
     * The run mode of this one call, for a tool that decides per call
     * (docs/decisions.md#person-only-questions: effect/ai's `needsApproval`, a boolean or a function of the
     * parameters). `approval` means the tool's author requires a person's
     * yes: asked as for `run = "ask"`, and with nobody to ask the call is
     * skipped, never run. Without it, `permission(call.name)` applies.
     */
    callPermission?(call: ToolCall): Effect.Effect<CallPermission>
    /** `builtin` / `local` for an enabled tool, `undefined` for an unknown one (for prompts like "Run local write_note tool?"). */
    kind(name: string): ToolKind | undefined
    /**
     * Every tool name this executor defines, enabled or not: the names its
     * config tables may address (docs/library.md#bridges-to-effectai-parleyai: a combined executor accepts
     * `[conversation.tools.<name>]` for them). Default: the definitions'.
     */
    readonly names?: ReadonlyArray<string>
    /** Where a tool comes from, for messages (`the built-in tools`, `MCP server "files"`, `an effect/ai toolkit`). */
    source?(name: string): string | undefined
    /**
     * The tool's own "who's asking" label for a question (RFD 083: a
     * built-in's default `prompt_label`, under any configured one), if any.
     */
    promptLabel?(name: string, questionId: string): string | undefined
  }
>()("parley/Executor") {}

/**
 * Two executors combined into one define the same tool name (docs/library.md#bridges-to-effectai-parleyai):
 * the call could go to either, so the combination is refused. `sources`
 * are the two, as their executors describe them.
 */
export class DuplicateTool extends Schema.TaggedError<DuplicateTool>()("DuplicateTool", {
  name: Schema.String,
  sources: Schema.Tuple([Schema.String, Schema.String])
}) {
  override get message() {
    return `Tool "${this.name}" is defined twice: by ${this.sources[0]} and by ${this.sources[1]}. Give one of them another name.`
  }
}
