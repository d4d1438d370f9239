/** The programs: the tool coordinator (and, later, the turn loop). */
export * as ToolCoordinator from "./ToolCoordinator.ts"
