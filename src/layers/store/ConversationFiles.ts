/**
 * A conversation as its files (`parley conversation export` and `import`,
 * docs/postgres.md#import-and-export): what a JP storage directory holds for it — its directory name,
 * whether it is archived, and every regular file in it, byte for byte. The
 * PostgreSQL store's transfer (`pg/Transfer.ts`) makes and takes these; here
 * they are read from and written into storage directories.
 *
 * Writing follows the rule that a path a person names is written into, not
 * replaced (docs/security.md#other-users-on-the-machine): the named directory may be a symlink to one; a conversation is
 * written in a dot-named staging directory and renamed into place, so JP and
 * `ls` never see half of it; and a conversation whose id is already there
 * (live or archived) is never touched — {@link write} says `"exists"`.
 *
 * @example
 * ```ts
 * import * as ConversationFiles from "parley/layers/store/ConversationFiles"
 * const all = await ConversationFiles.ids("/home/me/.jp") // [{ id, archived, dirname }, …]
 * const one = await ConversationFiles.read("/home/me/.jp", all[0]!)
 * await ConversationFiles.write("/tmp/export", one) // "written" | "exists"
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import { DIR_MODE } from "../../domain/storage/PrivateDir.ts"
import * as AtomicFile from "./AtomicFile.ts"
import * as ConversationDir from "./ConversationDir.ts"

/** One file of a conversation directory. */
export interface File {
  readonly name: string
  readonly bytes: Uint8Array
}

/** Where a conversation's directory is in a storage directory. */
export interface Place {
  readonly id: ConversationId.ConversationId
  readonly archived: boolean
  /** The directory's name (JP's `<id>` or `<id>-<slug>`). */
  readonly dirname: string
}

/** A conversation as its files. */
export interface ConversationFiles extends Place {
  readonly files: ReadonlyArray<File>
}

/** The directory holding a storage's live (or archived) conversation directories. */
export const parentOf = (storageDir: string, archived: boolean): string =>
  path.join(storageDir, "conversations", ...(archived ? [".archive"] : []))

/** The conversations of a storage directory (live, then archived; by id), or the one `id`. */
export const ids = async (storageDir: string, id?: ConversationId.ConversationId): Promise<Array<Place>> => {
  const found: Array<Place> = []
  for (const archived of [false, true]) {
    for (const dirname of (await ConversationDir.dirsIn(parentOf(storageDir, archived))).sort()) {
      const of = ConversationId.fromDirname(dirname)!
      // JP keeps one directory per id; a second one for the same id is not a conversation of its own.
      if ((id === undefined || of === id) && !found.some((p) => p.id === of)) found.push({ id: of, archived, dirname })
    }
  }
  return found
}

/** The files of the conversation at `place` (regular files only, by name). */
export const read = async (storageDir: string, place: Place): Promise<ConversationFiles> => {
  const dir = path.join(parentOf(storageDir, place.archived), place.dirname)
  const names = (await fs.readdir(dir, { withFileTypes: true }))
    .filter((d) => d.isFile())
    .map((d) => d.name)
    .sort()
  const files: Array<File> = []
  for (const name of names) files.push({ name, bytes: await fs.readFile(path.join(dir, name)) })
  return { ...place, files }
}

/**
 * Writes `c` into the storage directory `storageDir` (created when missing),
 * complete before it appears; `"exists"` when a conversation with its id is
 * there already (live or archived), and then nothing is written.
 */
export const write = async (storageDir: string, c: ConversationFiles): Promise<"written" | "exists"> => {
  const conversations = path.join(storageDir, "conversations")
  if ((await ConversationDir.locate(conversations, c.id)) !== undefined) return "exists"
  const parent = parentOf(storageDir, c.archived)
  await fs.mkdir(parent, { recursive: true, mode: DIR_MODE })
  // Dot-named: nothing lists it, and the file store sweeps it if this process dies (ConversationDir.sweepStaging).
  const staging = path.join(parent, `${ConversationDir.NEW_PREFIX}${process.pid}-${c.dirname}`)
  await fs.rm(staging, { recursive: true, force: true })
  await fs.mkdir(staging, { mode: DIR_MODE })
  try {
    // New files in a directory nothing lists yet: flushed at once, then the directory (its entries).
    await AtomicFile.writeNewFiles(
      staging,
      c.files.map((f) => ({ name: f.name, data: f.bytes }))
    )
    // Looked for again just before the rename: a conversation made meanwhile is not replaced.
    if ((await ConversationDir.locate(conversations, c.id)) !== undefined) {
      await fs.rm(staging, { recursive: true, force: true })
      return "exists"
    }
    await fs.rename(staging, path.join(parent, c.dirname))
  } catch (error) {
    await fs.rm(staging, { recursive: true, force: true })
    throw error
  }
  await AtomicFile.syncDir(parent)
  return "written"
}
