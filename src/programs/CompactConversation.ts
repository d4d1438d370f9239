/**
 * `parley conversation compact` as a program (RFD 064, docs/models.md#long-conversations-compactions-and-context-windows-rfd-064): append one
 * compaction JP reads to an open (locked) conversation.
 *
 * - The range is RFD 064's: `keep_first` … `last − keep_last`
 *   (`Compact.resolveRange`), whatever earlier compactions cover — the
 *   projection lets the newest win per turn. An empty range compacts nothing.
 * - `Mechanical`: the rule's policies (default: reasoning and tool calls
 *   stripped).
 * - `Summary`: the turns of the range (widened over partly overlapping
 *   summaries) are summarised by `model` through the `Provider`, from the
 *   raw events — never from a projected view, so no summary is made of a
 *   summary (RFD 064's raw-stream invariant) — and the text is stored in the
 *   compaction (RFD 064's eagerness principle).
 * - A dry run appends nothing and says how large the provider view is now
 *   and would be (a summary's size is known only once it is written).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { CompactConversation } from "parley"
 * import type { ConversationSession } from "parley"
 * declare const session: ConversationSession.ConversationSession
 * const outcome = CompactConversation.compact({
 *   session,
 *   keep: { keepFirst: 1, keepLast: 3 },
 *   mode: CompactConversation.CompactMode.Mechanical({ rule: {} }),
 *   dryRun: false
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Compaction, type CompactionRule } from "../domain/event/Compaction.ts"
import type { StreamEntry } from "../domain/event/ConversationEvent.ts"
import { isConversationEvent } from "../domain/event/ConversationEvent.ts"
import * as Events from "../domain/event/Events.ts"
import * as Timestamp from "../domain/event/Timestamp.ts"
import * as ContextWindow from "../domain/model/ContextWindow.ts"
import * as Compact from "../domain/stream/Compact.ts"
import { providerView } from "../domain/stream/Thread.ts"
import { turns } from "../domain/stream/Turns.ts"
import type { CompactionRuleConfig } from "../domain/tool/Config.ts"
import type { ConversationSession } from "../services/ConversationSession.ts"
import { collect } from "../domain/model/Reply.ts"
import { Provider } from "../services/Provider.ts"

/** What the summariser is told (its system prompt). */
export const SUMMARY_INSTRUCTIONS = [
  "Summarize the conversation so far so that it can be continued without it: the summary replaces those messages.",
  "",
  "Keep: the task and its current state; decisions and why they were made; file paths, commands and code structures;",
  "errors met and how they were resolved; constraints and requirements; what was to be done next.",
  "",
  "Be concise but complete. Write plain prose or short lists, with no preamble."
].join("\n")

/** The request that asks for the summary. */
export const SUMMARY_REQUEST = "Summarize the conversation above."

/** The summariser gave nothing usable (cut short, refused, or empty); nothing was appended. */
export class SummaryFailed extends Schema.TaggedError<SummaryFailed>()("SummaryFailed", {
  model: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `${this.model} gave no usable summary (${this.reason}); nothing was compacted.`
  }
}

/** How a compaction is made: a mechanical rule, or a summary by a model. */
export type CompactMode = Data.TaggedEnum<{
  Mechanical: { readonly rule: CompactionRuleConfig }
  Summary: { readonly model: string }
}>
/** Constructors and matchers of {@link CompactMode}. */
export const CompactMode = Data.taggedEnum<CompactMode>()

/** How a `compact` ended. */
export type CompactOutcome = Data.TaggedEnum<{
  /** The kept turns leave none to compact; `turns` is the conversation's turn count. */
  NothingToCompact: { readonly turns: number; readonly tokens: number }
  /** `compaction` was appended. */
  Compacted: { readonly compaction: Compaction; readonly tokensBefore: number; readonly tokensAfter: number }
  /** A dry run: what would be compacted, and how (`rule`; a summary's is written only when compacting, so its rule and `tokensAfter` are unknown). */
  Preview: {
    readonly range: Compact.TurnRange
    readonly mode: CompactMode
    readonly rule: CompactionRule | undefined
    readonly tokensBefore: number
    readonly tokensAfter: number | undefined
  }
}>
/** Constructors and matchers of {@link CompactOutcome}. */
export const CompactOutcome = Data.taggedEnum<CompactOutcome>()

/** What {@link compact} needs: the open conversation, the kept turns, how to compact, and whether to append. */
export interface CompactInput {
  readonly session: ConversationSession
  readonly keep: Compact.Keep
  readonly mode: CompactMode
  readonly dryRun: boolean
}

/** The raw events of turns `range` (no compactions, no config): what a summariser reads. */
const rawEventsOf = (entries: ReadonlyArray<StreamEntry>, range: Compact.TurnRange): Array<StreamEntry> =>
  turns(entries)
    .slice(range.from, range.to + 1)
    .flatMap((t) => t.entries.filter(isConversationEvent))

/**
 * A summary of the raw turns `range` of `entries`, written by `model`. Only
 * a reply that finished normally with text is a summary: a cut-off one would
 * silently drop what the model never reached.
 */
export const summarize = Effect.fn("CompactConversation.summarize")(function* (
  entries: ReadonlyArray<StreamEntry>,
  range: Compact.TurnRange,
  model: string
) {
  const provider = yield* Provider
  const parts = providerView(rawEventsOf(entries, range), { systemPrompt: SUMMARY_INSTRUCTIONS })
  const ask = Events.chatRequest(yield* Timestamp.current, SUMMARY_REQUEST)
  const reply = yield* collect(
    provider.stream({ model, systemParts: parts.systemParts, events: [...parts.events, ask], tools: [] })
  )
  const text = reply.events
    .flatMap((e) => (e.type === "chat_response" && e.message !== undefined ? [e.message] : []))
    .join("\n\n")
    .trim()
  if (reply.stopReason !== "end_turn" && reply.stopReason !== "stop_sequence") {
    return yield* new SummaryFailed({ model, reason: `the reply stopped with ${reply.stopReason ?? "no end"}` })
  }
  if (text === "") return yield* new SummaryFailed({ model, reason: "the reply had no text" })
  return text
})

/** Appends one compaction to `input.session` (or, dry, says what it would be). */
export const compact = Effect.fn("CompactConversation.compact")(function* (input: CompactInput) {
  const entries = (yield* input.session.snapshot).entries
  const tokensBefore = ContextWindow.conversationTokens(entries)
  const resolved = Compact.resolveRange(entries, input.keep)
  if (resolved === undefined)
    return CompactOutcome.NothingToCompact({ turns: turns(entries).length, tokens: tokensBefore })
  const range = input.mode._tag === "Summary" ? Compact.extendSummaryRange(entries, resolved) : resolved
  const mechanical = (timestamp: Timestamp.Timestamp) =>
    input.mode._tag === "Mechanical" ? Compact.mechanicalRule(range, input.mode.rule, timestamp) : undefined
  if (input.dryRun) {
    const rule = mechanical(yield* Timestamp.current)
    const tokensAfter =
      rule === undefined ? undefined : ContextWindow.conversationTokens([...entries, Compaction.fromRule(rule)])
    return CompactOutcome.Preview({ range, mode: input.mode, rule, tokensBefore, tokensAfter })
  }
  const summary = input.mode._tag === "Summary" ? yield* summarize(entries, range, input.mode.model) : undefined
  // Stamped once the summary is written, as JP stamps it: the newest compaction wins.
  const timestamp = yield* Timestamp.current
  const compaction = Compaction.fromRule(
    mechanical(timestamp) ?? { timestamp, from_turn: range.from, to_turn: range.to, summary: summary! }
  )
  yield* input.session.append([compaction])
  return CompactOutcome.Compacted({
    compaction,
    tokensBefore,
    tokensAfter: ContextWindow.conversationTokens([...entries, compaction])
  })
})
