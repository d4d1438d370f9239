/**
 * How much a model can read, and how much a request holds (docs/models.md#long-conversations-compactions-and-context-windows-rfd-064).
 *
 * - {@link windowOf}: a model's context window in tokens — from
 *   `[providers.<p>.models."<id>"] context_window = N` in config, else
 *   parley's table of the models it names ({@link KNOWN_WINDOWS}); a model
 *   whose window is unknown has no limit (`undefined`).
 * - {@link eventChars} / {@link requestChars}: JP's character estimate of a
 *   request (`estimate_event_chars` and the fixed overhead of system prompt
 *   and tool definitions). JP counts UTF-8 bytes; parley counts UTF-16 code
 *   units (`string.length`), which is the same for ASCII and closer to a
 *   token count for other scripts.
 * - {@link tokensOf}: JP's `chars / 4` token estimate (RFD D50). No
 *   tokenizer, no provider round trip: an estimate that errs by a factor of
 *   two either way, which the margins below absorb.
 * - {@link fitInquiry}: RFD 034's truncation of an inquiry side call (JP's
 *   `truncate_to_fit`), see there.
 *
 * @example
 * ```ts
 * import * as ContextWindow from "parley/domain/model/ContextWindow"
 * ContextWindow.windowOf("anthropic/claude-sonnet-4-5", {}) // 200000
 * ContextWindow.windowOf("openai/gpt-x", { providers: { openai: { models: { "gpt-x": { context_window: 8192 } } } } }) // 8192
 * ```
 *
 * @since 0.1.0
 */
import * as JsonText from "../storage/JsonText.ts"
import type { StreamEntry } from "../event/ConversationEvent.ts"
import { isConversationEvent } from "../event/ConversationEvent.ts"
import { sanitize } from "../stream/Sanitize.ts"
import { type ProviderEvent, providerView } from "../stream/Thread.ts"
import type * as ConfigData from "../tool/Config.ts"
import type { ToolDefinition } from "../tool/ToolDefinition.ts"

/**
 * The context windows (input tokens) of the models parley's documentation
 * and defaults name, as their providers publish them. Keys are
 * `provider/model`; a dated snapshot (`claude-sonnet-4-5-20250929`) reads as
 * its model.
 */
export const KNOWN_WINDOWS: Readonly<Record<string, number>> = {
  "anthropic/claude-opus-4-5": 200_000,
  "anthropic/claude-opus-4-1": 200_000,
  "anthropic/claude-opus-4": 200_000,
  "anthropic/claude-sonnet-4-5": 200_000,
  "anthropic/claude-sonnet-4": 200_000,
  "anthropic/claude-haiku-4-5": 200_000,
  "anthropic/claude-3-7-sonnet": 200_000,
  "anthropic/claude-3-5-haiku": 200_000,
  "openai/gpt-5": 400_000,
  "openai/gpt-5-mini": 400_000,
  "openai/gpt-5-nano": 400_000,
  "openai/gpt-4.1": 1_047_576,
  "openai/gpt-4.1-mini": 1_047_576,
  "openai/gpt-4o": 128_000,
  "openai/gpt-4o-mini": 128_000,
  "openai/o3": 200_000,
  "openai/o4-mini": 200_000
}

/** `provider/model` split; `scripted` is the provider `scripted` with the model id `scripted`. */
const split = (model: string): { readonly provider: string; readonly id: string } => {
  const slash = model.indexOf("/")
  return slash < 0 ? { provider: model, id: model } : { provider: model.slice(0, slash), id: model.slice(slash + 1) }
}

/**
 * The context window of `model` (`provider/model`, or `scripted`): the
 * configured `[providers.<provider>.models."<id>"] context_window`, else
 * {@link KNOWN_WINDOWS}, else `undefined` (no limit).
 *
 * @example
 * ```ts
 * import { windowOf } from "parley/domain/model/ContextWindow"
 * windowOf("anthropic/claude-sonnet-4-5-20250929", {}) // 200000
 * windowOf("openai/some-local-model", {}) // undefined: no limit
 * ```
 */
export const windowOf = (model: string, config: ConfigData.Config): number | undefined => {
  const { provider, id } = split(model)
  const configured = config.providers?.[provider]?.models?.[id]?.context_window
  if (configured !== undefined) return configured
  return KNOWN_WINDOWS[`${provider}/${id}`] ?? KNOWN_WINDOWS[`${provider}/${id.replace(/-\d{8}$/, "")}`]
}

/** JP's estimate of one event's size in characters (what a provider is sent of it). */
export const eventChars = (e: StreamEntry): number => {
  switch (e.type) {
    case "chat_request":
      return e.content.length
    case "chat_response":
      return e.message !== undefined
        ? e.message.length
        : e.reasoning !== undefined
          ? e.reasoning.length
          : JsonText.stringify(e.data ?? null).length
    case "tool_call_request":
      return e.name.length + JsonText.stringify(e.arguments).length
    case "tool_call_response":
      return e.content.length
    default:
      return 0
  }
}

/** The characters of what shares the window with the events: system parts and tool definitions (JP's fixed overhead). */
export const overheadChars = (systemParts: ReadonlyArray<string>, tools: ReadonlyArray<ToolDefinition>): number => {
  let chars = 0
  for (const part of systemParts) chars += part.length
  for (const tool of tools) chars += tool.name.length + tool.description.length + JSON.stringify(tool.parameters).length
  return chars
}

/** A request's characters: its events, system parts and tools. */
export const requestChars = (request: {
  readonly systemParts: ReadonlyArray<string>
  readonly events: ReadonlyArray<ProviderEvent>
  readonly tools: ReadonlyArray<ToolDefinition>
}): number => {
  let chars = overheadChars(request.systemParts, request.tools)
  for (const e of request.events) chars += eventChars(e)
  return chars
}

/** Characters per token of the size estimate (JP's, RFD D50). */
export const CHARS_PER_TOKEN = 4

/** Tokens of `chars` characters, by JP's `chars / 4` estimate (rounded up). */
export const tokensOf = (chars: number): number => Math.ceil(chars / CHARS_PER_TOKEN)

/**
 * The estimated size of a conversation as a provider is shown it
 * (`Thread.providerView`: compactions applied), in tokens, without system
 * prompt or tools: `conversation ls`'s `tokens`, `conversation compact`'s
 * before and after.
 *
 * @example
 * ```ts
 * import { conversationTokens } from "parley/domain/model/ContextWindow"
 * import type { StreamEntry } from "parley"
 * declare const entries: ReadonlyArray<StreamEntry>
 * conversationTokens(entries) // e.g. 45210
 * ```
 */
export const conversationTokens = (entries: ReadonlyArray<StreamEntry>): number => {
  let chars = 0
  for (const e of providerView(entries).events) chars += eventChars(e)
  return tokensOf(chars)
}

/** RFD 034's figures for the inquiry side call (JP's `inquiry.rs`). */
export const INQUIRY = {
  /** RFD 034 estimates ~3 characters per token here: a side call must not overflow, so it counts more tokens. */
  charsPerToken: 3,
  /** Truncate once the events pass this share of the window (after the overhead). */
  budgetPercent: 90,
  /** …down to this share, so the next inquiries of the turn fit without cutting again. */
  targetPercent: 80
} as const

const share = (window: number, percent: number, overhead: number): number =>
  Math.max(0, Math.floor((window * INQUIRY.charsPerToken * percent) / 100) - overhead)

/**
 * How many events to drop from the start of a stream of `chars` (each
 * event's characters, in order) so it fits `window` next to `overhead`
 * characters: 0 when it fits the budget (90%); else enough to come under the
 * target (80%), the amount rounded up to a tenth of the target so that a few
 * events added at the end (the next inquiry of the turn) do not move the cut,
 * and the provider's cache of the prefix stays warm.
 */
export const inquiryCut = (chars: ReadonlyArray<number>, window: number, overhead: number): number => {
  let total = 0
  for (const c of chars) total += c
  if (total <= share(window, INQUIRY.budgetPercent, overhead)) return 0
  const target = share(window, INQUIRY.targetPercent, overhead)
  const step = Math.floor(target / 10)
  const raw = Math.max(0, total - target)
  const mustDrop = step === 0 ? raw : Math.ceil(raw / step) * step
  let dropped = 0
  let count = 0
  for (const c of chars) {
    if (dropped >= mustDrop) break
    dropped += c
    count++
  }
  return count
}

/**
 * RFD 034's truncation of an inquiry side call (JP's `truncate_to_fit`),
 * applied to a stream whose compactions are already applied (a projected
 * stream: JP truncates the raw stream, whose `retain` then drops every
 * compaction — parley cuts what the model would be sent, so the compactions
 * keep working). The oldest conversation events go first (config deltas
 * and unknown entries stay), as {@link inquiryCut} counts; the rest is
 * sanitized again (a response whose request was cut goes), and when no
 * `chat_request` is left nothing is kept (the question then stands alone).
 * Returns the input itself when it fits.
 *
 * @example
 * ```ts
 * import { fitInquiry } from "parley/domain/model/ContextWindow"
 * import { project } from "parley/domain/stream/Projection"
 * import { sanitize } from "parley/domain/stream/Sanitize"
 * import type { StreamEntry } from "parley"
 * declare const entries: ReadonlyArray<StreamEntry>
 * const fitted = fitInquiry(project(sanitize(entries)), { window: 8000, overheadChars: 1200 })
 * ```
 */
export const fitInquiry = (
  projected: ReadonlyArray<StreamEntry>,
  limits: { readonly window: number; readonly overheadChars: number }
): ReadonlyArray<StreamEntry> => {
  const events: Array<number> = []
  for (const e of projected) if (isConversationEvent(e)) events.push(eventChars(e))
  const cut = inquiryCut(events, limits.window, limits.overheadChars)
  if (cut === 0) return projected
  let seen = 0
  const kept = sanitize(projected.filter((e) => !isConversationEvent(e) || seen++ >= cut))
  return kept.some((e) => e.type === "chat_request") ? kept : kept.filter((e) => !isConversationEvent(e))
}
