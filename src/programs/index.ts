/** The programs: Effect programs that only ask for services. */
export * as Query from "./Query.ts"
export * as ToolCoordinator from "./ToolCoordinator.ts"
export * as TurnLoop from "./TurnLoop.ts"
