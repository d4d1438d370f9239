/**
 * `events.json.journal`: per-event persistence beside JP's `events.json`
 * (RFD 023 "Incremental Persistence"; docs/storage.md#durable-appends).
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
 * replaced and are ignored. A fold line is believed only while the file from
 * `cut` on holds nothing but the old closing bracket and the fold's own tail:
 * a file JP rewrote after the crash is left as JP wrote it. A torn last line
 * (a crash mid-append) is never read. Folding again is idempotent: the next
 * opener finishes the job.
 *
 * @example
 * ```ts
 * import * as Journal from "parley/layers/store/Journal"
 * import type * as Schema from "effect/Schema"
 * declare const dir: string, entry: Schema.Json // a conversation directory; an encoded entry
 * await Journal.append(dir, [{ at: 3, entry }], "812")
 * await Journal.fold(dir) // events.json now holds them; no journal left
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Result from "effect/Result"
import type { Json } from "effect/Schema"
import * as EntryCodec from "../../domain/storage/EntryCodec.ts"
import * as JsonText from "../../domain/storage/JsonText.ts"
import * as AtomicFile from "./AtomicFile.ts"
import * as FileCalls from "./FileCalls.ts"
import * as ConversationDir from "./ConversationDir.ts"
import * as ErrorCode from "../ErrorCode.ts"

export const FILE = ConversationDir.JOURNAL
export const EVENTS = ConversationDir.EVENTS

/** A complete line of the journal. */
export type Line =
  | { readonly _tag: "Entry"; readonly at: number; readonly base: string | undefined; readonly entry: Json }
  | { readonly _tag: "Fold"; readonly base: string; readonly cut: number }

type Fold = Extract<Line, { _tag: "Fold" }>

/** A journal line that does not parse: the journal (and so the conversation) is damaged. */
export class JournalError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly reason: string
  ) {
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
    v = JsonText.parse(text)
  } catch (error) {
    throw new JournalError(file, n, `invalid JSON (${ErrorCode.messageOf(error) ?? String(error)})`)
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
  const lines =
    end === 0
      ? []
      : text
          .slice(0, end - 1)
          .split("\n")
          .map((l, i) => parseLine(l, file, i + 1))
  return { lines, cleanSize: Buffer.byteLength(text.slice(0, end)), size: Buffer.byteLength(text) }
}

/** Reads and parses the journal in `dir`; `undefined` when there is none. */
export const read = async (
  dir: string,
  calls: FileCalls.FileCalls = FileCalls.promised
): Promise<Parsed | undefined> => {
  const file = path.join(dir, FILE)
  const text = await calls.readText(file)
  return text === undefined ? undefined : parse(text, file)
}

/** The fold record, if a fold was started. */
export const foldOf = (parsed: Parsed): Extract<Line, { _tag: "Fold" }> | undefined =>
  parsed.lines.findLast((l): l is Extract<Line, { _tag: "Fold" }> => l._tag === "Fold")

/**
 * The events bytes a reader must decode, and the base whose lines extend it.
 * With a started fold: the first `cut` bytes, closed again (the file as it
 * was before the fold, whatever step 2 had written). Bytes, not text: the
 * decoder parses them one element at a time, never one string of the file.
 */
export const effectiveEvents = (
  events: Buffer,
  parsed: Parsed | undefined
): { readonly bytes: Buffer; readonly base: string } => {
  const fold = parsed === undefined ? undefined : foldOf(parsed)
  const fits =
    fold !== undefined &&
    parsed !== undefined &&
    foldFits(events.subarray(Math.min(fold.cut, events.length)), events.length, fold, tailOf(parsed, fold))
  if (!fits) return { bytes: events, base: String(events.length) }
  const bytes =
    fold.cut === 0 ? Buffer.from("[]\n") : Buffer.concat([events.subarray(0, fold.cut), Buffer.from("\n]\n")])
  return { bytes, base: fold.base }
}

/** Entry lines that extend `base`, in order. */
export const entriesFor = (parsed: Parsed, base: string): Array<Extract<Line, { _tag: "Entry" }>> =>
  parsed.lines.filter(
    (l): l is Extract<Line, { _tag: "Entry" }> => l._tag === "Entry" && (l.base === undefined || l.base === base)
  )

/** The bytes step 2 of `fold` writes at its cut. */
const tailOf = (parsed: Parsed, fold: Fold): Buffer => {
  const body =
    entriesFor(parsed, fold.base)
      .map((l) => pretty(l.entry))
      .join(",\n") + "\n]\n"
  return Buffer.from((fold.cut === 0 ? "[\n" : ",\n") + body, "utf8")
}

/**
 * Whether `events.json` (`size` bytes, `fromCut` its bytes from the cut on)
 * is in a state `fold` can have left it in: its base and cut agree, the file
 * is no longer than the fold makes it, and each byte from the cut on is the
 * closing bracket the file had or the tail the fold writes (a crash
 * mid-write leaves a mix of the two). Otherwise the file was replaced since
 * (JP wrote it after a crash), the record is not about it, and acting on it
 * would cut JP's entries off.
 */
const foldFits = (fromCut: Buffer, size: number, fold: Fold, tail: Buffer): boolean => {
  const closing = fold.cut === 0 ? "[]\n" : "\n]\n"
  if (Number(fold.base) !== fold.cut + closing.length || size < fold.cut) return false
  if (fromCut.length > Math.max(closing.length, tail.length)) return false
  for (let i = 0; i < fromCut.length; i++) {
    if (fromCut[i] !== tail[i] && !(i < closing.length && fromCut[i] === closing.charCodeAt(i))) return false
  }
  return true
}

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
  for (const e of entries) text += JsonText.stringify({ at: e.at, base, entry: e.entry }) + "\n"
  await AtomicFile.appendDurable(path.join(dir, FILE), text)
  return Buffer.byteLength(text)
}

/** One entry as it stands inside JP's pretty array (what `EventsFile.renderEntry` writes). */
const pretty = (entry: Json): string => "  " + JsonText.stringify(entry, 2).replaceAll("\n", "\n  ")

/** Where the closing `\n]\n` of a pretty array starts (0 for `[]\n`), or undefined for another shape. */
const findCut = async (handle: FileCalls.Handle, size: number): Promise<number | undefined> => {
  if (size < 3) return undefined
  const tail = Buffer.alloc(3)
  await handle.read(tail, 3, size - 3)
  if (size === 3 && tail.toString() === "[]\n") return 0
  return tail.toString() === "\n]\n" ? size - 3 : undefined
}

/** Writes the fold's tail at `cut` (step 2). */
const writeTail = async (handle: FileCalls.Handle, cut: number, bytes: Buffer): Promise<void> => {
  await handle.write(bytes, cut)
  await handle.truncate(cut + bytes.length)
  await handle.datasync()
}

/** Why the journaled `entry` does not decode (`undefined`: it does). */
const problemOf = (entry: Json): string | undefined => {
  let decoded: ReturnType<typeof EntryCodec.decode>
  try {
    decoded = EntryCodec.decode(entry)
  } catch (error) {
    // The runtime's own limit (Schema recurses), not a codec error.
    return error instanceof RangeError
      ? `nested too deeply to decode (${error.message})`
      : error instanceof Error
        ? error.message
        : String(error)
  }
  return Result.isSuccess(decoded) ? undefined : decoded.failure.reason
}

/** Throws {@link JournalError} for a line to fold whose entry does not decode: it must never reach JP's events.json. */
const checkEntries = (parsed: Parsed, base: string, file: string): void => {
  for (const line of entriesFor(parsed, base)) {
    const problem = problemOf(line.entry)
    if (problem !== undefined)
      throw new JournalError(file, parsed.lines.indexOf(line) + 1, `entry ${line.at}: ${problem}`)
  }
}

/** The fold a crash interrupted, if the file is still the one it was folding (see {@link foldFits}). */
const startedFold = async (handle: FileCalls.Handle, size: number, parsed: Parsed): Promise<Fold | undefined> => {
  const fold = foldOf(parsed)
  if (fold === undefined || size < fold.cut) return undefined
  const tail = tailOf(parsed, fold)
  const length = size - fold.cut
  if (length > Math.max(3, tail.length)) return undefined
  const fromCut = Buffer.alloc(length)
  await handle.read(fromCut, length, fold.cut)
  return foldFits(fromCut, size, fold, tail) ? fold : undefined
}

/** The result of a fold: done in place, nothing to do, or the file was not in a shape to extend. */
export type FoldResult = "folded" | "empty" | "unfoldable"

/**
 * Folds the journal of `dir` into `events.json` in place (steps 1–3), or
 * finishes a fold a crash interrupted. Reads only the journal and the last
 * bytes of `events.json`. "unfoldable" leaves everything as it was: the
 * caller rewrites the whole file instead. `calls`: how the files are read
 * and written (`FileCalls.ts`: through the thread pool, or blocking).
 */
export const fold = async (dir: string, calls: FileCalls.FileCalls = FileCalls.promised): Promise<FoldResult> => {
  const parsed = await read(dir, calls)
  if (parsed === undefined) return "empty"
  const eventsFile = path.join(dir, EVENTS)
  const handle = await calls.open(eventsFile, "r+")
  try {
    const size = await handle.size()
    // A fold record about a file since replaced (cut beyond it, JP's entries after it) is ignored.
    let fold = await startedFold(handle, size, parsed)
    const base = fold?.base ?? String(size)
    checkEntries(parsed, base, path.join(dir, FILE))
    if (entriesFor(parsed, base).length > 0) {
      if (fold === undefined) {
        const cut = await findCut(handle, size)
        if (cut === undefined) return "unfoldable"
        if (parsed.size !== parsed.cleanSize) await calls.truncate(path.join(dir, FILE), parsed.cleanSize)
        fold = { _tag: "Fold", base, cut }
        await AtomicFile.appendDurable(path.join(dir, FILE), JSON.stringify({ fold: { base, cut } }) + "\n", calls)
      }
      await writeTail(handle, fold.cut, tailOf(parsed, fold))
    }
  } finally {
    await handle.close()
  }
  await calls.remove(path.join(dir, FILE))
  await AtomicFile.syncDir(dir, calls)
  return "folded"
}

/** Removes the journal (after a whole-file rewrite that already holds its entries). */
export const remove = async (dir: string): Promise<void> => {
  await fs.rm(path.join(dir, FILE), { force: true })
  await AtomicFile.syncDir(dir)
}
