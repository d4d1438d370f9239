/**
 * `conversation ls` for the file store (issue 16: it costs what reading every
 * `metadata.json` costs): summaries cached in a sidecar index
 * (`conversations/.parley-index.json`, dot-named so JP skips it), each
 * validated by the size, mtime and inode of every file it came from, so
 * listing never parses an unchanged event log. A conversation that cannot be
 * decoded is reported as damaged (and remembered as such until its files
 * change); the rest are listed.
 *
 * A warm listing is three `stat`s per conversation. They are synchronous on
 * purpose: each is a few microseconds in the kernel, while the promise
 * machinery of `fs.promises` (or of Effect's `FileSystem`, which wraps it) —
 * a thread-pool hop, a promise and a microtask per call — cost ~5x more than
 * the call itself and dominated the listing of 10,000 conversations. Only
 * what must be decoded (a new or changed conversation) goes through the
 * asynchronous reader, a few at a time.
 *
 * @example
 * ```ts
 * import * as Listing from "./Listing.ts"
 * const { conversations, damaged } = await Listing.list("/p/.parley/conversations", { archived: false })
 * ```
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as Timestamp from "../../domain/event/Timestamp.ts"
import type { IncompleteSummary } from "../../domain/stream/IncompleteTurn.ts"
import type { ConversationSummary, DamagedConversation, Listing } from "../../services/ConversationStore.ts"
import * as AtomicFile from "./AtomicFile.ts"
import * as ConversationDir from "./ConversationDir.ts"
import * as Journal from "./Journal.ts"
import { summaryOf } from "./Summary.ts"

export const INDEX = ".parley-index.json"
const INDEX_VERSION = 4

/**
 * One conversation in the index, as a tuple (the index of 10,000
 * conversations parses in half the time of the same rows as objects):
 * what its files decoded to, or why they did not. `at` is the sort key
 * (see {@link sortKey}).
 */
type SummaryRow = readonly [
  key: string,
  stamp: string,
  id: ConversationId.ConversationId,
  title: string | null,
  events: number,
  lastEventAt: string | null,
  lastActivatedAt: string,
  incomplete: IncompleteSummary | null,
  at: string
]
type DamagedRow = readonly [key: string, stamp: string, damaged: string]
type IndexRow = SummaryRow | DamagedRow

const isSummary = (row: IndexRow): row is SummaryRow => row.length === 9

/** The files a summary comes from (base_config.json is not part of one). */
const STAMPED = ["metadata.json", Journal.EVENTS, Journal.FILE] as const

/** Size, mtime and inode of each file (`-` when missing): any write changes it. */
const stampOf = (dir: string): string => {
  let out = ""
  for (const name of STAMPED) {
    const st = fs.statSync(dir + path.sep + name, { throwIfNoEntry: false })
    out += st === undefined ? "-|" : `${st.size}:${st.mtimeMs}:${st.ino}|`
  }
  return out
}

const readIndex = (file: string): Map<string, IndexRow> => {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as { version?: number; rows?: ReadonlyArray<IndexRow> }
    if (parsed.version !== INDEX_VERSION || !Array.isArray(parsed.rows)) return new Map()
    return new Map(parsed.rows.map((row) => [row[0], row]))
  } catch {
    return new Map() // missing or damaged: it is only a cache
  }
}

/** Conversation directory names in `dir` (none when it does not exist). */
const dirsIn = (dir: string): Array<string> => {
  try {
    return fs.readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && ConversationId.fromDirname(d.name) !== undefined)
      .map((d) => d.name)
  } catch (error) {
    if (AtomicFile.isNotFound(error)) return []
    throw error
  }
}

/** A directory found by the scan. */
interface Found {
  readonly key: string
  readonly dir: string
  readonly name: string
  readonly archived: boolean
  readonly stamp: string
}

/** Epoch nanoseconds shifted positive (years 0000–9999 are within ±3·10^20 ns) and zero-padded: compares as a string. */
const sortKey = (lastActivatedAt: string): string =>
  String((Timestamp.toEpochNanos(lastActivatedAt) ?? 0n) + 10n ** 21n).padStart(24, "0")

/** A row, or why the directory could not be read (not remembered: a permission may change without its files). */
type Outcome = { readonly row: IndexRow } | { readonly unreadable: string }

/** Decodes one directory into its row; only what its files hold is remembered as damage. */
const decodeRow = async (found: Found): Promise<Outcome> => {
  try {
    const conversation = await ConversationDir.read(ConversationId.fromDirname(found.name)!, { dir: found.dir, archived: found.archived })
    const s = summaryOf(conversation, found.dir)
    return { row: [found.key, found.stamp, s.id, s.title, s.events, s.lastEventAt, s.lastActivatedAt, s.incomplete, sortKey(s.lastActivatedAt)] }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    // Corrupt is about the bytes, which the stamp pins; an I/O error (a permission) may pass.
    return error instanceof ConversationDir.Corrupt ? { row: [found.key, found.stamp, reason] } : { unreadable: reason }
  }
}

/** Runs `f` over `items`, `concurrency` at a time (decoding is CPU-bound; reading overlaps). */
const eachLimited = async <A>(items: ReadonlyArray<A>, concurrency: number, f: (a: A) => Promise<void>): Promise<void> => {
  let next = 0
  const worker = async () => {
    while (next < items.length) await f(items[next++]!)
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker))
}

/** Lists the conversations under `conversationsDir` (and `.archive/` when asked). */
export const list = async (conversationsDir: string, options: { readonly archived: boolean }): Promise<Listing> => {
  const indexFile = path.join(conversationsDir, INDEX)
  const index = readIndex(indexFile)
  const next = new Map<string, IndexRow>()
  const listed: Array<{ readonly at: string; readonly summary: ConversationSummary }> = []
  const damaged: Array<DamagedConversation> = []
  const place = (found: Found, outcome: Outcome) => {
    const damage = (reason: string): void => void damaged.push({ id: ConversationId.fromDirname(found.name)!, path: found.dir, reason })
    if ("unreadable" in outcome) return damage(outcome.unreadable)
    const row = outcome.row
    next.set(found.key, row)
    if (!isSummary(row)) return damage(row[2])
    const [, , id, title, events, lastEventAt, lastActivatedAt, incomplete, at] = row
    listed.push({ at, summary: { id, title, events, lastEventAt, lastActivatedAt, archived: found.archived, incomplete, path: found.dir } })
  }
  const stale: Array<Found> = []
  const groups: Array<[string, boolean]> = [[conversationsDir, false]]
  if (options.archived) groups.push([path.join(conversationsDir, ".archive"), true])
  for (const [parent, archived] of groups) {
    for (const name of dirsIn(parent)) {
      const dir = parent + path.sep + name
      let stamp: string
      try {
        stamp = stampOf(dir)
      } catch (error) {
        // One unreadable conversation never hides the others.
        damaged.push({ id: ConversationId.fromDirname(name)!, path: dir, reason: error instanceof Error ? error.message : String(error) })
        continue
      }
      const found = { key: archived ? ".archive" + path.sep + name : name, dir, name, archived, stamp }
      const cached = index.get(found.key)
      if (cached !== undefined && cached[1] === stamp) place(found, { row: cached })
      else stale.push(found)
    }
  }
  await eachLimited(stale, 4, async (found) => place(found, await decodeRow(found)))
  // Rows of the archive stay valid when it was not scanned this time.
  if (!options.archived) for (const [key, row] of index) if (key.startsWith(".archive") && !next.has(key)) next.set(key, row)
  // Unchanged rows are the index's own: only a decode or a vanished row changes it.
  if (stale.length > 0 || next.size !== index.size) {
    try {
      fs.mkdirSync(conversationsDir, { recursive: true })
      await AtomicFile.writeAtomic(indexFile, JSON.stringify({ version: INDEX_VERSION, rows: [...next.values()] }))
    } catch {
      // A read-only storage directory still lists.
    }
  }
  // Most recently active first (then the higher id); the key was computed once, when the row was.
  listed.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : a.summary.id < b.summary.id ? 1 : -1))
  damaged.sort((a, b) => (a.id < b.id ? -1 : 1))
  return { conversations: listed.map((x) => x.summary), damaged }
}
