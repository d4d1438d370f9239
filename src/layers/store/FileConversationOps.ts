/**
 * The file store's work beyond listing (docs/storage.md#layout): opening, creating,
 * loading, checking and removing conversations, with their locks and
 * journals (the locks themselves: `StoreLocks.ts`). `FileConversationStore.ts`
 * loads this on first use, so `conversation ls` loads none of it, nor the
 * event codec it needs (start-up: docs/decisions.md#fast-start).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as FileConversationOps from "parley/layers/store/FileConversationOps"
 * const ops = Effect.runSync(FileConversationOps.make("/home/me/project/.parley"))
 * ops.load
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type { Conversation } from "../../domain/storage/Conversation.ts"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../domain/storage/ConversationMetadata.ts"
import * as EntryCodec from "../../domain/storage/EntryCodec.ts"
import * as EventsFile from "../../domain/storage/EventsFile.ts"
import type { ConversationStore, NewConversation } from "../../services/ConversationStore.ts"
import * as ConversationSession from "../../services/ConversationSession.ts"
import { ConversationCorrupt, ConversationNotFound, type StoreIoError } from "../../services/StoreErrors.ts"
import * as AtomicFile from "./AtomicFile.ts"
import { checkAll } from "./Check.ts"
import * as ConversationDir from "./ConversationDir.ts"
import * as FileCalls from "./FileCalls.ts"
import * as ConversationRead from "./ConversationRead.ts"
import * as Journal from "./Journal.ts"
import * as Listing from "./Listing.ts"
import { io, ioError } from "./FileIo.ts"
import * as StoreLocks from "./StoreLocks.ts"

/** Runs a read that may find the conversation damaged (or removed while it read). */
const reading = <A>(id: ConversationId.ConversationId, file: string, f: () => Promise<A>) =>
  Effect.tryPromise({
    try: f,
    catch: (error): ConversationCorrupt | ConversationNotFound | StoreIoError =>
      error instanceof ConversationDir.Gone
        ? new ConversationNotFound({ id })
        : error instanceof ConversationDir.Corrupt
          ? new ConversationCorrupt({
              id,
              file: error.file,
              ...(error.entry === undefined ? {} : { entry: error.entry }),
              reason: error.reason
            })
          : error instanceof Journal.JournalError
            ? new ConversationCorrupt({ id, file: error.file, reason: error.message })
            : ioError(file, error)
  })

/** Whether `dir` holds a `base_config.json` (JP's layout since it has one). */
const hasBaseConfigIn = (dir: string): Promise<boolean> =>
  fs.stat(path.join(dir, "base_config.json")).then(
    () => true,
    () => false
  )

/**
 * Folds the journal of `dir` into `events.json`; rewrites the whole file when
 * it cannot be extended in place (`hasBaseConfig` undefined: looked up then,
 * the only case that needs it).
 */
const foldDir = async (
  dir: string,
  hasBaseConfig: boolean | undefined,
  calls: FileCalls.FileCalls = FileCalls.promised
): Promise<void> => {
  if ((await Journal.fold(dir, calls)) !== "unfoldable") return
  const entries = await ConversationRead.readEntries(dir, hasBaseConfig ?? (await hasBaseConfigIn(dir)))
  await AtomicFile.writeAtomic(path.join(dir, Journal.EVENTS), EventsFile.render(entries))
  await Journal.remove(dir)
}

/** A session's persistence: journal lines, and whole-file rewrites with no journal beside them. */
const persistence = (
  dir: string,
  base: Ref.Ref<string>,
  hasBaseConfig: boolean
): ConversationSession.SessionPersistence => {
  let torn: number | undefined // the clean journal size, after an append that failed midway
  let clean = 0
  return {
    appendDurable: (entries, at) =>
      Effect.gen(function* () {
        const b = yield* Ref.get(base)
        const lines = entries.map((entry, i) => ({ at: at + i, entry: EntryCodec.encodeEntry(entry) }))
        yield* io(path.join(dir, Journal.FILE), async () => {
          if (torn !== undefined) await Journal.cutTorn(dir, torn)
          torn = clean
          clean += await Journal.append(dir, lines, b)
          torn = undefined
        })
      }),
    rewrite: (entries) =>
      io(path.join(dir, Journal.EVENTS), async () => {
        // Fold first, so no journal line can outlive the rewrite and be replayed onto it.
        await foldDir(dir, hasBaseConfig)
        const text = EventsFile.render(entries)
        await AtomicFile.writeAtomic(path.join(dir, Journal.EVENTS), text)
        torn = undefined
        clean = 0
        return String(Buffer.byteLength(text))
      }).pipe(Effect.flatMap((size) => Ref.set(base, size)))
  }
}

/** The conversation `id`'s directory under `conversationsDir` (live or archived), or `ConversationNotFound`. */
const locate = (conversationsDir: string, id: ConversationId.ConversationId) =>
  io(conversationsDir, () => ConversationDir.locate(conversationsDir, id)).pipe(
    Effect.flatMap((loc) => (loc === undefined ? Effect.fail(new ConversationNotFound({ id })) : Effect.succeed(loc)))
  )

/** On close: fold what is on disk, write the metadata (moving the directory if the title changed). */
const close = (
  session: ConversationSession.ConversationSession,
  loc: ConversationDir.Located,
  hasBaseConfig: boolean,
  calls: FileCalls.FileCalls
) =>
  Effect.flatMap(session.metadata, (metadata) =>
    io(loc.dir, async () => {
      await foldDir(loc.dir, hasBaseConfig, calls)
      // The metadata first: a crash before the rename leaves the new title, which the next close names the directory for.
      await AtomicFile.writeIfChanged(
        path.join(loc.dir, "metadata.json"),
        EventsFile.renderJson(ConversationMetadata.encode(metadata)),
        calls
      )
      const wanted = path.join(path.dirname(loc.dir), ConversationId.dirname(session.id, metadata.title))
      if (wanted !== loc.dir && (await fs.stat(wanted).catch(() => undefined)) === undefined) {
        await fs.rename(loc.dir, wanted)
        await AtomicFile.syncDir(path.dirname(loc.dir))
      }
    })
  )

/**
 * Where `id` is now that its lock is held: `seen` (found before the lock was
 * taken) while it is still there, else looked up again (a writer that held
 * the lock before renamed or archived it). A directory's name holds its id,
 * so a directory still at `seen` is still the conversation's.
 */
const relocate = (
  conversationsDir: string,
  id: ConversationId.ConversationId,
  seen: ConversationDir.Located | undefined
) =>
  seen === undefined
    ? locate(conversationsDir, id)
    : Effect.flatMap(
        io(seen.dir, () =>
          fs.stat(seen.dir).then(
            (s) => s.isDirectory(),
            () => false
          )
        ),
        (there) => (there ? Effect.succeed(seen) : locate(conversationsDir, id))
      )

/** Opens a conversation whose lock the scope already holds. */
const openLocked = (
  conversationsDir: string,
  locks: ReturnType<typeof StoreLocks.make>,
  id: ConversationId.ConversationId,
  seen?: ConversationDir.Located
) =>
  Effect.gen(function* () {
    const loc = yield* relocate(conversationsDir, id, seen)
    // Heal first: a journal left by an earlier run is folded before anything reads the conversation.
    // Uninterruptible: an interrupt would release the lock while the fold still writes.
    const healAndRead = Effect.uninterruptible(reading(id, loc.dir, () => foldDir(loc.dir, undefined))).pipe(
      Effect.andThen(reading(id, loc.dir, () => ConversationRead.readSource(id, loc))),
      Effect.map(({ conversation, source }) => ({ conversation, size: source.events.length }))
    )
    // Beside it, what killed writers left (temp files here, stale locks): neither touches a file the read reads.
    const sweeps = Effect.all(
      [Effect.uninterruptible(reading(id, loc.dir, () => ConversationDir.sweepTemps(loc.dir))), locks.sweepLocks],
      { concurrency: 2, discard: true }
    )
    const [{ conversation, size }] = yield* Effect.all([healAndRead, sweeps], { concurrency: 2 })
    // Folded, and under the lock: the bytes read are the whole file the journal's next lines extend.
    return yield* sessionAt(conversation, loc, size, locks.closeCalls)
  })

/**
 * The session of `conversation`, held at `loc` under this scope's lock, whose `events.json` is `size` bytes
 * with nothing journaled beside it; closing the scope folds and writes it back (`close`).
 */
const sessionAt = (
  conversation: Conversation,
  loc: ConversationDir.Located,
  size: number,
  closeCalls: FileCalls.FileCalls
) =>
  Effect.gen(function* () {
    const hasBaseConfig = conversation.baseConfig._tag === "File"
    const base = yield* Ref.make(String(size))
    const session = yield* ConversationSession.make(conversation, persistence(loc.dir, base, hasBaseConfig))
    yield* Effect.addFinalizer(() => close(session, loc, hasBaseConfig, closeCalls).pipe(Effect.ignore))
    return session
  })

/** Writes a new conversation's directory under the id the scope has reserved, and opens it. */
const createReserved = (
  conversationsDir: string,
  locks: ReturnType<typeof StoreLocks.make>,
  id: ConversationId.ConversationId,
  init: NewConversation
) =>
  Effect.gen(function* () {
    const conversation: Omit<Conversation, "id" | "archived"> = {
      metadata: init.metadata,
      baseConfig: init.baseConfig ?? { _tag: "File", text: "{}\n" },
      entries: init.entries ?? []
    }
    // Uninterruptible: an interrupt would release the id's lock before its directory is in place.
    const dir = yield* Effect.uninterruptible(
      io(conversationsDir, async () => {
        await ConversationDir.sweepStaging(conversationsDir)
        return ConversationRead.create(conversationsDir, ConversationId.dirname(id, init.metadata.title), conversation)
      })
    )
    // A conversation made without entries (a new query's, an ask's) is opened from what was just written:
    // nothing else can be in the directory this scope made under its lock, so reading it back and decoding it
    // again (and looking for a journal and temp files there) only cost the first turn its time.
    const loc = { dir, archived: false }
    if (conversation.entries.length === 0 && conversation.baseConfig._tag === "File") {
      // What killed writers left elsewhere (stale locks) is swept as an open sweeps it.
      yield* locks.sweepLocks
      return yield* sessionAt(
        { id, archived: false, ...conversation },
        loc,
        Buffer.byteLength(EventsFile.render([])),
        locks.closeCalls
      )
    }
    // Where it was just made, under its lock: no listing of every conversation to find it again.
    return yield* openLocked(conversationsDir, locks, id, loc)
  })

/** `check`: every conversation (or only `id`), live and archived, in id order. */
const checkIn = (conversationsDir: string, id: ConversationId.ConversationId | undefined) =>
  io(conversationsDir, async () => {
    const targets: Array<[ConversationId.ConversationId, ConversationDir.Located]> = []
    for (const [parent, archived] of [
      [conversationsDir, false],
      [path.join(conversationsDir, ".archive"), true]
    ] as const) {
      for (const name of (await ConversationDir.dirsIn(parent)).sort()) {
        const cid = ConversationId.fromDirname(name)!
        if (id === undefined || cid === id) targets.push([cid, { dir: path.join(parent, name), archived }])
      }
    }
    return checkAll(targets)
  }).pipe(
    Effect.flatMap((results) =>
      id !== undefined && results.length === 0 ? Effect.fail(new ConversationNotFound({ id })) : Effect.succeed(results)
    )
  )

/**
 * How long after its latest change a conversation's version is never the
 * same twice (git's "racy" rule). A file's time has a granularity (a kernel
 * tick; 1–2 s on FAT, ext3 and some network file systems) and a rewrite
 * renamed into place may get back an inode freed a moment before: two
 * same-size writes within one step of the clock could leave the stamp
 * unchanged, and what a reader kept under it would be kept for good. A file
 * time ahead of this clock counts as just changed.
 */
const SETTLED_MS = 3000

/** Makes each version of a conversation changed within SETTLED_MS another (in this process, whichever store gave it). */
let unsettled = 0

/** What the store does beyond listing, over the storage directory `root` (absolute). */
export const make = (root: string, blockingClose = false) =>
  Effect.sync(() => {
    const conversationsDir = path.join(root, "conversations")
    const locks = StoreLocks.make(root, blockingClose ? FileCalls.blocking : FileCalls.promised)
    return {
      // Followed when a writer renames the directory meanwhile; removed meanwhile, it is not found.
      load: (id) =>
        locate(conversationsDir, id).pipe(
          Effect.flatMap((loc) =>
            reading(id, loc.dir, () => ConversationDir.following(id, loc, (at) => ConversationRead.read(id, at)))
          )
        ),
      // Located first: a renamed directory is another version (its stamps alone could repeat).
      version: (id) =>
        locate(conversationsDir, id).pipe(
          Effect.flatMap((loc) => io(loc.dir, async () => Listing.stampOf(loc.dir))),
          Effect.flatMap(({ text, modified }) =>
            Effect.map(Clock.currentTimeMillis, (now) =>
              now - modified < SETTLED_MS ? `${text}\nunsettled ${++unsettled}` : text
            )
          )
        ),
      // Look before locking: an id that names nothing fails without creating locks/ (or the storage directory).
      open: (id) =>
        locate(conversationsDir, id).pipe(
          Effect.tap(() => locks.lock(id)),
          Effect.flatMap((seen) => openLocked(conversationsDir, locks, id, seen))
        ),
      create: (init) =>
        Effect.flatMap(
          init.id === undefined ? locks.reserveFresh : Effect.as(locks.reserveExact(init.id), init.id),
          (id) => createReserved(conversationsDir, locks, id, init)
        ),
      check: (id) => checkIn(conversationsDir, id),
      // Under the lock: a conversation another process is writing is not pulled out from under it.
      remove: (id) =>
        Effect.scoped(
          locks.lock(id).pipe(
            Effect.andThen(locate(conversationsDir, id)),
            Effect.flatMap((loc) => io(loc.dir, () => fs.rm(loc.dir, { recursive: true, force: true })))
          )
        )
    } satisfies Omit<ConversationStore["Service"], "list">
  })

/** What the store does beyond listing. */
export type Ops = Effect.Success<ReturnType<typeof make>>
