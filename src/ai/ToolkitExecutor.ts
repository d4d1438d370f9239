/**
 * A parley `Executor` whose tools are `effect/ai` tools (docs/library.md#bridges-to-effectai-parleyai).
 *
 * {@link executorFromToolkit} takes a `Toolkit` and its handlers, as
 * `toolkit.toLayer` does, except that a handler may also ask questions with
 * `Inquiry.ask` (see `./Inquiry.ts`). Each `execute` runs the tool through
 * the toolkit's own `handle` (parameter decoding, failure modes, result
 * encoding are effect/ai's) with an `Inquiry` in the handler's context:
 *
 * - the handler returns → `Completed` with the encoded result (a string as
 *   is, anything else as JSON); a failure → `Completed` with `is_error`;
 * - the handler asks a question nobody answered yet → `NeedsInput` with the
 *   question, source `tool{name}`, and the answers it was given; parley's
 *   coordinator records it, has it answered, and calls `execute` again with
 *   the answers so far (after a crash, the resumed turn rebuilds them from
 *   the recorded events).
 *
 * Config, as for built-ins: `conversation.tools.<name>.run` from the
 * `Config` the layer requires (docs/decisions.md#config-in-the-type: in its type, never read behind
 * it), else `ask` for a tool with effect/ai's `needsApproval` (docs/decisions.md#config-in-the-type: a
 * person's yes, never the assistant's; see `callPermission`), else
 * `options.run`, else `unattended`;
 * `enable = false` hides the tool (not offered; a call is "not available");
 * `description` replaces the tool's. `kind` is `builtin`. Who answers a question is parley's routing: a configured
 * `answer`, the person at a terminal (target `user`), or the model (target
 * `assistant`, or nobody at a terminal).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Schema from "effect/Schema"
 * import { Tool, Toolkit } from "effect/ai"
 * import { executorFromToolkit, Inquiry } from "parley/ai"
 *
 * const WriteFile = Tool.make("write_file", {
 *   description: "Write a file.",
 *   parameters: Schema.Struct({ path: Schema.String, content: Schema.String }),
 *   success: Schema.String
 * })
 * const toolkit = Toolkit.make(WriteFile)
 *
 * const executor = executorFromToolkit(toolkit, {
 *   write_file: ({ path }) =>
 *     Effect.gen(function*() {
 *       const overwrite = yield* Inquiry.ask(Inquiry.boolean("overwrite", `Overwrite ${path}?`))
 *       return overwrite ? `wrote ${path}` : `kept ${path}`
 *     })
 * }) // Layer<Executor, never, Config>
 * ```
 */
import * as Cause from "effect/Cause"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { Tool, Toolkit } from "effect/ai"
import { AiError as AiErrorModule, Tool as AiTool } from "effect/ai"
import { InquirySource } from "../domain/event/InquirySource.ts"
import * as ConfigData from "../domain/tool/Config.ts"
import type { Question } from "../domain/tool/Question.ts"
import type { RunMode, ToolDefinition } from "../domain/tool/ToolDefinition.ts"
import { Config } from "../services/Config.ts"
import {
  type Answers,
  type CallPermission,
  Completed,
  type ExecutionContext,
  Executor,
  type ExecutorResult,
  NeedsInput,
  notAvailable,
  type ToolCall
} from "../services/Executor.ts"
import { Inquiry } from "./Inquiry.ts"

/**
 * The handlers of a toolkit's tools: exactly `Toolkit.HandlersFrom`. A handler
 * may ask questions with `Inquiry.ask`, which adds neither a requirement
 * (`Inquiry` is a reference the executor provides) nor a typed failure (an
 * unanswered question ends the run with the defect `Pending`), so the same
 * handlers serve `Toolkit.toLayer` and this executor.
 */
export type InquiryHandlers<Tools extends Record<string, Tool.Any>> = Toolkit.HandlersFrom<Tools>

/** Options of {@link executorFromToolkit}. */
export interface ToolkitExecutorOptions {
  /** The run mode when config sets none (default `unattended`; `ask` for a tool with `needsApproval`). */
  readonly run?: RunMode
  /** What the toolkit is called in messages (a tool name defined twice): `toolkit "<name>"`; default `an effect/ai toolkit`. */
  readonly name?: string
}

/** What a consumer must provide for a toolkit's handlers (their services, `Inquiry` aside). */
export type ToolkitServices<Tools extends Record<string, Tool.Any>> = Exclude<
  Tool.HandlerServices<Tools[keyof Tools]>,
  Inquiry
>

/** An error's own text: its message, or the string it is; "" when it has none. */
const messageOf = (e: unknown): string => (e instanceof Error ? e.message : typeof e === "string" ? e : "")

const jsonOf = (e: unknown): string => JSON.stringify(e) ?? String(e)

const contentOf = (encoded: unknown): string =>
  typeof encoded === "string" ? encoded : (JSON.stringify(encoded) ?? "")

/** The definition parley hands to providers: name, description, JSON Schema of the parameters. */
export const definitionOf = (tool: Tool.Any): ToolDefinition => ({
  name: tool.name,
  description: AiTool.getDescription(tool) ?? "",
  parameters: AiTool.getJsonSchema(tool) as Schema.JsonObject
})

/**
 * Why a run ended that produced no final result. A typed failure goes to the
 * model as the tool's failure schema encodes it — what effect/ai itself sends
 * for `failureMode: "return"` — so a tagged error without a message of its
 * own (its `message` is "") is never an empty tool result. An effect/ai error
 * (parameters that do not decode, say) is its one-line message.
 */
const failureText = (tool: Tool.Any, cause: Cause.Cause<unknown>): Effect.Effect<string> => {
  const failure = cause.reasons.find(Cause.isFailReason)
  if (failure !== undefined) {
    const error = failure.error
    const described = messageOf(error) || `Tool '${tool.name}' failed: ${jsonOf(error)}`
    if (AiErrorModule.isAiError(error)) return Effect.succeed(described)
    return Schema.encodeUnknownEffect(AiTool.failureResultSchema(tool))(error).pipe(
      Effect.map(contentOf),
      // Not of the declared failure type (a cast in the handler): its message, or its JSON.
      Effect.orElseSucceed(() => described)
    ) as Effect.Effect<string>
  }
  const defect = cause.reasons.find(Cause.isDieReason)
  if (defect !== undefined)
    return Effect.succeed(
      `Tool '${tool.name}' failed unexpectedly: ${messageOf(defect.defect) || jsonOf(defect.defect)}`
    )
  return Effect.succeed(`Tool '${tool.name}' was interrupted before it finished.`)
}

/** A toolkit's `handle`, by the model's tool name (a string). */
type Handle = (
  name: string,
  params: unknown,
  id: string
) => Effect.Effect<Stream.Stream<Tool.HandlerResult<Tool.Any>, unknown, unknown>, unknown, unknown>

/** One run of the handler: its final result, or the question it stopped at. */
const runOnce = (
  tool: Tool.Any,
  handle: Handle,
  services: Context.Context<never>,
  call: ToolCall,
  answers: Answers,
  context: ExecutionContext
): Effect.Effect<ExecutorResult> =>
  Effect.gen(function* () {
    let asked: Question | undefined
    const inquiry = Inquiry.of({
      call,
      answers,
      context,
      pause: (q) => {
        asked = q
      }
    })
    // `handle` needs the tools' declared services; they are in `services` (captured when the layer was built).
    const handled = handle(call.name, call.arguments, call.id) as Effect.Effect<
      Stream.Stream<Tool.HandlerResult<Tool.Any>, unknown>,
      unknown
    >
    const exit = yield* Effect.exit(
      Effect.flatMap(handled, Stream.runLast).pipe(
        Effect.provideService(Inquiry, inquiry),
        Effect.provideContext(services)
      )
    )
    if (asked !== undefined)
      return new NeedsInput({ question: asked, source: InquirySource.tool(call.name), answers: { ...answers } })
    if (Exit.isFailure(exit)) {
      const content = yield* failureText(tool, exit.cause).pipe(Effect.provideContext(services))
      return new Completed({ response: { content, is_error: true } })
    }
    if (Option.isNone(exit.value))
      return new Completed({ response: { content: `Tool '${call.name}' returned no result.`, is_error: true } })
    const result = exit.value.value
    return new Completed({ response: { content: contentOf(result.encodedResult), is_error: result.isFailure } })
  })

/**
 * The run mode of a tool (docs/library.md#bridges-to-effectai-parleyai): its own `conversation.tools.<name>.run`
 * wins; else `ask` for a tool whose author set `needsApproval` (the `*`
 * defaults do not lift an author's approval); else the `*` default, else
 * `fallback`.
 */
const permissionOf = (
  config: ConfigData.Config,
  tool: Tool.Any | undefined,
  name: string,
  fallback: RunMode
): RunMode =>
  ConfigData.toolConfig(config, name)?.run ??
  (tool?.needsApproval !== undefined && tool.needsApproval !== false
    ? "ask"
    : ConfigData.runMode(config, name, fallback))

/**
 * Whether the author's `needsApproval` asks for a person's yes on this call,
 * as effect/ai decides it (`isApprovalNeeded`): a boolean as is; a function
 * of the decoded parameters (parameters that do not decode need none: the
 * handler will refuse them and nothing runs).
 */
const needsApproval = (tool: Tool.Any, call: ToolCall): Effect.Effect<boolean> => {
  const rule = tool.needsApproval
  if (rule === undefined || typeof rule === "boolean") return Effect.succeed(rule === true)
  return Schema.decodeUnknownEffect(tool.parametersSchema)(call.arguments).pipe(
    Effect.flatMap((params) => {
      const result = rule(params, { toolCallId: call.id, messages: [] })
      return Effect.isEffect(result) ? result : Effect.succeed(result)
    }),
    Effect.orElseSucceed(() => false)
  ) as Effect.Effect<boolean>
}

/**
 * One call's run mode: the tool's own configured `run` as is (`ask` then
 * still an approval when the author requires one); else `ask` with
 * approval when `needsApproval` says so for these parameters; else the
 * default.
 */
const callPermissionOf = (
  config: ConfigData.Config,
  tool: Tool.Any | undefined,
  call: ToolCall,
  fallback: RunMode
): Effect.Effect<CallPermission> => {
  const configured = ConfigData.toolConfig(config, call.name)?.run
  const withoutApproval: CallPermission = { mode: ConfigData.runMode(config, call.name, fallback), approval: false }
  if (tool === undefined || (configured !== undefined && configured !== "ask")) return Effect.succeed(withoutApproval)
  return Effect.map(
    needsApproval(tool, call),
    (approval): CallPermission => (approval ? { mode: "ask", approval } : withoutApproval)
  )
}

/**
 * An `Executor` running `toolkit`'s tools with `handlers`, which may ask
 * questions mid-run with `Inquiry.ask`.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import * as Schema from "effect/Schema"
 * import { Tool, Toolkit } from "effect/ai"
 * import { Config } from "parley"
 * import { executorFromToolkit, Inquiry } from "parley/ai"
 *
 * const Deploy = Tool.make("deploy", { parameters: Schema.Struct({ env: Schema.String }), success: Schema.String })
 * const toolkit = Toolkit.make(Deploy)
 * const layer = executorFromToolkit(toolkit, {
 *   deploy: ({ env }) =>
 *     Effect.gen(function*() {
 *       const token = yield* Inquiry.ask(Inquiry.secret("token", `Token for ${env}?`))
 *       return `deployed ${env} (${token.length}-character token)`
 *     })
 * }, { run: "ask" }).pipe(Layer.provide(Config.layerEmpty))
 * ```
 */
export const executorFromToolkit = <Tools extends Record<string, Tool.Any>>(
  toolkit: Toolkit.Toolkit<Tools>,
  handlers: InquiryHandlers<Tools>,
  options: ToolkitExecutorOptions = {}
): Layer.Layer<Executor, never, Config | ToolkitServices<Tools>> =>
  Layer.effect(
    Executor,
    Effect.gen(function* () {
      const services = yield* Effect.context<ToolkitServices<Tools>>()
      const { data: config } = yield* Config
      const handlerContext = yield* toolkit.toHandlers(handlers)
      const withHandler = yield* Effect.provideContext(toolkit, handlerContext)
      // The executor looks tools up by the model's name, a string: the toolkit answers an unknown name itself.
      const handle: Handle = (name, params, id) =>
        withHandler.handle(name as keyof Tools, params as Tool.ParametersEncoded<Tools[keyof Tools]>, id)
      // As for built-ins: `enable = false` hides a tool (it is then "not available"), `description` replaces the tool's.
      const tools = Object.fromEntries(
        Object.entries(toolkit.tools as Record<string, Tool.Any>).filter(
          ([name]) => ConfigData.toolConfig(config, name)?.enable !== false
        )
      )
      const known = (name: string) => Object.hasOwn(tools, name)
      const definition = (tool: Tool.Any): ToolDefinition => {
        const description = ConfigData.toolConfig(config, tool.name)?.description
        return description === undefined ? definitionOf(tool) : { ...definitionOf(tool), description }
      }
      const fallback = options.run ?? "unattended"
      return Executor.of({
        definitions: Object.values(tools)
          .map(definition)
          .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
        execute: (call, answers, context) =>
          known(call.name)
            ? runOnce(tools[call.name]!, handle, services as Context.Context<never>, call, answers, context)
            : Effect.succeed(notAvailable(call.name)),
        permission: (name) => permissionOf(config, known(name) ? tools[name] : undefined, name, fallback),
        callPermission: (call) =>
          callPermissionOf(config, known(call.name) ? tools[call.name] : undefined, call, fallback).pipe(
            Effect.provideContext(services as Context.Context<never>)
          ),
        kind: (name) => (known(name) ? "builtin" : undefined),
        // Every tool, enabled or not: a combined executor accepts config tables for all of them.
        names: Object.keys(toolkit.tools),
        source: (name) =>
          known(name) ? (options.name === undefined ? "an effect/ai toolkit" : `toolkit "${options.name}"`) : undefined
      })
    })
  )
