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
import type { StreamEntry } from "./ConversationEvent.ts"
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

/** Parses and decodes `events.json` text. Throws {@link EventsFileError}. */
export const parse = (text: string, file: string): Array<StreamEntry> => decodeEntries(parseJson(text, file), file)

/** One entry as it stands inside the pretty array (indented by two spaces). */
export const renderEntry = (entry: StreamEntry): string =>
  "  " + JSON.stringify(EntryCodec.encodeEntry(entry), null, 2).replaceAll("\n", "\n  ")

/** The whole file text. */
export const render = (entries: ReadonlyArray<StreamEntry>): string =>
  entries.length === 0 ? "[]\n" : "[\n" + entries.map(renderEntry).join(",\n") + "\n]\n"

/** Pretty JSON the way JP writes every file (2 spaces, trailing newline). */
export const renderJson = (value: unknown): string => JSON.stringify(value, null, 2) + "\n"
