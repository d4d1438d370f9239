/**
 * The compaction overlay (RFD 064; docs/models.md#long-conversations-compactions-and-context-windows-rfd-064): what the provider sees of a
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
 * 6. Event overlays (JP's `patch.rs`, `EventOverlay.ts`): every patch of every
 *    `event_overlay` entry, overlays in stream order and patches in order,
 *    rewrites the metadata of each provider-visible event it matches, wherever
 *    the overlay stands (matching is by content). Compactions never read
 *    metadata and keep it on what they strip, so applying the patches after
 *    them gives what JP's projection gives. The overlay entries pass through
 *    as the unknown entries they are kept as.
 *
 * Without compactions and overlays the input is returned as it is (the same array).
 *
 * @example
 * ```ts
 * import { project } from "parley/domain/stream/Projection"
 * import type { StreamEntry } from "parley"
 * declare const sanitized: ReadonlyArray<StreamEntry>
 * const view = project(sanitized) // then keep the provider-visible events
 * ```
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import { ChatRequest } from "../event/ChatRequest.ts"
import { ChatResponse } from "../event/ChatResponse.ts"
import type { Compaction, ToolCallPolicy } from "../event/Compaction.ts"
import { isProviderVisible, type StreamEntry } from "../event/ConversationEvent.ts"
import * as EventOverlay from "../event/EventOverlay.ts"
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
  let last = 0
  for (const c of compactions) last = Math.max(last, Math.min(c.rule.to_turn, turnBound))
  // Filled, not sparse: the walk reads a slot for every event, and a holey array is slower to read.
  const slots = () => new Array<Ranked | undefined>(last + 1).fill(undefined)
  const policies: TurnPolicies = { summary: slots(), reasoning: slots(), toolCalls: slots() }
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
  a === b ||
  (a !== undefined &&
    b !== undefined &&
    a.at === b.at &&
    a.rule.summary === b.rule.summary &&
    a.rule.from_turn === b.rule.from_turn &&
    a.rule.to_turn === b.rule.to_turn)

/** Step 3: the synthetic turn that stands for a run of summarised turns. */
const summaryTurn = (text: string, timestamp: Timestamp.Timestamp): Array<StreamEntry> => [
  trusted(TurnStart, { timestamp, type: "turn_start", metadata: {} }),
  trusted(ChatRequest, { timestamp, type: "chat_request", content: SUMMARY_REQUEST, metadata: {} }),
  trusted(ChatResponse, { timestamp, type: "chat_response", message: text, metadata: {} })
]

/**
 * The stripped copy of each event, kept while the event lives: a turn builds
 * the provider view again for every model call and every inquiry, and the
 * same event stripped the same way is the same copy (events are immutable),
 * so only the first view of a compacted conversation allocates them.
 */
const strippedRequests = new WeakMap<ToolCallRequest, ToolCallRequest>()
const strippedResponses = new WeakMap<ToolCallResponse, ToolCallResponse>()

/** `[compacted] <tool>: success|error`, one string per tool and outcome (a view repeats them by the thousand). */
const statusLines = new Map<string, readonly [string, string]>()
const statusLine = (tool: string, isError: boolean): string => {
  let lines = statusLines.get(tool)
  if (lines === undefined) {
    lines = [`[compacted] ${tool}: success`, `[compacted] ${tool}: error`]
    if (statusLines.size < 10_000) statusLines.set(tool, lines)
  }
  return lines[isError ? 1 : 0]
}

/**
 * Names the tools of the responses stripped at `out[at]` (placeholders: the
 * original responses), by the last request with each id in `entries` — JP's
 * id → name map, a later request overwriting — built for those ids only.
 */
const nameStripped = (
  entries: ReadonlyArray<StreamEntry>,
  out: Array<StreamEntry>,
  stripped: ReadonlyArray<number>
): void => {
  const wanted = new Map<string, string>()
  for (const at of stripped) {
    const e = out[at]
    if (e?.type === "tool_call_response") wanted.set(e.id, "unknown")
  }
  for (const e of entries) if (e.type === "tool_call_request" && wanted.has(e.id)) wanted.set(e.id, e.name)
  for (const at of stripped) {
    const e = out[at]
    if (e?.type !== "tool_call_response") continue // every index in `stripped` is a response's
    const content = statusLine(wanted.get(e.id)!, e.is_error)
    const known = strippedResponses.get(e)
    if (known !== undefined && known.content === content) {
      out[at] = known
      continue
    }
    const made = trusted(ToolCallResponse, {
      timestamp: e.timestamp,
      type: e.type,
      id: e.id,
      content,
      is_error: e.is_error,
      metadata: e.metadata
    })
    strippedResponses.set(e, made)
    out[at] = made
  }
}

/**
 * Step 4 for tool events: dropped (`undefined`), a request with its arguments
 * emptied, or the event itself (a response to strip is named later, by
 * {@link nameStripped}, once the walk knows which ones need a name).
 */
const applyToolPolicy = (e: ToolCallRequest | ToolCallResponse, policy: ToolCallPolicy): StreamEntry | undefined => {
  if (policy.policy === "omit") return undefined
  if (e.type === "tool_call_request" && policy.request) {
    let made = strippedRequests.get(e)
    if (made === undefined) {
      made = trusted(ToolCallRequest, {
        timestamp: e.timestamp,
        type: e.type,
        id: e.id,
        name: e.name,
        arguments: {},
        metadata: e.metadata
      })
      strippedRequests.set(e, made)
    }
    return made
  }
  return e
}

/** The patches of a stream's overlays, in stream order (each entry read once while it lives). */
const overlayPatches = new WeakMap<StreamEntry, ReadonlyArray<EventOverlay.OverlayPatch>>()
const patchesOf = (entries: ReadonlyArray<StreamEntry>): Array<EventOverlay.OverlayPatch> => {
  const out: Array<EventOverlay.OverlayPatch> = []
  for (const e of entries) {
    if (e.type !== "unknown" || e.raw["type"] !== EventOverlay.TYPE) continue
    let patches = overlayPatches.get(e)
    if (patches === undefined) {
      // Checked when it was read; one that was not (built in memory) and does not read patches nothing.
      const parsed = EventOverlay.parse(e.raw)
      patches = Result.isSuccess(parsed) ? parsed.success.patches : []
      overlayPatches.set(e, patches)
    }
    out.push(...patches)
  }
  return out
}

/** `e` with `metadata` (a provider-visible event; the others are never sent). */
const withMetadata = (e: ProviderEvent, metadata: { readonly [key: string]: Schema.Json }): ProviderEvent => {
  switch (e.type) {
    case "chat_request":
      return trusted(ChatRequest, { ...e, metadata })
    case "chat_response":
      return trusted(ChatResponse, { ...e, metadata })
    case "tool_call_request":
      return trusted(ToolCallRequest, { ...e, metadata })
    case "tool_call_response":
      return trusted(ToolCallResponse, { ...e, metadata })
  }
}

/** Step 6 over `out`, in place: each provider-visible event whose metadata a patch changes is replaced by its patched copy. */
const patchAll = (out: Array<StreamEntry>, patches: ReadonlyArray<EventOverlay.OverlayPatch>): void => {
  for (let i = 0; i < out.length; i++) {
    const e = out[i]!
    if (!isProviderVisible(e)) continue
    const metadata = EventOverlay.applyAll(patches, e.metadata)
    if (metadata !== e.metadata) out[i] = withMetadata(e, metadata)
  }
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
const apply = (
  entries: ReadonlyArray<StreamEntry>,
  compactions: ReadonlyArray<Compaction>,
  visibleOnly: boolean
): Array<StreamEntry> => {
  const policies = resolve(compactions, entries.length)
  const stripped: Array<number> = []
  const out: Array<StreamEntry> = []
  let turn = 0
  let hasEvent = false
  let injectedAt = -1
  // The current turn's winners, read once per turn rather than once per event.
  let summary = policies.summary[0]
  let stripReasoning = policies.reasoning[0] !== undefined
  let calls = policies.toolCalls[0]?.rule.tool_calls
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!
    const type = e.type
    if (type === "compaction") continue
    if (type === "config_delta" || type === "unknown") {
      if (!visibleOnly) out.push(e)
      continue
    }
    if (type === "turn_start" && hasEvent) {
      turn++
      summary = policies.summary[turn]
      stripReasoning = policies.reasoning[turn] !== undefined
      calls = policies.toolCalls[turn]?.rule.tool_calls
    }
    hasEvent = true
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
      if (stripReasoning && e.message === undefined && e.reasoning !== undefined) continue
    } else if (type === "tool_call_request" || type === "tool_call_response") {
      const kept = calls === undefined ? e : applyToolPolicy(e, calls)
      if (kept === undefined) continue
      if (type === "tool_call_response" && calls?.policy === "strip" && calls.response) stripped.push(out.length)
      out.push(kept)
      continue
    } else if (visibleOnly && type !== "chat_request") continue
    out.push(e)
  }
  if (stripped.length > 0) nameStripped(entries, out, stripped)
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
  const patches = patchesOf(entries)
  if (compactions.length === 0 && patches.length === 0) return entries
  const out = compactions.length === 0 ? entries.slice() : apply(entries, compactions, false)
  if (patches.length > 0) patchAll(out, patches)
  return out
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
  let out: Array<ProviderEvent>
  if (compactions.length > 0) out = apply(entries, compactions, true) as Array<ProviderEvent>
  else {
    out = []
    for (const e of entries) if (isProviderVisible(e)) out.push(e)
  }
  const patches = patchesOf(entries)
  if (patches.length > 0) patchAll(out, patches)
  return out
}
