/**
 * Before each main request (docs/models.md#long-conversations-compactions-and-context-windows-rfd-064): build what the provider is sent
 * (`Thread.providerView`: sanitize → compactions → filter), and make sure it
 * fits the model's context window.
 *
 * - The window is `ContextWindow.windowOf(model, config)`; unknown: no check.
 * - The size is JP's estimate (`chars / 4`) of the system parts, the tool
 *   definitions and the events.
 * - With `[conversation.compaction.auto] enabled` (off by default), a
 *   request over `trigger_ratio` of the window first gets one compaction
 *   appended (D50's rolling range and rule — mechanical, or a summary when
 *   the rule has a `summary` table — marked `source: "auto"`, at most once
 *   per turn), and is built again.
 * - A request that is still over the window is not sent: the run stops with
 *   {@link ContextWindowExceeded} (the sizes, the model, and what automatic
 *   compaction could do). The turn's request is already on disk, so the turn
 *   is resumable once the conversation is compacted; the CLI names the
 *   command.
 *
 * Config is optional here: a program run without a `Config` service has no
 * overrides and automatic compaction off.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { fitRequest } from "parley/programs/ContextWindow"
 * import type { ConversationSession } from "parley"
 * declare const session: ConversationSession.ConversationSession
 * const parts = Effect.map(fitRequest({ session, model: "anthropic/claude-sonnet-4-5", tools: [] }), (fitted) => fitted.parts)
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Compaction } from "../domain/event/Compaction.ts"
import type { StreamEntry } from "../domain/event/ConversationEvent.ts"
import * as Timestamp from "../domain/event/Timestamp.ts"
import * as ContextWindow from "../domain/model/ContextWindow.ts"
import * as Compact from "../domain/stream/Compact.ts"
import { providerView, type ThreadParts } from "../domain/stream/Thread.ts"
import type { CompactionRuleConfig } from "../domain/tool/Config.ts"
import type { ToolDefinition } from "../domain/tool/ToolDefinition.ts"
import { Config } from "../services/Config.ts"
import type { ConversationSession } from "../services/ConversationSession.ts"
import { summarize } from "./CompactConversation.ts"

/** What automatic compaction did about a request that does not fit. */
export const AutoCompactionOutcome = Schema.Literals(["off", "too-few-turns", "nothing-to-compact", "not-enough"])
export type AutoCompactionOutcome = typeof AutoCompactionOutcome.Type

const formatTokens = (n: number): string => n.toLocaleString("en-US")

const outcomeText = (e: ContextWindowExceeded): string => {
  switch (e.autoCompaction) {
    case "off":
      return "automatic compaction is off"
    case "too-few-turns":
      return `automatic compaction waits for more than ${e.minTurns} turns`
    case "nothing-to-compact":
      return "automatic compaction found no turn left to compact"
    case "not-enough":
      return "automatic compaction was not enough"
  }
}

/**
 * A main request would not fit the model's context window, so it was not
 * sent. The turn is saved and resumable once the conversation is smaller.
 */
export class ContextWindowExceeded extends Schema.TaggedError<ContextWindowExceeded>()("ContextWindowExceeded", {
  conversationId: Schema.String,
  model: Schema.String,
  /** The request's size by JP's estimate (characters / 4). */
  estimatedTokens: Schema.Number,
  contextWindow: Schema.Number,
  autoCompaction: AutoCompactionOutcome,
  /** `[conversation.compaction.auto] min_turns` in force. */
  minTurns: Schema.Number
}) {
  override get message(): string {
    return (
      `The conversation is too large for ${this.model}: about ${formatTokens(this.estimatedTokens)} tokens, ` +
      `and its context window is ${formatTokens(this.contextWindow)} tokens (${outcomeText(this)}).`
    )
  }
}

/** An automatic compaction appended before a request. */
export interface AutoCompacted {
  readonly range: Compact.TurnRange
  readonly tokensBefore: number
  readonly tokensAfter: number
  readonly contextWindow: number
}

/** The warning a run shows when it compacted the conversation on its own (stderr in the CLI). */
export const autoCompactionWarning = (c: AutoCompacted): string =>
  `compacted turns ${c.range.from + 1}–${c.range.to + 1} automatically ([conversation.compaction.auto]): ` +
  `about ${formatTokens(c.tokensBefore)} → ${formatTokens(c.tokensAfter)} tokens of a ${formatTokens(c.contextWindow)}-token window.`

/** A request ready to send, and the automatic compaction made for it, if any. */
export interface Fitted {
  readonly parts: ThreadParts
  readonly compacted: AutoCompacted | undefined
}

/** What {@link fitRequest} needs: the open conversation and what else the request carries. */
export interface FitInput {
  readonly session: ConversationSession
  readonly model: string
  readonly systemPrompt?: string | undefined
  readonly tools: ReadonlyArray<ToolDefinition>
}

/** The provider view, with its size in tokens when a window bounds it (`0` otherwise: nothing compares it, and sizing a large conversation costs a walk of every tool call's arguments). */
const viewOf = (input: FitInput, window: number | undefined) =>
  Effect.map(input.session.snapshot, (snapshot) => {
    const entries = snapshot.entries
    const parts = providerView(entries, input.systemPrompt !== undefined ? { systemPrompt: input.systemPrompt } : {})
    return {
      entries,
      parts,
      tokens:
        window === undefined ? 0 : ContextWindow.tokensOf(ContextWindow.requestChars({ ...parts, tools: input.tools }))
    }
  })

const blocked = (decision: Compact.AutoDecision): AutoCompactionOutcome =>
  Compact.AutoDecision.$match(decision, {
    Off: () => "off" as const,
    TooFewTurns: () => "too-few-turns" as const,
    NothingToCompact: () => "nothing-to-compact" as const,
    UnderTrigger: () => "not-enough" as const,
    AlreadyCompacted: () => "not-enough" as const,
    Compact: () => "not-enough" as const
  })

/**
 * Draft D50's compaction of `range` by the auto rule, marked `source: "auto"`:
 * its policies, or (a rule with a `summary` table) a summary of the raw turns
 * by `summary.model.id`, else by the run's model — as `conversation compact
 * --summary` writes one.
 */
const autoCompaction = (
  entries: ReadonlyArray<StreamEntry>,
  range: Compact.TurnRange,
  config: CompactionRuleConfig,
  model: string
) =>
  Effect.gen(function* () {
    const rule = Compact.ruleOf(config)
    if (rule.summary === undefined)
      return Compaction.fromRule(Compact.rulePolicies(range, rule, yield* Timestamp.current, "auto"))
    const text = yield* summarize(entries, range, rule.summary.model ?? model, rule.summary.instructions)
    const timestamp = yield* Timestamp.current
    return Compaction.fromRule({ timestamp, from_turn: range.from, to_turn: range.to, summary: text, source: "auto" })
  })

/**
 * The provider view of the conversation as it stands, checked against the
 * model's window (see the module notes).
 */
export const fitRequest = Effect.fn("ContextWindow.fitRequest")(function* (input: FitInput) {
  // In the type (docs/decisions.md#config-in-the-type): a turn run without config would otherwise ignore its context window silently.
  const { data: config } = yield* Config
  const window = ContextWindow.windowOf(input.model, config)
  let view = yield* viewOf(input, window)
  if (window === undefined) return { parts: view.parts, compacted: undefined } satisfies Fitted
  const settings = Compact.autoSettings(config.conversation?.compaction?.auto)
  const decision = Compact.decideAuto(view.entries, { tokens: view.tokens, window }, settings)
  let compacted: AutoCompacted | undefined
  if (decision._tag === "Compact") {
    yield* input.session.append([yield* autoCompaction(view.entries, decision.range, settings.rule, input.model)])
    const before = view.tokens
    view = yield* viewOf(input, window)
    compacted = { range: decision.range, tokensBefore: before, tokensAfter: view.tokens, contextWindow: window }
  }
  if (view.tokens > window) {
    return yield* new ContextWindowExceeded({
      conversationId: input.session.id,
      model: input.model,
      estimatedTokens: view.tokens,
      contextWindow: window,
      autoCompaction: blocked(decision),
      minTurns: settings.minTurns
    })
  }
  return { parts: view.parts, compacted } satisfies Fitted
})
