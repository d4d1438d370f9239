/**
 * How a conversation maps onto the PostgreSQL store's rows (docs/postgres.md#tables), pure:
 * an entry is stored as its text in JP's `events.json` (what the file store
 * writes, indented two spaces), so `events.json` is those texts joined the
 * way {@link EventsFile.render} joins them, and decoding goes through the
 * file store's own parser (base64 fields, verbatim deep entries and all).
 *
 * @example
 * ```ts
 * import * as Rows from "parley/layers/store/pg/Rows"
 * Rows.eventsText([]) // "[]\n"
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Result from "effect/Result"
import type { StreamEntry } from "../../../domain/event/ConversationEvent.ts"
import { isConversationEvent } from "../../../domain/event/ConversationEvent.ts"
import * as Timestamp from "../../../domain/event/Timestamp.ts"
import type { BaseConfig, Conversation } from "../../../domain/storage/Conversation.ts"
import * as ConversationModel from "../../../domain/storage/Conversation.ts"
import * as ConversationId from "../../../domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../../domain/storage/ConversationMetadata.ts"
import * as EventsFile from "../../../domain/storage/EventsFile.ts"
import { conversationTokens } from "../../../domain/model/ContextWindow.ts"
import { incompleteSummary, type LastTurn } from "../../../domain/stream/IncompleteTurn.ts"
import * as JsonText from "../../../domain/storage/JsonText.ts"

/** One `parley_events` row as written. */
// A type, not an interface: a row is a Record<string, unknown> to `sql.insert` as it is.
export type EventRow = {
  readonly conversation_id: string
  readonly seq: number
  readonly type: string
  readonly json: string
}

/** The rows of `entries`, the first at index `at`. */
export const eventRows = (id: string, entries: ReadonlyArray<StreamEntry>, at: number): Array<EventRow> =>
  entries.map((entry, i) => ({
    conversation_id: id,
    seq: at + i,
    type: entry.type,
    json: EventsFile.renderEntry(entry)
  }))

/** `events.json` of the stored entry texts, byte for byte what the file store writes. */
export const eventsText = (jsons: ReadonlyArray<string>): string =>
  jsons.length === 0 ? "[]\n" : "[\n" + jsons.join(",\n") + "\n]\n"

/** The text of `metadata.json` for `metadata`. */
export const metadataText = (metadata: ConversationMetadata.ConversationMetadata): string =>
  EventsFile.renderJson(ConversationMetadata.encode(metadata))

/** The stored `base_config` column of a base config (NULL: packed into the first entry). */
export const baseConfigText = (base: BaseConfig): string | null => (base._tag === "File" ? base.text : null)

/**
 * The listing columns an append changes, from the batch alone: `last` (the
 * conversation's last turn, as the listing's rule folds it) takes the batch
 * in, so an append into a long open turn reads nothing else.
 */
export const appendColumns = (last: LastTurn, batch: ReadonlyArray<StreamEntry>) => {
  let at: string | undefined
  let events = 0
  for (const e of batch) {
    if (isConversationEvent(e)) {
      events++
      at = e.timestamp
    }
  }
  last.push(batch)
  const incomplete = last.summary
  return {
    addEvents: events,
    lastEventAt: at === undefined ? undefined : Timestamp.toRfc3339(at),
    incompleteState: incomplete?.state ?? null,
    incompleteTool: incomplete?.tool ?? null
  }
}

/** Every listing column of a whole conversation (create, rewrite, close). */
export const summaryColumns = (c: Conversation) => {
  const last = ConversationModel.lastEventAt(c.entries)
  const incomplete = incompleteSummary(c.entries)
  return {
    title: c.metadata.title ?? null,
    dirname: ConversationId.dirname(c.id, c.metadata.title),
    entries: c.entries.length,
    events: ConversationModel.eventCount(c.entries),
    last_event_at: last === undefined ? null : Timestamp.toRfc3339(last),
    last_activated_at: c.metadata.last_activated_at,
    incomplete_state: incomplete?.state ?? null,
    incomplete_tool: incomplete?.tool ?? null,
    tokens: conversationTokens(c.entries)
  }
}

/** A decoding failure of a stored conversation: the column (or entry) and why. */
export class Damaged extends Error {
  constructor(
    readonly where: string,
    readonly entry: number | undefined,
    readonly reason: string
  ) {
    super(`${where}${entry === undefined ? "" : `: entry ${entry}`}: ${reason}`)
  }
}

/** What decoding the column `where` gave, or {@link Damaged} naming it (and the entry) with why. */
const decoding = <A>(where: string, f: () => Result.Result<A, EventsFile.DecodeError>): A => {
  let result: Result.Result<A, EventsFile.DecodeError>
  try {
    result = f()
  } catch (error) {
    // The runtime's own limit (Schema recurses on a deeply nested value), not a codec error.
    throw new Damaged(where, undefined, error instanceof Error ? error.message : String(error))
  }
  if (Result.isSuccess(result)) return result.success
  const { entry, reason } = EventsFile.located(where, result.failure)
  throw new Damaged(where, entry, reason)
}

/** The stored columns of one conversation. */
export interface StoredConversation {
  readonly id: string
  readonly archived: boolean
  readonly metadata: string | null
  readonly base_config: string | null
  readonly damage: string | null
}

/** The metadata of a stored conversation, once its other columns are checked; throws {@link Damaged}. */
const headOf = (row: StoredConversation, where: string): ConversationMetadata.ConversationMetadata => {
  if (row.damage !== null) throw new Damaged(where, undefined, row.damage)
  const metadataText = row.metadata
  if (metadataText === null) throw new Damaged(`${where} metadata`, undefined, "missing")
  const metadata = decoding(`${where} metadata`, () =>
    Result.flatMap(EventsFile.parseJson(metadataText, "metadata.json"), ConversationMetadata.read)
  )
  if (row.base_config !== null)
    decoding(`${where} base_config`, () => EventsFile.parseJson(row.base_config!, "base_config.json"))
  return metadata
}

const assemble = (
  row: StoredConversation,
  metadata: ConversationMetadata.ConversationMetadata,
  entries: Array<StreamEntry>,
  where: string
): Conversation => {
  if (row.base_config === null && (entries.length === 0 || entries[0]!.type !== "config_delta")) {
    throw new Damaged(
      `${where} events`,
      entries.length === 0 ? undefined : 0,
      "without a base config the first entry must be the packed base config_delta (JP's legacy layout)"
    )
  }
  return {
    id: row.id as ConversationId.ConversationId,
    archived: row.archived,
    metadata,
    baseConfig: row.base_config === null ? { _tag: "Packed" } : { _tag: "File", text: row.base_config },
    entries
  }
}

/** Decodes a stored conversation; throws {@link Damaged} naming what cannot be read. `where` names it (url#id). */
export const decode = (row: StoredConversation, jsons: ReadonlyArray<string>, where: string): Conversation => {
  const metadata = headOf(row, where)
  return assemble(
    row,
    metadata,
    decoding(`${where} events`, () => EventsFile.read(eventsText(jsons), "events.json")),
    where
  )
}

/** A stored conversation around entries decoded one by one ({@link decodeEntry}); throws {@link Damaged} for its other columns. */
export const withEntries = (row: StoredConversation, entries: Array<StreamEntry>, where: string): Conversation =>
  assemble(row, headOf(row, where), entries, where)

/**
 * One stored entry (the `index`-th) decoded on its own, exactly as
 * {@link decode} decodes it within the whole stream: `undefined` when only
 * the whole stream can say (a text not in JP's layout, not JSON, or not an
 * entry), and then {@link decode} names why. Loading a conversation this
 * way, row by row, never holds its whole text.
 */
export const decodeEntry = (json: string, index: number): StreamEntry | undefined => {
  // In the joined text, a separator inside an entry would split it: the whole-stream path decides those.
  if (!json.startsWith("  {") || !json.endsWith("}") || json.includes(",\n  {")) return undefined
  try {
    const entry = EventsFile.parseElement(json.slice(2), index, "events.json")
    return entry === undefined || Result.isFailure(entry) ? undefined : entry.success
  } catch {
    return undefined
  }
}

/** Whether re-encoding a decoded conversation gives back exactly what is stored (`check`). */
export const roundtrips = (c: Conversation, row: StoredConversation, jsons: ReadonlyArray<string>): boolean => {
  if (metadataText(c.metadata) !== row.metadata) return false
  if (row.base_config !== null && EventsFile.renderJson(JsonText.parse(row.base_config)) !== row.base_config)
    return false
  if (c.entries.length !== jsons.length) return false
  for (let i = 0; i < jsons.length; i++) if (EventsFile.renderEntry(c.entries[i]!) !== jsons[i]) return false
  return true
}
