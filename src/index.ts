/**
 * parley as a library: the domain (events, codecs, stream rules), the
 * services (Context tags), their live and test layers, and the programs
 * (tool coordinator, turn loop, query) that compose into other Effect
 * programs. Deep imports (`parley/programs/ToolCoordinator`) work too
 * and keep start-up lean.
 *
 * @example
 * ```ts
 * import { ToolCoordinator, MemoryConversationStore } from "parley"
 * ```
 */
// Domain
export * as CancellationReason from "./domain/event/CancellationReason.ts"
export * from "./domain/event/ChatRequest.ts"
export * from "./domain/event/ChatResponse.ts"
export * as Conversation from "./domain/storage/Conversation.ts"
export * from "./domain/event/ConversationEvent.ts"
export * as ConversationId from "./domain/storage/ConversationId.ts"
export * as ConversationMetadata from "./domain/storage/ConversationMetadata.ts"
export * as EntryCodec from "./domain/storage/EntryCodec.ts"
export * as Events from "./domain/event/Events.ts"
export * as EventsFile from "./domain/storage/EventsFile.ts"
export * as Fork from "./domain/stream/Fork.ts"
export * as IncompleteTurn from "./domain/stream/IncompleteTurn.ts"
export * from "./domain/event/InquiryAnswerType.ts"
export * as InquiryId from "./domain/event/InquiryId.ts"
export * from "./domain/event/InquiryQuestion.ts"
export * from "./domain/event/InquiryRequest.ts"
export * from "./domain/event/InquiryResponse.ts"
export * from "./domain/event/InquirySource.ts"
export * as Outcome from "./domain/tool/Outcome.ts"
export * from "./domain/tool/Question.ts"
export * as Redact from "./domain/tool/Redact.ts"
export * as Route from "./domain/tool/Route.ts"
export * as Render from "./domain/render/Render.ts"
export * as Sanitize from "./domain/stream/Sanitize.ts"
export * as StorageBase64 from "./domain/storage/StorageBase64.ts"
export * as Thread from "./domain/stream/Thread.ts"
export * as Timestamp from "./domain/event/Timestamp.ts"
export * from "./domain/event/ToolCallRequest.ts"
export * from "./domain/event/ToolCallResponse.ts"
export * as TurnAppend from "./domain/stream/TurnAppend.ts"
export * from "./domain/event/TurnStart.ts"
export * as TurnState from "./domain/stream/TurnState.ts"
export * as Turns from "./domain/stream/Turns.ts"
// Services
export * from "./services/Config.ts"
export * from "./services/ConversationStore.ts"
export * as ConversationSession from "./services/ConversationSession.ts"
export * from "./services/Executor.ts"
export * from "./services/InquiryBackend.ts"
export * from "./services/PromptBackend.ts"
export * from "./services/Provider.ts"
// Layers
export * as ConfigFile from "./layers/ConfigFile.ts"
export * as ExecutorLive from "./layers/executor/ExecutorLive.ts"
export * as ExecutorScripted from "./layers/executor/ExecutorScripted.ts"
export * as LlmInquiryBackend from "./layers/LlmInquiryBackend.ts"
export * as MockInquiryBackend from "./layers/MockInquiryBackend.ts"
export * as MockPromptBackend from "./layers/prompt/MockPromptBackend.ts"
export * as ProviderLive from "./layers/provider/ProviderLive.ts"
export * as ScriptedProvider from "./layers/provider/Scripted.ts"
export * as FileConversationStore from "./layers/store/FileConversationStore.ts"
export * as MemoryConversationStore from "./layers/store/MemoryConversationStore.ts"
export * as TerminalPromptBackend from "./layers/prompt/TerminalPromptBackend.ts"
// Programs
export * from "./programs/index.ts"
