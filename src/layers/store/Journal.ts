/**
 * `events.json.journal`: per-event persistence beside JP's `events.json`
 * (RFD 023 "Incremental Persistence"; issue 10).
 *
 * An append writes one JSON line per entry, `{"at", "base", "entry"}`, and
 * waits for `fdatasync`: O(event), whatever the size of the conversation.
 * `at` is the entry's index in the stream, `base` the byte size of the
 * `events.json` the line extends.
 *
 * Folding moves the journal into `events.json` *in place*, writing only the
 * new tail (a 100 MB conversation costs what its new events cost):
 *
 * 1. append a fold line `{"fold": {"base", "cut"}}` (fdatasync'd): `cut` is
 *    where the file's closing `\n]\n` starts (0 for `[]\n`);
 * 2. write `,\n<entries>\n]\n` at `cut` and truncate there (fdatasync'd);
 * 3. remove the journal (directory fsync'd).
 *
 * A crash anywhere leaves a readable conversation: with a fold line, readers
 * take the first `cut` bytes of `events.json`, close the array, and replay
 * the lines of that base — the same stream before, during and after step 2;
 * without one, lines whose base is not the current size extend a file since
 * replaced and are ignored. A torn last line (a crash mid-append) is never
 * read. Folding again is idempotent: the next opener finishes the job.
 *
 * @example
 * ```ts
 * import * as Journal from "./Journal.ts"
 * await Journal.append(dir, [{ at: 3, entry }], "812")
 * await Journal.fold(dir) // events.json now holds them; no journal left
 * ```
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { Json } from "effect/Schema"
import * as AtomicFile from "./AtomicFile.ts"

export const FILE = "events.json.journal"
export const EVENTS = "events.json"

/** A complete line of the journal. */
export type Line =
  | { readonly _tag: "Entry"; readonly at: number; readonly base: string | undefined; readonly entry: Json }
  | { readonly _tag: "Fold"; readonly base: string; readonly cut: number }

/** A journal line that does not parse: the journal (and so the conversation) is damaged. */
export class JournalError extends Error {
  constructor(readonly file: string, readonly line: number, readonly reason: string) {
    super(`line ${line}: ${reason}`)
  }
}

/** What a journal holds: its complete lines and the byte length they take. */
export interface Parsed {
  readonly lines: ReadonlyArray<Line>
  readonly cleanSize: number
  readonly size: number
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

const parseLine = (text: string, file: string, n: number): Line => {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch (error) {
    throw new JournalError(file, n, `invalid JSON (${(error as Error).message})`)
  }
  if (isRecord(v) && isRecord(v["fold"])) {
    const { base, cut } = v["fold"]
    if (typeof base === "string" && typeof cut === "number" && Number.isSafeInteger(cut) && cut >= 0) {
      return { _tag: "Fold", base, cut }
    }
  }
  if (isRecord(v) && typeof v["at"] === "number" && Number.isSafeInteger(v["at"]) && "entry" in v) {
    const base = v["base"]
    return { _tag: "Entry", at: v["at"], base: typeof base === "string" ? base : undefined, entry: v["entry"] as Json }
  }
  throw new JournalError(file, n, `expected {"at": <index>, "base": "<size>", "entry": {…}} or a fold record`)
}

/** Parses journal text: complete lines only (a torn last line is what a crash mid-append leaves). */
export const parse = (text: string, file: string): Parsed => {
  const end = text.lastIndexOf("\n") + 1
  const lines = end === 0 ? [] : text.slice(0, end - 1).split("\n").map((l, i) => parseLine(l, file, i + 1))
  return { lines, cleanSize: Buffer.byteLength(text.slice(0, end)), size: Buffer.byteLength(text) }
}

/** Reads and parses the journal in `dir`; `undefined` when there is none. */
export const read = async (dir: string): Promise<Parsed | undefined> => {
  const file = path.join(dir, FILE)
  const text = await AtomicFile.readIfExists(file)
  return text === undefined ? undefined : parse(text, file)
}

/** The fold record, if a fold was started. */
export const foldOf = (parsed: Parsed): Extract<Line, { _tag: "Fold" }> | undefined =>
  parsed.lines.findLast((l): l is Extract<Line, { _tag: "Fold" }> => l._tag === "Fold")

/**
 * The events bytes a reader must decode, and the base whose lines extend them.
 * With a started fold: the first `cut` bytes, closed again (the file as it
 * was before the fold, whatever step 2 had written).
 */
export const effectiveEvents = (
  events: Buffer,
  parsed: Parsed | undefined
): { readonly bytes: Buffer; readonly base: string } => {
  const fold = parsed === undefined ? undefined : foldOf(parsed)
  if (fold === undefined || fold.cut > events.length) return { bytes: events, base: String(events.length) }
  const bytes = fold.cut === 0 ? Buffer.from("[]\n") : Buffer.concat([events.subarray(0, fold.cut), Buffer.from("\n]\n")])
  return { bytes, base: fold.base }
}

/** Entry lines that extend `base`, in order. */
export const entriesFor = (parsed: Parsed, base: string): Array<Extract<Line, { _tag: "Entry" }>> =>
  parsed.lines.filter((l): l is Extract<Line, { _tag: "Entry" }> => l._tag === "Entry" && (l.base === undefined || l.base === base))

/** Cuts a torn last line off, so the next line cannot merge with it. */
export const cutTorn = async (dir: string, cleanSize: number): Promise<void> => {
  await fs.truncate(path.join(dir, FILE), cleanSize)
}

/** Appends entry lines durably. */
export const append = async (
  dir: string,
  entries: ReadonlyArray<{ readonly at: number; readonly entry: Json }>,
  base: string
): Promise<number> => {
  let text = ""
  for (const e of entries) text += JSON.stringify({ at: e.at, base, entry: e.entry }) + "\n"
  await AtomicFile.appendDurable(path.join(dir, FILE), text)
  return Buffer.byteLength(text)
}

/** One entry as it stands inside JP's pretty array (what `EventsFile.renderEntry` writes). */
const pretty = (entry: Json): string => "  " + JSON.stringify(entry, null, 2).replaceAll("\n", "\n  ")

/** Where the closing `\n]\n` of a pretty array starts (0 for `[]\n`), or undefined for another shape. */
const findCut = async (handle: fs.FileHandle, size: number): Promise<number | undefined> => {
  if (size < 3) return undefined
  const tail = Buffer.alloc(3)
  await handle.read(tail, 0, 3, size - 3)
  if (size === 3 && tail.toString() === "[]\n") return 0
  return tail.toString() === "\n]\n" ? size - 3 : undefined
}

/** Writes the fold's tail at `cut` (step 2). */
const writeTail = async (handle: fs.FileHandle, cut: number, entries: ReadonlyArray<Json>): Promise<void> => {
  const body = entries.map(pretty).join(",\n") + "\n]\n"
  const bytes = Buffer.from((cut === 0 ? "[\n" : ",\n") + body, "utf8")
  await handle.write(bytes, 0, bytes.length, cut)
  await handle.truncate(cut + bytes.length)
  await handle.datasync()
}

/** The result of a fold: done in place, nothing to do, or the file was not in a shape to extend. */
export type FoldResult = "folded" | "empty" | "unfoldable"

/**
 * Folds the journal of `dir` into `events.json` in place (steps 1–3), or
 * finishes a fold a crash interrupted. Reads only the journal and the last
 * bytes of `events.json`. "unfoldable" leaves everything as it was: the
 * caller rewrites the whole file instead.
 */
export const fold = async (dir: string): Promise<FoldResult> => {
  const parsed = await read(dir)
  if (parsed === undefined) return "empty"
  const eventsFile = path.join(dir, EVENTS)
  const handle = await fs.open(eventsFile, "r+")
  try {
    const size = (await handle.stat()).size
    let started = foldOf(parsed)
    if (started !== undefined && started.cut > size) started = undefined // the file was replaced since
    const base = started?.base ?? String(size)
    const lines = entriesFor(parsed, base)
    if (lines.length > 0) {
      let cut = started?.cut
      if (cut === undefined) {
        cut = await findCut(handle, size)
        if (cut === undefined) return "unfoldable"
        if (parsed.size !== parsed.cleanSize) await cutTorn(dir, parsed.cleanSize)
        await AtomicFile.appendDurable(path.join(dir, FILE), JSON.stringify({ fold: { base, cut } }) + "\n")
      }
      await writeTail(handle, cut, lines.map((l) => l.entry))
    }
  } finally {
    await handle.close()
  }
  await fs.rm(path.join(dir, FILE), { force: true })
  await AtomicFile.syncDir(dir)
  return "folded"
}

/** Removes the journal (after a whole-file rewrite that already holds its entries). */
export const remove = async (dir: string): Promise<void> => {
  await fs.rm(path.join(dir, FILE), { force: true })
  await AtomicFile.syncDir(dir)
}
