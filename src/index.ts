/**
 * parley as a library: the domain (events, codecs, stream rules), the
 * services (Context tags), their live and test layers, and the programs
 * (tool coordinator, turn loop, query) that compose into other Effect
 * programs. Deep imports (`parley/src/programs/ToolCoordinator.ts`) work too
 * and keep start-up lean.
 *
 * @example
 * ```ts
 * import { ToolCoordinator, MemoryConversationStore } from "parley"
 * ```
 */
// Domain
export * as CancellationReason from "./domain/CancellationReason.ts"
export * from "./domain/ChatRequest.ts"
export * from "./domain/ChatResponse.ts"
export * as Conversation from "./domain/Conversation.ts"
export * from "./domain/ConversationEvent.ts"
export * as ConversationId from "./domain/ConversationId.ts"
export * as ConversationMetadata from "./domain/ConversationMetadata.ts"
export * as EntryCodec from "./domain/EntryCodec.ts"
export * as EventsFile from "./domain/EventsFile.ts"
export * as Fork from "./domain/Fork.ts"
export * as IncompleteTurn from "./domain/IncompleteTurn.ts"
export * from "./domain/InquiryAnswerType.ts"
export * as InquiryId from "./domain/InquiryId.ts"
export * from "./domain/InquiryQuestion.ts"
export * from "./domain/InquiryRequest.ts"
export * from "./domain/InquiryResponse.ts"
export * from "./domain/InquirySource.ts"
export * as Outcome from "./domain/Outcome.ts"
export * from "./domain/Question.ts"
export * as Render from "./domain/Render.ts"
export * as Sanitize from "./domain/Sanitize.ts"
export * as StorageBase64 from "./domain/StorageBase64.ts"
export * as Thread from "./domain/Thread.ts"
export * as Timestamp from "./domain/Timestamp.ts"
export * from "./domain/ToolCallRequest.ts"
export * from "./domain/ToolCallResponse.ts"
export * as TurnAppend from "./domain/TurnAppend.ts"
export * from "./domain/TurnStart.ts"
export * as TurnState from "./domain/TurnState.ts"
export * as Turns from "./domain/Turns.ts"
// Services
export * from "./services/Config.ts"
export * from "./services/ConversationStore.ts"
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
