/**
 * The turn-scoped events of a conversation, and the stream entries that are
 * not events (config deltas, compactions, unknown kinds — kept as raw JSON).
 *
 * @example
 * ```ts
 * import { isConversationEvent, isProviderVisible } from "parley/domain/event/ConversationEvent"
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { ChatRequest } from "./ChatRequest.ts"
import { ChatResponse } from "./ChatResponse.ts"
import { Compaction } from "./Compaction.ts"
import { InquiryRequest } from "./InquiryRequest.ts"
import { InquiryAnswered, InquiryCancelled, InquiryRedacted } from "./InquiryResponse.ts"
import { ToolCallRequest } from "./ToolCallRequest.ts"
import { ToolCallResponse } from "./ToolCallResponse.ts"
import { TurnStart } from "./TurnStart.ts"

/**
 * The turn-scoped events of a conversation, and the stream entries that are
 * not events (config deltas, compactions, unknown kinds — kept as raw JSON).
 *
 * @example
 * ```ts
 * import { isConversationEvent, isProviderVisible } from "parley/domain/event/ConversationEvent"
 * ```
 */
export const ConversationEvent = Schema.Union([
  TurnStart,
  ChatRequest,
  ChatResponse,
  ToolCallRequest,
  ToolCallResponse,
  InquiryRequest,
  InquiryAnswered,
  InquiryCancelled,
  InquiryRedacted
])
export type ConversationEvent = typeof ConversationEvent.Type

/** The `type` tags of conversation events (JP's `EventKind::TYPE_TAGS`). */
export const EVENT_TYPES = [
  "turn_start",
  "chat_request",
  "chat_response",
  "tool_call_request",
  "tool_call_response",
  "inquiry_request",
  "inquiry_response"
] as const
/** The `type` of a conversation event. */
export type EventType = (typeof EVENT_TYPES)[number]

/**
 * A `config_delta` entry, kept as the exact JSON it was read as (any legacy
 * shape: nested `{type,timestamp,delta}`, flattened, bare). parley never
 * interprets configuration deltas.
 */
export class ConfigDelta extends Schema.Class<ConfigDelta>("parley/ConfigDelta")({
  type: Schema.tag("config_delta"),
  raw: Schema.JsonObject
}) {
  get timestamp(): string | undefined {
    return typeof this.raw["timestamp"] === "string" ? this.raw["timestamp"] : undefined
  }
}

/** A `compaction` entry (RFD 064): its JSON and the rule it holds (see `Compaction.ts`). */
export { Compaction }

/**
 * An entry of a kind this build does not know: preserved verbatim, never
 * decoded. An `event_overlay` entry is kept as one too (checked when read,
 * applied by `Projection`): like an unknown kind, every pass leaves it in place.
 */
export class UnknownEntry extends Schema.Class<UnknownEntry>("parley/UnknownEntry")({
  type: Schema.tag("unknown"),
  raw: Schema.JsonObject
}) {
  get kind(): string {
    return String(this.raw["type"])
  }
  get timestamp(): string | undefined {
    return typeof this.raw["timestamp"] === "string" ? this.raw["timestamp"] : undefined
  }
}

/** Everything that can stand in `events.json`. */
export const StreamEntry = Schema.Union([ConversationEvent, ConfigDelta, Compaction, UnknownEntry])
export type StreamEntry = ConversationEvent | ConfigDelta | Compaction | UnknownEntry
/** Stream entries that are not turn events. */
export type GlobalEntry = ConfigDelta | Compaction | UnknownEntry

/** Whether an entry is a turn event (not a config delta, compaction or unknown kind). */
export const isConversationEvent = (e: StreamEntry): e is ConversationEvent =>
  e.type !== "config_delta" && e.type !== "compaction" && e.type !== "unknown"

/** Whether an entry is an inquiry request or response (never shown to a model). */
export const isInquiryEvent = (
  e: StreamEntry
): e is InquiryRequest | InquiryAnswered | InquiryCancelled | InquiryRedacted =>
  e.type === "inquiry_request" || e.type === "inquiry_response"

/**
 * The provider allowlist (RFD 005): only chat and tool-call events ever reach
 * a model. Turn markers, inquiries and any future kind stay internal.
 */
export const isProviderVisible = (
  e: StreamEntry
): e is ChatRequest | ChatResponse | ToolCallRequest | ToolCallResponse =>
  e.type === "chat_request" ||
  e.type === "chat_response" ||
  e.type === "tool_call_request" ||
  e.type === "tool_call_response"
