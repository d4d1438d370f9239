/**
 * One conversation directory of JP's layout: find it, follow it when a
 * writer renames it, and sweep what killed writers left in it. Decoding and
 * creating are in `ConversationRead.ts`, so what only finds directories (a
 * listing that decodes nothing, `export`) loads no event codec (start-up:
 * docs/decisions.md#fast-start).
 *
 * ```text
 * <storage>/conversations/<id>[-<slug>]/{metadata.json, base_config.json?, events.json, events.json.journal?}
 * ```
 *
 * A damaged directory is {@link Corrupt} (naming the file and entry), one
 * removed while it was read is {@link Gone}.
 *
 * @example
 * ```ts
 * import * as ConversationDir from "parley/layers/store/ConversationDir"
 * const where = await ConversationDir.locate("/p/.parley/conversations", "17738399468")
 * // { dir: "/p/.parley/conversations/17738399468-a-title", archived: false } or undefined
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as fsSync from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as ConversationIdText from "../../domain/storage/ConversationIdText.ts"
import * as AtomicFile from "./AtomicFile.ts"
import * as FileLock from "./FileLock.ts"

/** Where a conversation lives. */
export interface Located {
  readonly dir: string
  readonly archived: boolean
}

/** A conversation's files cannot be decoded: names the file and, when it is about one entry, its index. */
export class Corrupt extends Error {
  constructor(
    readonly file: string,
    readonly entry: number | undefined,
    readonly reason: string
  ) {
    super(`${file}${entry === undefined ? "" : `: entry ${entry}`}: ${reason}`)
  }
}

/** The event log of a conversation directory. */
export const EVENTS = "events.json"

/** Appends since the last fold (`Journal.ts`); JP does not read it. */
export const JOURNAL = "events.json.journal"

/** How often a reader reads a conversation again while writers keep changing (or renaming) it under it. */
export const MAX_READS = 20

/** Prefix of directories being created (dot-named: JP and listings skip them). */
export const NEW_PREFIX = ".parley-new-"

/** Conversation directory names in `dir` (none when it does not exist). */
export const dirsIn = async (dir: string): Promise<Array<string>> => {
  try {
    return (await fs.readdir(dir, { withFileTypes: true }))
      .filter((d) => d.isDirectory() && ConversationIdText.fromDirname(d.name) !== undefined)
      .map((d) => d.name)
  } catch (error) {
    if (AtomicFile.isNotFound(error)) return []
    throw error
  }
}

/** The directory of `id` among `names` (JP's `<id>` or `<id>-<slug>`). */
export const pick = (names: ReadonlyArray<string>, id: string): string | undefined =>
  names.filter((n) => n === id || n.startsWith(`${id}-`)).sort()[0]

/** Finds `id`, live first, then archived. */
export const locate = async (conversationsDir: string, id: string): Promise<Located | undefined> => {
  for (const [dir, archived] of [
    [conversationsDir, false],
    [path.join(conversationsDir, ".archive"), true]
  ] as const) {
    const name = pick(await dirsIn(dir), id)
    if (name !== undefined) return { dir: path.join(dir, name), archived }
  }
  return undefined
}

/** A conversation's directory vanished while it was read, and no directory of its id is in its group now: it was removed. */
export class Gone extends Error {
  constructor(readonly dir: string) {
    super(`${dir}: removed while it was read`)
  }
}

/**
 * Runs the read `f` on a conversation's directory, following the directory
 * when a writer renames it meanwhile (closing a session whose title changed
 * moves it to `<id>-<new slug>`): a read that failed because its directory
 * vanished is made again where the conversation is now, so a moved
 * conversation is never reported damaged. Throws {@link Gone} when no
 * directory of the id is left in its group.
 */
export const following = async <A>(
  id: ConversationId.ConversationId,
  loc: Located,
  f: (loc: Located) => Promise<A>
): Promise<A> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await f(loc)
    } catch (error) {
      if (!(error instanceof Corrupt) || fsSync.existsSync(loc.dir) || attempt >= MAX_READS) throw error
      const parent = path.dirname(loc.dir)
      const name = pick(await dirsIn(parent), id)
      if (name === undefined) throw new Gone(loc.dir)
      loc = { dir: path.join(parent, name), archived: loc.archived }
    }
  }
}

/** What `AtomicFile.writeAtomic` names its temp files: `<file>.<pid>.<random>.tmp`. */
const TEMP = /^(?:metadata\.json|base_config\.json|events\.json)\.(\d+)\.[a-z0-9]*\.tmp$/

/**
 * Removes temp files of whole-file writes whose writer died before its
 * rename (a `kill -9` mid-discard leaves a full copy of `events.json`).
 * Called with the conversation's lock held, so no live writer owns them.
 */
export const sweepTemps = async (dir: string): Promise<void> => {
  for (const name of await fs.readdir(dir)) {
    const pid = Number(TEMP.exec(name)?.[1])
    if (Number.isSafeInteger(pid) && pid !== process.pid && !FileLock.isAlive(pid))
      await fs.rm(path.join(dir, name), { force: true })
  }
}

/** Removes staging directories whose creator died (a `kill -9` mid-create). */
export const sweepStaging = async (parent: string): Promise<void> => {
  let names: Array<string>
  try {
    names = await fs.readdir(parent)
  } catch {
    return
  }
  for (const name of names) {
    if (!name.startsWith(NEW_PREFIX)) continue
    const pid = Number(name.slice(NEW_PREFIX.length).split("-", 1)[0])
    if (Number.isSafeInteger(pid) && pid !== process.pid && !FileLock.isAlive(pid)) {
      await fs.rm(path.join(parent, name), { recursive: true, force: true })
    }
  }
}
