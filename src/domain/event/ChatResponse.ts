/**
 * An assistant reply: exactly one of `message` (text), `reasoning` (thinking
 * text) or `data` (structured JSON). Untagged on disk: the variant is the key
 * that is present, tried in that order.
 *
 * @example
 * ```ts
 * import { ChatResponse } from "parley/domain/event/ChatResponse"
 * import * as Timestamp from "parley/domain/event/Timestamp"
 * const r = ChatResponse.message(Timestamp.now(), "Done.")
 * r.variant // "message"
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { type EventMetadata, metadataField } from "./EventMetadata.ts"
import type { Timestamp as TimestampType } from "./Timestamp.ts"
import { Timestamp } from "./Timestamp.ts"

/**
 * An assistant reply: exactly one of `message` (text), `reasoning` (thinking
 * text) or `data` (structured JSON). Untagged on disk: the variant is the key
 * that is present, tried in that order.
 *
 * @example
 * ```ts
 * import { ChatResponse } from "parley/domain/event/ChatResponse"
 * import * as Timestamp from "parley/domain/event/Timestamp"
 * const r = ChatResponse.message(Timestamp.now(), "Done.")
 * r.variant // "message"
 * ```
 */
export class ChatResponse extends Schema.Class<ChatResponse>("parley/ChatResponse")({
  timestamp: Timestamp,
  type: Schema.tag("chat_response"),
  message: Schema.optionalKey(Schema.String),
  reasoning: Schema.optionalKey(Schema.String),
  data: Schema.optionalKey(Schema.Json),
  metadata: metadataField
}) {
  /** Which of the three shapes this response is. */
  get variant(): "message" | "reasoning" | "structured" {
    return this.message !== undefined ? "message" : this.reasoning !== undefined ? "reasoning" : "structured"
  }

  static message(timestamp: TimestampType, message: string, metadata: EventMetadata = {}): ChatResponse {
    return new ChatResponse({ timestamp, message, metadata })
  }

  static reasoning(timestamp: TimestampType, reasoning: string, metadata: EventMetadata = {}): ChatResponse {
    return new ChatResponse({ timestamp, reasoning, metadata })
  }

  static structured(timestamp: TimestampType, data: Schema.Json, metadata: EventMetadata = {}): ChatResponse {
    return new ChatResponse({ timestamp, data, metadata })
  }
}
