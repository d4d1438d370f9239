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
 * Decoding returns a result: the entry, or an {@link EntryError} (the kind,
 * the field, the reason); one decoder per kind, in a table. Nothing is
 * thrown for a malformed entry.
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
 * import * as Result from "effect/Result"
 * const e = EntryCodec.decode({ timestamp: "2026-01-01 00:00:00.0", type: "tool_call_response", id: "c", content: "b2s=", is_error: false })
 * if (Result.isSuccess(e)) EntryCodec.encodeEntry(e.success) // { timestamp: …, type: "tool_call_response", id: "c", content: "b2s=", is_error: false }
 * const bad = EntryCodec.decode({ type: "turn_start" })
 * if (Result.isFailure(bad)) bad.failure // EntryError { kind: "turn_start", field: "timestamp", reason: 'missing field "timestamp"' }
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
import * as InquiryId from "../event/InquiryId.ts"
import { InquiryRequest } from "../event/InquiryRequest.ts"
import { InquiryAnswered, InquiryCancelled, InquiryRedacted } from "../event/InquiryResponse.ts"
import { InquiryQuestion } from "../event/InquiryQuestion.ts"
import { InquirySource } from "../event/InquirySource.ts"
import * as StorageBase64 from "./StorageBase64.ts"
import type * as Timestamp from "../event/Timestamp.ts"
import * as TimestampText from "../event/TimestampText.ts"
import { ToolCallRequest } from "../event/ToolCallRequest.ts"
import { ToolCallResponse } from "../event/ToolCallResponse.ts"
import { trusted } from "../event/Trusted.ts"
import { TurnStart } from "../event/TurnStart.ts"

type Json = Schema.Json
type JsonObject = { [key: string]: Json }

/**
 * Why one entry could not be decoded: its kind (its `type`, when it had a
 * string one), the field at fault when there is one, and the reason. Pure
 * data, returned in a result by {@link decode}: the caller, which knows the
 * file and the entry's index, names them (`EventsFile.EventsFileError`).
 */
export class EntryError extends Schema.TaggedError<EntryError>()("EntryError", {
  kind: Schema.UndefinedOr(Schema.String),
  field: Schema.optionalKey(Schema.String),
  reason: Schema.String
}) {
  /** The reason alone, as it always read; {@link errorText} puts the kind before it. */
  override get message(): string {
    return this.reason
  }
}

/** How a reader names a failed entry: `kind: reason`, or the reason alone when the entry had no kind. */
export const errorText = (error: EntryError): string =>
  error.kind === undefined ? error.reason : `${error.kind}: ${error.reason}`

const entryError = (kind: string | undefined, reason: string, field?: string): EntryError =>
  new EntryError(field === undefined ? { kind, reason } : { kind, field, reason })

const failWith = (kind: string | undefined, reason: string, field?: string): Result.Result<never, EntryError> =>
  Result.fail(entryError(kind, reason, field))

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
 *
 * Kept on the entry under a private symbol, not enumerable: JSON, spreads,
 * `Object.keys` and a test's `toEqual` do not see it, and a rebuilt entry
 * (`new X({ ...old })`) does not inherit it. A `WeakMap` did the same, but
 * setting one for each new entry (five per tool call) was a twentieth of the
 * coordinator's time, and its entries are work for every collection.
 */
const EVENT_ID: unique symbol = Symbol("parley/event_id")

/** An entry as it carries its id. */
type Carrying = { [EVENT_ID]?: string }

/**
 * Writable, though nothing writes it again (the symbol is this module's, and
 * {@link withEventId} keeps an id given): V8 defines a read-only,
 * non-configurable property on an entry about ten times slower than a
 * writable one (microseconds each), and every new entry and every entry read
 * from disk is given its id here.
 */
const setEventId = (e: object, id: string): void => {
  Object.defineProperty(e, EVENT_ID, { value: id, enumerable: false, writable: true, configurable: false })
}

/** The entry's `event_id` (`undefined`: none, or a legacy `null`/empty one). */
export const eventIdOf = (e: StreamEntry): string | undefined =>
  // Cast: the id is a property no entry type declares (it is not one of the event's fields).
  (e as Carrying)[EVENT_ID]

/**
 * Gives `e` the id `id` (JP RFD 097): an entry parley made, or rebuilt from
 * one that had it. An id it already has is kept. Returns `e`.
 */
export const withEventId = <E extends StreamEntry>(e: E, id: string): E => {
  if (eventIdOf(e) === undefined) setEventId(e, id)
  return e
}

const NO_ID: Result.Result<string | undefined, EntryError> = Result.succeed(undefined)

/**
 * Reads `event_id` as JP's storage boundary does (`stream/entry.rs`): missing,
 * `null` or empty is a legacy entry without one; any other non-string is a
 * corrupt entry.
 */
const readEventId = (raw: JsonObject, kind: string): Result.Result<string | undefined, EntryError> => {
  const id = raw["event_id"]
  if (id === undefined || id === null || id === "") return NO_ID
  if (typeof id !== "string")
    return failWith(kind, `field "event_id" must be a string, got ${describe(id)}`, "event_id")
  return Result.succeed(id)
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

/**
 * How deep {@link mapLeaves} recurses before it hands a value to the
 * iterative {@link mapStrings}: every stored entry is far shallower, and the
 * recursion allocates nothing per value but the copy, where the iterative
 * walk allocates a task and a closure for each (a large conversation has
 * millions of values).
 */
const RECURSIVE_DEPTH = 64

/** {@link mapStrings}, recursive while shallow (the same result, keys in order). */
const mapLeaves = (value: Json, path: string, leaf: (s: string, path: string) => Json, depth: number): Json => {
  if (typeof value === "string") return leaf(value, path)
  if (typeof value !== "object" || value === null) return value
  if (depth > RECURSIVE_DEPTH) return mapStrings(value, path, leaf)
  if (!isObject(value)) {
    const out: Array<Json> = new Array(value.length)
    for (let i = 0; i < value.length; i++) out[i] = mapLeaves(value[i]!, path + SEP + i, leaf, depth + 1)
    return out
  }
  const out: JsonObject = {}
  for (const k of Object.keys(value)) setKey(out, k, mapLeaves(value[k]!, path + SEP + k, leaf, depth + 1))
  return out
}

/** Base64-decodes string leaves, recording the paths that stay raw. */
const decodeLeaves = (value: Json, path: string, undecoded: Array<string>): Json =>
  mapLeaves(
    value,
    path,
    (s, at) => {
      const d = StorageBase64.decode(s)
      if (d !== undefined) return d
      undecoded.push(at)
      return s
    },
    0
  )

const encodeLeaves = (value: Json, path: string, undecoded: ReadonlySet<string> | undefined): Json =>
  mapLeaves(value, path, (s, at) => (undecoded?.has(at) ? s : StorageBase64.encode(s)), 0)

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

/** `value` when it is an object (what mapping the leaves of an object gives back), else an empty one. */
const asObject = (value: Json): JsonObject => (isObject(value) ? value : {})

/** Whether `text` is a JP timestamp (JP reads only those). */
const isTimestamp = (text: string): text is Timestamp.Timestamp => TimestampText.isReadable(text)

/** The string field `key` of a `kind` entry, or why it is not one. */
const stringField = (raw: JsonObject, key: string, kind: string): string | EntryError => {
  const v = raw[key]
  if (typeof v === "string") return v
  return entryError(
    kind,
    v === undefined ? `missing field "${key}"` : `field "${key}" must be a string, got ${describe(v)}`,
    key
  )
}

/** What every event kind holds, read before the kind's own fields. */
interface Head {
  readonly kind: string
  readonly timestamp: Timestamp.Timestamp
  readonly metadata: JsonObject
  /** Paths of string leaves that were not storage base64 (written back raw). */
  readonly undecoded: Array<string>
  /** The keys the typed event holds; the others are kept as the layout's extra. */
  readonly used: Set<string>
}

const readHead = (raw: JsonObject, kind: string): Result.Result<Head, EntryError> => {
  const timestamp = stringField(raw, "timestamp", kind)
  if (typeof timestamp !== "string") return Result.fail(timestamp)
  if (!isTimestamp(timestamp))
    return failWith(kind, `field "timestamp" is not a timestamp: ${JSON.stringify(timestamp)}`, "timestamp")
  const undecoded: Array<string> = []
  const rawMetadata = raw["metadata"]
  if (rawMetadata !== undefined && !isObject(rawMetadata))
    return failWith(kind, `field "metadata" must be an object, got ${describe(rawMetadata)}`, "metadata")
  const metadata = rawMetadata === undefined ? {} : asObject(decodeLeaves(rawMetadata, "metadata", undecoded))
  return Result.succeed({ kind, timestamp, metadata, undecoded, used: new Set(["timestamp", "type", "metadata"]) })
}

/** Decodes one event kind's own fields, its head already read (marking the keys it uses). */
type FieldsDecoder = (raw: JsonObject, head: Head) => Result.Result<StreamEntry, EntryError>

const turnStart: FieldsDecoder = (_raw, h) =>
  Result.succeed(trusted(TurnStart, { timestamp: h.timestamp, type: "turn_start", metadata: h.metadata }))

const chatRequest: FieldsDecoder = (raw, h) => {
  const content = stringField(raw, "content", h.kind)
  if (typeof content !== "string") return Result.fail(content)
  h.used.add("content")
  const props: {
    timestamp: Timestamp.Timestamp
    type: "chat_request"
    content: string
    metadata: JsonObject
    schema?: JsonObject
    author?: string
  } = { timestamp: h.timestamp, type: "chat_request", content, metadata: h.metadata }
  const schema = raw["schema"]
  if (isObject(schema)) {
    props.schema = schema
    h.used.add("schema")
  } else if (schema !== undefined && schema !== null)
    return failWith(h.kind, `field "schema" must be an object, got ${describe(schema)}`, "schema")
  const author = raw["author"]
  if (typeof author === "string") {
    props.author = author
    h.used.add("author")
  } else if (author !== undefined && author !== null)
    return failWith(h.kind, `field "author" must be a string, got ${describe(author)}`, "author")
  return Result.succeed(trusted(ChatRequest, props))
}

/** Untagged: message, then reasoning, then data (JP's variant order). */
const chatResponse: FieldsDecoder = (raw, h) => {
  const { timestamp, metadata } = h
  const message = raw["message"]
  const reasoning = raw["reasoning"]
  let entry: ChatResponse
  if (typeof message === "string") {
    h.used.add("message")
    entry = trusted(ChatResponse, { timestamp, type: "chat_response", message, metadata })
  } else if (typeof reasoning === "string") {
    h.used.add("reasoning")
    entry = trusted(ChatResponse, { timestamp, type: "chat_response", reasoning, metadata })
  } else if ("data" in raw) {
    h.used.add("data")
    entry = trusted(ChatResponse, { timestamp, type: "chat_response", data: raw["data"]!, metadata })
  } else return failWith(h.kind, `needs one of "message" (string), "reasoning" (string) or "data"`)
  return Result.succeed(entry)
}

const toolCallRequest: FieldsDecoder = (raw, h) => {
  const id = stringField(raw, "id", h.kind)
  if (typeof id !== "string") return Result.fail(id)
  const name = stringField(raw, "name", h.kind)
  if (typeof name !== "string") return Result.fail(name)
  h.used.add("id").add("name").add("arguments")
  const rawArgs = raw["arguments"]
  if (rawArgs !== undefined && !isObject(rawArgs))
    return failWith(h.kind, `field "arguments" must be an object, got ${describe(rawArgs)}`, "arguments")
  // A missing `arguments` is `{}` (a legacy entry).
  const args = rawArgs === undefined ? {} : asObject(decodeLeaves(rawArgs, "arguments", h.undecoded))
  return Result.succeed(
    trusted(ToolCallRequest, {
      timestamp: h.timestamp,
      type: "tool_call_request",
      id,
      name,
      arguments: args,
      metadata: h.metadata
    })
  )
}

const toolCallResponse: FieldsDecoder = (raw, h) => {
  const id = stringField(raw, "id", h.kind)
  if (typeof id !== "string") return Result.fail(id)
  const rawContent = stringField(raw, "content", h.kind)
  if (typeof rawContent !== "string") return Result.fail(rawContent)
  const isError = raw["is_error"]
  if (typeof isError !== "boolean") {
    const reason =
      isError === undefined
        ? `missing field "is_error"`
        : `field "is_error" must be a boolean, got ${describe(isError)}`
    return failWith(h.kind, reason, "is_error")
  }
  h.used.add("id").add("content").add("is_error")
  const content = StorageBase64.decode(rawContent)
  if (content === undefined) h.undecoded.push("content")
  return Result.succeed(
    trusted(ToolCallResponse, {
      timestamp: h.timestamp,
      type: "tool_call_response",
      id,
      content: content ?? rawContent,
      is_error: isError,
      metadata: h.metadata
    })
  )
}

const inquiryRequest: FieldsDecoder = (raw, h) => {
  const id = stringField(raw, "id", h.kind)
  if (typeof id !== "string") return Result.fail(id)
  if (raw["source"] === undefined) return failWith(h.kind, `missing field "source"`, "source")
  if (raw["question"] === undefined) return failWith(h.kind, `missing field "question"`, "question")
  const source = decodeSource(raw["source"])
  if (Exit.isFailure(source)) return failWith(h.kind, `field "source": ${issueText(source)}`, "source")
  const question = decodeQuestion(raw["question"])
  if (Exit.isFailure(question)) return failWith(h.kind, `field "question": ${issueText(question)}`, "question")
  h.used.add("id").add("source").add("question")
  return Result.succeed(
    trusted(InquiryRequest, {
      timestamp: h.timestamp,
      type: "inquiry_request",
      id: InquiryId.make(id),
      source: source.value,
      question: question.value,
      metadata: h.metadata
    })
  )
}

/** `answered`, or no outcome at all: the legacy flat form, which always carried an answer. */
const answered = (raw: JsonObject, h: Head, id: InquiryId.InquiryId, legacy: boolean) => {
  if (!("answer" in raw)) {
    const reason = legacy ? `has neither "outcome" nor "answer"` : `outcome "answered" needs an "answer"`
    return failWith(h.kind, reason, "answer")
  }
  h.used.add("answer")
  const { timestamp, metadata } = h
  return Result.succeed(
    trusted(InquiryAnswered, {
      timestamp,
      type: "inquiry_response",
      outcome: "answered",
      id,
      answer: raw["answer"]!,
      metadata
    })
  )
}

const cancelled = (raw: JsonObject, h: Head, id: InquiryId.InquiryId) => {
  const reason = raw["reason"]
  if (reason !== undefined && typeof reason !== "string")
    return failWith(h.kind, `field "reason" must be a string, got ${describe(reason)}`, "reason")
  h.used.add("reason")
  const { timestamp, metadata } = h
  // RFD 082: a missing reason reads as `user` (JP's branch code says "unspecified").
  return Result.succeed(
    trusted(InquiryCancelled, {
      timestamp,
      type: "inquiry_response",
      outcome: "cancelled",
      id,
      reason: reason ?? "user",
      metadata
    })
  )
}

const inquiryResponse: FieldsDecoder = (raw, h) => {
  const text = stringField(raw, "id", h.kind)
  if (typeof text !== "string") return Result.fail(text)
  const id = InquiryId.make(text)
  h.used.add("id").add("outcome")
  const outcome = raw["outcome"]
  if (outcome === undefined || outcome === "answered") return answered(raw, h, id, outcome === undefined)
  if (outcome === "cancelled") return cancelled(raw, h, id)
  if (outcome === "redacted") {
    const { timestamp, metadata } = h
    return Result.succeed(
      trusted(InquiryRedacted, { timestamp, type: "inquiry_response", outcome: "redacted", id, metadata })
    )
  }
  const reason = `unknown outcome ${describe(outcome)} (expected "answered", "cancelled" or "redacted")`
  return failWith(h.kind, reason, "outcome")
}

/** Remembers how `raw` differs from the canonical writer layout of `entry`, so it is written back as it was. */
const rememberLayout = (raw: JsonObject, entry: StreamEntry, head: Head): void => {
  const keys = Object.keys(raw)
  const canonical = canonicalKeys(entry)
  let sameKeys = keys.length === canonical.length
  for (let i = 0; sameKeys && i < keys.length; i++) sameKeys = keys[i] === canonical[i]
  if (sameKeys && head.undecoded.length === 0) return
  const layout: { keys?: ReadonlyArray<string>; extra?: JsonObject; undecoded?: ReadonlySet<string> } = {}
  // With the canonical keys in order, every key is one the event holds: nothing extra.
  if (!sameKeys) {
    layout.keys = keys
    const extra: JsonObject = {}
    for (const k of keys) if (!head.used.has(k)) setKey(extra, k, raw[k]!)
    if (Object.keys(extra).length > 0) layout.extra = extra
  }
  if (head.undecoded.length > 0) layout.undecoded = new Set(head.undecoded)
  layouts.set(entry, layout)
}

/** Decodes the entry `raw` of kind `type` (its `type` already read). */
type Decoder = (raw: JsonObject, type: string) => Result.Result<StreamEntry, EntryError>

/** An event kind: its head, its own fields, then the layout it was read in. */
const event =
  (fields: FieldsDecoder): Decoder =>
  (raw, kind) => {
    const head = readHead(raw, kind)
    if (Result.isFailure(head)) return Result.fail(head.failure)
    const decoded = fields(raw, head.success)
    if (Result.isSuccess(decoded)) rememberLayout(raw, decoded.success, head.success)
    return decoded
  }

/** A kind this build does not know: kept as the raw entry it is. */
const unknown: Decoder = (raw) => Result.succeed(trusted(UnknownEntry, { type: "unknown", raw }))

/** JP fails the whole load on a malformed compaction: so does parley. */
const compaction: Decoder = (raw) =>
  Result.mapError(Compaction.fromRaw(raw), (reason) => entryError("compaction", reason))

/** Kept as the raw entry it is (a global entry every pass leaves in place); JP fails the load on a malformed one. */
const overlay: Decoder = (raw, type) => {
  const rule = EventOverlay.parse(raw)
  return Result.isFailure(rule) ? failWith(EventOverlay.TYPE, rule.failure) : unknown(raw, type)
}

/** One decoder per kind JP writes; any other kind is kept raw ({@link unknown}). */
const DECODERS: ReadonlyMap<string, Decoder> = new Map<string, Decoder>([
  ["config_delta", (raw) => Result.succeed(trusted(ConfigDelta, { type: "config_delta", raw }))],
  ["compaction", compaction],
  [EventOverlay.TYPE, overlay],
  ["turn_start", event(turnStart)],
  ["chat_request", event(chatRequest)],
  ["chat_response", event(chatResponse)],
  ["tool_call_request", event(toolCallRequest)],
  ["tool_call_response", event(toolCallResponse)],
  ["inquiry_request", event(inquiryRequest)],
  ["inquiry_response", event(inquiryResponse)]
])

/**
 * Decodes one raw entry: the typed entry, or an {@link EntryError} naming
 * the kind, the field and why.
 */
export const decode = (raw: unknown): Result.Result<StreamEntry, EntryError> => {
  if (!isObject(raw)) return failWith(undefined, `expected an object, got ${describe(raw)}`)
  const type = raw["type"]
  if (type === undefined) return failWith(undefined, `missing field "type"`, "type")
  if (typeof type !== "string")
    return failWith(undefined, `field "type" must be a string, got ${describe(type)}`, "type")
  const id = readEventId(raw, type)
  if (Result.isFailure(id)) return Result.fail(id.failure)
  const decoded = (DECODERS.get(type) ?? unknown)(raw, type)
  if (id.success !== undefined && Result.isSuccess(decoded)) setEventId(decoded.success, id.success)
  return decoded
}

/**
 * {@link decode} for a caller that holds an entry it knows is well formed
 * (a test's fixture, the library's older callers): the entry, or the
 * {@link EntryError} thrown. Readers of stored data use {@link decode}.
 */
export const decodeEntry = (raw: unknown): StreamEntry => Result.getOrThrow(decode(raw))

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
    const id = eventIdOf(e)
    // Read from disk, the id is in the raw object already, where it stood.
    return id === undefined || Object.hasOwn(e.raw, "event_id") ? e.raw : { event_id: id, ...e.raw }
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
      values["source"] = e.source
      values["question"] = e.question
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
    const id = eventIdOf(e)
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
      const decoded = decode(raw)
      if (Result.isSuccess(decoded)) return Effect.succeed(decoded.success)
      const { kind, reason } = decoded.failure
      const issue: SchemaIssue.Issue = new SchemaIssue.InvalidValue(
        { message: `${kind ?? "entry"}: ${reason}` },
        raw,
        options
      )
      return Effect.fail(issue)
    }),
    encode: SchemaGetter.transform((e: StreamEntry): unknown => encodeEntry(e))
  })
)
