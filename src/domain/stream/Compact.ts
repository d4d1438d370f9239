/**
 * Which turns a new compaction covers and what it says (RFD 064's
 * strategies, D50's rolling range; docs/decisions.md#compactions-and-context-windows). Pure: the programs stamp and
 * append the result.
 *
 * - {@link resolveRange}: turns `keep_first` … `last − keep_last`, whatever
 *   earlier compactions cover (the projection lets the newest win per turn);
 *   nothing when the kept turns cover them all (JP's current
 *   `resolve_range`; earlier JP clamped into the kept turns).
 * - {@link rollingRange} (automatic compaction, D50): starts after the
 *   furthest turn any compaction covers, so each firing compacts turns no
 *   earlier compaction touched.
 * - {@link extendSummaryRange} (`--summary`): widened until no existing
 *   summary partly overlaps it (RFD 064 "Summary Overlap Resolution").
 * - {@link mechanicalRule}: the policies of a rule config (default: reasoning
 *   and tool calls stripped, JP's built-in rule).
 * - {@link configRules}, {@link parseSpec}, {@link combineRules}: the rules a
 *   compaction applies — `[[conversation.compaction.rules]]` (else JP's
 *   built-in rule), JP's `--compact=SPEC` DSL, and how the two combine.
 * - {@link resolveRuleRange}, {@link parseCliBound}: a rule's turns, with the
 *   command line's `--from` / `--to` (JP's `resolve_range`, `turn_range.rs`).
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
import type { CompactionRule, CompactionSource, ToolCallPolicy } from "../event/Compaction.ts"
import type { StreamEntry } from "../event/ConversationEvent.ts"
import * as Timestamp from "../event/Timestamp.ts"
import type { AutoCompactionConfig, CompactionRuleConfig, ToolCallsMode } from "../tool/Config.ts"
import { currentTurnStart, turnAtTime, turnCount } from "./Turns.ts"

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
export const DEFAULT_RULE: Required<Omit<CompactionRuleConfig, "summary">> = {
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

/**
 * A bound of a compaction rule, as config and the `--compact` DSL write it
 * (JP's `RuleBound`): `Turns` keeps that many turns (the config form),
 * `Absolute` is a 1-based turn, `FromEnd` counts back from the last turn,
 * `AfterLastCompaction` is the turn after the furthest compacted one.
 */
export type RuleBound =
  | { readonly _tag: "Turns"; readonly n: number }
  | { readonly _tag: "Absolute"; readonly n: number }
  | { readonly _tag: "FromEnd"; readonly n: number }
  | { readonly _tag: "AfterLastCompaction" }

/**
 * A turn bound resolved against a conversation (JP's `RangeBound`, 0-based):
 * a turn, `n` turns before the last, or the turn after the furthest one any
 * compaction covers.
 */
export type RangeBound =
  | { readonly _tag: "Absolute"; readonly n: number }
  | { readonly _tag: "FromEnd"; readonly n: number }
  | { readonly _tag: "AfterLastCompaction" }

/** One end of a range as the command line overrides it: not at all, at a bound, or so that nothing is selected. */
export type Bound =
  | { readonly _tag: "Default" }
  | { readonly _tag: "At"; readonly bound: RangeBound }
  | { readonly _tag: "Empty" }

/** No override. */
export const DEFAULT_BOUND: Bound = { _tag: "Default" }

/** A rule's summary: the model that writes it (unset: the caller's default) and its instructions. */
export interface SummarySettings {
  readonly model?: string | undefined
  readonly instructions?: string | undefined
}

/** A compaction rule ready to apply: its bounds and policies (a summary wins over the others). */
export interface Rule {
  readonly keepFirst: RuleBound
  readonly keepLast: RuleBound
  readonly reasoning?: "strip" | undefined
  readonly toolCalls?: ToolCallsMode | undefined
  readonly summary?: SummarySettings | undefined
}

/** A rule config with parley's defaults (keep the first turn and the last 3). */
export const ruleOf = (config: CompactionRuleConfig): Rule => ({
  keepFirst: { _tag: "Turns", n: config.keep_first ?? DEFAULT_RULE.keep_first },
  keepLast: { _tag: "Turns", n: config.keep_last ?? DEFAULT_RULE.keep_last },
  reasoning: config.reasoning,
  toolCalls: config.tool_calls,
  summary:
    config.summary === undefined
      ? undefined
      : { model: modelIdOf(config.summary.model?.id), instructions: config.summary.instructions }
})

/** JP's `{ provider, name }` model form or `provider/name`, as `provider/name`. */
const modelIdOf = (id: string | { readonly provider: string; readonly name: string } | undefined) =>
  id === undefined ? undefined : typeof id === "string" ? id : `${id.provider}/${id.name}`

/**
 * The rules `[[conversation.compaction.rules]]` configures, in order; JP's
 * built-in rule when there are none (it is dropped as soon as one is
 * configured).
 *
 * @example
 * ```ts
 * import { configRules } from "parley/domain/stream/Compact"
 * configRules(undefined).length // 1: JP's built-in rule
 * configRules([{ keep_last: 5, reasoning: "strip" }])[0]!.keepLast // { _tag: "Turns", n: 5 }
 * ```
 */
export const configRules = (rules: ReadonlyArray<CompactionRuleConfig> | undefined): ReadonlyArray<Rule> =>
  rules === undefined || rules.length === 0 ? [ruleOf(DEFAULT_RULE)] : rules.map(ruleOf)

/**
 * JP's `resolve_range`: the 0-based turns between `from` and `to` (the start
 * and the last turn when unset), or `undefined` when that holds no turn. A
 * start past the last turn, or an end further back than the first turn,
 * selects nothing rather than being clamped onto a turn.
 *
 * @example
 * ```ts
 * import { resolveBounds } from "parley/domain/stream/Compact"
 * import type { StreamEntry } from "parley"
 * declare const tenTurns: ReadonlyArray<StreamEntry>
 * resolveBounds(tenTurns, { _tag: "Absolute", n: 2 }, { _tag: "FromEnd", n: 1 }) // { from: 2, to: 8 }
 * ```
 */
export const resolveBounds = (
  entries: ReadonlyArray<StreamEntry>,
  from: RangeBound | undefined,
  to: RangeBound | undefined
): TurnRange | undefined => {
  const count = turnCount(entries)
  if (count === 0) return undefined
  const last = count - 1
  const afterLast = () => {
    let after = 0
    for (const e of entries) if (e.type === "compaction") after = Math.max(after, e.rule.to_turn + 1)
    return after
  }
  let start = 0
  if (from !== undefined) {
    start = from._tag === "Absolute" ? from.n : from._tag === "FromEnd" ? Math.max(0, last - from.n) : afterLast()
    if (start > last) return undefined
  }
  let end = last
  if (to !== undefined) {
    if (to._tag === "FromEnd" && to.n > last) return undefined
    end =
      to._tag === "Absolute" ? Math.min(to.n, last) : to._tag === "FromEnd" ? last - to.n : Math.min(afterLast(), last)
  }
  return start > end ? undefined : { from: start, to: end }
}

/** JP's `keep_first_to_bound`: where a rule's kept start ends. */
const startOf = (bound: RuleBound): RangeBound => {
  switch (bound._tag) {
    case "Turns":
      return { _tag: "Absolute", n: bound.n }
    case "Absolute":
      return { _tag: "Absolute", n: Math.max(0, bound.n - 1) }
    default:
      return bound
  }
}

/** JP's `keep_last_to_bound`: where a rule's kept end begins (`AfterLastCompaction` means the last turn). */
const endOf = (bound: RuleBound): RangeBound | undefined => {
  switch (bound._tag) {
    case "Turns":
    case "FromEnd":
      return { _tag: "FromEnd", n: bound.n }
    case "Absolute":
      return { _tag: "Absolute", n: Math.max(0, bound.n - 1) }
    case "AfterLastCompaction":
      return undefined
  }
}

/**
 * JP's `resolve_rule_range`: the turns a rule compacts, with the command
 * line's `--from` / `--to` in place of its own bounds; a summary's range
 * grows over the summaries of `overlap` it partly overlaps.
 *
 * @example
 * ```ts
 * import { DEFAULT_BOUND, resolveRuleRange, ruleOf } from "parley/domain/stream/Compact"
 * import type { StreamEntry } from "parley"
 * declare const tenTurns: ReadonlyArray<StreamEntry>
 * resolveRuleRange(tenTurns, tenTurns, ruleOf({}), DEFAULT_BOUND, DEFAULT_BOUND) // { from: 1, to: 6 }
 * ```
 */
export const resolveRuleRange = (
  entries: ReadonlyArray<StreamEntry>,
  overlap: ReadonlyArray<StreamEntry>,
  rule: Rule,
  from: Bound,
  to: Bound
): TurnRange | undefined => {
  if (from._tag === "Empty" || to._tag === "Empty") return undefined
  const start = from._tag === "At" ? from.bound : startOf(rule.keepFirst)
  const end = to._tag === "At" ? to.bound : endOf(rule.keepLast)
  const range = resolveBounds(entries, start, end)
  return range !== undefined && rule.summary !== undefined ? extendSummaryRange(overlap, range) : range
}

/** A rule's mechanical policies over `range` (no summary), stamped `timestamp`. */
export const rulePolicies = (
  range: TurnRange,
  rule: Rule,
  timestamp: Timestamp.Timestamp,
  source: CompactionSource
): CompactionRule => ({
  ...mechanicalRule(
    range,
    {
      ...(rule.reasoning !== undefined ? { reasoning: rule.reasoning } : {}),
      ...(rule.toolCalls !== undefined ? { tool_calls: rule.toolCalls } : {})
    },
    timestamp
  ),
  ...(source === "auto" ? { source } : {})
})

/** Units of a duration on the command line (JP's `humantime`, the common ones). */
const UNITS: Record<string, number> = {
  s: 1e3,
  sec: 1e3,
  secs: 1e3,
  second: 1e3,
  seconds: 1e3,
  m: 60e3,
  min: 60e3,
  mins: 60e3,
  minute: 60e3,
  minutes: 60e3,
  h: 3600e3,
  hr: 3600e3,
  hrs: 3600e3,
  hour: 3600e3,
  hours: 3600e3,
  d: 86400e3,
  day: 86400e3,
  days: 86400e3,
  w: 604800e3,
  week: 604800e3,
  weeks: 604800e3
}

/** `5h`, `1h30m`, `2days`: milliseconds, or `undefined`. */
export const parseDuration = (text: string): number | undefined => {
  const parts = [...text.matchAll(/(\d+)\s*([a-z]+)/g)]
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== text.replace(/\s+/g, "")) return undefined
  let ms = 0
  for (const [, n, unit] of parts) {
    const size = UNITS[unit!]
    if (size === undefined) return undefined
    ms += Number(n) * size
  }
  return ms
}

/** A `--from` / `--to` value: a bound, or a time that long ago (resolved against the conversation). */
export type CliBound =
  | { readonly _tag: "Resolved"; readonly bound: RangeBound }
  | { readonly _tag: "Ago"; readonly ms: number }

/**
 * JP's `parse_bound` for `conversation compact --from/--to`: a 1-based turn,
 * `-N` (the N-th turn from the end, `-1` the last), a duration (`5h`: the
 * turns since then), or, for `--from` only, `last-compaction` (`last`).
 *
 * @example
 * ```ts
 * import { parseCliBound } from "parley/domain/stream/Compact"
 * parseCliBound("2", "from") // { _tag: "Resolved", bound: { _tag: "Absolute", n: 1 } }
 * parseCliBound("-1", "to") // { _tag: "Resolved", bound: { _tag: "FromEnd", n: 0 } }
 * parseCliBound("5h", "from") // { _tag: "Ago", ms: 18000000 }
 * ```
 */
export const parseCliBound = (text: string, side: "from" | "to"): CliBound | string => {
  const s = text.trim()
  if (/^(last-compaction|last)$/i.test(s)) {
    if (side === "to") return "`last-compaction` is only valid for --from (it marks the most recent compaction)"
    return { _tag: "Resolved", bound: { _tag: "AfterLastCompaction" } }
  }
  const m = /^(-?)(\d+)$/.exec(s)
  if (m !== null) {
    const n = Number(m[2])
    if (n === 0)
      return m[1] === "-"
        ? "from-end offsets are 1-based; use -1 for the last turn"
        : "turn numbers are 1-based; 0 is not a turn"
    return { _tag: "Resolved", bound: m[1] === "-" ? { _tag: "FromEnd", n: n - 1 } : { _tag: "Absolute", n: n - 1 } }
  }
  const ms = parseDuration(s)
  return ms === undefined
    ? `invalid range bound "${text}": a turn (1, 2, …), -N from the end, a duration (5h, 30m, 2days)${side === "from" ? " or last-compaction" : ""}`
    : { _tag: "Ago", ms }
}

/** JP's `resolve_cli_from` / `resolve_cli_to`: a command-line bound against the conversation at `now`. */
export const resolveCliBound = (
  entries: ReadonlyArray<StreamEntry>,
  bound: CliBound,
  side: "from" | "to",
  now: Timestamp.Timestamp
): Bound => {
  if (bound._tag === "Resolved") return { _tag: "At", bound: bound.bound }
  const nanos = Timestamp.toEpochNanos(now) ?? 0n
  const turn = turnAtTime(entries, Timestamp.fromEpochNanos(nanos - BigInt(bound.ms) * 1_000_000n))
  if (side === "to")
    return turn === undefined ? { _tag: "Empty" } : { _tag: "At", bound: { _tag: "Absolute", n: turn.index } }
  if (turn === undefined) return { _tag: "At", bound: { _tag: "Absolute", n: 0 } }
  return turn.index + 1 >= turnCount(entries)
    ? { _tag: "Empty" }
    : { _tag: "At", bound: { _tag: "Absolute", n: turn.index + 1 } }
}

/** `--keep-first N` / `--keep-last N` as overrides of every rule's bounds. */
export const keepOverride = (side: "from" | "to", n: number): Bound => ({
  _tag: "At",
  bound: side === "from" ? { _tag: "Absolute", n } : { _tag: "FromEnd", n }
})

/** `--compact` as given: bare (the config's rules) and each `--compact=SPEC` (a rule of its own). */
export interface CompactFlag {
  readonly useConfigRules: boolean
  readonly specs: ReadonlyArray<Rule>
}

/** A DSL bound: a positive number is a 1-based turn, a negative one counts from the end. */
const dslBound = (s: string): RuleBound | string => {
  const m = /^(-?)(\d+)$/.exec(s)
  if (m === null) return `invalid bound '${s}'`
  const n = Number(m[2])
  if (m[1] === "-") return { _tag: "FromEnd", n }
  return n === 0 ? "turn indices are 1-based; `0` is not a valid turn" : { _tag: "Absolute", n }
}

/** A DSL range: `FROM..TO` (either end open) or one bound (`-N` = `..-N`, `N` = `N..`). */
const dslRange = (s: string): { from: RuleBound | undefined; to: RuleBound | undefined } | string => {
  const dots = s.indexOf("..")
  if (dots >= 0) {
    const left = s.slice(0, dots),
      right = s.slice(dots + 2)
    const from = left === "" ? undefined : dslBound(left)
    const to = right === "" ? undefined : dslBound(right)
    if (typeof from === "string") return from
    if (typeof to === "string") return to
    return { from, to }
  }
  const bound = dslBound(s)
  if (typeof bound === "string") return bound
  return bound._tag === "FromEnd" ? { from: undefined, to: bound } : { from: bound, to: undefined }
}

const TOOL_MODES: Record<string, ToolCallsMode> = {
  strip: "strip",
  s: "strip",
  "strip-responses": "strip-responses",
  strip_responses: "strip-responses",
  sres: "strip-responses",
  "strip-requests": "strip-requests",
  strip_requests: "strip-requests",
  sreq: "strip-requests",
  omit: "omit",
  o: "omit"
}

/** JP's `ToolCallsMode` from its text or short alias (`s`, `sreq`, `sres`, `o`). */
export const toolCallsModeOf = (text: string): ToolCallsMode | undefined => TOOL_MODES[text]

/** The policies of a DSL spec (`r`, `t[=MODE]`, `s`, joined by `+`). */
const dslPolicies = (s: string): Pick<Rule, "reasoning" | "toolCalls" | "summary"> | string => {
  let reasoning = false,
    summarize = false,
    tools: ToolCallsMode | undefined
  for (const raw of s.split("+")) {
    const policy = raw.trim()
    const eq = policy.indexOf("=")
    const key = (eq < 0 ? policy : policy.slice(0, eq)).trim()
    const value = eq < 0 ? undefined : policy.slice(eq + 1).trim()
    if (key === "r" || key === "reasoning" || key === "s" || key === "summarize") {
      if (value !== undefined) return `\`${key.startsWith("r") ? "reasoning" : "summarize"}\` does not take a value`
      if (key.startsWith("r")) reasoning = true
      else summarize = true
    } else if (key === "t" || key === "tools") {
      tools = value === undefined ? "strip" : toolCallsModeOf(value)
      if (tools === undefined) return `unknown tool_calls mode: \`${value}\``
    } else return key === "" ? "empty policy" : `unknown policy '${key}'`
  }
  if (!reasoning && tools === undefined && !summarize) return "at least one policy required (r, t=MODE, s)"
  return {
    ...(reasoning ? { reasoning: "strip" as const } : {}),
    ...(tools !== undefined ? { toolCalls: tools } : {}),
    ...(summarize ? { summary: {} } : {})
  }
}

/**
 * JP's `--compact=SPEC` (`compact_flag.rs`): `POLICIES[:RANGE]`. Policies
 * are `r`/`reasoning`, `t`/`tools` (`t=MODE`: `strip`/`s`,
 * `strip-requests`/`sreq`, `strip-responses`/`sres`, `omit`/`o`) and
 * `s`/`summarize`, joined by `+`. The range is `FROM..TO` (1-based,
 * inclusive; a negative bound keeps that many turns at the end), `N` (turn N
 * onward) or `-N` (all but the last N); without one, the rule keeps the first
 * turn and the last 3.
 *
 * @example
 * ```ts
 * import { parseSpec } from "parley/domain/stream/Compact"
 * parseSpec("s:..-3") // { keepFirst: { _tag: "Turns", n: 0 }, keepLast: { _tag: "FromEnd", n: 3 }, summary: {} }
 * parseSpec("x") // "unknown policy 'x'"
 * ```
 */
export const parseSpec = (spec: string): Rule | string => {
  const colon = spec.indexOf(":")
  const policies = dslPolicies(colon < 0 ? spec : spec.slice(0, colon))
  if (typeof policies === "string") return policies
  if (colon < 0) return { keepFirst: ruleOf({}).keepFirst, keepLast: ruleOf({}).keepLast, ...policies }
  const range = dslRange(spec.slice(colon + 1))
  if (typeof range === "string") return range
  return {
    keepFirst: range.from ?? { _tag: "Turns", n: 0 },
    keepLast: range.to ?? { _tag: "FromEnd", n: 0 },
    ...policies
  }
}

/**
 * The `--compact` values given (a bare `--compact` is the empty string):
 * the flag, or why a spec is not one.
 *
 * @example
 * ```ts
 * import { parseCompactFlag } from "parley/domain/stream/Compact"
 * parseCompactFlag(["", "r:-20"]) // { useConfigRules: true, specs: [one rule] }
 * ```
 */
export const parseCompactFlag = (values: ReadonlyArray<string>): CompactFlag | string => {
  const specs: Array<Rule> = []
  let useConfigRules = false
  for (const value of values) {
    if (value === "") {
      useConfigRules = true
      continue
    }
    const rule = parseSpec(value)
    if (typeof rule === "string") return `invalid compact spec '${value}': ${rule}`
    specs.push(rule)
  }
  return { useConfigRules, specs }
}

/**
 * JP's `combine_rules`: with no explicit rule the configured ones; with a
 * bare `--compact` too, the configured ones then the explicit ones;
 * otherwise the explicit ones alone.
 */
export const combineRules = (
  configured: ReadonlyArray<Rule>,
  useConfigRules: boolean,
  explicit: ReadonlyArray<Rule>
): ReadonlyArray<Rule> =>
  explicit.length === 0 ? configured : useConfigRules ? [...configured, ...explicit] : explicit
