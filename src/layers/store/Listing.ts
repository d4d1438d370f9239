/**
 * `conversation ls` for the file store (docs/decisions.md#fast-start: it costs what
 * reading every `metadata.json` costs): summaries cached in a sidecar index
 * (`conversations/.parley-index.json`, dot-named so JP skips it), each
 * validated by the size, mtime and inode of every file it came from
 * (`base_config.json` too: its presence and its JSON decide whether the
 * conversation reads at all), so listing never parses an unchanged event
 * log. A row holds all `ls` shows, the provider view's estimated tokens
 * included (docs/cli.md#commands), so that too costs nothing warm. A conversation that
 * cannot be decoded is reported as damaged (and
 * remembered as such until its files change); the rest are listed. Damage is
 * believed only of files that held still while they were read: a
 * conversation a writer renamed (a new title, as often as it is renamed) or
 * removed meanwhile is followed to its new name, or left out. Rows that tie
 * on last activity and id (one id active and archived) have one order, so a
 * warm listing is always the cold one.
 *
 * A warm listing is four `stat`s per conversation and nothing else per
 * conversation that allocates more than its summary:
 *
 * - The stats are synchronous on purpose: each is a few microseconds in the
 *   kernel, while the promise machinery of `fs.promises` (or of Effect's
 *   `FileSystem`, which wraps it) — a thread-pool hop, a promise and a
 *   microtask per call — cost ~5x more than the call itself and dominated the
 *   listing of 10,000 conversations. Only what must be decoded (a new or
 *   changed conversation) goes through the asynchronous reader, a few at a
 *   time.
 * - Stamps are compared as numbers, never formatted into strings.
 * - The index is stored as columns (one flat array of stamps, one of cells),
 *   which `JSON.parse` builds without an array per conversation, and in
 *   listing order, so a warm listing sorts nothing: it walks the index in
 *   order, and merges in the few rows it had to decode. Against 10,000
 *   conversations in separate processes this measured within a few percent
 *   of the row-per-conversation index it replaced (the stats dominate), but
 *   with less garbage: 89 MB peak instead of 93–98 MB.
 *
 * The journal's stat is kept for every conversation: skipping it for
 * conversations whose lock is not held was tried, and saved nothing
 * measurable in a whole process (a missing file's stat is cheap), while it
 * would have trusted the lock directory to say where a journal may be.
 *
 * @example
 * ```ts
 * import * as Listing from "parley/layers/store/Listing"
 * const { conversations, damaged } = await Listing.list("/p/.parley/conversations", { archived: false })
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as ConversationIdText from "../../domain/storage/ConversationIdText.ts"
import * as TimestampText from "../../domain/event/TimestampText.ts"
import type { Label } from "../../domain/storage/Labels.ts"
import * as LastErrorModel from "../../domain/run/LastErrorText.ts"
import type { LastError } from "../../domain/run/LastError.ts"
import type { IncompleteState, IncompleteSummary } from "../../domain/stream/IncompleteTurn.ts"
import type { WaitingQuestion } from "../../domain/stream/OpenQuestions.ts"
import type { ConversationSummary, DamagedConversation, Listing } from "../../services/ConversationStore.ts"
import * as AtomicFile from "./AtomicFile.ts"
import * as ConversationDir from "./ConversationDir.ts"
import type * as ConversationRead from "./ConversationRead.ts"
import * as FileLock from "./FileLock.ts"
import type * as Summary from "./Summary.ts"
import * as JsonText from "../../domain/storage/JsonText.ts"
import { DIR_MODE } from "../../domain/storage/PrivateDir.ts"

export const INDEX = ".parley-index.json"
const INDEX_VERSION = 10

/**
 * The files a row comes from. `base_config.json` adds nothing to a summary,
 * but a damaged or missing one makes the conversation unreadable, and a
 * repaired one readable again: a row that did not watch it kept reporting
 * damage its user had repaired (or listed a conversation `load` refuses).
 */
const STAMPED = ["metadata.json", ConversationDir.EVENTS, ConversationDir.JOURNAL, "base_config.json"] as const
/** Numbers per stamp: size, mtime and inode of each stamped file (-1 when it is missing). */
const STAMP = STAMPED.length * 3

/**
 * What a conversation's files decoded to, or why they did not: a summary
 * (`damage` null), or a damage reason (the rest null), which names the file
 * relative to the conversation's directory (see {@link damageCell}). `at` is
 * the sort key (see {@link sortKey}; empty for damage, which is not listed).
 * Stored in this order, {@link CELLS} values per row.
 */
interface Cells {
  readonly title: string | null
  readonly events: number | null
  readonly lastEventAt: string | null
  readonly lastActivatedAt: string | null
  readonly incomplete: IncompleteSummary | null
  readonly at: string
  readonly damage: string | null
  /** The provider view's estimated tokens (docs/cli.md#commands; null for damage). */
  readonly tokens: number | null
  /** Its labels as JP reads them (null for damage). */
  readonly labels: ReadonlyArray<Label> | null
  /** The open questions of its turn waiting for input (`parley inbox`); null when it is not waiting. */
  readonly waiting: ReadonlyArray<WaitingQuestion> | null
  /** The error its last run ended in (`metadata.json`'s, kept until its next run); null: none, or damage. */
  readonly lastError: LastError | null
}
const CELLS = 11

/** A conversation decoded by this listing: its key (its directory name, under `.archive/` when archived), stamp and cells. */
interface Row {
  readonly key: string
  readonly stamp: Float64Array
  readonly cells: Cells
}

/** A row in listing order: the index's row at that position (unchanged), or one decoded now. */
type Ref = number | Row

/** The index as stored: rows in listing order, as columns. */
interface Stored {
  readonly version: number
  readonly keys: ReadonlyArray<string>
  readonly stamps: ReadonlyArray<number>
  readonly cells: ReadonlyArray<unknown>
}

/** The index as read: the stored columns and where each key's row is. */
interface Index {
  readonly stored: Stored
  readonly position: Map<string, number>
}

const EMPTY: Index = { stored: { version: INDEX_VERSION, keys: [], stamps: [], cells: [] }, position: new Map() }

/** Reads the index; a missing, damaged or foreign one is empty (it is only a cache). */
const readIndex = (file: string): Index => {
  let read: unknown
  try {
    read = JsonText.parse(fs.readFileSync(file, "utf8"))
  } catch {
    return EMPTY
  }
  if (typeof read !== "object" || read === null || !("version" in read) || read.version !== INDEX_VERSION) return EMPTY
  const keys = "keys" in read ? read.keys : undefined
  const stamps = "stamps" in read ? read.stamps : undefined
  const cells = "cells" in read ? read.cells : undefined
  if (!Array.isArray(keys) || !Array.isArray(stamps) || !Array.isArray(cells)) return EMPTY
  if (stamps.length !== keys.length * STAMP || cells.length !== keys.length * CELLS) return EMPTY
  const position = new Map<string, number>()
  for (let i = 0; i < keys.length; i++) {
    const key: unknown = keys[i]
    if (typeof key !== "string") return EMPTY
    position.set(key, i)
  }
  // Each key checked above; stamps and cells are checked row by row where they are read (validCells).
  return { stored: { version: INDEX_VERSION, keys, stamps, cells }, position }
}

const isStringOrNull = (v: unknown): v is string | null => v === null || typeof v === "string"

const INCOMPLETE_STATES: ReadonlySet<unknown> = new Set<IncompleteState>([
  "waiting-for-input",
  "pending-tool-execution",
  "pending-follow-up",
  "pending-llm-response"
])

const isIncomplete = (v: unknown): v is IncompleteSummary | null =>
  v === null ||
  (typeof v === "object" &&
    "state" in v &&
    INCOMPLETE_STATES.has(v.state) &&
    (!("tool" in v) || v.tool === undefined || typeof v.tool === "string"))

/** Whether `v` is a labels cell: `[{ key, values: [string…] }…]`. */
const isLabels = (v: unknown): v is ReadonlyArray<Label> =>
  Array.isArray(v) &&
  v.every(
    (l: unknown) =>
      typeof l === "object" &&
      l !== null &&
      "key" in l &&
      typeof l.key === "string" &&
      "values" in l &&
      Array.isArray(l.values) &&
      l.values.every((x: unknown) => typeof x === "string")
  )

/** The sort key of row `i` (a string in every row {@link cellsAt} accepts). */
const atAt = (stored: Stored, i: number): string => {
  const at = stored.cells[i * CELLS + 5]
  return typeof at === "string" ? at : ""
}

/**
 * Row `i`'s cells, if they hold what a listing writes (an index edited by hand
 * is decoded again, never trusted). The open questions are arrays the listing
 * wrote from decoded events; their items are not checked again here.
 */
const cellsAt = (stored: Stored, i: number): Cells | undefined => {
  const c = stored.cells
  const o = i * CELLS
  const at = c[o + 5]
  const damage = c[o + 6]
  if (typeof stored.keys[i] !== "string" || typeof at !== "string") return undefined
  if (damage !== null) return typeof damage === "string" ? { ...NOT_LISTED, at, damage } : undefined
  const [title, events, lastEventAt, lastActivatedAt, incomplete] = [c[o], c[o + 1], c[o + 2], c[o + 3], c[o + 4]]
  const [tokens, labels, waiting, lastErrorCell] = [c[o + 7], c[o + 8], c[o + 9], c[o + 10]]
  const lastError = LastErrorModel.read(lastErrorCell)
  if (
    !isStringOrNull(title) ||
    typeof events !== "number" ||
    !isStringOrNull(lastEventAt) ||
    typeof lastActivatedAt !== "string" ||
    !isIncomplete(incomplete) ||
    typeof tokens !== "number" ||
    !isLabels(labels) ||
    !(waiting === null || Array.isArray(waiting)) ||
    (lastErrorCell !== null && lastError === null)
  )
    return undefined
  return { title, events, lastEventAt, lastActivatedAt, incomplete, at, damage, tokens, labels, waiting, lastError }
}

/** Writes size, mtime and inode of `file` (-1s when it is missing) at `out[at]`. Throws when it cannot be stat-ed. */
const statInto = (file: string, out: Float64Array, at: number): void => {
  const st = fs.statSync(file, { throwIfNoEntry: false })
  out[at] = st === undefined ? -1 : st.size
  out[at + 1] = st === undefined ? -1 : st.mtimeMs
  out[at + 2] = st === undefined ? -1 : st.ino
}

/** Writes the stamp of the files of `dir` into `out`: any write to one of them changes it. */
const stampInto = (dir: string, out: Float64Array): void => {
  for (let k = 0; k < STAMPED.length; k++) statInto(dir + path.sep + STAMPED[k], out, k * 3)
}

/**
 * The stamp of the conversation at `dir` (`ConversationStore.version`): as
 * text, the directory and its stamped files' sizes, times and inodes; and
 * the latest of those times (ms), for the caller to tell a stamp that a
 * second write could leave unchanged (a file changed within its time's
 * granularity).
 */
export const stampOf = (dir: string): { readonly text: string; readonly modified: number } => {
  const stamp = new Float64Array(STAMP)
  stampInto(dir, stamp)
  let modified = -1
  for (let k = 1; k < STAMP; k += 3) modified = Math.max(modified, stamp[k]!)
  return { text: `${dir}\n${stamp.join(",")}`, modified }
}

const sameStamp = (stamps: ArrayLike<number>, i: number, stamp: Float64Array): boolean => {
  const o = i * STAMP
  for (let k = 0; k < STAMP; k++) if (stamps[o + k] !== stamp[k]) return false
  return true
}

/** Epoch nanoseconds shifted positive (years 0000–9999 are within ±3·10^20 ns) and zero-padded: compares as a string. */
const sortKey = (lastActivatedAt: string): string =>
  String((TimestampText.toEpochNanos(lastActivatedAt) ?? 0n) + 10n ** 21n).padStart(24, "0")

const ARCHIVE = ".archive" + path.sep

/** The id of a key (`<id>[-<slug>]`, maybe under `.archive/`). */
const idOf = (key: string): ConversationId.ConversationId => {
  const from = key.startsWith(ARCHIVE) ? ARCHIVE.length : 0
  const dash = key.indexOf("-", from)
  return key.slice(from, dash < 0 ? key.length : dash) as ConversationId.ConversationId
}

/** A directory the scan found whose row must be decoded. */
interface Found {
  readonly key: string
  readonly dir: string
  readonly archived: boolean
  readonly stamp: Float64Array
}

const NOT_LISTED = {
  title: null,
  events: null,
  lastEventAt: null,
  lastActivatedAt: null,
  incomplete: null,
  at: "",
  tokens: null,
  labels: null,
  waiting: null,
  lastError: null
} as const

/** What decoding a directory gave: its row, why it cannot be read now (not remembered), or that it is gone. */
type Decoded =
  | { readonly _tag: "Row"; readonly row: Row }
  | { readonly _tag: "Unreadable"; readonly reason: string }
  | { readonly _tag: "Gone" }

/** How often a conversation whose files keep changing while they are read is read again. */
const MAX_DECODES = 5

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * The damage cell of `error` (a file of `dir`): its message with the file
 * named relative to `dir`. The index outlives the path it was written under
 * (the project or storage directory moved, or reached through a symlink):
 * remembered damage named the old path, where a cold listing names the new.
 */
const damageCell = (dir: string, error: ConversationDir.Corrupt): string =>
  path.relative(dir, error.file) + error.message.slice(error.file.length)

/** The reason a damage cell gives for the conversation at `dir`. */
const damageReason = (dir: string, cell: string): string => dir + path.sep + cell

let decoding: Promise<{ read: typeof ConversationRead.read; summaryOf: typeof Summary.summaryOf }> | undefined

/**
 * The event codec and the summary rules, loaded once the first row must be
 * decoded: a listing of an empty storage, or a warm one, loads neither
 * (docs/startup.md#start-up-of-the-reading-commands: `conversation ls`
 * starts within 2× `node -e 0`).
 */
const decoder = () =>
  (decoding ??= Promise.all([import("./ConversationRead.ts"), import("./Summary.ts")]).then(
    ([r, s]) => ({ read: r.read, summaryOf: s.summaryOf }),
    (error: unknown) => {
      // Not kept: the next listing loads again (a chunk replaced by a rebuild under a server).
      decoding = undefined
      throw error
    }
  ))

/**
 * Decodes one directory. Damage is believed (and remembered by the stamp)
 * only of files that held still while they were read: a writer renaming the
 * directory (a new title), removing it, or rewriting its files meanwhile
 * leaves files that fail to decode for a moment, and that conversation is
 * read again, or is gone. An I/O error is not remembered (a permission may
 * change without its files).
 */
const decodeRow = async (found: Found): Promise<Decoded> => {
  const { read, summaryOf } = await decoder()
  let stamp = found.stamp
  for (let attempt = 1; ; attempt++) {
    try {
      const conversation = await read(idOf(found.key), { dir: found.dir, archived: found.archived })
      const s = summaryOf(conversation, found.dir)
      const cells = {
        title: s.title,
        events: s.events,
        lastEventAt: s.lastEventAt,
        lastActivatedAt: s.lastActivatedAt,
        incomplete: s.incomplete,
        at: sortKey(s.lastActivatedAt),
        damage: null,
        tokens: s.tokens,
        labels: s.labels,
        waiting: s.waiting ?? null,
        lastError: s.lastError
      }
      return { _tag: "Row", row: { key: found.key, stamp, cells } }
    } catch (error) {
      if (!(error instanceof ConversationDir.Corrupt)) return { _tag: "Unreadable", reason: messageOf(error) }
      if (!fs.existsSync(found.dir)) return { _tag: "Gone" }
      const now = new Float64Array(STAMP)
      try {
        stampInto(found.dir, now)
      } catch (statError) {
        return { _tag: "Unreadable", reason: messageOf(statError) }
      }
      if (sameStamp(now, 0, stamp))
        return {
          _tag: "Row",
          row: { key: found.key, stamp, cells: { ...NOT_LISTED, damage: damageCell(found.dir, error) } }
        }
      if (attempt >= MAX_DECODES)
        return { _tag: "Unreadable", reason: `${error.message} (its files kept changing while they were read)` }
      stamp = now
    }
  }
}

const eachLimited = async <A>(
  items: ReadonlyArray<A>,
  concurrency: number,
  f: (item: A) => Promise<void>
): Promise<void> => {
  let next = 0
  const worker = async () => {
    while (next < items.length) await f(items[next++]!)
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker))
}

/** What `AtomicFile.writeAtomic` names the index's temp files. */
const INDEX_TEMP = /^\.parley-index\.json\.(\d+)\.[a-z0-9]*\.tmp$/

/**
 * Removes a temp file of an index write whose writer died before its rename
 * (a `kill -9` mid-listing). Where it cannot (a read-only mount, another
 * user's storage), it stays: the listing must not fail over litter.
 */
const sweepTemp = (parent: string, name: string): void => {
  const pid = Number(INDEX_TEMP.exec(name)?.[1])
  if (!Number.isSafeInteger(pid) || pid === process.pid || FileLock.isAlive(pid)) return
  try {
    fs.rmSync(parent + path.sep + name, { force: true })
  } catch {
    // Left for a listing that can write.
  }
}

/** What the scan of the directories found. */
interface Scan {
  /** Per index row: 1 unchanged, 2 in a scanned group but changed or gone, 0 not scanned (the archive, unasked). */
  readonly seen: Uint8Array
  readonly stale: Array<Found>
  readonly unreadable: Array<DamagedConversation>
}

/** The entries of `dir` (none when it does not exist). */
const entriesOf = (dir: string): Array<fs.Dirent> => {
  try {
    return fs.readdirSync(dir, { withFileTypes: true })
  } catch (error) {
    if (AtomicFile.isNotFound(error)) return []
    throw error
  }
}

/** Stats every conversation directory of the scanned groups against the index. */
const scan = (conversationsDir: string, index: Index, options: Options): Scan => {
  const { stored } = index
  const seen = new Uint8Array(stored.keys.length)
  for (let i = 0; i < seen.length; i++) if (options.archived || !stored.keys[i]!.startsWith(ARCHIVE)) seen[i] = 2
  const out: Scan = { seen, stale: [], unreadable: [] }
  scanGroup(conversationsDir, false, index, out)
  if (options.archived) scanGroup(conversationsDir + path.sep + ".archive", true, index, out)
  return out
}

/** Stats the conversation directories of `parent` against the index, into `out`. */
const scanGroup = (parent: string, archived: boolean, index: Index, out: Scan): void => {
  const { position, stored } = index
  const stamp = new Float64Array(STAMP)
  for (const entry of entriesOf(parent)) {
    const name = entry.name
    if (!entry.isDirectory()) {
      if (!archived && name.startsWith(INDEX)) sweepTemp(parent, name)
      continue
    }
    const id = ConversationIdText.fromDirname(name)
    if (id === undefined) continue
    const dir = parent + path.sep + name
    const key = archived ? ARCHIVE + name : name
    try {
      stampInto(dir, stamp)
    } catch (error) {
      // One unreadable conversation never hides the others.
      out.unreadable.push({ id, path: dir, reason: messageOf(error), archived })
      continue
    }
    const i = position.get(key)
    if (i !== undefined && sameStamp(stored.stamps, i, stamp) && cellsAt(stored, i) !== undefined) out.seen[i] = 1
    else out.stale.push({ key, dir, archived, stamp: stamp.slice() })
  }
}

/**
 * Where a conversation the scan found went (renamed for a new title between
 * the scan and its read): its directory now, in the same group, unless the
 * scan found that one too or it is gone.
 */
const relocate = (conversationsDir: string, found: Found, scanned: Set<string>): Found | undefined => {
  const parent = path.dirname(found.dir)
  const names = entriesOf(parent)
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
  const name = ConversationDir.pick(names, idOf(found.key))
  if (name === undefined) return undefined
  const key = found.archived ? ARCHIVE + name : name
  if (scanned.has(key)) return undefined
  const dir = path.join(conversationsDir, key)
  const stamp = new Float64Array(STAMP)
  try {
    stampInto(dir, stamp)
  } catch {
    return undefined
  }
  return { key, dir, archived: found.archived, stamp }
}

/** Decodes the rows the scan found stale, a few at a time, following a directory that moved meanwhile. */
const decodeAll = async (
  conversationsDir: string,
  index: Index,
  scanned: Scan
): Promise<{ decoded: Array<Row>; damaged: Array<DamagedConversation> }> => {
  const decoded: Array<Row> = []
  const damaged: Array<DamagedConversation> = []
  let keys: Set<string> | undefined // every key this listing has, made only when a directory moved
  const listed = (): Set<string> => {
    if (keys !== undefined) return keys
    keys = new Set<string>(scanned.stale.map((f) => f.key))
    for (let i = 0; i < scanned.seen.length; i++) if (scanned.seen[i] === 1) keys.add(index.stored.keys[i]!)
    return keys
  }
  /**
   * Followed as often as it moves (up to {@link MAX_DECODES} times): once
   * only, a conversation renamed twice while it was read (a new title, then
   * another, or back) was left out of the listing as if removed. Its name is
   * free again once it is gone from it, so it can be followed back there.
   */
  const place = async (found: Found, moves: number): Promise<void> => {
    const outcome = await decodeRow(found)
    if (outcome._tag === "Row") return void decoded.push(outcome.row)
    if (outcome._tag === "Unreadable")
      return void damaged.push({
        id: idOf(found.key),
        path: found.dir,
        reason: outcome.reason,
        archived: found.archived
      })
    const taken = listed()
    taken.delete(found.key)
    const moved = relocate(conversationsDir, found, taken)
    if (moved === undefined) return // removed: not listed
    if (moved.key === found.key && !fs.existsSync(moved.dir)) {
      // Not moved: read back as listed, the name opens nothing (bytes that are not UTF-8 read as U+FFFD).
      return void damaged.push({
        id: idOf(found.key),
        path: found.dir,
        reason: `${found.dir}: listed under a name that does not open it (a name that is not UTF-8?)`,
        archived: found.archived
      })
    }
    if (moves >= MAX_DECODES) {
      return void damaged.push({
        id: idOf(moved.key),
        path: moved.dir,
        reason: `${moved.dir}: renamed ${moves + 1} times while it was read; list again`,
        archived: moved.archived
      })
    }
    taken.add(moved.key)
    await place(moved, moves + 1)
  }
  await eachLimited(scanned.stale, 4, (found) => place(found, 0))
  return { decoded, damaged }
}

/**
 * Between two directories of one id: the active one first, then by name
 * (the one `load` picks first). Without it two rows that tie (a conversation
 * copied into the archive; the same id twice) were listed in whatever order
 * they were decoded or merged, so a warm listing could differ from a cold one.
 */
const tieBefore = (p: string, q: string): boolean => {
  const x = p.startsWith(ARCHIVE),
    y = q.startsWith(ARCHIVE)
  return x !== y ? y : p < q
}

/** Damaged conversations by id, then as {@link tieBefore} (paths under one directory). */
const byDamage =
  (conversationsDir: string) =>
  (a: DamagedConversation, b: DamagedConversation): number => {
    if (a.id !== b.id) return a.id < b.id ? -1 : 1
    const from = conversationsDir.length + path.sep.length
    return a.path === b.path ? 0 : tieBefore(a.path.slice(from), b.path.slice(from)) ? -1 : 1
  }

/** Listing order of every row kept: the index's (already in order) with the decoded ones merged in. */
const ordered = (stored: Stored, seen: Uint8Array, decoded: Array<Row>): Array<Ref> => {
  const keyOf = (r: Ref) => (typeof r === "number" ? stored.keys[r]! : r.key)
  const atOf = (r: Ref) => (typeof r === "number" ? atAt(stored, r) : r.cells.at)
  /** Most recently active first, then the higher id, then by {@link tieBefore}. */
  const before = (a: Ref, b: Ref): boolean => {
    const x = atOf(a),
      y = atOf(b)
    if (x !== y) return x > y
    const p = keyOf(a),
      q = keyOf(b)
    const i = idOf(p),
      j = idOf(q)
    return i !== j ? i > j : tieBefore(p, q)
  }
  const byOrder = (a: Ref, b: Ref) => (before(a, b) ? -1 : 1)
  const kept: Array<Ref> = []
  for (let i = 0; i < seen.length; i++) if (seen[i] !== 2) kept.push(i)
  // Written in order; an index that is not (edited by hand) is sorted here, and written back in order.
  for (let i = 1; i < kept.length; i++) {
    if (before(kept[i]!, kept[i - 1]!)) {
      kept.sort(byOrder)
      break
    }
  }
  if (decoded.length === 0) return kept
  decoded.sort(byOrder)
  const rows: Array<Ref> = []
  let k = 0
  for (const row of decoded) {
    while (k < kept.length && !before(row, kept[k]!)) rows.push(kept[k++]!)
    rows.push(row)
  }
  while (k < kept.length) rows.push(kept[k++]!)
  return rows
}

/** Writes the index in listing order (atomically; a read-only storage directory still lists). */
const writeIndex = async (conversationsDir: string, stored: Stored, rows: ReadonlyArray<Ref>): Promise<void> => {
  const keys: Array<string> = []
  const stamps: Array<number> = []
  const cells: Array<unknown> = []
  for (const r of rows) {
    if (typeof r === "number") {
      keys.push(stored.keys[r]!)
      for (let k = 0; k < STAMP; k++) stamps.push(stored.stamps[r * STAMP + k]!)
      for (let k = 0; k < CELLS; k++) cells.push(stored.cells[r * CELLS + k])
    } else {
      keys.push(r.key)
      for (let k = 0; k < STAMP; k++) stamps.push(r.stamp[k]!)
      const c = r.cells
      cells.push(
        c.title,
        c.events,
        c.lastEventAt,
        c.lastActivatedAt,
        c.incomplete,
        c.at,
        c.damage,
        c.tokens,
        c.labels,
        c.waiting,
        c.lastError
      )
    }
  }
  try {
    fs.mkdirSync(conversationsDir, { recursive: true, mode: DIR_MODE })
    await AtomicFile.writeAtomic(
      path.join(conversationsDir, INDEX),
      JSON.stringify({ version: INDEX_VERSION, keys, stamps, cells })
    )
  } catch {
    // Only a cache.
  }
}

/** The summary (or the damage) a row holds. */
const outcomeOf = (conversationsDir: string, stored: Stored, r: Ref): ConversationSummary | DamagedConversation => {
  const key = typeof r === "number" ? stored.keys[r]! : r.key
  const dir = conversationsDir + path.sep + key
  const id = idOf(key)
  // A stored row was accepted by cellsAt when the listing compared its stamp (it is never undefined here).
  const c = typeof r === "number" ? (cellsAt(stored, r) ?? { ...NOT_LISTED, damage: path.join("..", INDEX) }) : r.cells
  if (c.damage !== null)
    return { id, path: dir, reason: damageReason(dir, c.damage), archived: key.startsWith(ARCHIVE) }
  return {
    id,
    title: c.title,
    events: c.events ?? 0,
    lastEventAt: c.lastEventAt,
    lastActivatedAt: c.lastActivatedAt ?? "",
    archived: key.startsWith(ARCHIVE),
    incomplete: c.incomplete,
    tokens: c.tokens ?? 0,
    labels: c.labels ?? [],
    path: dir,
    lastError: c.lastError,
    ...(c.waiting !== null ? { waiting: c.waiting } : {})
  }
}

/** What to list. */
export interface Options {
  /** Include `.archive/`. */
  readonly archived: boolean
}

/** Lists the conversations under `conversationsDir` (and `.archive/` when asked). */
export const list = async (conversationsDir: string, options: Options): Promise<Listing> => {
  const index = readIndex(path.join(conversationsDir, INDEX))
  const scanned = scan(conversationsDir, index, options)
  const { decoded, damaged } = await decodeAll(conversationsDir, index, scanned)
  const rows = ordered(index.stored, scanned.seen, decoded)
  // Unchanged rows are the index's own: only a decode or a vanished row changes it.
  if (decoded.length > 0 || rows.length !== scanned.seen.length) await writeIndex(conversationsDir, index.stored, rows)
  const conversations: Array<ConversationSummary> = []
  for (const r of rows) {
    if (typeof r === "number" && scanned.seen[r] === 0) continue // the archive, not asked for
    const outcome = outcomeOf(conversationsDir, index.stored, r)
    if ("reason" in outcome) damaged.push(outcome)
    else conversations.push(outcome)
  }
  damaged.push(...scanned.unreadable)
  damaged.sort(byDamage(conversationsDir))
  return { conversations, damaged }
}
