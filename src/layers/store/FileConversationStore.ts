/**
 * The `ConversationStore` on JP's on-disk layout:
 *
 * ```text
 * <storage>/conversations/<id>[-<slug>]/{metadata.json, base_config.json?, events.json}
 * <storage>/conversations/.archive/<id>[-<slug>]/…
 * <storage>/locks/jp-c<id>.lock
 * ```
 *
 * Per-event persistence without rewriting the log: `append` writes the new
 * entries to `events.json.journal` (one JSON line each, fdatasync'd) in O(event).
 * `load` reads `events.json` and replays the journal; `save` folds everything
 * back into `events.json` (atomic rename) and then removes the journal, so at
 * rest the directory is plain JP format. Each journal line carries the index
 * its entry takes in the stream (`at`) and the byte size of the
 * `events.json` it extends (`base`; not its mtime, which a plain copy of the
 * directory changes): a crash between the rename and the
 * journal's removal leaves lines whose base no longer matches, and they are
 * ignored (whether the save folded them in or discarded them). A torn last
 * line (a crash mid-append, before `append` returned) is ignored, and cut
 * off before the next append so it cannot merge with the next line.
 *
 * `list` keeps a sidecar index (`conversations/.parley-index.json`, dot-named
 * so JP skips it) of summaries validated by the size and mtime of every file
 * they came from, so listing never parses an unchanged event log.
 *
 * @example
 * ```ts
 * import * as FileConversationStore from "./FileConversationStore.ts"
 * const layer = FileConversationStore.layer({ storageDir: "/home/me/project/.parley" })
 * ```
 */
import * as fsSync from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Semaphore from "effect/Semaphore"
import type { Conversation } from "../../domain/storage/Conversation.ts"
import { isConversationEvent, type StreamEntry } from "../../domain/event/ConversationEvent.ts"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../domain/storage/ConversationMetadata.ts"
import * as EntryCodec from "../../domain/storage/EntryCodec.ts"
import * as EventsFile from "../../domain/storage/EventsFile.ts"
import * as Timestamp from "../../domain/event/Timestamp.ts"
import * as TurnAppend from "../../domain/stream/TurnAppend.ts"
import {
  AppendRejected,
  type CheckResult,
  ConversationCorrupt,
  ConversationLocked,
  ConversationNotFound,
  ConversationStore,
  type ConversationSummary,
  StoreIoError
} from "../../services/ConversationStore.ts"
import * as AtomicFile from "./AtomicFile.ts"
import { summaryOf } from "./Summary.ts"
import * as FileLock from "./FileLock.ts"

export const JOURNAL = "events.json.journal"
export const INDEX = ".parley-index.json"
const INDEX_VERSION = 2

interface Located {
  readonly dir: string
  readonly archived: boolean
}

/** What `append` needs to validate and place a batch without re-reading the log. */
interface TailState {
  readonly length: number
  /** Whether the stream holds any conversation event (an empty one gets a turn_start first). */
  readonly hasEvents: boolean
  /** Request/response counts of the current turn, moved forward on every append. */
  readonly counts: TurnAppend.TurnCounts
  readonly journalSize: number
  /** Bytes of the journal up to its last complete line (less than the size after a torn append). */
  readonly journalCleanSize: number
  readonly eventsStamp: string
  /** The `base` journal lines written now carry. */
  readonly eventsBase: string
}

class Corrupt extends Error {
  constructor(readonly file: string, readonly entry: number | undefined, readonly reason: string) {
    super(reason)
  }
}

const tailOf = (
  entries: ReadonlyArray<StreamEntry>,
  journal: { readonly size: number; readonly cleanSize: number },
  events: fsSync.Stats | undefined
): TailState => ({
  length: entries.length,
  hasEvents: entries.some(isConversationEvent),
  counts: TurnAppend.turnCounts(entries),
  journalSize: journal.size,
  journalCleanSize: journal.cleanSize,
  eventsStamp: stamp(events),
  eventsBase: baseOf(events)
})

/** What a journal line extends: the byte size of events.json. */
const baseOf = (st: fsSync.Stats | undefined): string => String(st?.size ?? 0)

const stamp = (st: fsSync.Stats | undefined): string => (st === undefined ? "-" : `${st.size}:${st.mtimeMs}`)

const statOrUndefined = async (file: string): Promise<fsSync.Stats | undefined> => {
  try {
    return await fs.stat(file)
  } catch (error) {
    if (AtomicFile.isNotFound(error)) return undefined
    throw error
  }
}

/** Parses journal text: complete lines only; a torn last line is what a crash mid-append leaves. */
const parseJournal = (text: string, file: string): Array<{ at: number; base: string | undefined; entry: unknown }> => {
  const lines = text.split("\n")
  const complete = text.endsWith("\n") ? lines.slice(0, -1) : lines.slice(0, -1)
  return complete.map((line, i) => {
    let parsed: unknown
    try {
      parsed = JSON.parse(line)
    } catch (error) {
      throw new Corrupt(file, undefined, `line ${i + 1}: ${EventsFile.jsonErrorAt(line, error)}`)
    }
    const at = (parsed as { at?: unknown }).at
    if (typeof at !== "number" || !("entry" in (parsed as object))) {
      throw new Corrupt(file, undefined, `line ${i + 1}: expected {"at": <index>, "entry": {…}}`)
    }
    const base = (parsed as { base?: unknown }).base
    return { at, base: typeof base === "string" ? base : undefined, entry: (parsed as { entry: unknown }).entry }
  })
}

/** Decodes a conversation directory. Throws {@link Corrupt} naming the file (and entry). */
const readConversation = async (
  id: ConversationId.ConversationId,
  loc: Located
): Promise<Conversation & { journal: { size: number; cleanSize: number }; eventsStat: fsSync.Stats | undefined }> => {
  const metaFile = path.join(loc.dir, "metadata.json")
  const baseFile = path.join(loc.dir, "base_config.json")
  const eventsFile = path.join(loc.dir, "events.json")
  const journalFile = path.join(loc.dir, JOURNAL)

  const metaText = await AtomicFile.readIfExists(metaFile)
  if (metaText === undefined) throw new Corrupt(metaFile, undefined, "missing")
  let metadata: ConversationMetadata.ConversationMetadata
  try {
    metadata = ConversationMetadata.decode(EventsFile.parseJson(metaText, metaFile), metaFile)
  } catch (error) {
    throw new Corrupt(metaFile, undefined, error instanceof EventsFile.EventsFileError ? error.reason : (error as Error).message)
  }

  const baseText = await AtomicFile.readIfExists(baseFile)
  if (baseText !== undefined) {
    try {
      EventsFile.parseJson(baseText, baseFile)
    } catch (error) {
      throw new Corrupt(baseFile, undefined, (error as EventsFile.EventsFileError).reason)
    }
  }

  const eventsStat = await statOrUndefined(eventsFile)
  const eventsText = await AtomicFile.readIfExists(eventsFile)
  if (eventsText === undefined) {
    const legacy = fsSync.existsSync(path.join(loc.dir, "messages.json"))
    throw new Corrupt(eventsFile, undefined, legacy
      ? "missing (this directory holds a pre-2025-07 messages.json, a format parley does not read)"
      : "missing")
  }
  let entries: Array<StreamEntry>
  try {
    entries = EventsFile.parse(eventsText, eventsFile)
  } catch (error) {
    if (error instanceof EventsFile.EventsFileError) throw new Corrupt(error.file, error.entry, error.reason)
    throw error
  }
  if (baseText === undefined && (entries.length === 0 || entries[0]!.type !== "config_delta")) {
    throw new Corrupt(eventsFile, entries.length === 0 ? undefined : 0,
      "without base_config.json the first entry must be the packed base config_delta (JP's legacy layout)")
  }

  const journalText = await AtomicFile.readIfExists(journalFile)
  if (journalText !== undefined) {
    const current = baseOf(eventsStat)
    for (const [i, line] of parseJournal(journalText, journalFile).entries()) {
      if (line.base !== undefined && line.base !== current) continue // extends an events.json since replaced by a save
      if (line.at < entries.length) continue // already folded into events.json by a save
      if (line.at > entries.length) {
        throw new Corrupt(journalFile, undefined, `line ${i + 1}: entry index ${line.at} leaves a gap after ${entries.length} entries`)
      }
      try {
        entries.push(EntryCodec.decodeEntry(line.entry))
      } catch (error) {
        throw new Corrupt(journalFile, undefined, `line ${i + 1}: ${(error as Error).message}`)
      }
    }
  }
  return {
    id,
    archived: loc.archived,
    metadata,
    baseConfig: baseText === undefined ? { _tag: "Packed" } : { _tag: "File", text: baseText },
    entries,
    journal: journalText === undefined
      ? { size: 0, cleanSize: 0 }
      : { size: Buffer.byteLength(journalText), cleanSize: Buffer.byteLength(journalText.slice(0, journalText.lastIndexOf("\n") + 1)) },
    eventsStat
  }
}


interface IndexRow {
  readonly stamp: string
  readonly summary: ConversationSummary
}

/** Options of the file layer. */
export interface Options {
  /** The storage directory (holds `config.toml` and `conversations/`). */
  readonly storageDir: string
}

/** Builds the store over a storage directory. */
export const make = (options: Options) =>
  Effect.gen(function*() {
    const root = path.resolve(options.storageDir)
    const conversationsDir = path.join(root, "conversations")
    const archiveDir = path.join(conversationsDir, ".archive")
    const lockFile = (id: string) => path.join(root, "locks", `jp-c${id}.lock`)
    const tails = new Map<string, TailState>()
    const mutex = yield* Semaphore.make(1)

    const ioError = (file: string, error: unknown) => {
      const e = error as { code?: string; message?: string }
      return new StoreIoError({ path: file, reason: e.code ?? e.message ?? String(error) })
    }

    /** Runs file I/O; a Corrupt thrown inside becomes a StoreIoError naming its file. */
    const io = <A>(file: string, f: () => Promise<A>) =>
      Effect.tryPromise({
        try: f,
        catch: (error) =>
          error instanceof Corrupt
            ? new StoreIoError({ path: error.file, reason: error.reason })
            : ioError(file, error)
      })

    /** Runs a read that may find a damaged conversation. */
    const read = <A>(file: string, f: () => Promise<A>) =>
      Effect.tryPromise({
        try: f,
        catch: (error) => (error instanceof Corrupt ? error : ioError(file, error))
      })

    const corruptFor = (id: string) => (error: Corrupt | StoreIoError): ConversationCorrupt | StoreIoError =>
      error instanceof Corrupt
        ? new ConversationCorrupt({
          id,
          file: error.file,
          ...(error.entry === undefined ? {} : { entry: error.entry }),
          reason: error.reason
        })
        : error

    const dirsIn = async (dir: string): Promise<Array<string>> => {
      try {
        return (await fs.readdir(dir, { withFileTypes: true }))
          .filter((d) => d.isDirectory() && ConversationId.fromDirname(d.name) !== undefined)
          .map((d) => d.name)
      } catch (error) {
        if (AtomicFile.isNotFound(error)) return []
        throw error
      }
    }

    const locate = async (id: string): Promise<Located | undefined> => {
      for (const [dir, archived] of [[conversationsDir, false], [archiveDir, true]] as const) {
        const names = (await dirsIn(dir)).filter((n) => n === id || n.startsWith(`${id}-`)).sort()
        if (names.length > 0) return { dir: path.join(dir, names[0]!), archived }
      }
      return undefined
    }

    const loadFull = (id: ConversationId.ConversationId) =>
      Effect.gen(function*() {
        const loc = yield* io(conversationsDir, () => locate(id))
        if (loc === undefined) return yield* new ConversationNotFound({ id })
        const conversation = yield* read(loc.dir, () => readConversation(id, loc)).pipe(Effect.mapError(corruptFor(id)))
        tails.set(id, tailOf(conversation.entries, conversation.journal, conversation.eventsStat))
        return { conversation, loc }
      })

    const load = (id: ConversationId.ConversationId) =>
      loadFull(id).pipe(
        Effect.map(({ conversation }): Conversation => ({
          id: conversation.id,
          archived: conversation.archived,
          metadata: conversation.metadata,
          baseConfig: conversation.baseConfig,
          entries: conversation.entries
        })),
        mutex.withPermits(1)
      )

    const save = (conversation: Conversation) =>
      Effect.gen(function*() {
        const id = conversation.id
        const parent = conversation.archived ? archiveDir : conversationsDir
        const dir = path.join(parent, ConversationId.dirname(id, conversation.metadata.title))
        const eventsText = EventsFile.render(conversation.entries)
        const eventsStat = yield* io(dir, async () => {
          const existing = await locate(id)
          await fs.mkdir(parent, { recursive: true })
          if (existing !== undefined && existing.dir !== dir) {
            // Title change or (un)archive: move the directory, keeping any other files in it.
            await fs.rm(dir, { recursive: true, force: true })
            await fs.rename(existing.dir, dir)
            await AtomicFile.syncDir(path.dirname(existing.dir))
          }
          await fs.mkdir(dir, { recursive: true })
          // JP's order: metadata, base config, events.
          await AtomicFile.writeIfChanged(path.join(dir, "metadata.json"), EventsFile.renderJson(ConversationMetadata.encode(conversation.metadata)))
          if (conversation.baseConfig._tag === "File") {
            await AtomicFile.writeIfChanged(path.join(dir, "base_config.json"), conversation.baseConfig.text)
          }
          await AtomicFile.writeIfChanged(path.join(dir, "events.json"), eventsText)
          // Only now is every journaled entry in events.json.
          await fs.rm(path.join(dir, JOURNAL), { force: true })
          await AtomicFile.syncDir(dir)
          return fs.stat(path.join(dir, "events.json"))
        })
        tails.set(id, tailOf(conversation.entries, { size: 0, cleanSize: 0 }, eventsStat))
      }).pipe(mutex.withPermits(1))

    const append = (id: ConversationId.ConversationId, batch: ReadonlyArray<StreamEntry>) =>
      Effect.gen(function*() {
        if (batch.length === 0) return
        const loc = yield* io(conversationsDir, () => locate(id))
        if (loc === undefined) return yield* new ConversationNotFound({ id })
        const journalFile = path.join(loc.dir, JOURNAL)
        let tail = tails.get(id)
        if (tail !== undefined) {
          // Trust the cached tail only if nobody else touched the files.
          const [eventsStat, journalStat] = yield* io(loc.dir, () =>
            Promise.all([statOrUndefined(path.join(loc.dir, "events.json")), statOrUndefined(journalFile)])
          )
          if (stamp(eventsStat) !== tail.eventsStamp || (journalStat?.size ?? 0) !== tail.journalSize) tail = undefined
        }
        if (tail === undefined) {
          yield* loadFull(id)
          tail = tails.get(id)!
        }
        const result = TurnAppend.validateAgainst(tail, batch)
        if (result._tag === "Rejected") {
          return yield* new AppendRejected({ id, reason: TurnAppend.describeRejection(result.rejection) })
        }
        let text = ""
        let at = tail.length
        for (const e of result.entries) {
          text += JSON.stringify({ at: at++, base: tail.eventsBase, entry: EntryCodec.encodeEntry(e) }) + "\n"
        }
        const cleanSize = tail.journalCleanSize
        const torn = tail.journalSize !== cleanSize
        yield* io(journalFile, async () => {
          // A crash mid-append left half a line: cut it off so it cannot merge with ours.
          if (torn) await fs.truncate(journalFile, cleanSize)
          await AtomicFile.appendDurable(journalFile, text)
        })
        TurnAppend.advance(tail.counts, result.entries)
        tails.set(id, {
          length: at,
          hasEvents: tail.hasEvents || result.entries.some(isConversationEvent),
          counts: tail.counts,
          journalSize: cleanSize + Buffer.byteLength(text),
          journalCleanSize: cleanSize + Buffer.byteLength(text),
          eventsStamp: tail.eventsStamp,
          eventsBase: tail.eventsBase
        })
      }).pipe(mutex.withPermits(1))

    const lock = (id: ConversationId.ConversationId) =>
      Effect.acquireRelease(
        Effect.gen(function*() {
          const file = lockFile(id)
          const result = yield* io(file, () => FileLock.acquire(file))
          if (result._tag === "Held") return yield* new ConversationLocked({ id, pid: result.pid, lockFile: file })
          return file
        }),
        (file) => Effect.promise(() => FileLock.release(file).catch(() => undefined))
      ).pipe(Effect.asVoid)

    const indexFile = path.join(conversationsDir, INDEX)

    const readIndex = async (): Promise<Record<string, IndexRow>> => {
      try {
        const parsed = JSON.parse(await fs.readFile(indexFile, "utf8")) as { version?: number; rows?: Record<string, IndexRow> }
        return parsed.version === INDEX_VERSION && typeof parsed.rows === "object" && parsed.rows !== null ? parsed.rows : {}
      } catch {
        return {} // missing or damaged: it is only a cache
      }
    }

    const list = (options?: { readonly archived?: boolean }) =>
      io(conversationsDir, async () => {
        const index = await readIndex()
        const fresh: Record<string, IndexRow> = {}
        let dirty = false
        const groups: Array<[string, boolean]> = [[conversationsDir, false]]
        if (options?.archived === true) groups.push([archiveDir, true])
        const out: Array<ConversationSummary> = []
        for (const [parent, archived] of groups) {
          const names = await dirsIn(parent)
          await Promise.all(names.map(async (name) => {
            const dir = path.join(parent, name)
            const key = path.relative(conversationsDir, dir)
            const stats = await Promise.all(
              // base_config.json is not part of a summary, so it is not stat'ed.
              ["metadata.json", "events.json", JOURNAL].map((f) => statOrUndefined(path.join(dir, f)))
            )
            const s = stats.map(stamp).join("|")
            const cached = index[key]
            if (cached !== undefined && cached.stamp === s) {
              fresh[key] = cached
              out.push({ ...cached.summary, path: dir })
              return
            }
            dirty = true
            const id = ConversationId.fromDirname(name)!
            try {
              const conversation = await readConversation(id, { dir, archived })
              const summary = summaryOf(conversation, dir)
              fresh[key] = { stamp: s, summary }
              out.push(summary)
            } catch (error) {
              if (!(error instanceof Corrupt)) throw error
              // A damaged conversation is not listed; `conversation check` names the problem.
            }
          }))
        }
        // Rows for groups not scanned this time stay valid.
        for (const [key, row] of Object.entries(index)) {
          if (!(key in fresh) && options?.archived !== true && key.startsWith(".archive")) fresh[key] = row
        }
        if (dirty || Object.keys(fresh).length !== Object.keys(index).length) {
          try {
            await fs.mkdir(conversationsDir, { recursive: true })
            await AtomicFile.writeAtomic(indexFile, JSON.stringify({ version: INDEX_VERSION, rows: fresh }))
          } catch {
            // A read-only storage directory still lists.
          }
        }
        return out.sort((a, b) => Timestamp.compare(b.lastActivatedAt, a.lastActivatedAt) || (a.id < b.id ? 1 : -1))
      })

    const checkOne = async (id: ConversationId.ConversationId, loc: Located): Promise<CheckResult> => {
      try {
        const conversation = await readConversation(id, loc)
        const files: Array<[string, string]> = [
          ["metadata.json", EventsFile.renderJson(ConversationMetadata.encode(conversation.metadata))],
          ["events.json", EventsFile.render(conversation.entries)]
        ]
        if (conversation.baseConfig._tag === "File") {
          files.push(["base_config.json", EventsFile.renderJson(JSON.parse(conversation.baseConfig.text))])
        }
        let identical = true
        for (const [name, text] of files) {
          if (name === "events.json" && conversation.journal.size > 0) continue // journal not folded yet
          if ((await fs.readFile(path.join(loc.dir, name), "utf8")) !== text) identical = false
        }
        return { id, path: loc.dir, ok: true, roundtrip: identical ? "identical" : "changed" }
      } catch (error) {
        if (error instanceof Corrupt) {
          let detail = `${error.file}${error.entry === undefined ? "" : `: entry ${error.entry}`}: ${error.reason}`
          if (error.file.endsWith("metadata.json") && error.reason === "missing") {
            // Still say whether the event log itself is readable.
            const eventsFile = path.join(loc.dir, "events.json")
            const text = await AtomicFile.readIfExists(eventsFile)
            if (text !== undefined) {
              try {
                detail += `; events.json decodes (${EventsFile.parse(text, eventsFile).length} entries)`
              } catch (inner) {
                if (inner instanceof EventsFile.EventsFileError) detail += `; ${inner.message}`
                else throw inner
              }
            }
          }
          return { id, path: loc.dir, ok: false, roundtrip: null, error: detail }
        }
        throw error
      }
    }

    const check = (id?: ConversationId.ConversationId) =>
      io(conversationsDir, async () => {
        const targets: Array<[ConversationId.ConversationId, Located]> = []
        for (const [parent, archived] of [[conversationsDir, false], [archiveDir, true]] as const) {
          for (const name of (await dirsIn(parent)).sort()) {
            const cid = ConversationId.fromDirname(name)!
            if (id === undefined || cid === id) targets.push([cid, { dir: path.join(parent, name), archived }])
          }
        }
        return Promise.all(targets.map(([cid, loc]) => checkOne(cid, loc)))
      }).pipe(
        Effect.flatMap((results) =>
          id !== undefined && results.length === 0 ? Effect.fail(new ConversationNotFound({ id })) : Effect.succeed(results)
        )
      )

    const remove = (id: ConversationId.ConversationId) =>
      Effect.gen(function*() {
        const loc = yield* io(conversationsDir, () => locate(id))
        if (loc === undefined) return yield* new ConversationNotFound({ id })
        yield* io(loc.dir, () => fs.rm(loc.dir, { recursive: true, force: true }))
        tails.delete(id)
      }).pipe(mutex.withPermits(1))

    return ConversationStore.of({
      list,
      load: (id) => load(id),
      save,
      append,
      lock,
      check,
      remove
    })
  })

/** The file-backed store as a layer. */
export const layer = (options: Options): Layer.Layer<ConversationStore> => Layer.effect(ConversationStore, make(options))
