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
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { setKey } from "./EntryCodec.ts"
import * as Labels from "./Labels.ts"
import * as Timestamp from "../event/Timestamp.ts"
import { DetachedPolicy } from "../tool/DetachedPolicy.ts"
import * as LastError from "../run/LastError.ts"

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
/** {@link KNOWN} as texts, to look any key up in. */
const KNOWN_TEXT: ReadonlyArray<string> = KNOWN

/** `metadata.json` could not be decoded: why (the caller names the file). */
export class MetadataError extends Schema.TaggedError<MetadataError>()("MetadataError", { reason: Schema.String }) {
  override get message(): string {
    return this.reason
  }
}

const invalid = (reason: string): Result.Result<never, MetadataError> => Result.fail(new MetadataError({ reason }))

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v)

const isTimestamp = (text: string): text is Timestamp.Timestamp => Timestamp.toEpochNanos(text) !== undefined

/** The timestamp field `key` (`undefined`: absent or `null`), or why it is not one. */
const optTimestamp = (raw: JsonObject, key: string): Result.Result<Timestamp.Timestamp | undefined, MetadataError> => {
  const v = raw[key]
  if (v === undefined || v === null) return Result.succeed(undefined)
  if (typeof v !== "string" || !isTimestamp(v))
    return invalid(`field "${key}" is not a timestamp: ${JSON.stringify(v)}`)
  return Result.succeed(v)
}

type Fields = ConstructorParameters<typeof ConversationMetadata>[0]

/** The fields of `obj` beside `last_activated_at` and `extra`, or why one cannot be read. */
const readFields = (obj: JsonObject, base: Fields): Result.Result<Fields, MetadataError> => {
  const title = obj["title"]
  if (title !== undefined && title !== null && typeof title !== "string")
    return invalid(`field "title" must be a string, got ${JSON.stringify(title)}`)
  const rawLabels = obj["labels"]
  const labels = rawLabels === undefined || rawLabels === null ? undefined : Labels.read(rawLabels)
  if (labels !== undefined && Result.isFailure(labels)) return invalid(`field "labels": ${labels.failure.reason}`)
  const pinned = optTimestamp(obj, "pinned_at")
  if (Result.isFailure(pinned)) return Result.fail(pinned.failure)
  const archived = optTimestamp(obj, "archived_at")
  if (Result.isFailure(archived)) return Result.fail(archived.failure)
  const expires = optTimestamp(obj, "expires_at")
  if (Result.isFailure(expires)) return Result.fail(expires.failure)
  return Result.succeed({
    ...base,
    ...(typeof title === "string" ? { title } : {}),
    ...(pinned.success === undefined ? {} : { pinned_at: pinned.success }),
    ...(archived.success === undefined ? {} : { archived_at: archived.success }),
    ...(expires.success === undefined ? {} : { expires_at: expires.success }),
    ...(labels === undefined ? {} : { labels: labels.success })
  })
}

/** Decodes a parsed `metadata.json` value: the metadata, or the {@link MetadataError} saying why not. */
export const read = (raw: unknown): Result.Result<ConversationMetadata, MetadataError> => {
  if (!isObject(raw))
    return invalid(
      `expected a JSON object, got ${raw === null ? "null" : Array.isArray(raw) ? "an array" : typeof raw}`
    )
  const last = optTimestamp(raw, "last_activated_at")
  if (Result.isFailure(last)) return Result.fail(last.failure)
  if (last.success === undefined) return invalid(`missing field "last_activated_at"`)
  const extra: JsonObject = {}
  for (const k of Object.keys(raw)) if (!KNOWN_TEXT.includes(k) || raw[k] === null) setKey(extra, k, raw[k]!)
  const props = readFields(raw, { last_activated_at: last.success, extra })
  if (Result.isFailure(props)) return Result.fail(props.failure)
  const meta = new ConversationMetadata(props.success, { disableChecks: true })
  const keys = Object.keys(raw)
  const canonical = Object.keys(encodeCanonical(meta))
  if (keys.length === canonical.length && keys.every((k, i) => k === canonical[i])) return Result.succeed(meta)
  return Result.succeed(new ConversationMetadata({ ...props.success, keyOrder: keys }, { disableChecks: true }))
}

/** {@link read} of metadata known to be well formed (a fixture): the metadata, or the {@link MetadataError} thrown. */
export const decode = (raw: unknown, _file: string): ConversationMetadata => Result.getOrThrow(read(raw))

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

/**
 * The key of parley's own metadata that keeps the `detached` policy a run
 * used (docs/questions-and-approvals.md#when-nobody-is-there-the-detached-policy). JP ignores keys
 * it does not know, and reads and writes this file as before; it is never
 * put in a config delta (config is JP's, and says what a person set).
 */
export const DETACHED_POLICY_KEY = "parley_detached_policy"

/** The `detached` policy a run used, and which turn it ran: that turn's `turn_start` timestamp. */
export interface RecordedPolicy {
  readonly policy: DetachedPolicy
  readonly turn: string
}

const isPolicy = Schema.is(DetachedPolicy)

/** The `detached` policy recorded in `m`, if a run recorded one (a value of another shape reads as none). */
export const recordedPolicy = (m: ConversationMetadata): RecordedPolicy | undefined => {
  const v = m.extra[DETACHED_POLICY_KEY]
  if (!isObject(v) || !isPolicy(v["policy"]) || typeof v["turn"] !== "string") return undefined
  return { policy: v["policy"], turn: v["turn"] }
}

/** `m` recording `recorded` as the policy a run used (`undefined`: none, the key removed). */
export const withRecordedPolicy = (
  m: ConversationMetadata,
  recorded: RecordedPolicy | undefined
): ConversationMetadata => {
  const current = recordedPolicy(m)
  if (current?.policy === recorded?.policy && current?.turn === recorded?.turn) return m
  const extra: JsonObject = {}
  for (const k of Object.keys(m.extra)) if (k !== DETACHED_POLICY_KEY) setKey(extra, k, m.extra[k]!)
  if (recorded !== undefined) setKey(extra, DETACHED_POLICY_KEY, { policy: recorded.policy, turn: recorded.turn })
  return new ConversationMetadata({ ...m, extra }, { disableChecks: true })
}

/**
 * The key of parley's own metadata that keeps the error the conversation's
 * last run ended in (`LastError`), until its next run: JP ignores it, as
 * {@link DETACHED_POLICY_KEY}.
 */
export const LAST_ERROR_KEY = "parley_last_error"

/** The error the last run of `m`'s conversation ended in, or `null` (none, or a value of another shape). */
export const lastError = (m: ConversationMetadata): LastError.LastError | null =>
  LastError.read(m.extra[LAST_ERROR_KEY])

/** `m` keeping `error` as its last run's error (`null`: none, the key removed). */
export const withLastError = (m: ConversationMetadata, error: LastError.LastError | null): ConversationMetadata => {
  const current = lastError(m)
  if (current?.message === error?.message && current?.at === error?.at) return m
  const extra: JsonObject = {}
  for (const k of Object.keys(m.extra)) if (k !== LAST_ERROR_KEY) setKey(extra, k, m.extra[k]!)
  if (error !== null) setKey(extra, LAST_ERROR_KEY, { message: error.message, at: error.at })
  return new ConversationMetadata({ ...m, extra }, { disableChecks: true })
}
