/**
 * The compaction overlay (RFD 064, issue 26): what the provider sees of a
 * stream once its `compaction` entries are applied. JP's
 * `jp_conversation/src/stream/projection.rs`, rule for rule; it runs between
 * `sanitize` and the provider-visibility filter (`Thread.intoParts`).
 *
 * 1. Every entry gets its turn by position, by `Turns`' forward rule (JP's
 *    `assign_turn_indices`; entries that are not events stay in their turn).
 * 2. Per turn and per policy kind (summary, reasoning, tool calls), the
 *    compaction with the latest timestamp that covers the turn and has an
 *    opinion on that kind wins; on equal timestamps the later one in the
 *    stream wins (several compactions written by one command can share a
 *    clock reading). A range is clamped to the last turn; one that starts
 *    after it covers nothing.
 * 3. A turn whose winner has a summary loses all its events; at the first
 *    turn of each run of turns won by the same summary, one synthetic turn
 *    is put in their place: `turn_start`, `chat_request`
 *    `[Summary of previous conversation]`, `chat_response` with the summary
 *    (stamped with the first dropped event's time). So a newer summary nested
 *    inside an older one splits it: the older one is injected again after it.
 *    A summary beats the per-type policies of its turns.
 * 4. Otherwise: `reasoning: strip` drops reasoning responses; `tool_calls`
 *    `omit` drops tool call requests and responses; `strip` empties a
 *    request's arguments to `{}` (`request`) and replaces a response's content
 *    with `[compacted] <tool>: success|error`, keeping `is_error`
 *    (`response`; the tool is named by the last request with that id, else
 *    `unknown`).
 * 5. Compaction entries are consumed; config deltas and unknown entries pass
 *    through; inquiry events and turn markers are left for the filter to
 *    drop, as they always are.
 *
 * Without compactions the input is returned as it is (the same array).
 *
 * @example
 * ```ts
 * import { project } from "parley/domain/stream/Projection"
 * import type { StreamEntry } from "parley"
 * declare const sanitized: ReadonlyArray<StreamEntry>
 * const view = project(sanitized) // then keep the provider-visible events
 * ```
 */
import { ChatRequest } from "../event/ChatRequest.ts"
import { ChatResponse } from "../event/ChatResponse.ts"
import type { Compaction, ToolCallPolicy } from "../event/Compaction.ts"
import { isProviderVisible, type StreamEntry } from "../event/ConversationEvent.ts"
import * as Timestamp from "../event/Timestamp.ts"
import { ToolCallRequest } from "../event/ToolCallRequest.ts"
import { ToolCallResponse } from "../event/ToolCallResponse.ts"
import { trusted } from "../event/Trusted.ts"
import { TurnStart } from "../event/TurnStart.ts"

/** What the provider-visibility filter keeps (`Thread.ProviderEvent`, named here so this module does not import `Thread`). */
type ProviderEvent = ChatRequest | ChatResponse | ToolCallRequest | ToolCallResponse

/** The request text of an injected summary turn (JP's). */
export const SUMMARY_REQUEST = "[Summary of previous conversation]"

/** A compaction with its instant, read once. */
interface Ranked {
  readonly rule: Compaction["rule"]
  readonly at: bigint
}

/** The winning compaction per turn and policy kind (`undefined`: no opinion). */
interface TurnPolicies {
  readonly summary: Array<Ranked | undefined>
  readonly reasoning: Array<Ranked | undefined>
  readonly toolCalls: Array<Ranked | undefined>
}

/**
 * Step 2: latest timestamp wins per turn and kind; ties go to the later
 * compaction (`>=`, in stream order). Ranges are clamped to `turnBound` (the
 * stream has fewer turns than entries), which covers every turn that exists
 * and keeps a stored `to_turn` of a billion from costing a billion slots.
 */
const resolve = (compactions: ReadonlyArray<Compaction>, turnBound: number): TurnPolicies => {
  const policies: TurnPolicies = { summary: [], reasoning: [], toolCalls: [] }
  const claim = (slots: Array<Ranked | undefined>, turn: number, c: Ranked) => {
    const held = slots[turn]
    if (held === undefined || c.at >= held.at) slots[turn] = c
  }
  for (const compaction of compactions) {
    const c: Ranked = { rule: compaction.rule, at: Timestamp.toEpochNanos(compaction.rule.timestamp)! }
    const to = Math.min(c.rule.to_turn, turnBound)
    for (let turn = c.rule.from_turn; turn <= to; turn++) {
      if (c.rule.summary !== undefined) claim(policies.summary, turn, c)
      if (c.rule.reasoning !== undefined) claim(policies.reasoning, turn, c)
      if (c.rule.tool_calls !== undefined) claim(policies.toolCalls, turn, c)
    }
  }
  return policies
}

/**
 * Whether two turns' winning summaries are one: JP compares the summary's
 * text, range and instant, so two distinct compactions that agree on all
 * four read as one run.
 */
const sameSummary = (a: Ranked | undefined, b: Ranked | undefined): boolean =>
  a === b || (a !== undefined && b !== undefined && a.at === b.at && a.rule.summary === b.rule.summary &&
    a.rule.from_turn === b.rule.from_turn && a.rule.to_turn === b.rule.to_turn)

/** Step 3: the synthetic turn that stands for a run of summarised turns. */
const summaryTurn = (text: string, timestamp: Timestamp.Timestamp): Array<StreamEntry> => [
  trusted(TurnStart, { timestamp, type: "turn_start", metadata: {} }),
  trusted(ChatRequest, { timestamp, type: "chat_request", content: SUMMARY_REQUEST, metadata: {} }),
  trusted(ChatResponse, { timestamp, type: "chat_response", message: text, metadata: {} })
]

/** The tool named by the last request with each id (JP's map: a later request overwrites). */
const toolNames = (entries: ReadonlyArray<StreamEntry>): Map<string, string> => {
  const names = new Map<string, string>()
  for (const e of entries) if (e.type === "tool_call_request") names.set(e.id, e.name)
  return names
}

/** Step 4 for tool events: dropped (`undefined`), stripped, or kept. */
const applyToolPolicy = (
  e: ToolCallRequest | ToolCallResponse,
  policy: ToolCallPolicy,
  names: () => Map<string, string>
): StreamEntry | undefined => {
  if (policy.policy === "omit") return undefined
  if (e.type === "tool_call_request") return policy.request ? trusted(ToolCallRequest, { ...e, arguments: {} }) : e
  if (!policy.response) return e
  const content = `[compacted] ${names().get(e.id) ?? "unknown"}: ${e.is_error ? "error" : "success"}`
  return trusted(ToolCallResponse, { ...e, content })
}

/** The compactions of a stream, in stream order. */
const compactionsOf = (entries: ReadonlyArray<StreamEntry>): Array<Compaction> => {
  const out: Array<Compaction> = []
  for (const e of entries) if (e.type === "compaction") out.push(e)
  return out
}

/**
 * Steps 1–5 in one pass; with `visibleOnly`, only what the provider-visibility
 * filter keeps is emitted (so `Thread.intoParts` builds one array, not two).
 * Turns are counted as they go, by `Turns`' forward rule.
 */
const apply = (entries: ReadonlyArray<StreamEntry>, compactions: ReadonlyArray<Compaction>, visibleOnly: boolean): Array<StreamEntry> => {
  const policies = resolve(compactions, entries.length)
  let names: Map<string, string> | undefined
  const namesOnce = () => (names ??= toolNames(entries))
  const out: Array<StreamEntry> = []
  let turn = 0
  let hasEvent = false
  let injectedAt = -1
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!
    const type = e.type
    if (type === "compaction") continue
    if (type === "config_delta" || type === "unknown") {
      if (!visibleOnly) out.push(e)
      continue
    }
    if (type === "turn_start" && hasEvent) turn++
    hasEvent = true
    const summary = policies.summary[turn]
    if (summary !== undefined) {
      // One synthetic turn per run of turns won by the same summary, at the run's first event.
      if (injectedAt !== turn && (turn === 0 || !sameSummary(policies.summary[turn - 1], summary))) {
        const synthetic = summaryTurn(summary.rule.summary!, e.timestamp as Timestamp.Timestamp)
        if (visibleOnly) out.push(synthetic[1]!, synthetic[2]!)
        else out.push(...synthetic)
        injectedAt = turn
      }
      continue
    }
    if (type === "chat_response") {
      if (e.message === undefined && e.reasoning !== undefined && policies.reasoning[turn] !== undefined) continue
    } else if (type === "tool_call_request" || type === "tool_call_response") {
      const calls = policies.toolCalls[turn]
      const kept = calls === undefined ? e : applyToolPolicy(e, calls.rule.tool_calls!, namesOnce)
      if (kept !== undefined) out.push(kept)
      continue
    } else if (visibleOnly && type !== "chat_request") continue
    out.push(e)
  }
  return out
}

/**
 * Applies the compactions of `entries` (see the module notes). Pure; entries
 * that are kept unchanged are the same objects.
 *
 * @example
 * ```ts
 * import { project } from "parley/domain/stream/Projection"
 * import type { ChatRequest, ChatResponse, Compaction, TurnStart } from "parley"
 * declare const ts: TurnStart, q: ChatRequest, thinking: ChatResponse, a: ChatResponse, stripReasoningOfTurn0: Compaction
 * project([ts, q, thinking, a, stripReasoningOfTurn0]) // [ts, q, a]
 * ```
 */
export const project = (entries: ReadonlyArray<StreamEntry>): ReadonlyArray<StreamEntry> => {
  const compactions = compactionsOf(entries)
  return compactions.length === 0 ? entries : apply(entries, compactions, false)
}

/**
 * {@link project}, then only the provider-visible events (RFD 005's
 * allowlist), in one pass: what `Thread.intoParts` sends.
 *
 * @example
 * ```ts
 * import { projectVisible } from "parley/domain/stream/Projection"
 * import type { StreamEntry } from "parley"
 * declare const sanitized: ReadonlyArray<StreamEntry>
 * projectVisible(sanitized) // chat and tool-call events only, compactions applied
 * ```
 */
export const projectVisible = (entries: ReadonlyArray<StreamEntry>): Array<ProviderEvent> => {
  const compactions = compactionsOf(entries)
  if (compactions.length > 0) return apply(entries, compactions, true) as Array<ProviderEvent>
  const out: Array<ProviderEvent> = []
  for (const e of entries) if (isProviderVisible(e)) out.push(e)
  return out
}
