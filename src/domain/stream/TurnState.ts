/**
 * What a turn remembers in memory (RFD 082 "Splitting the turn-cache
 * state"): tool answers remembered with `Y`/`N` (`"<tool>.<question>"`),
 * permission decisions (`"<tool>.__permission__"` → `y`/`n`), kept apart,
 * and the per-`(tool call, question)` attempt counters that make inquiry ids
 * unique within the turn. Never on disk; a resumed turn rebuilds the
 * counters from its persisted events. Cancelled and redacted outcomes never
 * enter either cache, and secret answers are never cached.
 *
 * @example
 * ```ts
 * import * as TurnState from "./TurnState.ts"
 * const state = TurnState.make()
 * TurnState.nextInquiryId(state, "call_1", "overwrite") // "call_1.overwrite.1"
 * TurnState.nextInquiryId(state, "call_1", "overwrite") // "call_1.overwrite.2"
 * ```
 */
import type { Json } from "effect/Schema"
import { attemptKey } from "./IncompleteTurn.ts"
import * as InquiryId from "../event/InquiryId.ts"

export interface TurnState {
  /** `"<tool>.<question>"` → the answer given with `Y`/`N`. */
  readonly rememberedToolAnswers: Map<string, Json>
  /** `"<tool>.__permission__"` → `"y"` (run) or `"n"` (skip). */
  readonly rememberedPermissionDecisions: Map<string, "y" | "n">
  /** `attemptKey(toolCallId, questionId)` → the last attempt number used. */
  readonly inquiryAttempts: Map<string, number>
}

export const make = (attempts: ReadonlyMap<string, number> = new Map()): TurnState => ({
  rememberedToolAnswers: new Map(),
  rememberedPermissionDecisions: new Map(),
  inquiryAttempts: new Map(attempts)
})

export const toolAnswerKey = (toolName: string, questionId: string): string => `${toolName}.${questionId}`
export const permissionKey = (toolName: string): string => `${toolName}.__permission__`

/** Allocates the next `<tool_call_id>.<question_id>.<attempt>` (1-based, per turn). */
export const nextInquiryId = (state: TurnState, toolCallId: string, questionId: string): InquiryId.InquiryId => {
  const key = attemptKey(toolCallId, questionId)
  const attempt = (state.inquiryAttempts.get(key) ?? 0) + 1
  state.inquiryAttempts.set(key, attempt)
  return InquiryId.forToolQuestion(toolCallId, questionId, attempt)
}
