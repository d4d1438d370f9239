/**
 * The result of a tool call, paired with its request by `id`. `is_error`
 * marks a failed call; `content` is base64 on disk.
 *
 * @example
 * ```ts
 * import { ToolCallResponse } from "parley/domain/event/ToolCallResponse"
 * import * as Timestamp from "parley/domain/event/Timestamp"
 * new ToolCallResponse({ timestamp: Timestamp.now(), id: "call_1", content: "ok", is_error: false })
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { metadataField } from "./EventMetadata.ts"
import { Timestamp } from "./Timestamp.ts"

/**
 * The result of a tool call, paired with its request by `id`. `is_error`
 * marks a failed call; `content` is base64 on disk.
 *
 * @example
 * ```ts
 * import { ToolCallResponse } from "parley/domain/event/ToolCallResponse"
 * import * as Timestamp from "parley/domain/event/Timestamp"
 * new ToolCallResponse({ timestamp: Timestamp.now(), id: "call_1", content: "ok", is_error: false })
 * ```
 */
export class ToolCallResponse extends Schema.Class<ToolCallResponse>("parley/ToolCallResponse")({
  timestamp: Timestamp,
  type: Schema.tag("tool_call_response"),
  id: Schema.String,
  content: Schema.String,
  is_error: Schema.Boolean,
  metadata: metadataField
}) {}
