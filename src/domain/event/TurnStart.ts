/**
 * Marks the start of a turn (one `parley query` run). Carries no fields.
 *
 * @example
 * ```ts
 * import { TurnStart } from "parley/domain/event/TurnStart"
 * import * as Timestamp from "parley/domain/event/Timestamp"
 * new TurnStart({ timestamp: Timestamp.now() })
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { metadataField } from "./EventMetadata.ts"
import { Timestamp } from "./Timestamp.ts"

/**
 * Marks the start of a turn (one `parley query` run). Carries no fields.
 *
 * @example
 * ```ts
 * import { TurnStart } from "parley/domain/event/TurnStart"
 * import * as Timestamp from "parley/domain/event/Timestamp"
 * new TurnStart({ timestamp: Timestamp.now() })
 * ```
 */
export class TurnStart extends Schema.Class<TurnStart>("parley/TurnStart")({
  timestamp: Timestamp,
  type: Schema.tag("turn_start"),
  metadata: metadataField
}) {}
