/**
 * The assistant asks to run a tool. `arguments` is a JSON object (its string
 * leaves are base64 on disk).
 *
 * @example
 * ```ts
 * import { ToolCallRequest } from "parley/domain/event/ToolCallRequest"
 * import * as Timestamp from "parley/domain/event/Timestamp"
 * new ToolCallRequest({ timestamp: Timestamp.now(), id: "call_1", name: "read_file", arguments: { path: "a.txt" } })
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { metadataField } from "./EventMetadata.ts"
import { Timestamp } from "./Timestamp.ts"

/**
 * The assistant asks to run a tool. `arguments` is a JSON object (its string
 * leaves are base64 on disk).
 *
 * @example
 * ```ts
 * import { ToolCallRequest } from "parley/domain/event/ToolCallRequest"
 * import * as Timestamp from "parley/domain/event/Timestamp"
 * new ToolCallRequest({ timestamp: Timestamp.now(), id: "call_1", name: "read_file", arguments: { path: "a.txt" } })
 * ```
 */
export class ToolCallRequest extends Schema.Class<ToolCallRequest>("parley/ToolCallRequest")({
  timestamp: Timestamp,
  type: Schema.tag("tool_call_request"),
  id: Schema.String,
  name: Schema.String,
  arguments: Schema.JsonObject,
  metadata: metadataField
}) {}
