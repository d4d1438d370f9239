/**
 * `events.json`: a pretty-printed (2-space, trailing newline, raw UTF-8) JSON
 * array of entries — exactly what serde_json's pretty writer produces, which
 * `JSON.stringify(v, null, 2)` reproduces byte for byte.
 *
 * @example
 * ```ts
 * import * as EventsFile from "parley/domain/storage/EventsFile"
 * import * as Result from "effect/Result"
 * const entries = EventsFile.read("[]\n", "events.json") // Result.succeed([])
 * if (Result.isSuccess(entries)) EventsFile.render(entries.success) // "[]\n"
 * EventsFile.read("{}", "events.json") // a failure: EventsFileError, "events.json: expected a JSON array of entries, got object"
 * ```
 *
 * @since 0.1.0
 */
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { StreamEntry } from "../event/ConversationEvent.ts"
import type { MetadataError } from "./ConversationMetadata.ts"
import * as EntryCodec from "./EntryCodec.ts"
import * as JsonText from "./JsonText.ts"

/** A decode failure, naming the file and (when it is about one entry) its index. */
export class EventsFileError extends Schema.TaggedError<EventsFileError>()("EventsFileError", {
  file: Schema.String,
  entry: Schema.optionalKey(Schema.Number),
  reason: Schema.String
}) {
  override get message(): string {
    return this.entry === undefined
      ? `${this.file}: ${this.reason}`
      : `${this.file}: entry ${this.entry}: ${this.reason}`
  }
}

const failure = (file: string, reason: string, entry?: number): Result.Result<never, EventsFileError> =>
  Result.fail(new EventsFileError(entry === undefined ? { file, reason } : { file, entry, reason }))

/** What the decoders of a stored conversation's files fail with. */
export type DecodeError = EventsFileError | EntryCodec.EntryError | MetadataError

/**
 * The one translation of a decoder's failure into what a reader reports: the
 * file (the error's own, else `file`, where it was read from), the entry when
 * it is about one, and the reason. An entry read on its own (a journal line)
 * is named by its reason alone, as it always was.
 */
export const located = (file: string, error: DecodeError): EventsFileError => {
  switch (error._tag) {
    case "EventsFileError":
      return error
    case "EntryError":
    case "MetadataError":
      return new EventsFileError({ file, reason: error.reason })
  }
}

/** Describes a JSON.parse failure with a line and column. */
export const jsonErrorAt = (text: string, error: unknown): string => {
  const message = error instanceof Error ? error.message : String(error)
  const m = /position (\d+)/.exec(message)
  if (m === null) return `invalid JSON (${message})`
  const pos = Number(m[1])
  const before = text.slice(0, pos)
  const line = before.split("\n").length
  const column = pos - before.lastIndexOf("\n")
  return `invalid JSON at line ${line}, column ${column} (${message.replace(/ in JSON at position \d+.*$/, "")})`
}

/** Parses JSON text, failing with the file name and a line/column. */
export const parseJson = (text: string, file: string): Result.Result<unknown, EventsFileError> => {
  try {
    return Result.succeed(JsonText.parse(text))
  } catch (error) {
    return failure(file, jsonErrorAt(text, error))
  }
}

/** Decodes one parsed element, naming its index on failure. */
const decodeAt = (raw: unknown, index: number, file: string): Result.Result<StreamEntry, EventsFileError> => {
  const decoded = EntryCodec.decode(raw)
  return Result.isSuccess(decoded)
    ? Result.succeed(decoded.success)
    : failure(file, EntryCodec.errorText(decoded.failure), index)
}

/** Decodes the entries of an already parsed events array. */
export const decodeEntries = (value: unknown, file: string): Result.Result<Array<StreamEntry>, EventsFileError> => {
  if (!Array.isArray(value))
    return failure(file, `expected a JSON array of entries, got ${value === null ? "null" : typeof value}`)
  const out = new Array<StreamEntry>(value.length)
  for (let i = 0; i < value.length; i++) {
    const entry = decodeAt(value[i], i, file)
    if (Result.isFailure(entry)) return Result.fail(entry.failure)
    out[i] = entry.success
  }
  return Result.succeed(out)
}

// --- Number lexemes JS cannot reproduce --------------------------------------
//
// JSON.parse + JSON.stringify reproduces serde_json's pretty output exactly,
// except for some numbers: `1.0` comes back as `1`, `1e16` as
// `10000000000000000`, integers beyond 2^53 and long fractions lose digits.
// So an entry read from disk whose text holds such a number is written back
// from its original bytes while it is unchanged (the same object). Only those
// entries keep their text: an entry holding no number at all (most of them)
// is never scanned, and the file's text is not kept alive.

/** The original text of the unchanged entries that must be written back verbatim. */
const verbatimText = new WeakMap<StreamEntry, string>()

/**
 * Entries nested deeper than this are written back from their original
 * bytes while unchanged (docs/decisions.md#json-depth): their indented text grows with the
 * square of the depth, and a file read as it is can be written as it was.
 */
export const VERBATIM_DEPTH = 256

/** Whether a parsed JSON value holds a number anywhere, and how deep it nests (iterative: any depth JSON.parse accepts). */
const shapeOf = (value: unknown): { number: boolean; depth: number } => {
  let number = false
  let depth = 0
  // Containers only, with their depth (two stacks: no pair allocated per value).
  const stack: Array<object> = []
  const depths: Array<number> = []
  const visit = (v: unknown, d: number) => {
    if (typeof v === "number") number = true
    else if (typeof v === "object" && v !== null) {
      stack.push(v)
      depths.push(d)
    }
  }
  visit(value, 1)
  while (stack.length > 0) {
    const v = stack.pop()!
    const d = depths.pop()!
    if (d > depth) depth = d
    if (Array.isArray(v)) for (const x of v) visit(x, d + 1)
    else if (Predicate.isObject(v)) for (const key in v) visit(v[key], d + 1)
  }
  return { number, depth }
}

/** Whether JSON `text` holds a number token that `JSON.stringify` would print differently. */
export const hasForeignNumber = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 34) {
      // a string: skip to its closing quote
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i)
        if (d === 92) i++
        else if (d === 34) break
      }
    } else if (c === 45 || (c >= 48 && c <= 57)) {
      // `-` or a digit starts a number token
      let j = i + 1
      for (; j < text.length; j++) {
        const d = text.charCodeAt(j)
        if (!((d >= 48 && d <= 57) || d === 46 || d === 101 || d === 69 || d === 43 || d === 45)) break
      }
      const lexeme = text.slice(i, j)
      if (JSON.stringify(Number(lexeme)) !== lexeme) return true
      i = j - 1
    }
  }
  return false
}

/**
 * A copy of `s` that does not keep a larger string it was sliced from alive
 * (V8 slices share their parent). A JSON round trip is exact for any string.
 */
const detached = (s: string): string => JSON.parse(JSON.stringify(s)) as string

/** Remembers the text of `entry` when it must be written back verbatim: a number JS would print otherwise, or a very deep value. */
const keepIfForeign = (entry: StreamEntry, raw: unknown, text: () => string): void => {
  const shape = shapeOf(raw)
  if (!shape.number && shape.depth <= VERBATIM_DEPTH) return
  const t = text()
  if (shape.depth > VERBATIM_DEPTH || hasForeignNumber(t)) verbatimText.set(entry, detached(t))
}

/**
 * Start and end offsets of every element of the top-level array. Only used
 * on files that decoded, so every element is an object.
 */
const elementBounds = (text: string): Array<readonly [number, number]> => {
  const out: Array<readonly [number, number]> = []
  let depth = 0
  let start = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92)
        i++ // a backslash escapes the next char
      else if (c === 34) inString = false
    } else if (c === 34) {
      inString = true
    } else if (c === 123 || c === 91) {
      if (depth === 1) start = i
      depth++
    } else if (c === 125 || c === 93) {
      depth--
      if (depth === 1) out.push([start, i + 1])
    }
  }
  return out
}

// --- Reading -----------------------------------------------------------------
//
// JP writes `[\n  {…},\n  {…}\n]\n`: inside an element every line is indented
// by at least four spaces and a string never holds a raw newline, so
// `,\n  {` only ever separates two elements. Such a file is parsed one
// element at a time: no string of the whole file (twice its size in memory
// when it holds any non-Latin-1 character) and no parsed tree of the whole
// file are ever alive, only the bytes and the decoded entries. If every piece
// is a JSON value the whole is the array of those values, so the result is
// what JSON.parse of the whole would give; anything else (another layout, a
// syntax error) takes the whole-file path, which also names the error's line.

/** What is being parsed: the file's text, or its bytes as read from disk. */
type Source = string | Buffer

const OPEN = "[\n  {"
const SEPARATOR = ",\n  {"
const CLOSE = "}\n]\n"

const sliceOf = (source: Source, start: number, end: number): string =>
  typeof source === "string" ? source.slice(start, end) : source.toString("utf8", start, end)

/** Whether `source` holds the ASCII string `s` at `at`. */
const holdsAt = (source: Source, s: string, at: number): boolean => {
  if (at < 0 || at + s.length > source.length) return false
  if (typeof source === "string") return source.startsWith(s, at)
  for (let i = 0; i < s.length; i++) if (source[at + i] !== s.charCodeAt(i)) return false
  return true
}

/** `[start, end)` of every element of a file in JP's layout, or `undefined` for another layout. */
const prettyBounds = (source: Source): Array<number> | undefined => {
  if (source.length === 3 && holdsAt(source, "[]\n", 0)) return []
  if (!holdsAt(source, OPEN, 0) || !holdsAt(source, CLOSE, source.length - CLOSE.length)) return undefined
  const bounds: Array<number> = []
  let start = OPEN.length - 1
  for (;;) {
    const separator = source.indexOf(SEPARATOR, start)
    if (separator < 0) break
    bounds.push(start, separator)
    start = separator + SEPARATOR.length - 1
  }
  bounds.push(start, source.length - CLOSE.length + 1)
  return bounds
}

/**
 * The `index`-th element of a file in JP's layout, from its text inside the
 * array (from its `{` to its `}`, without the two-space indent), parsed and
 * decoded as reading the whole file would: `undefined` when the text is not
 * JSON, else the entry or the {@link EventsFileError} naming it. A store
 * that keeps each entry's text apart (the PostgreSQL store) decodes one at a
 * time with it, never holding the whole file.
 */
export const parseElement = (
  text: string,
  index: number,
  file: string
): Result.Result<StreamEntry, EventsFileError> | undefined => {
  let raw: unknown
  try {
    raw = JsonText.parse(text)
  } catch {
    return undefined
  }
  const entry = decodeAt(raw, index, file)
  if (Result.isSuccess(entry)) keepIfForeign(entry.success, raw, () => text)
  return entry
}

/** Whether every piece from the `from`-th on is JSON. */
const piecesParse = (source: Source, bounds: ReadonlyArray<number>, from: number): boolean => {
  for (let j = from; j < bounds.length / 2; j++) {
    try {
      JsonText.parse(sliceOf(source, bounds[2 * j]!, bounds[2 * j + 1]!))
    } catch {
      return false
    }
  }
  return true
}

/** Element by element; `undefined` when some piece is not JSON (the whole-file path decides). */
const parsePieces = (
  source: Source,
  bounds: ReadonlyArray<number>,
  file: string
): Result.Result<Array<StreamEntry>, EventsFileError> | undefined => {
  const out = new Array<StreamEntry>(bounds.length / 2)
  for (let i = 0; i < out.length; i++) {
    const entry = parseElement(sliceOf(source, bounds[2 * i]!, bounds[2 * i + 1]!), i, file)
    if (entry === undefined) return undefined
    // A syntax error later in the file is reported first, as the whole-file parse would.
    if (Result.isFailure(entry)) return piecesParse(source, bounds, i + 1) ? Result.fail(entry.failure) : undefined
    out[i] = entry.success
  }
  return Result.succeed(out)
}

/** The whole file at once (any layout JSON allows). */
const parseWhole = (source: Source, file: string): Result.Result<Array<StreamEntry>, EventsFileError> => {
  const text = typeof source === "string" ? source : source.toString("utf8")
  const value = parseJson(text, file)
  if (Result.isFailure(value)) return Result.fail(value.failure)
  const raws = value.success
  const entries = decodeEntries(raws, file)
  if (Result.isFailure(entries) || !Array.isArray(raws)) return entries
  let bounds: ReadonlyArray<readonly [number, number]> | undefined
  for (let i = 0; i < entries.success.length; i++) {
    keepIfForeign(entries.success[i]!, raws[i], () => {
      bounds ??= elementBounds(text)
      const [start, end] = bounds[i]!
      return text.slice(start, end)
    })
  }
  return entries
}

/**
 * Parses and decodes `events.json`: its text, or its UTF-8 bytes as read
 * from disk (then never held as one string). The entries, or the
 * {@link EventsFileError} naming the file and the entry.
 */
export const read = (source: string | Buffer, file: string): Result.Result<Array<StreamEntry>, EventsFileError> => {
  const bounds = prettyBounds(source)
  return (bounds === undefined ? undefined : parsePieces(source, bounds, file)) ?? parseWhole(source, file)
}

/** {@link read} of a text known to be well formed (a test's fixture): the entries, or the {@link EventsFileError} thrown. */
export const parse = (text: string, file: string): Array<StreamEntry> => Result.getOrThrow(read(text, file))

/** {@link read} of bytes known to be well formed: the entries, or the {@link EventsFileError} thrown. */
export const parseBytes = (bytes: Buffer, file: string): Array<StreamEntry> => Result.getOrThrow(read(bytes, file))

/** One entry as it stands inside the pretty array (indented by two spaces). */
export const renderEntry = (entry: StreamEntry): string => {
  const raw = verbatimText.get(entry)
  return raw !== undefined
    ? "  " + raw
    : "  " + JsonText.stringify(EntryCodec.encodeEntry(entry), 2).replaceAll("\n", "\n  ")
}

/** The whole file text. */
export const render = (entries: ReadonlyArray<StreamEntry>): string =>
  entries.length === 0 ? "[]\n" : "[\n" + entries.map(renderEntry).join(",\n") + "\n]\n"

/**
 * The text {@link render} gives, one piece per entry, so a caller can compare
 * or write it without building one string of the whole file.
 */
export function* renderPieces(entries: ReadonlyArray<StreamEntry>): Generator<string> {
  if (entries.length === 0) return yield "[]\n"
  for (let i = 0; i < entries.length; i++) yield (i === 0 ? "[\n" : ",\n") + renderEntry(entries[i]!)
  yield "\n]\n"
}

/** Pretty JSON the way JP writes every file (2 spaces, trailing newline). */
export const renderJson = (value: unknown): string => JsonText.stringify(value, 2) + "\n"
