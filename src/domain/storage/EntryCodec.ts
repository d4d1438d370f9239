/**
 * The storage codec of one `events.json` entry: raw JSON on disk ↔ a typed
 * {@link StreamEntry}.
 *
 * Decoding follows JP (`jp_conversation/src/stream.rs`, `storage.rs`):
 * dispatch on the raw `type`; `config_delta` / `compaction` / unknown kinds
 * stay raw JSON (never base64-decoded); known events get their storage base64
 * removed (metadata string leaves, `tool_call_request.arguments` string leaves,
 * `tool_call_response.content`) and are parsed strictly. Legacy shapes are
 * read: a flat `{id, answer}` inquiry response is `Answered`; a `cancelled`
 * response without `reason` is `user` (RFD 082's text); a missing
 * `arguments` is `{}`; extra keys such as the old `tool_answers` are kept.
 *
 * `event_overlay` entries (JP `patch.rs`) are checked as JP reads them and
 * kept raw, like an unknown kind (`Projection` applies them). Every kind may
 * carry today's `event_id` (JP RFD 097; see `EventId.ts`): a non-string one is
 * a corrupt entry.
 *
 * Encoding writes JP's writer shape (`timestamp, type, …fields, metadata`),
 * with `event_id` first for a new entry that has one ({@link withEventId}).
 * An entry read from disk whose layout was not canonical (other key order,
 * extra or defaulted keys, undecodable base64 values) remembers that layout,
 * so an unchanged conversation is written back byte for byte. A new or
 * rebuilt event is always written in the current (RFD 082) shape.
 *
 * @example
 * ```ts
 * import * as EntryCodec from "parley/domain/storage/EntryCodec"
 * const e = EntryCodec.decodeEntry({ timestamp: "2026-01-01 00:00:00.0", type: "tool_call_response", id: "c", content: "b2s=", is_error: false })
 * EntryCodec.encodeEntry(e) // { timestamp: …, type: "tool_call_response", id: "c", content: "b2s=", is_error: false }
 * ```
 *
 * @since 0.1.0
 */
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { SchemaJITCompiler } from "effect/schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Effect from "effect/Effect"
import { ChatRequest } from "../event/ChatRequest.ts"
import { ChatResponse } from "../event/ChatResponse.ts"
import {
  Compaction,
  ConfigDelta,
  type StreamEntry,
  StreamEntry as StreamEntrySchema,
  UnknownEntry
} from "../event/ConversationEvent.ts"
import { describeValue as describe } from "../event/Describe.ts"
import * as EventOverlay from "../event/EventOverlay.ts"
import { InquiryRequest } from "../event/InquiryRequest.ts"
import { InquiryAnswered, InquiryCancelled, InquiryRedacted } from "../event/InquiryResponse.ts"
import { InquiryQuestion } from "../event/InquiryQuestion.ts"
import { InquirySource } from "../event/InquirySource.ts"
import * as StorageBase64 from "./StorageBase64.ts"
import * as Timestamp from "../event/Timestamp.ts"
import { ToolCallRequest } from "../event/ToolCallRequest.ts"
import { ToolCallResponse } from "../event/ToolCallResponse.ts"
import { trusted } from "../event/Trusted.ts"
import { TurnStart } from "../event/TurnStart.ts"

type Json = Schema.Json
type JsonObject = { [key: string]: Json }

/** Why one entry could not be decoded (the caller adds file and index). */
export class EntryError extends Error {
  constructor(
    readonly kind: string | undefined,
    message: string
  ) {
    super(message)
  }
}

/** How an entry read from disk differs from the canonical writer shape. */
interface Layout {
  /** The original keys, in order (present when they differ from canonical). */
  readonly keys?: ReadonlyArray<string>
  /** Original values the typed model does not hold (`tool_answers`, `schema: null`, …). */
  readonly extra?: JsonObject
  /** Paths (`\u0001`-joined) of string leaves that were not decodable base64. */
  readonly undecoded?: ReadonlySet<string>
}

const layouts = new WeakMap<object, Layout>()

/**
 * The `event_id` of each entry that has one (JP RFD 097): read from disk, or
 * given to a new entry by {@link withEventId}. An entry read from disk keeps
 * its id where it stood (its layout, or its raw object); a new one has it
 * written first, as JP writes it.
 */
const eventIds = new WeakMap<object, string>()

/** The entry's `event_id` (`undefined`: none, or a legacy `null`/empty one). */
export const eventIdOf = (e: StreamEntry): string | undefined => eventIds.get(e)

/**
 * Gives `e` the id `id` (JP RFD 097): an entry parley made, or rebuilt from
 * one that had it. An id it already has is kept. Returns `e`.
 */
export const withEventId = <E extends StreamEntry>(e: E, id: string): E => {
  if (!eventIds.has(e)) eventIds.set(e, id)
  return e
}

/**
 * Reads `event_id` as JP's storage boundary does (`stream/entry.rs`): missing,
 * `null` or empty is a legacy entry without one; any other non-string is a
 * corrupt entry.
 */
const readEventId = (raw: JsonObject, kind: string | undefined): string | undefined => {
  const id = raw["event_id"]
  if (id === undefined || id === null || id === "") return undefined
  if (typeof id !== "string") throw new EntryError(kind, `field "event_id" must be a string, got ${describe(id)}`)
  return id
}

const SEP = "\u0001"

/** Sets an own property, even one named `__proto__` (which plain assignment would swallow). */
export const setKey = (obj: JsonObject, key: string, value: Json): void => {
  if (key === "__proto__")
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true })
  else obj[key] = value
}

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v)

/**
 * `value` with every string leaf replaced by `leaf(string, path)`, keys in
 * their order. Iterative (docs/decisions.md#json-depth): any depth `JSON.parse` accepted, where
 * the recursive version overflowed the stack at a few thousand levels.
 */
const mapStrings = (value: Json, path: string, leaf: (s: string, path: string) => Json): Json => {
  const root: { value: Json } = { value: null }
  const todo: Array<{ value: Json; path: string; put: (v: Json) => void }> = [
    { value, path, put: (v) => (root.value = v) }
  ]
  while (todo.length > 0) {
    const task = todo.pop()!
    const v = task.value
    if (typeof v === "string") task.put(leaf(v, task.path))
    else if (Array.isArray(v)) {
      const out: Array<Json> = new Array(v.length)
      task.put(out)
      v.forEach((item, i) => {
        todo.push({
          value: item,
          path: task.path + SEP + i,
          put: (x) => {
            out[i] = x
          }
        })
      })
    } else if (isObject(v)) {
      const out: JsonObject = {}
      task.put(out)
      // Keys first, in order; their values are filled in as the tasks run.
      for (const k of Object.keys(v)) {
        setKey(out, k, null)
        todo.push({ value: v[k]!, path: task.path + SEP + k, put: (x) => setKey(out, k, x) })
      }
    } else task.put(v)
  }
  return root.value
}

/** Base64-decodes string leaves, recording the paths that stay raw. */
const decodeLeaves = (value: Json, path: string, undecoded: Array<string>): Json =>
  mapStrings(value, path, (s, at) => {
    const d = StorageBase64.decode(s)
    if (d !== undefined) return d
    undecoded.push(at)
    return s
  })

const encodeLeaves = (value: Json, path: string, undecoded: ReadonlySet<string> | undefined): Json =>
  mapStrings(value, path, (s, at) => (undecoded?.has(at) ? s : StorageBase64.encode(s)))

const compiled = <T, E>(schema: Schema.Codec<T, E>) => {
  SchemaJITCompiler.enable(schema.ast)
  return Schema.decodeUnknownExit(schema)
}
const decodeSource = compiled(InquirySource)
const decodeQuestion = compiled(InquiryQuestion)

const issueText = (exit: Exit.Exit<unknown, Schema.SchemaError>): string =>
  Exit.isFailure(exit)
    ? String(exit.cause)
        .replace(/^SchemaError: /, "")
        .split("\n")
        .join(" ")
    : ""

const CANONICAL_KEYS: Record<string, ReadonlyArray<string>> = {
  turn_start: ["timestamp", "type"],
  chat_request: ["timestamp", "type", "content"],
  chat_response: ["timestamp", "type"],
  tool_call_request: ["timestamp", "type", "id", "name", "arguments"],
  tool_call_response: ["timestamp", "type", "id", "content", "is_error"],
  inquiry_request: ["timestamp", "type", "id", "source", "question"],
  inquiry_response: ["timestamp", "type", "outcome", "id"]
}

const requireString = (raw: JsonObject, key: string, kind: string): string => {
  const v = raw[key]
  if (typeof v !== "string") {
    throw new EntryError(
      kind,
      v === undefined ? `missing field "${key}"` : `field "${key}" must be a string, got ${describe(v)}`
    )
  }
  return v
}

/**
 * Decodes one raw entry. Throws {@link EntryError} with a readable reason.
 */
export const decodeEntry = (raw: unknown): StreamEntry => {
  if (!isObject(raw)) throw new EntryError(undefined, `expected an object, got ${describe(raw)}`)
  const type = raw["type"]
  if (type === undefined) throw new EntryError(undefined, `missing field "type"`)
  if (typeof type !== "string") throw new EntryError(undefined, `field "type" must be a string, got ${describe(type)}`)
  const id = readEventId(raw, type)
  const entry = decodeKind(raw, type)
  if (id !== undefined) eventIds.set(entry, id)
  return entry
}

const decodeKind = (raw: JsonObject, type: string): StreamEntry => {
  switch (type) {
    case "config_delta":
      return trusted(ConfigDelta, { type: "config_delta", raw })
    case "compaction": {
      // JP fails the whole load on a malformed compaction: so does parley.
      const compaction = Compaction.fromRaw(raw)
      if (Result.isFailure(compaction)) throw new EntryError("compaction", compaction.failure)
      return compaction.success
    }
    case EventOverlay.TYPE: {
      // Kept as the raw entry it is (a global entry every pass leaves in place); JP fails the load on a malformed one.
      const overlay = EventOverlay.parse(raw)
      if (Result.isFailure(overlay)) throw new EntryError(EventOverlay.TYPE, overlay.failure)
      return trusted(UnknownEntry, { type: "unknown", raw })
    }
    case "turn_start":
    case "chat_request":
    case "chat_response":
    case "tool_call_request":
    case "tool_call_response":
    case "inquiry_request":
    case "inquiry_response":
      return decodeEvent(raw, type)
    default:
      return trusted(UnknownEntry, { type: "unknown", raw })
  }
}

const decodeEvent = (raw: JsonObject, kind: string): StreamEntry => {
  const timestamp = requireString(raw, "timestamp", kind)
  if (Timestamp.toEpochNanos(timestamp) === undefined) {
    throw new EntryError(kind, `field "timestamp" is not a timestamp: ${JSON.stringify(timestamp)}`)
  }
  const ts = timestamp as Timestamp.Timestamp
  const undecoded: Array<string> = []
  const extra: JsonObject = {}
  const used = new Set<string>(["timestamp", "type", "metadata"])

  let metadata: JsonObject = {}
  const rawMetadata = raw["metadata"]
  if (rawMetadata !== undefined) {
    if (!isObject(rawMetadata))
      throw new EntryError(kind, `field "metadata" must be an object, got ${describe(rawMetadata)}`)
    metadata = decodeLeaves(rawMetadata, "metadata", undecoded) as JsonObject
  }

  let entry: StreamEntry
  switch (kind) {
    case "turn_start":
      entry = trusted(TurnStart, { timestamp: ts, type: "turn_start", metadata })
      break
    case "chat_request": {
      const content = requireString(raw, "content", kind)
      used.add("content")
      const props: {
        timestamp: Timestamp.Timestamp
        type: "chat_request"
        content: string
        metadata: JsonObject
        schema?: JsonObject
        author?: string
      } = {
        timestamp: ts,
        type: "chat_request",
        content,
        metadata
      }
      const schema = raw["schema"]
      if (isObject(schema)) {
        props.schema = schema
        used.add("schema")
      } else if (schema !== undefined && schema !== null) {
        throw new EntryError(kind, `field "schema" must be an object, got ${describe(schema)}`)
      }
      const author = raw["author"]
      if (typeof author === "string") {
        props.author = author
        used.add("author")
      } else if (author !== undefined && author !== null) {
        throw new EntryError(kind, `field "author" must be a string, got ${describe(author)}`)
      }
      entry = trusted(ChatRequest, props)
      break
    }
    case "chat_response": {
      // Untagged: message, then reasoning, then data (JP's variant order).
      if (typeof raw["message"] === "string") {
        used.add("message")
        entry = trusted(ChatResponse, { timestamp: ts, type: "chat_response", message: raw["message"], metadata })
      } else if (typeof raw["reasoning"] === "string") {
        used.add("reasoning")
        entry = trusted(ChatResponse, { timestamp: ts, type: "chat_response", reasoning: raw["reasoning"], metadata })
      } else if ("data" in raw) {
        used.add("data")
        entry = trusted(ChatResponse, { timestamp: ts, type: "chat_response", data: raw["data"]!, metadata })
      } else {
        throw new EntryError(kind, `needs one of "message" (string), "reasoning" (string) or "data"`)
      }
      break
    }
    case "tool_call_request": {
      const id = requireString(raw, "id", kind)
      const name = requireString(raw, "name", kind)
      used.add("id").add("name").add("arguments")
      const rawArgs = raw["arguments"]
      let args: JsonObject = {}
      if (rawArgs !== undefined) {
        if (!isObject(rawArgs))
          throw new EntryError(kind, `field "arguments" must be an object, got ${describe(rawArgs)}`)
        args = decodeLeaves(rawArgs, "arguments", undecoded) as JsonObject
      }
      entry = trusted(ToolCallRequest, {
        timestamp: ts,
        type: "tool_call_request",
        id,
        name,
        arguments: args,
        metadata
      })
      break
    }
    case "tool_call_response": {
      const id = requireString(raw, "id", kind)
      const rawContent = requireString(raw, "content", kind)
      const isError = raw["is_error"]
      if (typeof isError !== "boolean") {
        throw new EntryError(
          kind,
          isError === undefined
            ? `missing field "is_error"`
            : `field "is_error" must be a boolean, got ${describe(isError)}`
        )
      }
      used.add("id").add("content").add("is_error")
      const content = StorageBase64.decode(rawContent)
      if (content === undefined) undecoded.push("content")
      entry = trusted(ToolCallResponse, {
        timestamp: ts,
        type: "tool_call_response",
        id,
        content: content ?? rawContent,
        is_error: isError,
        metadata
      })
      break
    }
    case "inquiry_request": {
      const id = requireString(raw, "id", kind)
      if (raw["source"] === undefined) throw new EntryError(kind, `missing field "source"`)
      if (raw["question"] === undefined) throw new EntryError(kind, `missing field "question"`)
      const source = decodeSource(raw["source"])
      if (Exit.isFailure(source)) throw new EntryError(kind, `field "source": ${issueText(source)}`)
      const question = decodeQuestion(raw["question"])
      if (Exit.isFailure(question)) throw new EntryError(kind, `field "question": ${issueText(question)}`)
      used.add("id").add("source").add("question")
      entry = trusted(InquiryRequest, {
        timestamp: ts,
        type: "inquiry_request",
        id: id as InquiryRequest["id"],
        source: source.value,
        question: question.value,
        metadata
      })
      break
    }
    case "inquiry_response": {
      const id = requireString(raw, "id", kind) as InquiryRequest["id"]
      used.add("id").add("outcome")
      const outcome = raw["outcome"]
      if (outcome === undefined || outcome === "answered") {
        // No outcome: the legacy flat form, which always carried an answer.
        if (!("answer" in raw)) {
          throw new EntryError(
            kind,
            outcome === undefined ? `has neither "outcome" nor "answer"` : `outcome "answered" needs an "answer"`
          )
        }
        used.add("answer")
        entry = trusted(InquiryAnswered, {
          timestamp: ts,
          type: "inquiry_response",
          outcome: "answered",
          id,
          answer: raw["answer"]!,
          metadata
        })
      } else if (outcome === "cancelled") {
        const reason = raw["reason"]
        if (reason !== undefined && typeof reason !== "string") {
          throw new EntryError(kind, `field "reason" must be a string, got ${describe(reason)}`)
        }
        used.add("reason")
        // RFD 082: a missing reason reads as `user` (JP's branch code says "unspecified").
        entry = trusted(InquiryCancelled, {
          timestamp: ts,
          type: "inquiry_response",
          outcome: "cancelled",
          id,
          reason: reason ?? "user",
          metadata
        })
      } else if (outcome === "redacted") {
        entry = trusted(InquiryRedacted, { timestamp: ts, type: "inquiry_response", outcome: "redacted", id, metadata })
      } else {
        throw new EntryError(
          kind,
          `unknown outcome ${describe(outcome)} (expected "answered", "cancelled" or "redacted")`
        )
      }
      break
    }
    default:
      throw new EntryError(kind, `unknown event kind`)
  }

  // Remember any difference from the canonical writer layout.
  for (const k of Object.keys(raw)) if (!used.has(k)) setKey(extra, k, raw[k]!)
  const keys = Object.keys(raw)
  const canonical = canonicalKeys(entry)
  let sameKeys = keys.length === canonical.length
  if (sameKeys)
    for (let i = 0; i < keys.length; i++)
      if (keys[i] !== canonical[i]) {
        sameKeys = false
        break
      }
  if (!sameKeys || undecoded.length > 0) {
    const layout: { keys?: ReadonlyArray<string>; extra?: JsonObject; undecoded?: ReadonlySet<string> } = {}
    if (!sameKeys) layout.keys = keys
    if (Object.keys(extra).length > 0) layout.extra = extra
    if (undecoded.length > 0) layout.undecoded = new Set(undecoded)
    layouts.set(entry, layout)
  }
  return entry
}

/** The key order JP's writer uses for this event. */
const canonicalKeys = (e: StreamEntry): ReadonlyArray<string> => {
  const base = CANONICAL_KEYS[e.type] ?? []
  const out = [...base]
  switch (e.type) {
    case "chat_request":
      if (e.schema !== undefined) out.push("schema")
      if (e.author !== undefined) out.push("author")
      break
    case "chat_response":
      out.push(e.message !== undefined ? "message" : e.reasoning !== undefined ? "reasoning" : "data")
      break
    case "inquiry_response":
      if (e.outcome === "answered") out.push("answer")
      else if (e.outcome === "cancelled") out.push("reason")
      break
  }
  if ("metadata" in e && Object.keys(e.metadata).length > 0) out.push("metadata")
  return out
}

/**
 * Encodes an entry to its on-disk JSON object (storage base64 applied).
 */
export const encodeEntry = (e: StreamEntry): JsonObject => {
  if (e.type === "config_delta" || e.type === "compaction" || e.type === "unknown") {
    const id = eventIds.get(e)
    // Read from disk, the id is in the raw object already, where it stood.
    return id === undefined || Object.hasOwn(e.raw, "event_id") ? (e.raw as JsonObject) : { event_id: id, ...e.raw }
  }
  const layout = layouts.get(e)
  const undecoded = layout?.undecoded
  const values: JsonObject = { timestamp: e.timestamp, type: e.type }
  switch (e.type) {
    case "chat_request":
      values["content"] = e.content
      if (e.schema !== undefined) values["schema"] = e.schema
      if (e.author !== undefined) values["author"] = e.author
      break
    case "chat_response":
      if (e.message !== undefined) values["message"] = e.message
      else if (e.reasoning !== undefined) values["reasoning"] = e.reasoning
      else values["data"] = e.data ?? null
      break
    case "tool_call_request":
      values["id"] = e.id
      values["name"] = e.name
      values["arguments"] = encodeLeaves(e.arguments, "arguments", undecoded)
      break
    case "tool_call_response":
      values["id"] = e.id
      values["content"] = undecoded?.has("content") ? e.content : StorageBase64.encode(e.content)
      values["is_error"] = e.is_error
      break
    case "inquiry_request":
      values["id"] = e.id
      values["source"] = e.source as Json
      values["question"] = e.question as Json
      break
    case "inquiry_response":
      values["outcome"] = e.outcome
      values["id"] = e.id
      if (e.outcome === "answered") values["answer"] = e.answer
      else if (e.outcome === "cancelled") values["reason"] = e.reason
      break
  }
  const hasMetadata = Object.keys(e.metadata).length > 0
  if (hasMetadata || layout?.keys?.includes("metadata")) {
    values["metadata"] = encodeLeaves(e.metadata, "metadata", undecoded)
  }
  if (layout?.keys === undefined) {
    // A new entry with an id: first, as JP's writer puts it.
    const id = eventIds.get(e)
    return id === undefined ? values : { event_id: id, ...values }
  }
  // Original layout: its keys in its order (a defaulted key such as a legacy
  // response's `outcome` was not there and is not written).
  const out: JsonObject = {}
  for (const k of layout.keys) {
    if (Object.hasOwn(values, k)) setKey(out, k, values[k]!)
    else if (layout.extra !== undefined && Object.hasOwn(layout.extra, k)) setKey(out, k, layout.extra[k]!)
  }
  return out
}

/**
 * The entry as plain JSON without storage base64 (on-disk field names and
 * shapes): what `conversation print --format json` shows.
 */
export const toPlainJson = (e: StreamEntry): JsonObject => {
  const encoded = encodeEntry(e)
  if (e.type === "config_delta" || e.type === "compaction" || e.type === "unknown") return encoded
  const out: JsonObject = {}
  for (const k of Object.keys(encoded)) {
    if (k === "arguments" && e.type === "tool_call_request") out[k] = e.arguments
    else if (k === "content" && e.type === "tool_call_response") out[k] = e.content
    else if (k === "metadata") out[k] = e.metadata
    else setKey(out, k, encoded[k]!)
  }
  return out
}

/**
 * The codec as a Schema transformation: raw JSON entry ↔ {@link StreamEntry}.
 * Library users can compose it (`Schema.Array(StoredEntry)`); the events-file
 * reader calls the same functions directly to name the failing entry.
 */
export const StoredEntry = Schema.Unknown.pipe(
  Schema.decodeTo(Schema.toType(StreamEntrySchema), {
    decode: SchemaGetter.transformEffect((raw: unknown, options) => {
      try {
        return Effect.succeed(decodeEntry(raw))
      } catch (error) {
        const message = error instanceof EntryError ? `${error.kind ?? "entry"}: ${error.message}` : String(error)
        return Effect.fail(new SchemaIssue.InvalidValue({ message }, raw, options) as SchemaIssue.Issue)
      }
    }),
    encode: SchemaGetter.transform((e: StreamEntry) => encodeEntry(e) as unknown)
  })
)
