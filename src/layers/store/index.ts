/** The conversation store layers. */
export * as FileConversationStore from "./FileConversationStore.ts"
export * as MemoryConversationStore from "./MemoryConversationStore.ts"
