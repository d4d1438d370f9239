/**
 * Conversation ids: a UTC instant truncated to deciseconds (`17738399468`),
 * written `jp-c17738399468` in JP's text form. Directory names are
 * `<id>` or `<id>-<slug>` with JP's slug rules.
 *
 * @example
 * ```ts
 * import * as ConversationId from "parley/domain/storage/ConversationId"
 * ConversationId.parse("jp-c17738399468") // "17738399468"
 * ConversationId.dirname("17457886043", "Simple Title") // "17457886043-simple-title"
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

// The rules on id text live in ConversationIdText.ts (no effect/Schema there, so the reading
// commands can use them without loading it; docs/decisions.md#fast-start); they are part of this module's API as before.
export { dirname, display, fromDirname, fromEpochMillis, parse, parseExact } from "./ConversationIdText.ts"

/**
 * Conversation ids: a UTC instant truncated to deciseconds (`17738399468`),
 * written `jp-c17738399468` in JP's text form. Directory names are
 * `<id>` or `<id>-<slug>` with JP's slug rules.
 *
 * @example
 * ```ts
 * import * as ConversationId from "parley/domain/storage/ConversationId"
 * ConversationId.parse("jp-c17738399468") // "17738399468"
 * ConversationId.dirname("17457886043", "Simple Title") // "17457886043-simple-title"
 * ```
 */
export const ConversationId = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter(
      (s: string) => /^\d{1,19}$/.test(s) || `Expected a conversation id (decisecond number), got ${JSON.stringify(s)}`
    )
  ),
  Schema.brand("ConversationId")
)
export type ConversationId = typeof ConversationId.Type
