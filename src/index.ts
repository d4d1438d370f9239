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
 *
 * @since 0.1.0
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
/** @since 0.1.0 */
export * as CancellationReason from "./domain/event/CancellationReason.ts"
/** @since 0.1.0 */
export * from "./domain/event/ChatRequest.ts"
/** @since 0.1.0 */
export * from "./domain/event/ChatResponse.ts"
/** @since 0.1.0 */
export * from "./domain/event/ConversationEvent.ts"
/** @since 0.1.0 */
export * as EventMetadata from "./domain/event/EventMetadata.ts"
/** @since 0.1.0 */
export * as Events from "./domain/event/Events.ts"
/** @since 0.1.0 */
export * from "./domain/event/InquiryAnswerType.ts"
/** @since 0.1.0 */
export * as InquiryId from "./domain/event/InquiryId.ts"
/** @since 0.1.0 */
export * from "./domain/event/InquiryQuestion.ts"
/** @since 0.1.0 */
export * from "./domain/event/InquiryRequest.ts"
/** @since 0.1.0 */
export * from "./domain/event/InquiryResponse.ts"
/** @since 0.1.0 */
export { InquirySource } from "./domain/event/InquirySource.ts"
/** @since 0.1.0 */
export * as Timestamp from "./domain/event/Timestamp.ts"
/** @since 0.1.0 */
export * from "./domain/event/ToolCallRequest.ts"
/** @since 0.1.0 */
export * from "./domain/event/ToolCallResponse.ts"
/** @since 0.1.0 */
export * from "./domain/event/TurnStart.ts"
// Domain: storage
/** @since 0.1.0 */
export * as Conversation from "./domain/storage/Conversation.ts"
/** @since 0.1.0 */
export * as ConversationId from "./domain/storage/ConversationId.ts"
/** @since 0.1.0 */
export * as ConversationMetadata from "./domain/storage/ConversationMetadata.ts"
/** @since 0.1.0 */
export * as EntryCodec from "./domain/storage/EntryCodec.ts"
/** @since 0.1.0 */
export * as EventsFile from "./domain/storage/EventsFile.ts"
/** @since 0.1.0 */
export * as StorageBase64 from "./domain/storage/StorageBase64.ts"
// Domain: the stream rules
/** @since 0.1.0 */
export * as Fork from "./domain/stream/Fork.ts"
/** @since 0.1.0 */
export * as IncompleteTurn from "./domain/stream/IncompleteTurn.ts"
/** @since 0.1.0 */
export * as Projection from "./domain/stream/Projection.ts"
/** @since 0.1.0 */
export * as Sanitize from "./domain/stream/Sanitize.ts"
/** @since 0.1.0 */
export * as Thread from "./domain/stream/Thread.ts"
/** @since 0.1.0 */
export * as TurnAppend from "./domain/stream/TurnAppend.ts"
/** @since 0.1.0 */
export * as TurnState from "./domain/stream/TurnState.ts"
/** @since 0.1.0 */
export * as Turns from "./domain/stream/Turns.ts"
// Domain: tools, questions, config
/** @since 0.1.0 */
export { AnswerType } from "./domain/tool/AnswerType.ts"
/** @since 0.1.0 */
export * as ConfigData from "./domain/tool/Config.ts"
/** @since 0.1.0 */
export * as InquirySchema from "./domain/tool/InquirySchema.ts"
/** @since 0.1.0 */
export * as Outcome from "./domain/tool/Outcome.ts"
/** @since 0.1.0 */
export { isQuestionId, Question, QuestionId, toInquiryQuestion } from "./domain/tool/Question.ts"
/** @since 0.1.0 */
export * as Redact from "./domain/tool/Redact.ts"
/** @since 0.1.0 */
export * as Route from "./domain/tool/Route.ts"
/** @since 0.1.0 */
export { RunMode, ToolDefinition, ToolKind } from "./domain/tool/ToolDefinition.ts"
// Domain: rendering
/** @since 0.1.0 */
export * as Render from "./domain/render/Render.ts"
// Domain: a model's reply (its deltas and their fold; also as `Provider.collect`, `Provider.ReplyBuilder`)
/** @since 0.1.0 */
export * as Reply from "./domain/model/Reply.ts"

/** @since 0.1.0 */
export * as RunEvent from "./domain/run/RunEvent.ts"
/** @since 0.1.0 */
export * as RunReport from "./domain/run/RunReport.ts"
/** @since 0.1.0 */
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
 *
 * @since 0.1.0
 */
export const Config = withMembers(ConfigService.Config, {
  /** Validates plain config values (parsed TOML, or a literal in tests): the config, or a `ConfigError` naming every problem. */
  validate: ConfigService.validate,
  /** One problem in a config document: where (key path or line/column) and what. */
  ConfigProblem: ConfigService.ConfigProblem
})
/**
 * The `Config` service (as a type: what a program that needs it requires).
 *
 * @since 0.1.0
 */
export type Config = ConfigService.Config
/** @since 0.1.0 */
export { ConfigError, type ConfigProblem } from "./services/Config.ts"
/** @since 0.1.0 */
export * from "./services/ConversationStore.ts"
/** @since 0.1.0 */
export * from "./services/StoreErrors.ts"
/** @since 0.1.0 */
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
 *
 * @since 0.1.0
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
/**
 * The `Executor` service (as a type), and the types of its calls and results.
 *
 * @since 0.1.0
 */
export type Executor = ExecutorService.Executor
/** @since 0.1.0 */
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
/** @since 0.1.0 */
export * from "./services/InquiryBackend.ts"
/** @since 0.1.0 */
export * from "./services/PromptBackend.ts"
/** @since 0.1.0 */
export * from "./services/PendingAnswers.ts"
/** @since 0.1.0 */
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
 *
 * @since 0.1.0
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
/**
 * The `Provider` service (as a type), and the types of its requests and replies.
 *
 * @since 0.1.0
 */
export type Provider = ProviderService.Provider
/** @since 0.1.0 */
export declare namespace Provider {
  /** Bounded exponential backoff for transient failures. */
  export type RetryPolicy = Retry.RetryPolicy
  /** A collected reply: the events to record, usage, stop reason. */
  export type Reply = ReplyModule.Reply
  /** Token counts of a reply. */
  export type Usage = ReplyModule.Usage
}
/** @since 0.1.0 */
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
/** @since 0.1.0 */
export * as ConfigFile from "./layers/ConfigFile.ts"
/** @since 0.1.0 */
export * as ExecutorLive from "./layers/executor/ExecutorLive.ts"
/** @since 0.1.0 */
export * as ExecutorScripted from "./layers/executor/ExecutorScripted.ts"
/** @since 0.1.0 */
export * as FileConversationStore from "./layers/store/FileConversationStore.ts"
/** @since 0.1.0 */
export * as LlmInquiryBackend from "./layers/LlmInquiryBackend.ts"
/** @since 0.1.0 */
export * as MemoryConversationStore from "./layers/store/MemoryConversationStore.ts"
/** @since 0.1.0 */
export * as MockInquiryBackend from "./layers/MockInquiryBackend.ts"
/** @since 0.1.0 */
export * as MockPromptBackend from "./layers/prompt/MockPromptBackend.ts"
/** @since 0.1.0 */
export * as PendingAnswersLive from "./layers/PendingAnswersLive.ts"
/** @since 0.1.0 */
export * as RunEventsLive from "./layers/RunEventsLive.ts"
/** @since 0.1.0 */
export * as RunLive from "./layers/RunLive.ts"
/** @since 0.1.0 */
export * as ProviderLive from "./layers/provider/ProviderLive.ts"
/** @since 0.1.0 */
export * as ScriptedProvider from "./layers/provider/Scripted.ts"
/** @since 0.1.0 */
export * as TerminalPromptBackend from "./layers/prompt/TerminalPromptBackend.ts"

// Programs
/** @since 0.1.0 */
export * from "./programs/index.ts"
