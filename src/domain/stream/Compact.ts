/**
 * Which turns a new compaction covers and what it says (RFD 064's
 * strategies, D50's rolling range; docs/decisions.md#compactions-and-context-windows). Pure: the programs stamp and
 * append the result.
 *
 * - {@link resolveRange} (`conversation compact`): turns `keep_first` …
 *   `last − keep_last`, whatever earlier compactions cover (the projection
 *   lets the newest win per turn). JP clamps both ends into the
 *   conversation, so on a conversation shorter than `keep_first + keep_last
 *   + 1` turns it compacts turns the rule meant to keep (its only turn, even);
 *   parley finds nothing to compact there.
 * - {@link rollingRange} (automatic compaction, D50): starts after the
 *   furthest turn any compaction covers, so each firing compacts turns no
 *   earlier compaction touched.
 * - {@link extendSummaryRange} (`--summary`): widened until no existing
 *   summary partly overlaps it (RFD 064 "Summary Overlap Resolution").
 * - {@link mechanicalRule}: the policies of a rule config (default: reasoning
 *   and tool calls stripped, JP's built-in rule).
 * - {@link decideAuto}: whether automatic compaction fires before a request
 *   (D50's trigger, checked before each main request rather than after the
 *   turn, so the request at hand is the one it protects).
 *
 * @example
 * ```ts
 * import * as Compact from "parley/domain/stream/Compact"
 * import type { StreamEntry } from "parley"
 * declare const entries: ReadonlyArray<StreamEntry>
 * Compact.resolveRange(entries, { keepFirst: 1, keepLast: 3 }) // { from: 1, to: last − 3 } or undefined
 * ```
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type { CompactionRule, ToolCallPolicy } from "../event/Compaction.ts"
import type { StreamEntry } from "../event/ConversationEvent.ts"
import type * as Timestamp from "../event/Timestamp.ts"
import type { AutoCompactionConfig, CompactionRuleConfig, ToolCallsMode } from "../tool/Config.ts"
import { currentTurnStart, turnCount } from "./Turns.ts"

/** An inclusive, 0-based range of turns. */
export interface TurnRange {
  readonly from: number
  readonly to: number
}

/** How many turns stay as they are at each end. */
export interface Keep {
  readonly keepFirst: number
  readonly keepLast: number
}

/** JP's built-in rule (RFD 064): keep the first turn and the last 3, strip reasoning and tool calls. */
export const DEFAULT_RULE: Required<CompactionRuleConfig> = {
  keep_first: 1,
  keep_last: 3,
  reasoning: "strip",
  tool_calls: "strip"
}

/** `{ from, to }` when it holds a turn of a conversation of `count` turns. */
const within = (from: number, to: number, count: number): TurnRange | undefined =>
  count === 0 || from > to || to < 0 || from >= count ? undefined : { from, to }

/**
 * The turns `conversation compact` covers: `keepFirst` … `last − keepLast`;
 * `undefined` when that holds no turn.
 *
 * @example
 * ```ts
 * import { resolveRange } from "parley/domain/stream/Compact"
 * import type { StreamEntry } from "parley"
 * declare const tenTurns: ReadonlyArray<StreamEntry>
 * resolveRange(tenTurns, { keepFirst: 1, keepLast: 3 }) // { from: 1, to: 6 }
 * ```
 */
export const resolveRange = (entries: ReadonlyArray<StreamEntry>, keep: Keep): TurnRange | undefined => {
  const count = turnCount(entries)
  return within(keep.keepFirst, count - 1 - keep.keepLast, count)
}

/**
 * D50's rolling range: from the later of `keepFirst` and the turn after the
 * furthest one any compaction covers, to `last − keepLast`.
 *
 * @example
 * ```ts
 * import { rollingRange } from "parley/domain/stream/Compact"
 * import type { StreamEntry } from "parley"
 * declare const twentyOneTurnsCompactedTo9: ReadonlyArray<StreamEntry>
 * rollingRange(twentyOneTurnsCompactedTo9, { keepFirst: 1, keepLast: 3 }) // { from: 10, to: 17 }
 * ```
 */
export const rollingRange = (entries: ReadonlyArray<StreamEntry>, keep: Keep): TurnRange | undefined => {
  let after = 0
  for (const e of entries) if (e.type === "compaction") after = Math.max(after, e.rule.to_turn + 1)
  const count = turnCount(entries)
  return within(Math.max(keep.keepFirst, after), count - 1 - keep.keepLast, count)
}

/**
 * JP's `extend_summary_range`: while an existing summary compaction partly
 * overlaps the range (they intersect and neither contains the other), the
 * range grows to cover it too.
 *
 * @example
 * ```ts
 * import { extendSummaryRange } from "parley/domain/stream/Compact"
 * import type { StreamEntry } from "parley"
 * declare const withSummaryOf2to6: ReadonlyArray<StreamEntry>
 * extendSummaryRange(withSummaryOf2to6, { from: 4, to: 8 }) // { from: 2, to: 8 }
 * ```
 */
export const extendSummaryRange = (entries: ReadonlyArray<StreamEntry>, range: TurnRange): TurnRange => {
  let { from, to } = range
  for (let changed = true; changed; ) {
    changed = false
    for (const e of entries) {
      if (e.type !== "compaction" || e.rule.summary === undefined) continue
      const a = e.rule.from_turn,
        b = e.rule.to_turn
      const intersects = from <= b && to >= a
      const contains = (from <= a && to >= b) || (a <= from && b >= to)
      if (intersects && !contains) {
        from = Math.min(from, a)
        to = Math.max(to, b)
        changed = true
      }
    }
  }
  return { from, to }
}

/** JP's `ToolCallsMode` → the stored policy. */
export const toolCallPolicy = (mode: ToolCallsMode): ToolCallPolicy => {
  switch (mode) {
    case "strip":
      return { policy: "strip", request: true, response: true }
    case "strip-requests":
      return { policy: "strip", request: true, response: false }
    case "strip-responses":
      return { policy: "strip", request: false, response: true }
    case "omit":
      return { policy: "omit" }
  }
}

/**
 * The compaction a mechanical rule makes of `range`, stamped `timestamp`.
 *
 * @example
 * ```ts
 * import { DEFAULT_RULE, mechanicalRule } from "parley/domain/stream/Compact"
 * import * as Timestamp from "parley/domain/event/Timestamp"
 * mechanicalRule({ from: 1, to: 6 }, DEFAULT_RULE, Timestamp.make("2026-03-05 10:00:00.0"))
 * // { timestamp, from_turn: 1, to_turn: 6, reasoning: "strip", tool_calls: { policy: "strip", request: true, response: true } }
 * ```
 */
export const mechanicalRule = (
  range: TurnRange,
  rule: CompactionRuleConfig,
  timestamp: Timestamp.Timestamp
): CompactionRule => ({
  timestamp,
  from_turn: range.from,
  to_turn: range.to,
  ...(rule.reasoning !== undefined ? { reasoning: rule.reasoning } : {}),
  ...(rule.tool_calls !== undefined ? { tool_calls: toolCallPolicy(rule.tool_calls) } : {})
})

/** The keep counts of a rule config (JP's defaults: first 1, last 3). */
export const keepOf = (rule: CompactionRuleConfig): Keep => ({
  keepFirst: rule.keep_first ?? DEFAULT_RULE.keep_first,
  keepLast: rule.keep_last ?? DEFAULT_RULE.keep_last
})

/** `[conversation.compaction.auto]` with D50's defaults filled in. */
export interface AutoSettings {
  readonly enabled: boolean
  readonly triggerRatio: number
  readonly minTurns: number
  readonly rule: CompactionRuleConfig
}

/** D50's defaults: off; at 75% of the window; never under 5 turns; JP's built-in rule. */
export const autoSettings = (config: AutoCompactionConfig | undefined): AutoSettings => ({
  enabled: config?.enabled ?? false,
  triggerRatio: config?.trigger_ratio ?? 0.75,
  minTurns: config?.min_turns ?? 5,
  rule: { ...DEFAULT_RULE, ...config?.rule }
})

/**
 * What automatic compaction does before a request: nothing (off, or the
 * request is within `triggerRatio` of the window), nothing because a
 * compaction was already appended in this turn (once per turn: it never
 * loops), nothing it can (too few turns, no turn left outside the kept ones),
 * or compact `range`.
 */
export type AutoDecision = Data.TaggedEnum<{
  Off: {}
  UnderTrigger: {}
  AlreadyCompacted: {}
  TooFewTurns: {}
  NothingToCompact: {}
  Compact: { readonly range: TurnRange }
}>
/** Constructors and matchers of {@link AutoDecision}. */
export const AutoDecision = Data.taggedEnum<AutoDecision>()

/**
 * D50's trigger: enabled, the estimate above `triggerRatio × window`, more
 * than `minTurns` turns, no compaction in the current turn yet, and a
 * non-empty {@link rollingRange}.
 *
 * @example
 * ```ts
 * import { autoSettings, decideAuto } from "parley/domain/stream/Compact"
 * import type { StreamEntry } from "parley"
 * declare const entries: ReadonlyArray<StreamEntry>
 * decideAuto(entries, { tokens: 9000, window: 10000 }, autoSettings({ enabled: true }))._tag // "Compact", when there are turns to compact
 * ```
 */
export const decideAuto = (
  entries: ReadonlyArray<StreamEntry>,
  size: { readonly tokens: number; readonly window: number },
  settings: AutoSettings
): AutoDecision => {
  if (!settings.enabled) return AutoDecision.Off()
  if (size.tokens <= size.window * settings.triggerRatio) return AutoDecision.UnderTrigger()
  const start = Math.max(0, currentTurnStart(entries))
  for (let i = start; i < entries.length; i++)
    if (entries[i]!.type === "compaction") return AutoDecision.AlreadyCompacted()
  if (turnCount(entries) <= settings.minTurns) return AutoDecision.TooFewTurns()
  const range = rollingRange(entries, keepOf(settings.rule))
  return range === undefined ? AutoDecision.NothingToCompact() : AutoDecision.Compact({ range })
}
