/**
 * The options of `parley conversation compact` as rules and bounds (JP's
 * `effective_rules` and `resolve_cli_from` / `resolve_cli_to`), checked
 * together: the command line reads the flags and renders, this module says
 * what they mean or which one-line reason they are refused for. Pure.
 *
 * @internal
 * @example
 * ```ts
 * import * as CompactOptions from "parley/domain/stream/CompactOptions"
 * CompactOptions.conflict({ keepFirst: 2, from: "3" }) // "--from and --keep-first cannot be used together."
 * ```
 */
import type { StreamEntry } from "../event/ConversationEvent.ts"
import type * as Timestamp from "../event/Timestamp.ts"
import type { CompactionRuleConfig } from "../tool/Config.ts"
import * as Compact from "./Compact.ts"

/** The flags that say which rules apply. */
export interface RuleOptions {
  readonly reasoning: boolean
  readonly summary: boolean
  /** `--tools[=MODE]`: "strip" when bare. */
  readonly tools: string | undefined
  /** Each `--compact` as given (empty string: bare). */
  readonly compact: ReadonlyArray<string>
}

/** The flags that bound the turns every rule covers. */
export interface RangeOptions {
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly keepFirst?: number | undefined
  readonly keepLast?: number | undefined
}

/** Why the range flags cannot be used together, or undefined when they can. */
export const conflict = (o: RangeOptions): string | undefined =>
  (o.keepFirst !== undefined && o.keepFirst < 0) || (o.keepLast !== undefined && o.keepLast < 0)
    ? "--keep-first and --keep-last take a number of turns (0 or more)."
    : o.from !== undefined && o.keepFirst !== undefined
      ? "--from and --keep-first cannot be used together."
      : o.to !== undefined && o.keepLast !== undefined
        ? "--to and --keep-last cannot be used together."
        : undefined

/** The rules this invocation applies (JP's `effective_rules`): policy flags or DSL rules, with or instead of config's. */
export const rulesOf = (
  o: RuleOptions,
  configured: ReadonlyArray<CompactionRuleConfig> | undefined
): ReadonlyArray<Compact.Rule> | string => {
  const flag = Compact.parseCompactFlag(o.compact)
  if (typeof flag === "string") return `--compact: ${flag}.`
  const explicit: Array<Compact.Rule> = []
  if (o.reasoning || o.tools !== undefined || o.summary) {
    if (flag.specs.length > 0 || flag.useConfigRules)
      return "--reasoning, --tools and --summary cannot be used with --compact."
    const mode = o.tools === undefined ? undefined : Compact.toolCallsModeOf(o.tools)
    if (o.tools !== undefined && mode === undefined)
      return `--tools: "${o.tools}" is not one of strip, strip-requests, strip-responses, omit.`
    explicit.push({
      ...Compact.ruleOf({}),
      ...(o.reasoning ? { reasoning: "strip" as const } : {}),
      ...(mode !== undefined ? { toolCalls: mode } : {}),
      ...(o.summary ? { summary: {} } : {})
    })
  }
  explicit.push(...flag.specs)
  return Compact.combineRules(Compact.configRules(configured), flag.useConfigRules, explicit)
}

/** The range overrides against the conversation at `now`: `--from` / `--to`, else `--keep-first` / `--keep-last`. */
export const boundsOf = (
  o: RangeOptions,
  entries: ReadonlyArray<StreamEntry>,
  now: Timestamp.Timestamp
): { readonly from: Compact.Bound; readonly to: Compact.Bound } | string => {
  const side = (flag: string | undefined, keep: number | undefined, which: "from" | "to") => {
    if (flag !== undefined) {
      const bound = Compact.parseCliBound(flag, which)
      return typeof bound === "string" ? `--${which}: ${bound}.` : Compact.resolveCliBound(entries, bound, which, now)
    }
    return keep !== undefined ? Compact.keepOverride(which, keep) : Compact.DEFAULT_BOUND
  }
  const from = side(o.from, o.keepFirst, "from")
  if (typeof from === "string") return from
  const to = side(o.to, o.keepLast, "to")
  return typeof to === "string" ? to : { from, to }
}

/**
 * `--reset[=N]`'s compaction: undefined for every one ("all"), its 1-based
 * number, or why not. It undoes compaction, so `others` (any rule, range or
 * model flag given) refuses it.
 */
export const resetIndex = (value: string, others: boolean): number | undefined | { readonly refused: string } => {
  if (others) return { refused: "--reset removes compactions: it takes no policy, range, --compact or --model." }
  if (value === "all") return undefined
  return /^\d+$/.test(value) && Number(value) > 0
    ? Number(value)
    : { refused: `--reset: "${value}" is not a compaction number (1, 2, …).` }
}
