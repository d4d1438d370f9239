/**
 * parley as a library (issue 12): the domain (events, codecs, stream rules),
 * the services (Context tags), their live and test layers, and the programs
 * (tool coordinator, turn loop, query) that compose into other Effect
 * programs. The bridge to `effect/ai` is `parley/ai`. Deep imports
 * (`parley/programs/ToolCoordinator`) work too and load less at start-up.
 *
 * Names at this root are specific: modules come as namespaces
 * (`EventsFile.parse`, `TurnLoop.runTurn`), and a service's helpers hang off
 * its tag (`Executor.ok`, `Provider.collect`, `Config.validate`), so nothing
 * as generic as `ok`, `error` or `collect` is exported bare.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { Executor, MemoryConversationStore, ToolCoordinator } from "parley"
 *
 * const done = Executor.ok("written")  // a Completed result
 * const store = MemoryConversationStore.layer()
 * const run = ToolCoordinator.runTools // (input) => Effect<…>
 * const program = Effect.succeed(done)
 * ```
 */
import * as ConfigService from "./services/Config.ts"
import * as ExecutorService from "./services/Executor.ts"
import * as Combine from "./layers/executor/Combine.ts"
import * as ReplyModule from "./domain/model/Reply.ts"
import * as Retry from "./layers/provider/Retry.ts"
import * as ProviderService from "./services/Provider.ts"

/** The tag, with the module's helpers as members (the tag itself is unchanged: same key, same instance type). */
const withMembers = <T extends object, M extends object>(tag: T, members: M): T & M =>
  Object.assign(Object.create(tag) as T, members)

// Domain: events
export * as CancellationReason from "./domain/event/CancellationReason.ts"
export * from "./domain/event/ChatRequest.ts"
export * from "./domain/event/ChatResponse.ts"
export * from "./domain/event/ConversationEvent.ts"
export * as EventMetadata from "./domain/event/EventMetadata.ts"
export * as Events from "./domain/event/Events.ts"
export * from "./domain/event/InquiryAnswerType.ts"
export * as InquiryId from "./domain/event/InquiryId.ts"
export * from "./domain/event/InquiryQuestion.ts"
export * from "./domain/event/InquiryRequest.ts"
export * from "./domain/event/InquiryResponse.ts"
export { InquirySource } from "./domain/event/InquirySource.ts"
export * as Timestamp from "./domain/event/Timestamp.ts"
export * from "./domain/event/ToolCallRequest.ts"
export * from "./domain/event/ToolCallResponse.ts"
export * from "./domain/event/TurnStart.ts"
// Domain: storage
export * as Conversation from "./domain/storage/Conversation.ts"
export * as ConversationId from "./domain/storage/ConversationId.ts"
export * as ConversationMetadata from "./domain/storage/ConversationMetadata.ts"
export * as EntryCodec from "./domain/storage/EntryCodec.ts"
export * as EventsFile from "./domain/storage/EventsFile.ts"
export * as StorageBase64 from "./domain/storage/StorageBase64.ts"
// Domain: the stream rules
export * as Fork from "./domain/stream/Fork.ts"
export * as IncompleteTurn from "./domain/stream/IncompleteTurn.ts"
export * as Projection from "./domain/stream/Projection.ts"
export * as Sanitize from "./domain/stream/Sanitize.ts"
export * as Thread from "./domain/stream/Thread.ts"
export * as TurnAppend from "./domain/stream/TurnAppend.ts"
export * as TurnState from "./domain/stream/TurnState.ts"
export * as Turns from "./domain/stream/Turns.ts"
// Domain: tools, questions, config
export { AnswerType } from "./domain/tool/AnswerType.ts"
export * as ConfigData from "./domain/tool/Config.ts"
export * as InquirySchema from "./domain/tool/InquirySchema.ts"
export * as Outcome from "./domain/tool/Outcome.ts"
export { isQuestionId, Question, QuestionId, toInquiryQuestion } from "./domain/tool/Question.ts"
export * as Redact from "./domain/tool/Redact.ts"
export * as Route from "./domain/tool/Route.ts"
export { RunMode, ToolDefinition, ToolKind } from "./domain/tool/ToolDefinition.ts"
// Domain: rendering
export * as Render from "./domain/render/Render.ts"
// Domain: a model's reply (its deltas and their fold; also as `Provider.collect`, `Provider.ReplyBuilder`)
export * as Reply from "./domain/model/Reply.ts"

export * as RunEvent from "./domain/run/RunEvent.ts"
export * as RunReport from "./domain/run/RunReport.ts"
export * as AnswerFit from "./domain/tool/AnswerFit.ts"

// Services
/**
 * The parsed `config.toml` (a `Context` tag), with `Config.layerLiteral`,
 * `Config.layerEmpty`, and `Config.validate` (plain values → the config, or a
 * `ConfigError` naming every problem).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { Config } from "parley"
 *
 * const model = Effect.map(Effect.service(Config), (c) => c.data.assistant?.model ?? "scripted")
 * const checked = Config.validate({ assistant: { model: "scripted" } }, "config.toml") // Effect<ConfigData.Config, ConfigError>
 * const program = model.pipe(Effect.provide(Config.layerLiteral({ assistant: { model: "scripted" } })))
 * ```
 */
export const Config = withMembers(ConfigService.Config, {
  /** Validates plain config values (parsed TOML, or a literal in tests): the config, or a `ConfigError` naming every problem. */
  validate: ConfigService.validate,
  /** One problem in a config document: where (key path or line/column) and what. */
  ConfigProblem: ConfigService.ConfigProblem
})
/** The `Config` service (as a type: what a program that needs it requires). */
export type Config = ConfigService.Config
export { ConfigError, type ConfigProblem } from "./services/Config.ts"
export * from "./services/ConversationStore.ts"
export * from "./services/StoreErrors.ts"
export * as ConversationSession from "./services/ConversationSession.ts"
/**
 * Runs one tool call with the answers so far (a `Context` tag), with the
 * result constructors as members: `Executor.ok(content)`,
 * `Executor.error(content)`, `Executor.notAvailable(name)`,
 * `Executor.fromOutcome(…)`, the `Executor.Completed` /
 * `Executor.NeedsInput` classes, and `Executor.combine(…)` (one executor
 * from several).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import { Executor } from "parley"
 *
 * const echo = Layer.succeed(Executor, Executor.of({
 *   definitions: [{ name: "echo", description: "Echo the text.", parameters: { type: "object" } }],
 *   execute: (call) => Effect.succeed(call.name === "echo" ? Executor.ok(JSON.stringify(call.arguments)) : Executor.notAvailable(call.name)),
 *   permission: () => "unattended",
 *   kind: (name) => (name === "echo" ? "builtin" : undefined)
 * }))
 * ```
 */
export const Executor = withMembers(ExecutorService.Executor, {
  /** The tool finished well: `Completed` with `content`, `is_error: false` (`Executor.ok("written")`). */
  ok: ExecutorService.ok,
  /** The tool failed: `Completed` with `content`, `is_error: true` (the model reads `content`). */
  error: ExecutorService.error,
  /** JP's response for a call to a tool that is not (or no longer) enabled. */
  notAvailable: ExecutorService.notAvailable,
  /** A decoded JP tool outcome as a result: `Completed`, or `NeedsInput` for a question. */
  fromOutcome: ExecutorService.fromOutcome,
  /** The tool finished: what goes into the `tool_call_response`. */
  Completed: ExecutorService.Completed,
  /** The tool asked a question; parley runs it again with `answers` plus the answer under `question.id`. */
  NeedsInput: ExecutorService.NeedsInput,
  /** What a finished call records in its `tool_call_response` (and what the model reads). */
  ToolResponse: ExecutorService.ToolResponse,
  /**
   * One executor from several layers (toolkits, your own): each call goes to
   * the one defining its tool; a name defined twice fails with
   * `DuplicateTool`. With built-ins, local tools and MCP servers:
   * `ExecutorLive.layerWith({ executors })`.
   */
  combine: Combine.layer,
  /** Two combined executors define the same tool name (both sources named). */
  DuplicateTool: ExecutorService.DuplicateTool
})
/** The `Executor` service (as a type), and the types of its calls and results. */
export type Executor = ExecutorService.Executor
export declare namespace Executor {
  /** The call as the model made it. */
  export type ToolCall = ExecutorService.ToolCall
  /** Answers by bare question id, the latest per id. */
  export type Answers = ExecutorService.Answers
  /** The conversation and the project directory a call runs for. */
  export type ExecutionContext = ExecutorService.ExecutionContext
  /** `Completed` or `NeedsInput`. */
  export type ExecutorResult = ExecutorService.ExecutorResult
  /** What goes into the `tool_call_response`. */
  export type ToolResponse = ExecutorService.ToolResponse
  /** The tool finished. */
  export type Completed = ExecutorService.Completed
  /** The tool asked a question. */
  export type NeedsInput = ExecutorService.NeedsInput
  /** One call's run mode, and whether the tool's author requires a person's approval for it. */
  export type CallPermission = ExecutorService.CallPermission
}
export * from "./services/InquiryBackend.ts"
export * from "./services/PromptBackend.ts"
export * from "./services/PendingAnswers.ts"
export { RunEvents } from "./services/RunEvents.ts"
/**
 * A language model that streams replies (a `Context` tag), with its helpers
 * as members: `Provider.collect(stream)` (deltas → the events to record),
 * `Provider.withRetries`, `Provider.requestedSchema`, `Provider.parseModel`,
 * `Provider.replyWarning`, `Provider.ReplyBuilder`. The reply fold is the
 * domain's (`Reply`), the retries the live layers' (`parley/layers/provider/Retry`);
 * they hang off the tag here for convenience.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { ChatRequest, Provider, Timestamp } from "parley"
 *
 * const reply = Effect.gen(function*() {
 *   const provider = yield* Provider
 *   const request = { model: "scripted", systemParts: [], events: [new ChatRequest({ timestamp: Timestamp.now(), content: "Hi" })], tools: [] }
 *   return yield* Provider.collect(provider.stream(request))
 * })
 * ```
 */
export const Provider = withMembers(ProviderService.Provider, {
  /** Runs a reply stream to the end: the events to record, usage and stop reason. */
  collect: ReplyModule.collect,
  /** Runs an attempt and retries it while it fails with a retryable `ProviderError`, stamping the attempts made. */
  withRetries: Retry.withRetries,
  /** The backoff `withRetries` uses: exponential, honouring a provider's `Retry-After`. */
  retrySchedule: Retry.retrySchedule,
  /** The live providers' retries: 3 retries from 200 ms, honouring a `Retry-After` of up to 30 s. */
  defaultRetryPolicy: Retry.defaultRetryPolicy,
  /** The schema a request asks for: its own, or that of a trailing `ChatRequest`. */
  requestedSchema: ProviderService.requestedSchema,
  /** The `provider/` prefix and model name of a model string (`scripted` has no name). */
  parseModel: ProviderService.parseModel,
  /** The warning about a reply stored but not whole (token limit, refusal); `undefined` for a normal finish. */
  replyWarning: ReplyModule.replyWarning,
  /** The fields of a `ProviderError`, to rebuild it with some changed. */
  fieldsOf: ProviderService.fieldsOf,
  /** HTTP statuses worth retrying; `undefined` is a connection-level failure. */
  isRetryableStatus: Retry.isRetryableStatus,
  /** Folds deltas into the events of a reply (what `collect` uses). */
  ReplyBuilder: ReplyModule.ReplyBuilder
})
/** The `Provider` service (as a type), and the types of its requests and replies. */
export type Provider = ProviderService.Provider
export declare namespace Provider {
  /** Bounded exponential backoff for transient failures. */
  export type RetryPolicy = Retry.RetryPolicy
  /** A collected reply: the events to record, usage, stop reason. */
  export type Reply = ReplyModule.Reply
  /** Token counts of a reply. */
  export type Usage = ReplyModule.Usage
}
export {
  ProviderDelta,
  ProviderError,
  type ProviderEvent,
  ProviderFailure,
  type ProviderRequest,
  type ProviderTool,
  type StopReason
} from "./services/Provider.ts"

// Layers
export * as ConfigFile from "./layers/ConfigFile.ts"
export * as ExecutorLive from "./layers/executor/ExecutorLive.ts"
export * as ExecutorScripted from "./layers/executor/ExecutorScripted.ts"
export * as FileConversationStore from "./layers/store/FileConversationStore.ts"
export * as LlmInquiryBackend from "./layers/LlmInquiryBackend.ts"
export * as MemoryConversationStore from "./layers/store/MemoryConversationStore.ts"
export * as MockInquiryBackend from "./layers/MockInquiryBackend.ts"
export * as MockPromptBackend from "./layers/prompt/MockPromptBackend.ts"
export * as PendingAnswersLive from "./layers/PendingAnswersLive.ts"
export * as RunEventsLive from "./layers/RunEventsLive.ts"
export * as RunLive from "./layers/RunLive.ts"
export * as ProviderLive from "./layers/provider/ProviderLive.ts"
export * as ScriptedProvider from "./layers/provider/Scripted.ts"
export * as TerminalPromptBackend from "./layers/prompt/TerminalPromptBackend.ts"

// Programs
export * from "./programs/index.ts"
