/**
 * The JSON rows of a conversation listing (contract §3): what `conversation ls
 * --format json`, `GET /api/conversations` and a cluster's listing print, one
 * shape for the three.
 *
 * @example
 * ```ts
 * import { lsJsonRow } from "parley/services/ConversationRows"
 * import type { ConversationSummary } from "parley/services/ConversationStore"
 * declare const summary: ConversationSummary
 * lsJsonRow(summary).damaged // null
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Labels from "../domain/storage/Labels.ts"
import type { ConversationSummary, DamagedConversation } from "./ConversationStoreTag.ts"

/** The JSON row of contract §3. */
export const toJsonRow = (s: ConversationSummary) => ({
  id: s.id,
  title: s.title,
  events: s.events,
  last_event_at: s.lastEventAt,
  archived: s.archived,
  incomplete:
    s.incomplete === null
      ? null
      : { state: s.incomplete.state, ...(s.incomplete.tool !== undefined ? { tool: s.incomplete.tool } : {}) },
  tokens: s.tokens
})

/**
 * The JSON row of `ls`: contract §3's, its labels (JP RFD 101, `{ key: [values…] }`),
 * `damaged` (null: it reads) and `last_error` (null: its last run did not fail). A conversation that cannot be read is a row too,
 * with `damaged` saying why and nothing it could not read.
 */
export const lsJsonRow = (s: ConversationSummary) => ({
  ...toJsonRow(s),
  labels: Labels.toJson(s.labels),
  damaged: null,
  last_error: s.lastError
})

/** The JSON row of a conversation that cannot be read: `damaged` says why. */
export const damagedJsonRow = (d: DamagedConversation) => ({
  id: d.id,
  title: null,
  events: null,
  last_event_at: null,
  archived: d.archived,
  incomplete: null,
  tokens: null,
  labels: null,
  damaged: d.reason,
  last_error: null,
  running: null
})
