/**
 * `metadata.json`: `title?`, `last_activated_at` (required), `pinned_at?`,
 * `archived_at?`, `expires_at?`, `labels?` in that order. Legacy keys
 * (`local`, `config`, `context`) are kept and written back after the known ones.
 * `labels` is read in both of JP's shapes (a value, or today's list of values:
 * see `Labels.ts`) and written back as it was read.
 *
 * @example
 * ```ts
 * import * as ConversationMetadata from "parley/domain/storage/ConversationMetadata"
 * const m = ConversationMetadata.decode({ title: "Hi", last_activated_at: "2026-01-01 00:00:00.0" }, "metadata.json")
 * ConversationMetadata.encode(m) // { title: "Hi", last_activated_at: "2026-01-01 00:00:00.0" }
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { setKey } from "./EntryCodec.ts"
import * as Labels from "./Labels.ts"
import * as Timestamp from "../event/Timestamp.ts"

type Json = Schema.Json
type JsonObject = { [key: string]: Json }

/**
 * `metadata.json`: `title?`, `last_activated_at` (required), `pinned_at?`,
 * `archived_at?`, `expires_at?`, `labels?` in that order. Legacy keys
 * (`local`, `config`, `context`) are kept and written back after the known ones.
 * `labels` is read in both of JP's shapes (a value, or today's list of values:
 * see `Labels.ts`) and written back as it was read.
 *
 * @example
 * ```ts
 * import * as ConversationMetadata from "parley/domain/storage/ConversationMetadata"
 * const m = ConversationMetadata.decode({ title: "Hi", last_activated_at: "2026-01-01 00:00:00.0" }, "metadata.json")
 * ConversationMetadata.encode(m) // { title: "Hi", last_activated_at: "2026-01-01 00:00:00.0" }
 * ```
 */
export class ConversationMetadata extends Schema.Class<ConversationMetadata>("parley/ConversationMetadata")({
  title: Schema.optionalKey(Schema.String),
  last_activated_at: Timestamp.Timestamp,
  pinned_at: Schema.optionalKey(Timestamp.Timestamp),
  archived_at: Schema.optionalKey(Timestamp.Timestamp),
  expires_at: Schema.optionalKey(Timestamp.Timestamp),
  /** As read (a value or a list of values per key, keys in their order); `Labels.normalize` reads it as JP does. */
  labels: Schema.optionalKey(Schema.Record(Schema.String, Schema.Union([Schema.String, Schema.Array(Schema.String)]))),
  /** Keys this build does not know, in their original order (kept, never interpreted). */
  extra: Schema.Record(Schema.String, Schema.Json),
  /** The original key order when it was not JP's writer order. */
  keyOrder: Schema.optionalKey(Schema.Array(Schema.String))
}) {}

const KNOWN = ["title", "last_activated_at", "pinned_at", "archived_at", "expires_at", "labels"] as const

/** `metadata.json` could not be decoded. */
export class MetadataError extends Error {}

const optTimestamp = (raw: JsonObject, key: string): Timestamp.Timestamp | undefined => {
  const v = raw[key]
  if (v === undefined || v === null) return undefined
  if (typeof v !== "string" || Timestamp.toEpochNanos(v) === undefined) {
    throw new MetadataError(`field "${key}" is not a timestamp: ${JSON.stringify(v)}`)
  }
  return v as Timestamp.Timestamp
}

/** Decodes a parsed `metadata.json` value. Throws {@link MetadataError}. */
export const decode = (raw: unknown, _file: string): ConversationMetadata => {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new MetadataError(
      `expected a JSON object, got ${raw === null ? "null" : Array.isArray(raw) ? "an array" : typeof raw}`
    )
  }
  const obj = raw as JsonObject
  const last = optTimestamp(obj, "last_activated_at")
  if (last === undefined) throw new MetadataError(`missing field "last_activated_at"`)
  const title = obj["title"]
  if (title !== undefined && title !== null && typeof title !== "string") {
    throw new MetadataError(`field "title" must be a string, got ${JSON.stringify(title)}`)
  }
  let labels: Labels.RawLabels | undefined
  if (obj["labels"] !== undefined && obj["labels"] !== null) {
    try {
      labels = Labels.decode(obj["labels"])
    } catch (error) {
      throw new MetadataError(`field "labels": ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  const extra: JsonObject = {}
  for (const k of Object.keys(obj))
    if (!(KNOWN as ReadonlyArray<string>).includes(k) || obj[k] === null) setKey(extra, k, obj[k]!)
  const props: ConstructorParameters<typeof ConversationMetadata>[0] = { last_activated_at: last, extra }
  const mutable = props as { -readonly [K in keyof typeof props]: (typeof props)[K] }
  if (typeof title === "string") mutable.title = title
  const pinned = optTimestamp(obj, "pinned_at")
  if (pinned !== undefined) mutable.pinned_at = pinned
  const archived = optTimestamp(obj, "archived_at")
  if (archived !== undefined) mutable.archived_at = archived
  const expires = optTimestamp(obj, "expires_at")
  if (expires !== undefined) mutable.expires_at = expires
  if (labels !== undefined) mutable.labels = labels
  const meta = new ConversationMetadata(props, { disableChecks: true })
  const keys = Object.keys(obj)
  const canonical = Object.keys(encodeCanonical(meta))
  if (keys.length !== canonical.length || keys.some((k, i) => k !== canonical[i])) {
    return new ConversationMetadata({ ...props, keyOrder: keys }, { disableChecks: true })
  }
  return meta
}

const encodeCanonical = (m: ConversationMetadata): JsonObject => {
  const out: JsonObject = {}
  if (m.title !== undefined) out["title"] = m.title
  out["last_activated_at"] = m.last_activated_at
  if (m.pinned_at !== undefined) out["pinned_at"] = m.pinned_at
  if (m.archived_at !== undefined) out["archived_at"] = m.archived_at
  if (m.expires_at !== undefined) out["expires_at"] = m.expires_at
  // Written as read (its shape and key order): parley never relabels a conversation.
  if (m.labels !== undefined) out["labels"] = m.labels as JsonObject
  for (const k of Object.keys(m.extra)) if (!Object.hasOwn(out, k)) setKey(out, k, m.extra[k]!)
  return out
}

/** The JSON object to write (JP's key order, or the original order when it differed). */
export const encode = (m: ConversationMetadata): JsonObject => {
  const canonical = encodeCanonical(m)
  if (m.keyOrder === undefined) return canonical
  const out: JsonObject = {}
  for (const k of m.keyOrder) if (Object.hasOwn(canonical, k)) setKey(out, k, canonical[k]!)
  for (const k of Object.keys(canonical)) if (!Object.hasOwn(out, k)) setKey(out, k, canonical[k]!)
  return out
}

/** A fresh metadata value. */
export const make = (props: { title?: string; last_activated_at: Timestamp.Timestamp }): ConversationMetadata =>
  new ConversationMetadata({ ...props, extra: {} })
