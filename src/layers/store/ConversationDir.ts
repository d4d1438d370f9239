/**
 * One conversation directory of JP's layout: find it, decode it (replaying
 * the journal), and create a new one that is complete before it is visible.
 *
 * ```text
 * <storage>/conversations/<id>[-<slug>]/{metadata.json, base_config.json?, events.json, events.json.journal?}
 * ```
 *
 * Reading never throws anything but {@link Corrupt} for what is inside the
 * directory (bad JSON, a bad entry, a journal line that is not a record,
 * nesting too deep for the decoder): one damaged conversation is reported by
 * name and never takes a listing or another command down with it.
 *
 * @example
 * ```ts
 * import * as ConversationDir from "./ConversationDir.ts"
 * const conversation = await ConversationDir.read(id, { dir, archived: false })
 * ```
 */
import * as fsSync from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { StreamEntry } from "../../domain/event/ConversationEvent.ts"
import type { Conversation } from "../../domain/storage/Conversation.ts"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../domain/storage/ConversationMetadata.ts"
import * as EntryCodec from "../../domain/storage/EntryCodec.ts"
import * as EventsFile from "../../domain/storage/EventsFile.ts"
import * as AtomicFile from "./AtomicFile.ts"
import * as Journal from "./Journal.ts"

/** Where a conversation lives. */
export interface Located {
  readonly dir: string
  readonly archived: boolean
}

/** A conversation's files cannot be decoded: names the file and, when it is about one entry, its index. */
export class Corrupt extends Error {
  constructor(readonly file: string, readonly entry: number | undefined, readonly reason: string) {
    super(`${file}${entry === undefined ? "" : `: entry ${entry}`}: ${reason}`)
  }
}

/** Prefix of directories being created (dot-named: JP and listings skip them). */
export const NEW_PREFIX = ".parley-new-"

/** Conversation directory names in `dir` (none when it does not exist). */
export const dirsIn = async (dir: string): Promise<Array<string>> => {
  try {
    return (await fs.readdir(dir, { withFileTypes: true }))
      .filter((d) => d.isDirectory() && ConversationId.fromDirname(d.name) !== undefined)
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
  for (const [dir, archived] of [[conversationsDir, false], [path.join(conversationsDir, ".archive"), true]] as const) {
    const name = pick(await dirsIn(dir), id)
    if (name !== undefined) return { dir: path.join(dir, name), archived }
  }
  return undefined
}

/** Turns anything a decoder throws into {@link Corrupt} for `file`. */
const decoding = <A>(file: string, f: () => A): A => {
  try {
    return f()
  } catch (error) {
    if (error instanceof Corrupt) throw error
    if (error instanceof EventsFile.EventsFileError) throw new Corrupt(error.file, error.entry, error.reason)
    if (error instanceof Journal.JournalError) throw new Corrupt(error.file, undefined, error.message)
    if (error instanceof RangeError) throw new Corrupt(file, undefined, `nested too deeply to decode (${error.message})`)
    throw new Corrupt(file, undefined, error instanceof Error ? error.message : String(error))
  }
}

const readMetadata = async (dir: string): Promise<ConversationMetadata.ConversationMetadata> => {
  const file = path.join(dir, "metadata.json")
  const text = await AtomicFile.readIfExists(file)
  if (text === undefined) throw new Corrupt(file, undefined, "missing")
  return decoding(file, () => ConversationMetadata.decode(EventsFile.parseJson(text, file), file))
}

const readEventsBuffer = async (dir: string): Promise<Buffer> => {
  const file = path.join(dir, Journal.EVENTS)
  try {
    return await fs.readFile(file)
  } catch (error) {
    if (!AtomicFile.isNotFound(error)) throw error
    const legacy = fsSync.existsSync(path.join(dir, "messages.json"))
    throw new Corrupt(file, undefined, legacy
      ? "missing (this directory holds a pre-2025-07 messages.json, a format parley does not read)"
      : "missing")
  }
}

/** Appends the journal's lines for `base` to `entries` (which `events.json` gave). */
const replay = (entries: Array<StreamEntry>, parsed: Journal.Parsed, base: string, file: string): void => {
  for (const line of Journal.entriesFor(parsed, base)) {
    if (line.at < entries.length) continue // already in events.json
    if (line.at > entries.length) {
      throw new Corrupt(file, undefined, `entry index ${line.at} leaves a gap after ${entries.length} entries`)
    }
    entries.push(decoding(file, () => EntryCodec.decodeEntry(line.entry)))
  }
}

/** A decoded stream, with the bytes of `events.json` it was read from. */
interface ReadStream {
  readonly entries: Array<StreamEntry>
  /** `events.json` as read. */
  readonly events: Buffer
  /** Whether a journal extends (or is being folded into) `events.json`. */
  readonly journaled: boolean
}

const readStream = async (dir: string, hasBaseConfig: boolean): Promise<ReadStream> => {
  const eventsFile = path.join(dir, Journal.EVENTS)
  const journalFile = path.join(dir, Journal.FILE)
  const buffer = await readEventsBuffer(dir)
  const journalText = await AtomicFile.readIfExists(journalFile)
  const parsed = journalText === undefined ? undefined : decoding(journalFile, () => Journal.parse(journalText, journalFile))
  const { bytes, base } = Journal.effectiveEvents(buffer, parsed)
  // From the bytes, element by element: the whole file never becomes one string.
  const entries = decoding(eventsFile, () => EventsFile.parseBytes(bytes, eventsFile))
  if (!hasBaseConfig && (entries.length === 0 || entries[0]!.type !== "config_delta")) {
    throw new Corrupt(eventsFile, entries.length === 0 ? undefined : 0,
      "without base_config.json the first entry must be the packed base config_delta (JP's legacy layout)")
  }
  if (parsed !== undefined) replay(entries, parsed, base, journalFile)
  return { entries, events: buffer, journaled: journalText !== undefined }
}

/** The decoded stream of `dir`: `events.json` plus what the journal extends it with. */
export const readEntries = async (dir: string, hasBaseConfig: boolean): Promise<Array<StreamEntry>> =>
  (await readStream(dir, hasBaseConfig)).entries

/**
 * Decodes a conversation directory, and hands back the bytes of its
 * `events.json` too (`conversation check` compares them without reading the
 * file twice). Throws {@link Corrupt} naming the file (and entry).
 */
export const readWithEvents = async (
  id: ConversationId.ConversationId,
  loc: Located
): Promise<{ readonly conversation: Conversation; readonly events: Buffer; readonly journaled: boolean }> => {
  const metadata = await readMetadata(loc.dir)
  const baseFile = path.join(loc.dir, "base_config.json")
  const baseText = await AtomicFile.readIfExists(baseFile)
  if (baseText !== undefined) decoding(baseFile, () => EventsFile.parseJson(baseText, baseFile))
  const { entries, events, journaled } = await readStream(loc.dir, baseText !== undefined)
  const conversation: Conversation = {
    id,
    archived: loc.archived,
    metadata,
    baseConfig: baseText === undefined ? { _tag: "Packed" } : { _tag: "File", text: baseText },
    entries
  }
  return { conversation, events, journaled }
}

/** Decodes a conversation directory. Throws {@link Corrupt} naming the file (and entry). */
export const read = async (id: ConversationId.ConversationId, loc: Located): Promise<Conversation> =>
  (await readWithEvents(id, loc)).conversation

/** Writes a conversation's files into `dir` (JP's order: metadata, base config, events). */
export const writeFiles = async (dir: string, conversation: Omit<Conversation, "id" | "archived">): Promise<void> => {
  await AtomicFile.writeIfChanged(path.join(dir, "metadata.json"), EventsFile.renderJson(ConversationMetadata.encode(conversation.metadata)))
  if (conversation.baseConfig._tag === "File") {
    await AtomicFile.writeIfChanged(path.join(dir, "base_config.json"), conversation.baseConfig.text)
  }
  await AtomicFile.writeIfChanged(path.join(dir, Journal.EVENTS), EventsFile.render(conversation.entries))
}

/**
 * Creates `parent/name` holding `conversation`, complete before it appears:
 * the files are written in a dot-named directory that is then renamed into
 * place. A crash leaves only the dot-named directory, which nothing lists.
 */
export const create = async (parent: string, name: string, conversation: Omit<Conversation, "id" | "archived">): Promise<string> => {
  await fs.mkdir(parent, { recursive: true })
  const staging = path.join(parent, `${NEW_PREFIX}${process.pid}-${name}`)
  await fs.rm(staging, { recursive: true, force: true })
  await fs.mkdir(staging)
  await writeFiles(staging, conversation)
  const dir = path.join(parent, name)
  await fs.rename(staging, dir)
  await AtomicFile.syncDir(parent)
  return dir
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as { code?: string }).code === "EPERM"
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
    if (Number.isSafeInteger(pid) && pid !== process.pid && !isAlive(pid)) {
      await fs.rm(path.join(parent, name), { recursive: true, force: true })
    }
  }
}
