/**
 * Decoding a conversation directory of JP's layout (replaying the journal),
 * and creating a new one that is complete before it is visible (split from
 * `ConversationDir.ts`, which only finds directories, so that a listing that
 * decodes nothing loads no event codec; start-up: docs/decisions.md#fast-start).
 *
 * Reading never throws anything but {@link ConversationDir.Corrupt} for what
 * is inside the directory (bad JSON, a bad entry, a journal line that is not
 * a record, nesting too deep for the decoder): one damaged conversation is
 * reported by name and never takes a listing or another command down with it.
 *
 * @example
 * ```ts
 * import * as ConversationRead from "parley/layers/store/ConversationRead"
 * import type { ConversationId } from "parley"
 * declare const id: ConversationId.ConversationId, dir: string
 * const conversation = await ConversationRead.read(id, { dir, archived: false })
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as fsSync from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as v8 from "node:v8"
import * as Result from "effect/Result"
import type { StreamEntry } from "../../domain/event/ConversationEvent.ts"
import type { Conversation } from "../../domain/storage/Conversation.ts"
import type * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../domain/storage/ConversationMetadata.ts"
import * as EntryCodec from "../../domain/storage/EntryCodec.ts"
import * as EventsFile from "../../domain/storage/EventsFile.ts"
import { DIR_MODE } from "../../domain/storage/PrivateDir.ts"
import * as AtomicFile from "./AtomicFile.ts"
import * as ConversationDir from "./ConversationDir.ts"
import * as Journal from "./Journal.ts"

/** What a decoder throws rather than returns, as {@link ConversationDir.Corrupt} for `file`. */
const thrownCorrupt = (file: string, error: unknown): ConversationDir.Corrupt => {
  if (error instanceof Journal.JournalError) return new ConversationDir.Corrupt(error.file, undefined, error.message)
  // The runtime's own limit (JSON.stringify and Schema recurse), not a codec error.
  if (error instanceof RangeError)
    return new ConversationDir.Corrupt(file, undefined, `nested too deeply to decode (${error.message})`)
  return new ConversationDir.Corrupt(file, undefined, error instanceof Error ? error.message : String(error))
}

/** What decoding `file` gave, or {@link ConversationDir.Corrupt} naming the file and entry it failed at. */
const decoding = <A>(file: string, f: () => Result.Result<A, EventsFile.DecodeError>): A => {
  let result: Result.Result<A, EventsFile.DecodeError>
  try {
    result = f()
  } catch (error) {
    throw thrownCorrupt(file, error)
  }
  if (Result.isSuccess(result)) return result.success
  const { file: at, entry, reason } = EventsFile.located(file, result.failure)
  throw new ConversationDir.Corrupt(at, entry, reason)
}

const readMetadata = async (
  dir: string
): Promise<{ text: string; metadata: ConversationMetadata.ConversationMetadata }> => {
  const file = path.join(dir, "metadata.json")
  const text = await AtomicFile.readIfExists(file)
  if (text === undefined) throw new ConversationDir.Corrupt(file, undefined, "missing")
  return {
    text,
    metadata: decoding(file, () => Result.flatMap(EventsFile.parseJson(text, file), ConversationMetadata.read))
  }
}

const readEventsBuffer = async (dir: string): Promise<Buffer> => {
  const file = path.join(dir, Journal.EVENTS)
  try {
    return await fs.readFile(file)
  } catch (error) {
    if (!AtomicFile.isNotFound(error)) throw error
    const legacy = fsSync.existsSync(path.join(dir, "messages.json"))
    throw new ConversationDir.Corrupt(
      file,
      undefined,
      legacy ? "missing (this directory holds a pre-2025-07 messages.json, a format parley does not read)" : "missing"
    )
  }
}

/** Appends the journal's lines for `base` to `entries` (which `events.json` gave). */
const replay = (entries: Array<StreamEntry>, parsed: Journal.Parsed, base: string, file: string): void => {
  for (const line of Journal.entriesFor(parsed, base)) {
    if (line.at < entries.length) continue // already in events.json
    if (line.at > entries.length) {
      throw new ConversationDir.Corrupt(
        file,
        undefined,
        `entry index ${line.at} leaves a gap after ${entries.length} entries`
      )
    }
    entries.push(decoding(file, () => EntryCodec.decode(line.entry)))
  }
}

const statIfExists = (file: string): Promise<fsSync.Stats | undefined> =>
  fs.stat(file).catch((error: unknown) => {
    if (AtomicFile.isNotFound(error)) return undefined
    throw error
  })

const sameFile = (a: fsSync.Stats, b: fsSync.Stats): boolean =>
  a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs

interface StreamFiles {
  readonly journalText: string | undefined
  readonly events: Buffer
  /** `events.json` as it stood right after it was read. */
  readonly stat: fsSync.Stats | undefined
}

/**
 * The journal and `events.json` of `dir` as of one instant, for readers that
 * take no lock. The journal is read first: a fold that runs afterwards leaves
 * `events.json` holding (or, with its fold record, extending) what the
 * journal held, so the pair replays to the same stream. `events.json` is read
 * again when a fold or a rewrite changed it while it was being read (its
 * size, mtime or inode moved).
 */
const readStreamFiles = async (dir: string): Promise<StreamFiles> => {
  const eventsFile = path.join(dir, Journal.EVENTS)
  for (let attempt = 1; ; attempt++) {
    const journalText = await AtomicFile.readIfExists(path.join(dir, Journal.FILE))
    const before = await statIfExists(eventsFile)
    const events = await readEventsBuffer(dir)
    const stat = await statIfExists(eventsFile)
    const steady = before !== undefined && stat !== undefined && sameFile(before, stat) && events.length === stat.size
    if (steady || attempt >= ConversationDir.MAX_READS) return { journalText, events, stat }
  }
}

/** Whether a writer changed the journal or `events.json` since `files` were read. */
const changedSince = async (dir: string, files: StreamFiles): Promise<boolean> => {
  const stat = await statIfExists(path.join(dir, Journal.EVENTS))
  if (stat === undefined || files.stat === undefined || !sameFile(stat, files.stat)) return true
  return (await AtomicFile.readIfExists(path.join(dir, Journal.FILE))) !== files.journalText
}

/**
 * Reads and decodes the stream of `dir`. A fold's tail written within one
 * mtime tick of the read can still slip past the stat check; it tears only
 * the bytes from the old closing bracket on, which never decode, so a decode
 * failure on files that have changed since is read again rather than
 * reported as damage.
 */
const readStream = async (
  dir: string,
  hasBaseConfig: boolean
): Promise<StreamFiles & { entries: Array<StreamEntry> }> => {
  for (let attempt = 1; ; attempt++) {
    const files = await readStreamFiles(dir)
    try {
      return { ...files, entries: decodeStream(dir, files, hasBaseConfig) }
    } catch (error) {
      if (attempt >= ConversationDir.MAX_READS || !(await changedSince(dir, files))) throw error
    }
  }
}

/** The decoded stream of `dir`: `events.json` plus what the journal extends it with. */
export const readEntries = async (dir: string, hasBaseConfig: boolean): Promise<Array<StreamEntry>> =>
  (await readStream(dir, hasBaseConfig)).entries

/** From this size of `events.json` on, decoding holds the young generation at the size it has ({@link holdingYoungGeneration}). */
const LARGE_EVENTS = 8 * 1024 * 1024

/** Whether whoever started node chose the young generation's growth themselves (then it is theirs to keep). */
const growthChosen = [...process.execArgv, process.env["NODE_OPTIONS"] ?? ""].some((a) =>
  /semi[-_]space[-_]growth[-_]factor/.test(a)
)

/**
 * Runs `f` with V8's young generation kept at the size it has, then lets it
 * grow again (docs/benchmarks.md#resuming-a-large-conversation). Decoding a
 * conversation keeps nearly all it allocates; Node 24 lets the young
 * generation grow to 64 MB semi-spaces on a machine with a few GB (Node 20
 * and 22 stop at 16 MB), and a scavenge of one copies everything that
 * survived it into fresh pages: on the 94 MB conversation a third more CPU
 * time and 400 MB of peak memory instead of 290 MB. The growth factor is the
 * one knob V8 reads after start-up (at each resize); 2 is its default.
 */
const holdingYoungGeneration = <A>(bytes: number, f: () => A): A => {
  if (bytes < LARGE_EVENTS || growthChosen) return f()
  v8.setFlagsFromString("--semi-space-growth-factor=1")
  try {
    return f()
  } finally {
    v8.setFlagsFromString("--semi-space-growth-factor=2")
  }
}

const decodeStream = (
  dir: string,
  { journalText, events }: StreamFiles,
  hasBaseConfig: boolean
): Array<StreamEntry> => {
  const eventsFile = path.join(dir, Journal.EVENTS)
  const journalFile = path.join(dir, Journal.FILE)
  const parsed =
    journalText === undefined
      ? undefined
      : decoding(journalFile, () => Result.succeed(Journal.parse(journalText, journalFile)))
  const { bytes, base } = Journal.effectiveEvents(events, parsed)
  const entries = holdingYoungGeneration(bytes.length, () =>
    decoding(eventsFile, () => EventsFile.read(bytes, eventsFile))
  )
  if (!hasBaseConfig && (entries.length === 0 || entries[0]!.type !== "config_delta")) {
    throw new ConversationDir.Corrupt(
      eventsFile,
      entries.length === 0 ? undefined : 0,
      "without base_config.json the first entry must be the packed base config_delta (JP's legacy layout)"
    )
  }
  if (parsed !== undefined) replay(entries, parsed, base, journalFile)
  return entries
}

/** The bytes a conversation was decoded from (`check` compares these, not a later read a writer may have changed). */
export interface Source {
  readonly metadata: string
  readonly baseConfig: string | undefined
  readonly events: Buffer
  /** A journal was beside `events.json`: the file alone is not the whole stream. */
  readonly journaled: boolean
}

/** Decodes a conversation directory, with the bytes it came from. Throws {@link ConversationDir.Corrupt} naming the file (and entry). */
export const readSource = async (
  id: ConversationId.ConversationId,
  loc: ConversationDir.Located
): Promise<{ conversation: Conversation; source: Source }> => {
  const { text: metadataText, metadata } = await readMetadata(loc.dir)
  const baseFile = path.join(loc.dir, "base_config.json")
  const baseText = await AtomicFile.readIfExists(baseFile)
  if (baseText !== undefined) decoding(baseFile, () => EventsFile.parseJson(baseText, baseFile))
  const { entries, ...files } = await readStream(loc.dir, baseText !== undefined)
  return {
    conversation: {
      id,
      archived: loc.archived,
      metadata,
      baseConfig: baseText === undefined ? { _tag: "Packed" } : { _tag: "File", text: baseText },
      entries
    },
    source: {
      metadata: metadataText,
      baseConfig: baseText,
      events: files.events,
      journaled: files.journalText !== undefined
    }
  }
}

/** Decodes a conversation directory. Throws {@link ConversationDir.Corrupt} naming the file (and entry). */
export const read = async (id: ConversationId.ConversationId, loc: ConversationDir.Located): Promise<Conversation> =>
  (await readSource(id, loc)).conversation

/**
 * Writes a conversation's files (JP's: metadata, base config, events) into the new, empty
 * directory `dir`, flushed at once (`AtomicFile.writeNewFiles`; seven flushes in a row before,
 * 22 ms of a new conversation's first turn under strace).
 */
const writeNewFiles = (dir: string, conversation: Omit<Conversation, "id" | "archived">): Promise<void> =>
  AtomicFile.writeNewFiles(dir, [
    { name: "metadata.json", data: EventsFile.renderJson(ConversationMetadata.encode(conversation.metadata)) },
    ...(conversation.baseConfig._tag === "File"
      ? [{ name: "base_config.json", data: conversation.baseConfig.text }]
      : []),
    { name: Journal.EVENTS, data: EventsFile.render(conversation.entries) }
  ])

/**
 * Creates `parent/name` holding `conversation`, complete before it appears:
 * the files are written in a dot-named directory that is then renamed into
 * place. A crash leaves only the dot-named directory, which nothing lists.
 */
export const create = async (
  parent: string,
  name: string,
  conversation: Omit<Conversation, "id" | "archived">
): Promise<string> => {
  await fs.mkdir(parent, { recursive: true, mode: DIR_MODE })
  const staging = path.join(parent, `${ConversationDir.NEW_PREFIX}${process.pid}-${name}`)
  await fs.rm(staging, { recursive: true, force: true })
  await fs.mkdir(staging, { mode: DIR_MODE })
  await writeNewFiles(staging, conversation)
  const dir = path.join(parent, name)
  await fs.rename(staging, dir)
  await AtomicFile.syncDir(parent)
  return dir
}
