/**
 * What a turn remembers in memory (RFD 082 "Splitting the turn-cache
 * state"): tool answers remembered with `Y`/`N` (`"<tool>.<question>"`),
 * permission decisions (`"<tool>.__permission__"` → `y`/`n`), kept apart,
 * and the per-`(tool call, question)` attempt counters that make inquiry ids
 * unique within the turn. Not a file of its own: a resumed turn rebuilds
 * the counters, and the answers and decisions remembered with `Y`/`N`, from
 * its persisted events ({@link resumed}). Cancelled and redacted outcomes never
 * enter either cache, and secret answers are never cached.
 *
 * The value is immutable (persistent maps): the turn keeps it in a `Ref`,
 * and the tool fibers change it with `Ref.modify` / `Ref.update`, so
 * concurrent calls never see a half-made change.
 *
 * @example
 * ```ts
 * import { TurnState } from "parley"
 *
 * const state = TurnState.make()
 * const [first, next] = TurnState.nextInquiryId(state, "call_1", "overwrite") // "call_1.overwrite.1"
 * const [second] = TurnState.nextInquiryId(next, "call_1", "overwrite")       // "call_1.overwrite.2"
 * ```
 *
 * @since 0.1.0
 */
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import type { Json } from "effect/Schema"
import * as InquiryId from "../event/InquiryId.ts"
import { attemptKey, type TurnAnalysis } from "./IncompleteTurn.ts"

/** A permission decision remembered for the rest of the turn. */
export type RememberedPermission = "y" | "n"

/**
 * What a turn remembers in memory (RFD 082 "Splitting the turn-cache
 * state"): tool answers remembered with `Y`/`N` (`"<tool>.<question>"`),
 * permission decisions (`"<tool>.__permission__"` → `y`/`n`), kept apart,
 * and the per-`(tool call, question)` attempt counters that make inquiry ids
 * unique within the turn. Not a file of its own: a resumed turn rebuilds
 * the counters, and the answers and decisions remembered with `Y`/`N`, from
 * its persisted events ({@link resumed}). Cancelled and redacted outcomes never
 * enter either cache, and secret answers are never cached.
 *
 * @example
 * ```ts
 * import { TurnState } from "parley"
 *
 * const state = TurnState.make()
 * const [first, next] = TurnState.nextInquiryId(state, "call_1", "overwrite") // "call_1.overwrite.1"
 * const [second] = TurnState.nextInquiryId(next, "call_1", "overwrite")       // "call_1.overwrite.2"
 * ```
 */
export interface TurnState {
  /** `"<tool>.<question>"` → the answer given with `Y`/`N`. */
  readonly rememberedToolAnswers: HashMap.HashMap<string, Json>
  /** `"<tool>.__permission__"` → `"y"` (run) or `"n"` (skip). */
  readonly rememberedPermissionDecisions: HashMap.HashMap<string, RememberedPermission>
  /** `attemptKey(toolCallId, questionId)` → the last attempt number used. */
  readonly inquiryAttempts: HashMap.HashMap<string, number>
}

/** A fresh turn state; a resumed turn passes the attempts its events recorded. */
export const make = (attempts: ReadonlyMap<string, number> = new Map()): TurnState => ({
  rememberedToolAnswers: HashMap.empty(),
  rememberedPermissionDecisions: HashMap.empty(),
  inquiryAttempts: HashMap.fromIterable(attempts)
})

/**
 * The state of a resumed turn, rebuilt from its recorded events
 * (docs/decisions.md#remembered-answers-recorded):
 * the attempt counters, and the answers and permission decisions the person
 * said to remember (`Y`/`N`), so the turn does not ask again what it was
 * told to remember.
 */
export const resumed = (
  analysis: Pick<TurnAnalysis, "attemptCounters" | "rememberedAnswers" | "rememberedPermissions">
): TurnState => {
  let state = make(analysis.attemptCounters)
  for (const r of analysis.rememberedAnswers) state = rememberAnswer(state, r.tool, r.questionId, r.answer)
  for (const r of analysis.rememberedPermissions) state = rememberPermission(state, r.tool, r.decision)
  return state
}

/** The key of a remembered answer (`<tool>.<question>`). */
export const toolAnswerKey = (toolName: string, questionId: string): string => `${toolName}.${questionId}`
/** The key of a remembered permission (`<tool>.__permission__`). */
export const permissionKey = (toolName: string): string => `${toolName}.__permission__`

/** Allocates the next `<tool_call_id>.<question_id>.<attempt>` (1-based, per turn). */
export const nextInquiryId = (
  state: TurnState,
  toolCallId: string,
  questionId: string
): readonly [InquiryId.InquiryId, TurnState] =>
  allocateInquiryId(state, toolCallId, questionId, Infinity) as readonly [InquiryId.InquiryId, TurnState]

/**
 * {@link nextInquiryId} unless `max` attempts were already allocated (the
 * coordinator's loop guard): then `undefined`, the state unchanged. The check
 * and the allocation read the counter once, in one step.
 */
export const allocateInquiryId = (
  state: TurnState,
  toolCallId: string,
  questionId: string,
  max: number
): readonly [InquiryId.InquiryId | undefined, TurnState] => {
  const key = attemptKey(toolCallId, questionId)
  // Read as the Option it is (no closure for a default): every question allocates an id.
  const found = HashMap.get(state.inquiryAttempts, key)
  const used = Option.isSome(found) ? found.value : 0
  if (used >= max) return [undefined, state]
  return [
    InquiryId.forToolQuestion(toolCallId, questionId, used + 1),
    { ...state, inquiryAttempts: HashMap.set(state.inquiryAttempts, key, used + 1) }
  ]
}

/** How many times `questionId` was asked in `toolCallId` this turn (attempts already allocated). */
export const attempts = (state: TurnState, toolCallId: string, questionId: string): number =>
  Option.getOrElse(HashMap.get(state.inquiryAttempts, attemptKey(toolCallId, questionId)), () => 0)

/** The answer remembered for a tool's question this turn. */
export const rememberedAnswer = (state: TurnState, toolName: string, questionId: string): Option.Option<Json> =>
  // Most turns remember nothing: no key to build and hash for every question then.
  HashMap.isEmpty(state.rememberedToolAnswers)
    ? Option.none()
    : HashMap.get(state.rememberedToolAnswers, toolAnswerKey(toolName, questionId))

/** Remembers an answer (`Y`/`N` at a prompt) for the rest of the turn. */
export const rememberAnswer = (state: TurnState, toolName: string, questionId: string, answer: Json): TurnState => ({
  ...state,
  rememberedToolAnswers: HashMap.set(state.rememberedToolAnswers, toolAnswerKey(toolName, questionId), answer)
})

/** The permission decision remembered for a tool this turn. */
export const rememberedPermission = (state: TurnState, toolName: string): Option.Option<RememberedPermission> =>
  HashMap.isEmpty(state.rememberedPermissionDecisions)
    ? Option.none()
    : HashMap.get(state.rememberedPermissionDecisions, permissionKey(toolName))

/** Remembers a permission decision (`Y`/`N`) for the rest of the turn. */
export const rememberPermission = (state: TurnState, toolName: string, decision: RememberedPermission): TurnState => ({
  ...state,
  rememberedPermissionDecisions: HashMap.set(state.rememberedPermissionDecisions, permissionKey(toolName), decision)
})
