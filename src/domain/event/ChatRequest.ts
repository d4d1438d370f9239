/**
 * A user message. `schema` asks for a structured (JSON Schema) reply;
 * `author` is cosmetic and never sent to a provider.
 *
 * @example
 * ```ts
 * import { ChatRequest } from "parley/domain/event/ChatRequest"
 * import * as Timestamp from "parley/domain/event/Timestamp"
 * new ChatRequest({ timestamp: Timestamp.now(), content: "Hello" })
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { metadataField } from "./EventMetadata.ts"
import { Timestamp } from "./Timestamp.ts"

/**
 * A user message. `schema` asks for a structured (JSON Schema) reply;
 * `author` is cosmetic and never sent to a provider.
 *
 * @example
 * ```ts
 * import { ChatRequest } from "parley/domain/event/ChatRequest"
 * import * as Timestamp from "parley/domain/event/Timestamp"
 * new ChatRequest({ timestamp: Timestamp.now(), content: "Hello" })
 * ```
 */
export class ChatRequest extends Schema.Class<ChatRequest>("parley/ChatRequest")({
  timestamp: Timestamp,
  type: Schema.tag("chat_request"),
  content: Schema.String,
  schema: Schema.optionalKey(Schema.JsonObject),
  author: Schema.optionalKey(Schema.String),
  metadata: metadataField
}) {}
