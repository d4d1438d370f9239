/**
 * `parley conversation compact` as a program (RFD 064, docs/models.md#long-conversations-compactions-and-context-windows-rfd-064): append
 * compactions JP reads to an open (locked) conversation, or remove them.
 *
 * - Each rule appends one compaction (JP's `build_compaction_events`): its
 *   range is its `keep_first` … `last − keep_last`, or the command line's
 *   `--from` / `--to` (`Compact.resolveRuleRange`), whatever earlier
 *   compactions cover — the projection lets the newest win per turn. A rule
 *   with no turn to compact appends nothing.
 * - A mechanical rule stores its policies; a summary rule's turns (widened
 *   over partly overlapping summaries) are summarised by its `summary.model`
 *   through the `Provider`, from the raw events — never from a projected
 *   view, so no summary is made of a summary (RFD 064's raw-stream
 *   invariant) — and the text is stored in the compaction (RFD 064's
 *   eagerness principle).
 * - `source` (draft D50) marks an automatic compaction; a manual one is
 *   written without it.
 * - A dry run appends nothing and says how large the provider view is now
 *   and would be (a summary's size is known only once it is written).
 * - {@link reset}: JP's `--reset[=N]`, all compactions or the N-th.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { CompactConversation } from "parley"
 * import * as Compact from "parley/domain/stream/Compact"
 * import type { ConversationSession } from "parley"
 * declare const session: ConversationSession.ConversationSession
 * const outcome = CompactConversation.compact({
 *   session,
 *   rules: Compact.configRules(undefined),
 *   dryRun: false
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Compaction, type CompactionRule, type CompactionSource } from "../domain/event/Compaction.ts"
import type { StreamEntry } from "../domain/event/ConversationEvent.ts"
import { isConversationEvent } from "../domain/event/ConversationEvent.ts"
import * as Events from "../domain/event/Events.ts"
import * as Timestamp from "../domain/event/Timestamp.ts"
import * as ContextWindow from "../domain/model/ContextWindow.ts"
import * as Compact from "../domain/stream/Compact.ts"
import { providerView } from "../domain/stream/Thread.ts"
import { turns } from "../domain/stream/Turns.ts"
import * as EntryCodec from "../domain/storage/EntryCodec.ts"
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

/** How a `compact` ended. */
export type CompactOutcome = Data.TaggedEnum<{
  /** No rule left a turn to compact; `turns` is the conversation's turn count. */
  NothingToCompact: { readonly turns: number; readonly tokens: number }
  /** `compactions` were appended, one per rule that had turns to compact, in the rules' order. */
  Compacted: {
    readonly compactions: ReadonlyArray<Compaction>
    readonly tokensBefore: number
    readonly tokensAfter: number
  }
  /** A dry run: what each rule would compact (a summary's text, hence its size, is known only once written). */
  Preview: {
    readonly items: ReadonlyArray<PreviewItem>
    readonly tokensBefore: number
    readonly tokensAfter: number | undefined
  }
}>
/** Constructors and matchers of {@link CompactOutcome}. */
export const CompactOutcome = Data.taggedEnum<CompactOutcome>()

/** What one rule of a dry run would append: a mechanical `rule`, or a summary of `range` by `model`. */
export interface PreviewItem {
  readonly range: Compact.TurnRange
  readonly rule: CompactionRule | undefined
  readonly model: string | undefined
}

/** A summary rule whose summariser nobody named (the caller fills `summary.model` in). */
export class NoSummaryModel extends Schema.TaggedError<NoSummaryModel>()("NoSummaryModel", {}) {
  override get message() {
    return "A summary rule names no model, and no default summariser was given."
  }
}

/**
 * What {@link compact} needs: the open conversation, the rules (JP's: each
 * appends one compaction; a summary rule's `summary.model` writes it), the
 * command line's range overrides, whether to append, and who asks
 * (`source`, draft D50: `manual` unless automatic compaction does).
 */
export interface CompactInput {
  readonly session: ConversationSession
  readonly rules: ReadonlyArray<Compact.Rule>
  readonly from?: Compact.Bound
  readonly to?: Compact.Bound
  readonly dryRun: boolean
  readonly source?: CompactionSource
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
  model: string,
  instructions: string = SUMMARY_INSTRUCTIONS
) {
  const provider = yield* Provider
  const parts = providerView(rawEventsOf(entries, range), { systemPrompt: instructions })
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

/** A rule's compaction of `range`: its policies, or a summary written now (JP stamps it once written: the newest wins). */
const buildOne = (
  entries: ReadonlyArray<StreamEntry>,
  rule: Compact.Rule,
  range: Compact.TurnRange,
  source: CompactionSource
) =>
  Effect.gen(function* () {
    if (rule.summary === undefined)
      return Compaction.fromRule(Compact.rulePolicies(range, rule, yield* Timestamp.current, source))
    const model = rule.summary.model
    if (model === undefined) return yield* new NoSummaryModel()
    const summary = yield* summarize(entries, range, model, rule.summary.instructions)
    const timestamp = yield* Timestamp.current
    return Compaction.fromRule({
      timestamp,
      from_turn: range.from,
      to_turn: range.to,
      summary,
      ...(source === "auto" ? { source } : {})
    })
  })

/**
 * JP's `build_compaction_events`: one compaction per rule that has turns to
 * compact. Every range is resolved against the conversation as it was
 * (so `last-compaction` means the same for each rule); a summary's range
 * also grows over the summaries made earlier in this call.
 *
 * @example
 * ```ts
 * import { buildCompactions } from "parley/programs/CompactConversation"
 * import * as Compact from "parley/domain/stream/Compact"
 * import type { StreamEntry } from "parley"
 * declare const entries: ReadonlyArray<StreamEntry>
 * const made = buildCompactions(entries, Compact.configRules(undefined), Compact.DEFAULT_BOUND, Compact.DEFAULT_BOUND, "manual")
 * ```
 */
export const buildCompactions = Effect.fn("CompactConversation.buildCompactions")(function* (
  entries: ReadonlyArray<StreamEntry>,
  rules: ReadonlyArray<Compact.Rule>,
  from: Compact.Bound,
  to: Compact.Bound,
  source: CompactionSource
) {
  const made: Array<Compaction> = []
  for (const rule of rules) {
    const range = Compact.resolveRuleRange(entries, [...entries, ...made], rule, from, to)
    if (range !== undefined) made.push(yield* buildOne(entries, rule, range, source))
  }
  return made
})

/** A dry run: the ranges {@link buildCompactions} would compact, with the mechanical rules' compactions. */
const preview = (entries: ReadonlyArray<StreamEntry>, input: CompactInput, timestamp: Timestamp.Timestamp) => {
  const overlap: Array<StreamEntry> = [...entries]
  const items: Array<PreviewItem> = []
  for (const rule of input.rules) {
    const range = Compact.resolveRuleRange(
      entries,
      overlap,
      rule,
      input.from ?? Compact.DEFAULT_BOUND,
      input.to ?? Compact.DEFAULT_BOUND
    )
    if (range === undefined) continue
    const mechanical = rule.summary === undefined ? Compact.rulePolicies(range, rule, timestamp, "manual") : undefined
    // A summary to be written still widens the next summary's range, as it will when written.
    const stand = mechanical ?? { timestamp, from_turn: range.from, to_turn: range.to, summary: "" }
    overlap.push(Compaction.fromRule(stand))
    items.push({ range, rule: mechanical, model: rule.summary?.model })
  }
  return items
}

/** Appends the rules' compactions to `input.session` (or, dry, says what they would be). */
export const compact = Effect.fn("CompactConversation.compact")(function* (input: CompactInput) {
  const entries = (yield* input.session.snapshot).entries
  const tokensBefore = ContextWindow.conversationTokens(entries)
  if (input.dryRun) {
    const items = preview(entries, input, yield* Timestamp.current)
    if (items.length === 0)
      return CompactOutcome.NothingToCompact({ turns: turns(entries).length, tokens: tokensBefore })
    const known = items.every((i) => i.rule !== undefined)
    const tokensAfter = known
      ? ContextWindow.conversationTokens([...entries, ...items.map((i) => Compaction.fromRule(i.rule!))])
      : undefined
    return CompactOutcome.Preview({ items, tokensBefore, tokensAfter })
  }
  const from = input.from ?? Compact.DEFAULT_BOUND
  const to = input.to ?? Compact.DEFAULT_BOUND
  const compactions = yield* buildCompactions(entries, input.rules, from, to, input.source ?? "manual")
  if (compactions.length === 0)
    return CompactOutcome.NothingToCompact({ turns: turns(entries).length, tokens: tokensBefore })
  yield* input.session.append(compactions)
  return CompactOutcome.Compacted({
    compactions,
    tokensBefore,
    tokensAfter: ContextWindow.conversationTokens([...entries, ...compactions])
  })
})

/**
 * The JSON document of a compaction (`conversation compact --format json`):
 * the outcome, the first range and the tokens before and after, every
 * compaction appended (or, dry, every range), for the conversation `id`.
 */
export const toJson = (id: string, outcome: CompactOutcome) => {
  switch (outcome._tag) {
    case "NothingToCompact":
      return {
        id,
        outcome: "nothing-to-compact",
        turns: outcome.turns,
        tokens_before: outcome.tokens,
        tokens_after: outcome.tokens
      }
    case "Compacted": {
      const first = outcome.compactions[0]!.rule
      return {
        id,
        outcome: "compacted",
        from_turn: first.from_turn,
        to_turn: first.to_turn,
        tokens_before: outcome.tokensBefore,
        tokens_after: outcome.tokensAfter,
        compaction: EntryCodec.toPlainJson(outcome.compactions[0]!),
        compactions: outcome.compactions.map((c) => EntryCodec.toPlainJson(c))
      }
    }
    case "Preview":
      return {
        id,
        outcome: "dry-run",
        from_turn: outcome.items[0]!.range.from,
        to_turn: outcome.items[0]!.range.to,
        tokens_before: outcome.tokensBefore,
        tokens_after: outcome.tokensAfter ?? null,
        ranges: outcome.items.map((i) => ({
          from_turn: i.range.from,
          to_turn: i.range.to,
          summary: i.rule === undefined
        }))
      }
  }
}

/** How a `--reset` ended: how many compactions were (or, dry, would be) removed, and which one when one was named. */
export interface ResetOutcome {
  readonly removed: number
  readonly compaction: Compaction | undefined
}

/** `--reset=N` named no compaction of the conversation. */
export class NoSuchCompaction extends Schema.TaggedError<NoSuchCompaction>()("NoSuchCompaction", {
  index: Schema.Number,
  count: Schema.Number
}) {
  override get message() {
    return `compaction ${this.index} out of range (the conversation has ${this.count} compaction${this.count === 1 ? "" : "s"})`
  }
}

/**
 * JP's `compact --reset[=INDEX]`: removes every compaction (the model then
 * sees the stored events), or only the `index`-th (1-based, in the order
 * they are stored). Nothing else changes. A dry run removes nothing.
 */
export const reset = Effect.fn("CompactConversation.reset")(function* (input: {
  readonly session: ConversationSession
  readonly index: number | undefined
  readonly dryRun: boolean
}) {
  const compactions = (yield* input.session.snapshot).entries.filter((e) => e.type === "compaction")
  let compaction: Compaction | undefined
  if (input.index !== undefined) {
    compaction = compactions[input.index - 1]
    if (compaction === undefined) return yield* new NoSuchCompaction({ index: input.index, count: compactions.length })
  }
  const removed = compaction === undefined ? compactions.length : 1
  if (input.dryRun || removed === 0) return { removed, compaction } satisfies ResetOutcome
  yield* input.session.removeCompactions(input.index === undefined ? "all" : input.index - 1)
  return { removed, compaction } satisfies ResetOutcome
})
