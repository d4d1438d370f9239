/** The programs: Effect programs that only ask for services. */
export * as Query from "./Query.ts"
export * as ToolCoordinator from "./ToolCoordinator.ts"
export * as TurnLoop from "./TurnLoop.ts"
export * as ContextWindow from "./ContextWindow.ts"
export * as CompactConversation from "./CompactConversation.ts"
