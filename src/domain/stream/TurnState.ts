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
 * The value is immutable (persistent maps, and {@link Attempts} for the
 * counters): the turn keeps it in a `Ref`, and the tool fibers change it
 * with `Ref.modify` / `Ref.update`, so concurrent calls never see a
 * half-made change.
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
import * as Equal from "effect/Equal"
import * as Hash from "effect/Hash"
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
  readonly inquiryAttempts: Attempts
}

/** The journal every version of one line of {@link Attempts} shares. */
interface Line {
  /** The counts as of the newest version (the one `keys.length` numbers). */
  readonly counts: Map<string, number>
  /** The key each change set, oldest first. */
  readonly keys: Array<string>
  /** Its count before that change (`undefined`: none). */
  readonly previous: Array<number | undefined>
}

/** A line whose journal is this much longer than its map starts again (its older versions keep the old line). */
const compactAt = (line: Line): boolean => line.keys.length >= 2 * line.counts.size + 64

/**
 * The attempt counters: an immutable map whose every change is one step.
 * Every question allocates an id, so the counters change once per question;
 * a persistent hash map copied a path of its trie each time (hundreds of
 * bytes, a tenth of the coordinator's own allocation, docs/benchmarks.md#coordinator).
 * Here the versions of one line share a mutable `Map` with the newest
 * counts and a journal of what each change replaced: the newest version
 * reads and changes the `Map` directly (what `Ref.modify` always holds); an
 * older one reads through the journal's later changes, and a change made to
 * it starts a line of its own, copied (as the newest does once its journal
 * is twice as long as its map: the same key asked again and again). Every
 * version reads as the value it was made with, and equals another with the
 * same counts.
 */
export class Attempts implements Iterable<readonly [string, number]>, Equal.Equal {
  private constructor(
    private readonly line: Line,
    /** How many of the line's changes this version includes. */
    private readonly version: number
  ) {}

  /** Counters starting at `entries`. */
  static from(entries: Iterable<readonly [string, number]>): Attempts {
    return new Attempts({ counts: new Map(entries), keys: [], previous: [] }, 0)
  }

  /** The last attempt number used for `key` (`undefined`: none). */
  get(key: string): number | undefined {
    const { counts, keys, previous } = this.line
    // An older version: the count the first later change of `key` replaced, if any changed it.
    for (let i = this.version; i < keys.length; i++) {
      if (keys[i] === key) return previous[i]
    }
    return counts.get(key)
  }

  /** These counters with `key` at `count`. */
  set(key: string, count: number): Attempts {
    const line = this.line
    if (this.version === line.keys.length && !compactAt(line)) {
      line.keys.push(key)
      line.previous.push(line.counts.get(key))
      line.counts.set(key, count)
      return new Attempts(line, this.version + 1)
    }
    const counts = this.toMap()
    counts.set(key, count)
    return new Attempts({ counts, keys: [], previous: [] }, 0)
  }

  /** How many keys have a count. */
  get size(): number {
    return this.version === this.line.keys.length ? this.line.counts.size : this.toMap().size
  }

  [Symbol.iterator](): Iterator<readonly [string, number]> {
    return (this.version === this.line.keys.length ? new Map(this.line.counts) : this.toMap()).entries()
  }

  /** This version's counts, by key (`JSON.stringify` of a turn's state shows them). */
  toJSON(): Record<string, number> {
    return Object.fromEntries(this)
  }

  [Equal.symbol](that: unknown): boolean {
    if (!(that instanceof Attempts) || that.size !== this.size) return false
    for (const [key, count] of this) if (that.get(key) !== count) return false
    return true
  }

  [Hash.symbol](): number {
    // Whatever the order the counts were set in.
    let hash = 0
    for (const [key, count] of this) hash ^= Hash.combine(Hash.string(key), Hash.number(count))
    return hash
  }

  /** This version's counts, as a `Map` of its own: the newest, with the later changes undone newest first. */
  private toMap(): Map<string, number> {
    const { counts, keys, previous } = this.line
    const out = new Map(counts)
    for (let i = keys.length - 1; i >= this.version; i--) {
      const count = previous[i]
      if (count === undefined) out.delete(keys[i]!)
      else out.set(keys[i]!, count)
    }
    return out
  }
}

/** A fresh turn state; a resumed turn passes the attempts its events recorded. */
export const make = (attempts: ReadonlyMap<string, number> = new Map()): TurnState => ({
  rememberedToolAnswers: HashMap.empty(),
  rememberedPermissionDecisions: HashMap.empty(),
  inquiryAttempts: Attempts.from(attempts)
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
  const used = state.inquiryAttempts.get(key) ?? 0
  if (used >= max) return [undefined, state]
  return [
    InquiryId.forToolQuestion(toolCallId, questionId, used + 1),
    { ...state, inquiryAttempts: state.inquiryAttempts.set(key, used + 1) }
  ]
}

/** How many times `questionId` was asked in `toolCallId` this turn (attempts already allocated). */
export const attempts = (state: TurnState, toolCallId: string, questionId: string): number =>
  state.inquiryAttempts.get(attemptKey(toolCallId, questionId)) ?? 0

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
