/**
 * A `compaction` entry (RFD 064; docs/models.md#long-conversations-compactions-and-context-windows-rfd-064): "when building the provider view,
 * apply these policies to the turns `from_turn`…`to_turn`". The stored events
 * are never changed; `Projection.project` applies the overlay.
 *
 * On disk (JP's `Compaction`, `jp_conversation/src/compaction.rs`):
 * `{"type":"compaction","timestamp":T,"from_turn":N,"to_turn":N,
 * "summary"?:{"summary":S},"reasoning"?:"strip",
 * "tool_calls"?:{"policy":"strip","request":B,"response":B}|{"policy":"omit"},
 * "source"?:"auto"}` (`source` is draft D50's marker; absent is `manual`, and
 * JP's reader, which knows no `source` yet, ignores it).
 * The range is inclusive and 0-based. A policy that is absent (or `null`, as
 * serde reads it) has no opinion. Keys JP does not know are ignored, as serde
 * does. A malformed compaction fails the conversation's load, as in JP.
 *
 * The entry keeps the JSON it was read as (`raw`), so an unchanged
 * conversation is written back byte for byte; `rule` is what it says.
 *
 * @example
 * ```ts
 * import { Compaction } from "parley/domain/event/Compaction"
 * import * as Timestamp from "parley/domain/event/Timestamp"
 * const c = Compaction.fromRule({ timestamp: Timestamp.make("2026-03-05 10:00:00.0"), from_turn: 1, to_turn: 4, reasoning: "strip" })
 * c.raw // { type: "compaction", timestamp: "2026-03-05 10:00:00.0", from_turn: 1, to_turn: 4, reasoning: "strip" }
 * ```
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { describeValue as describe } from "./Describe.ts"
import * as Timestamp from "./Timestamp.ts"
import { trusted } from "./Trusted.ts"

type Json = Schema.Json
type JsonObject = { [key: string]: Json }

/**
 * What a compaction does to tool calls: `strip` empties the request's
 * arguments (`request`) and/or replaces the response's content with a status
 * line (`response`); `omit` drops both.
 */
export const ToolCallPolicy = Schema.Union([
  Schema.Struct({ policy: Schema.Literal("strip"), request: Schema.Boolean, response: Schema.Boolean }),
  Schema.Struct({ policy: Schema.Literal("omit") })
])
export type ToolCallPolicy = typeof ToolCallPolicy.Type

/**
 * Who made a compaction (draft D50's `CompactionSource`): `manual`
 * (`conversation compact`, `query --compact`) or `auto` (automatic
 * compaction). It does not change what the model sees.
 */
export const CompactionSource = Schema.Literals(["manual", "auto"])
export type CompactionSource = typeof CompactionSource.Type

const TurnIndex = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** What a compaction entry says, with JP's field names; absent policies have no opinion. */
export const CompactionRule = Schema.Struct({
  timestamp: Timestamp.Timestamp,
  from_turn: TurnIndex,
  to_turn: TurnIndex,
  /** Replaces every provider-visible event of the range with this text; wins over the other policies. */
  summary: Schema.optionalKey(Schema.String),
  reasoning: Schema.optionalKey(Schema.Literal("strip")),
  tool_calls: Schema.optionalKey(ToolCallPolicy),
  /** Draft D50: `auto` when automatic compaction appended it; absent means `manual`. */
  source: Schema.optionalKey(CompactionSource)
})
export type CompactionRule = typeof CompactionRule.Type

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v)

const turnIndex = (raw: JsonObject, key: string): number | string => {
  const v = raw[key]
  if (v === undefined) return `missing field "${key}"`
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0
    ? v
    : `field "${key}" must be a turn index (an integer ≥ 0), got ${describe(v)}`
}

const toolCalls = (v: Json): ToolCallPolicy | string => {
  if (!isObject(v)) return `field "tool_calls" must be an object, got ${describe(v)}`
  if (v["policy"] === "omit") return { policy: "omit" }
  if (v["policy"] !== "strip")
    return `field "tool_calls.policy" must be "strip" or "omit", got ${describe(v["policy"])}`
  const request = v["request"],
    response = v["response"]
  if (typeof request !== "boolean")
    return `field "tool_calls.request" must be a boolean, got ${request === undefined ? "nothing" : describe(request)}`
  if (typeof response !== "boolean")
    return `field "tool_calls.response" must be a boolean, got ${response === undefined ? "nothing" : describe(response)}`
  return { policy: "strip", request, response }
}

/**
 * Reads a compaction entry's JSON as JP's reader does (strict about the fields
 * it knows, deaf to the others); the failure says which field is wrong.
 */
export const decodeRule = (raw: JsonObject): Result.Result<CompactionRule, string> => {
  const ts = raw["timestamp"]
  if (typeof ts !== "string")
    return Result.fail(
      ts === undefined ? `missing field "timestamp"` : `field "timestamp" must be a string, got ${describe(ts)}`
    )
  if (!Timestamp.isTimestamp(ts)) return Result.fail(`field "timestamp" is not a timestamp: ${JSON.stringify(ts)}`)
  const from = turnIndex(raw, "from_turn")
  if (typeof from === "string") return Result.fail(from)
  const to = turnIndex(raw, "to_turn")
  if (typeof to === "string") return Result.fail(to)
  const rule: { -readonly [K in keyof CompactionRule]: CompactionRule[K] } = {
    timestamp: ts as Timestamp.Timestamp,
    from_turn: from,
    to_turn: to
  }
  const summary = raw["summary"]
  if (summary !== undefined && summary !== null) {
    if (!isObject(summary) || typeof summary["summary"] !== "string") {
      return Result.fail(
        `field "summary" must be {"summary": "<text>"}, got ${isObject(summary) ? JSON.stringify(summary) : describe(summary)}`
      )
    }
    rule.summary = summary["summary"]
  }
  const reasoning = raw["reasoning"]
  if (reasoning !== undefined && reasoning !== null) {
    if (reasoning !== "strip") return Result.fail(`field "reasoning" must be "strip", got ${describe(reasoning)}`)
    rule.reasoning = "strip"
  }
  const calls = raw["tool_calls"]
  if (calls !== undefined && calls !== null) {
    const policy = toolCalls(calls)
    if (typeof policy === "string") return Result.fail(policy)
    rule.tool_calls = policy
  }
  const source = raw["source"]
  if (source !== undefined && source !== null) {
    if (source !== "manual" && source !== "auto")
      return Result.fail(`field "source" must be "manual" or "auto", got ${describe(source)}`)
    rule.source = source
  }
  return Result.succeed(rule)
}

/** The JSON JP writes for a rule: `type`, `timestamp`, the range, then each policy that is set. */
export const encodeRule = (rule: CompactionRule): JsonObject => {
  const out: JsonObject = {
    type: "compaction",
    timestamp: rule.timestamp,
    from_turn: rule.from_turn,
    to_turn: rule.to_turn
  }
  if (rule.summary !== undefined) out["summary"] = { summary: rule.summary }
  if (rule.reasoning !== undefined) out["reasoning"] = rule.reasoning
  if (rule.tool_calls !== undefined) {
    out["tool_calls"] =
      rule.tool_calls.policy === "omit"
        ? { policy: "omit" }
        : { policy: "strip", request: rule.tool_calls.request, response: rule.tool_calls.response }
  }
  // D50's serde default is `manual`: a manual compaction is written as JP writes one today, without the key.
  if (rule.source === "auto") out["source"] = "auto"
  return out
}

/**
 * A `compaction` entry: the JSON it was read as (written back unchanged) and
 * the rule it holds. Build one with {@link Compaction.fromRule} (JP's writer
 * shape) or {@link Compaction.fromRaw} (a stored entry).
 */
export class Compaction extends Schema.Class<Compaction>("parley/Compaction")({
  type: Schema.tag("compaction"),
  raw: Schema.JsonObject,
  rule: CompactionRule
}) {
  get timestamp(): string {
    return this.rule.timestamp
  }

  /** A new compaction, written as JP writes one. */
  static fromRule(rule: CompactionRule): Compaction {
    return new Compaction({ raw: encodeRule(rule), rule })
  }

  /** A stored compaction entry, or why it is not one. */
  static fromRaw(raw: JsonObject): Result.Result<Compaction, string> {
    // The rule was validated field by field just now: no second parse.
    return Result.map(decodeRule(raw), (rule) => trusted(Compaction, { type: "compaction", raw, rule }))
  }
}

/**
 * What a compaction does to the turns it covers, for a reader: `replaced by
 * a summary`, or the per-type policies (`reasoning stripped, tool calls
 * stripped`, `tool results stripped`, `tool calls omitted`, …).
 *
 * @example
 * ```ts
 * import { describeRule } from "parley/domain/event/Compaction"
 * import * as Timestamp from "parley/domain/event/Timestamp"
 * const timestamp = Timestamp.make("2026-03-05 10:00:00.0")
 * describeRule({ timestamp, from_turn: 0, to_turn: 2, reasoning: "strip", tool_calls: { policy: "omit" } }) // "reasoning stripped, tool calls omitted"
 * ```
 */
export const describeRule = (rule: CompactionRule): string => {
  if (rule.summary !== undefined) return "replaced by a summary"
  const parts: Array<string> = []
  if (rule.reasoning !== undefined) parts.push("reasoning stripped")
  const calls = rule.tool_calls
  if (calls !== undefined) {
    if (calls.policy === "omit") parts.push("tool calls omitted")
    else if (calls.request && calls.response) parts.push("tool calls stripped")
    else if (calls.request) parts.push("tool arguments stripped")
    else if (calls.response) parts.push("tool results stripped")
  }
  return parts.length === 0 ? "no policy" : parts.join(", ")
}

/**
 * The turns a compaction covers as a person counts them (from 1, as
 * `conversation print` numbers turns): `turn 3`, `turns 2–4`.
 *
 * @example
 * ```ts
 * import { turnsText } from "parley/domain/event/Compaction"
 * import type { CompactionRule } from "parley/domain/event/Compaction"
 * declare const rule: CompactionRule
 * turnsText({ ...rule, from_turn: 1, to_turn: 3 }) // "turns 2–4"
 * ```
 */
export const turnsText = (rule: Pick<CompactionRule, "from_turn" | "to_turn">): string =>
  rule.from_turn === rule.to_turn ? `turn ${rule.from_turn + 1}` : `turns ${rule.from_turn + 1}–${rule.to_turn + 1}`
