/**
 * `events.json`: a pretty-printed (2-space, trailing newline, raw UTF-8) JSON
 * array of entries — exactly what serde_json's pretty writer produces, which
 * `JSON.stringify(v, null, 2)` reproduces byte for byte.
 *
 * @example
 * ```ts
 * import * as EventsFile from "./EventsFile.ts"
 * const entries = EventsFile.parse("[]\n", "events.json") // []
 * EventsFile.render(entries) // "[]\n"
 * ```
 */
import type { StreamEntry } from "../event/ConversationEvent.ts"
import * as EntryCodec from "./EntryCodec.ts"

/** A decode failure, naming the file and (when it is about one entry) its index. */
export class EventsFileError extends Error {
  constructor(
    readonly file: string,
    readonly entry: number | undefined,
    readonly reason: string
  ) {
    super(entry === undefined ? `${file}: ${reason}` : `${file}: entry ${entry}: ${reason}`)
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
export const parseJson = (text: string, file: string): unknown => {
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new EventsFileError(file, undefined, jsonErrorAt(text, error))
  }
}

/** Decodes the entries of an already parsed events array. */
export const decodeEntries = (value: unknown, file: string): Array<StreamEntry> => {
  if (!Array.isArray(value)) {
    throw new EventsFileError(file, undefined, `expected a JSON array of entries, got ${value === null ? "null" : typeof value}`)
  }
  const out = new Array<StreamEntry>(value.length)
  for (let i = 0; i < value.length; i++) {
    try {
      out[i] = EntryCodec.decodeEntry(value[i])
    } catch (error) {
      if (error instanceof EntryCodec.EntryError) {
        throw new EventsFileError(file, i, error.kind === undefined ? error.message : `${error.kind}: ${error.message}`)
      }
      throw error
    }
  }
  return out
}

// --- Number lexemes JS cannot reproduce --------------------------------------
//
// JSON.parse + JSON.stringify reproduces serde_json's pretty output exactly,
// except for some numbers: `1.0` comes back as `1`, `1e16` as
// `10000000000000000`, integers beyond 2^53 and long fractions lose digits.
// So an entry read from disk whose text holds such a lexeme is written back
// from its original bytes while it is unchanged (the same object). Finding the
// entry's bytes needs a scan of the file, done lazily and only for files that
// hold a candidate at all: parsing stays at JSON.parse speed.

/** Number-like lexemes JS may print differently (strings can match too: that only costs a scan). */
const RISKY_NUMBER = /\d\.\d*0(?!\d)|\d[eE][+-]?\d|\d{16,}|\.\d{16,}|-0(?![\d.])/

interface SourceFile {
  readonly text: string
  risky?: boolean
  bounds?: ReadonlyArray<readonly [number, number]>
}

const sources = new WeakMap<StreamEntry, { readonly file: SourceFile; readonly index: number }>()

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
      if (c === 92) i++ // a backslash escapes the next char
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

/** The original bytes of an unchanged entry read from disk, when they must be kept verbatim. */
const verbatim = (entry: StreamEntry): string | undefined => {
  const source = sources.get(entry)
  if (source === undefined) return undefined
  const file = source.file
  if (file.risky === undefined) file.risky = RISKY_NUMBER.test(file.text)
  if (!file.risky) return undefined
  if (file.bounds === undefined) file.bounds = elementBounds(file.text)
  const bounds = file.bounds[source.index]
  if (bounds === undefined) return undefined
  const raw = file.text.slice(bounds[0], bounds[1])
  return RISKY_NUMBER.test(raw) ? raw : undefined
}

/** Parses and decodes `events.json` text. Throws {@link EventsFileError}. */
export const parse = (text: string, file: string): Array<StreamEntry> => {
  const entries = decodeEntries(parseJson(text, file), file)
  const source: SourceFile = { text }
  for (let i = 0; i < entries.length; i++) sources.set(entries[i]!, { file: source, index: i })
  return entries
}

/** One entry as it stands inside the pretty array (indented by two spaces). */
export const renderEntry = (entry: StreamEntry): string => {
  const raw = verbatim(entry)
  return raw !== undefined ? "  " + raw : "  " + JSON.stringify(EntryCodec.encodeEntry(entry), null, 2).replaceAll("\n", "\n  ")
}

/** The whole file text. */
export const render = (entries: ReadonlyArray<StreamEntry>): string =>
  entries.length === 0 ? "[]\n" : "[\n" + entries.map(renderEntry).join(",\n") + "\n]\n"

/** Pretty JSON the way JP writes every file (2 spaces, trailing newline). */
export const renderJson = (value: unknown): string => JSON.stringify(value, null, 2) + "\n"
