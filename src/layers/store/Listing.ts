/**
 * `conversation ls` for the file store: summaries cached in a sidecar index
 * (`conversations/.parley-index.json`, dot-named so JP skips it), each
 * validated by the size and mtime of every file it came from, so listing
 * never parses an unchanged event log. A conversation that cannot be read is
 * reported as damaged and the rest are listed.
 *
 * @example
 * ```ts
 * import * as Listing from "./Listing.ts"
 * const { conversations, damaged } = await Listing.list("/p/.parley/conversations", { archived: false })
 * ```
 */
import type * as fsSync from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as Timestamp from "../../domain/event/Timestamp.ts"
import type { ConversationSummary, DamagedConversation, Listing } from "../../services/ConversationStore.ts"
import * as AtomicFile from "./AtomicFile.ts"
import * as ConversationDir from "./ConversationDir.ts"
import * as Journal from "./Journal.ts"
import { summaryOf } from "./Summary.ts"

export const INDEX = ".parley-index.json"
const INDEX_VERSION = 2

interface IndexRow {
  readonly stamp: string
  readonly summary: ConversationSummary
}

const statOrUndefined = async (file: string): Promise<fsSync.Stats | undefined> => {
  try {
    return await fs.stat(file)
  } catch (error) {
    if (AtomicFile.isNotFound(error)) return undefined
    throw error
  }
}

const stamp = (st: fsSync.Stats | undefined): string => (st === undefined ? "-" : `${st.size}:${st.mtimeMs}`)

const readIndex = async (file: string): Promise<Record<string, IndexRow>> => {
  try {
    const parsed = JSON.parse(await fs.readFile(file, "utf8")) as { version?: number; rows?: Record<string, IndexRow> }
    return parsed.version === INDEX_VERSION && typeof parsed.rows === "object" && parsed.rows !== null ? parsed.rows : {}
  } catch {
    return {} // missing or damaged: it is only a cache
  }
}

/** One directory's row: from the index when its files are unchanged, else decoded. */
const rowOf = async (
  dir: string,
  name: string,
  archived: boolean,
  cached: IndexRow | undefined
): Promise<{ row: IndexRow; fresh: boolean }> => {
  // base_config.json is not part of a summary, so it is not stat'ed.
  const stats = await Promise.all(["metadata.json", Journal.EVENTS, Journal.FILE].map((f) => statOrUndefined(path.join(dir, f))))
  const s = stats.map(stamp).join("|")
  if (cached !== undefined && cached.stamp === s) return { row: cached, fresh: false }
  const conversation = await ConversationDir.read(ConversationId.fromDirname(name)!, { dir, archived })
  return { row: { stamp: s, summary: summaryOf(conversation, dir) }, fresh: true }
}

/** Lists the conversations under `conversationsDir` (and `.archive/` when asked). */
export const list = async (conversationsDir: string, options: { readonly archived: boolean }): Promise<Listing> => {
  const indexFile = path.join(conversationsDir, INDEX)
  const index = await readIndex(indexFile)
  const next: Record<string, IndexRow> = {}
  let dirty = false
  const groups: Array<[string, boolean]> = [[conversationsDir, false]]
  if (options.archived) groups.push([path.join(conversationsDir, ".archive"), true])
  const conversations: Array<ConversationSummary> = []
  const damaged: Array<DamagedConversation> = []
  for (const [parent, archived] of groups) {
    const names = await ConversationDir.dirsIn(parent)
    await Promise.all(names.map(async (name) => {
      const dir = path.join(parent, name)
      const key = path.relative(conversationsDir, dir)
      try {
        const { row, fresh } = await rowOf(dir, name, archived, index[key])
        dirty ||= fresh
        next[key] = row
        conversations.push({ ...row.summary, path: dir })
      } catch (error) {
        // One damaged (or unreadable) conversation never hides the others.
        dirty = true
        damaged.push({ id: ConversationId.fromDirname(name)!, path: dir, reason: error instanceof Error ? error.message : String(error) })
      }
    }))
  }
  // Rows of the archive stay valid when it was not scanned this time.
  for (const [key, row] of Object.entries(index)) {
    if (!(key in next) && !options.archived && key.startsWith(".archive")) next[key] = row
  }
  if (dirty || Object.keys(next).length !== Object.keys(index).length) {
    try {
      await fs.mkdir(conversationsDir, { recursive: true })
      await AtomicFile.writeAtomic(indexFile, JSON.stringify({ version: INDEX_VERSION, rows: next }))
    } catch {
      // A read-only storage directory still lists.
    }
  }
  conversations.sort((a, b) => Timestamp.compare(b.lastActivatedAt, a.lastActivatedAt) || (a.id < b.id ? 1 : -1))
  damaged.sort((a, b) => (a.id < b.id ? -1 : 1))
  return { conversations, damaged }
}
