/**
 * The file store's work beyond listing (issue 10): opening, creating,
 * loading, checking and removing conversations, with their locks and
 * journals. `FileConversationStore.ts` loads this on first use, so `conversation
 * ls` loads none of it, nor the event codec it needs (issue 28, start-up).
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
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import type { Conversation } from "../../domain/storage/Conversation.ts"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../domain/storage/ConversationMetadata.ts"
import * as EntryCodec from "../../domain/storage/EntryCodec.ts"
import * as EventsFile from "../../domain/storage/EventsFile.ts"
import type { ConversationStore, NewConversation } from "../../services/ConversationStore.ts"
import * as ConversationSession from "../../services/ConversationSession.ts"
import {
  ConversationCorrupt,
  ConversationExists,
  ConversationLocked,
  ConversationNotFound,
  type StoreIoError
} from "../../services/StoreErrors.ts"
import * as AtomicFile from "./AtomicFile.ts"
import { checkAll } from "./Check.ts"
import * as ConversationDir from "./ConversationDir.ts"
import * as ConversationRead from "./ConversationRead.ts"
import * as FileLock from "./FileLock.ts"
import * as Journal from "./Journal.ts"
import { io, ioError } from "./FileIo.ts"

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

/** Folds the journal of `dir` into `events.json`; rewrites the whole file when it cannot be extended in place. */
const foldDir = async (dir: string, hasBaseConfig: boolean): Promise<void> => {
  if ((await Journal.fold(dir)) !== "unfoldable") return
  const entries = await ConversationRead.readEntries(dir, hasBaseConfig)
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

/** What the store does beyond listing, over the storage directory `root` (absolute). */
export const make = (root: string) =>
  Effect.sync(() => {
    const conversationsDir = path.join(root, "conversations")
    const lockFile = (id: string) => path.join(root, "locks", `jp-c${id}.lock`)
    // FileLock says -1 when the lock file names no pid (being written, or damaged): the holder is then unknown.
    const locked = (id: string, pid: number) =>
      new ConversationLocked({ id, path: lockFile(id), ...(pid >= 0 ? { holder: pid } : {}) })

    const lock = (
      id: ConversationId.ConversationId
    ): Effect.Effect<void, ConversationLocked | StoreIoError, Scope.Scope> =>
      Effect.acquireRelease(
        io(lockFile(id), () => FileLock.acquire(lockFile(id))).pipe(
          Effect.flatMap((r) => (r._tag === "Held" ? Effect.fail(locked(id, r.pid)) : Effect.void))
        ),
        () => Effect.promise(() => FileLock.release(lockFile(id)).catch(() => undefined))
      )

    /**
     * Drops what killed writers left in `locks/` (issue 30): lock temp files
     * of dead processes, and stale locks of conversations that do not exist
     * (a `kill -9` between taking a new id and creating its directory). A
     * lock a live process holds stays, whatever it names. Best effort: a
     * failure here never fails the writer that sweeps.
     */
    const sweepLocks = () =>
      Effect.promise(() =>
        (async () => {
          const dir = path.join(root, "locks")
          await FileLock.sweepTemps(dir)
          const names = await fs.readdir(dir)
          const existing = new Set<string>()
          for (const parent of [conversationsDir, path.join(conversationsDir, ".archive")]) {
            for (const name of await ConversationDir.dirsIn(parent)) existing.add(ConversationId.fromDirname(name)!)
          }
          for (const name of names) {
            const id = /^jp-c(\d+)\.lock$/.exec(name)?.[1]
            if (id !== undefined && !existing.has(id)) await FileLock.dropIfStale(path.join(dir, name))
          }
        })().catch(() => undefined)
      )

    const locate = (id: ConversationId.ConversationId) =>
      io(conversationsDir, () => ConversationDir.locate(conversationsDir, id)).pipe(
        Effect.flatMap((loc) =>
          loc === undefined ? Effect.fail(new ConversationNotFound({ id })) : Effect.succeed(loc)
        )
      )

    /** On close: fold what is on disk, write the metadata (moving the directory if the title changed). */
    const close = (
      session: ConversationSession.ConversationSession,
      loc: ConversationDir.Located,
      hasBaseConfig: boolean
    ) =>
      Effect.flatMap(session.metadata, (metadata) =>
        io(loc.dir, async () => {
          await foldDir(loc.dir, hasBaseConfig)
          // The metadata first: a crash before the rename leaves the new title, which the next close names the directory for.
          await AtomicFile.writeIfChanged(
            path.join(loc.dir, "metadata.json"),
            EventsFile.renderJson(ConversationMetadata.encode(metadata))
          )
          const wanted = path.join(path.dirname(loc.dir), ConversationId.dirname(session.id, metadata.title))
          if (wanted !== loc.dir && (await fs.stat(wanted).catch(() => undefined)) === undefined) {
            await fs.rename(loc.dir, wanted)
            await AtomicFile.syncDir(path.dirname(loc.dir))
          }
        })
      )

    /** Opens a conversation whose lock the scope already holds. */
    const openLocked = (id: ConversationId.ConversationId) =>
      Effect.gen(function* () {
        const loc = yield* locate(id)
        const hasBaseConfig = yield* io(loc.dir, () =>
          fs.stat(path.join(loc.dir, "base_config.json")).then(
            () => true,
            () => false
          )
        )
        // Heal first: a journal left by an earlier run is folded before anything reads the conversation.
        // Uninterruptible: an interrupt would release the lock while the fold still writes.
        yield* Effect.uninterruptible(
          reading(id, loc.dir, async () => {
            await foldDir(loc.dir, hasBaseConfig)
            await ConversationDir.sweepTemps(loc.dir)
          })
        )
        yield* sweepLocks()
        const conversation = yield* reading(id, loc.dir, () => ConversationRead.read(id, loc))
        const size = yield* io(loc.dir, () => fs.stat(path.join(loc.dir, Journal.EVENTS)).then((s) => String(s.size)))
        const base = yield* Ref.make(size)
        const session = yield* ConversationSession.make(conversation, persistence(loc.dir, base, hasBaseConfig))
        yield* Effect.addFinalizer(() => close(session, loc, hasBaseConfig).pipe(Effect.ignore))
        return session
      })

    // Look before locking: an id that names nothing fails without creating locks/ (or the storage directory).
    const open = (id: ConversationId.ConversationId) =>
      locate(id).pipe(Effect.andThen(lock(id)), Effect.andThen(openLocked(id)))

    /**
     * Takes `id` for a new conversation: its lock, and no directory of it may
     * exist. "held" and "exists" leave nothing taken; "reserved" holds the
     * lock until the scope closes.
     */
    const reserve = (id: ConversationId.ConversationId) =>
      Effect.uninterruptible(
        io(lockFile(id), async () => {
          const r = await FileLock.acquire(lockFile(id))
          if (r._tag === "Held") return { _tag: "Held" as const, pid: r.pid }
          let exists: boolean
          try {
            exists = (await ConversationDir.locate(conversationsDir, id)) !== undefined
          } catch (error) {
            // No finalizer holds the lock yet: let go of it here, or this process keeps the id until it exits.
            await FileLock.release(lockFile(id)).catch(() => undefined)
            throw error
          }
          if (exists) {
            await FileLock.release(lockFile(id))
            return { _tag: "Exists" as const }
          }
          return { _tag: "Reserved" as const }
        }).pipe(
          Effect.tap((r) =>
            r._tag === "Reserved"
              ? Effect.addFinalizer(() => Effect.promise(() => FileLock.release(lockFile(id)).catch(() => undefined)))
              : Effect.void
          )
        )
      )

    /** The first id from "now" on that no other process holds or has used. */
    const reserveFresh = Effect.gen(function* () {
      const taken = yield* io(conversationsDir, async () => {
        const names = [
          ...(await ConversationDir.dirsIn(conversationsDir)),
          ...(await ConversationDir.dirsIn(path.join(conversationsDir, ".archive")))
        ]
        return new Set<string>(names.map((n) => ConversationId.fromDirname(n)!))
      })
      let n = BigInt(ConversationId.fromEpochMillis(yield* Clock.currentTimeMillis))
      for (;;) {
        const id = String(n++) as ConversationId.ConversationId
        if (taken.has(id)) continue
        if ((yield* reserve(id))._tag === "Reserved") return id
      }
    })

    /** Reserves exactly `id`. */
    const reserveExact = (id: ConversationId.ConversationId) =>
      Effect.flatMap(
        reserve(id),
        (r): Effect.Effect<void, ConversationLocked | ConversationExists> =>
          r._tag === "Held"
            ? Effect.fail(locked(id, r.pid))
            : r._tag === "Exists"
              ? Effect.fail(new ConversationExists({ id }))
              : Effect.void
      )

    const create = (init: NewConversation) =>
      Effect.gen(function* () {
        const id = init.id ?? (yield* reserveFresh)
        if (init.id !== undefined) yield* reserveExact(init.id)
        const conversation: Omit<Conversation, "id" | "archived"> = {
          metadata: init.metadata,
          baseConfig: init.baseConfig ?? { _tag: "File", text: "{}\n" },
          entries: init.entries ?? []
        }
        // Uninterruptible: an interrupt would release the id's lock before its directory is in place.
        yield* Effect.uninterruptible(
          io(conversationsDir, async () => {
            await ConversationDir.sweepStaging(conversationsDir)
            await ConversationRead.create(
              conversationsDir,
              ConversationId.dirname(id, init.metadata.title),
              conversation
            )
          })
        )
        return yield* openLocked(id)
      })

    return {
      // Followed when a writer renames the directory meanwhile; removed meanwhile, it is not found.
      load: (id) =>
        locate(id).pipe(
          Effect.flatMap((loc) =>
            reading(id, loc.dir, () => ConversationDir.following(id, loc, (at) => ConversationRead.read(id, at)))
          )
        ),
      open,
      create,
      check: (id) =>
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
            id !== undefined && results.length === 0
              ? Effect.fail(new ConversationNotFound({ id }))
              : Effect.succeed(results)
          )
        ),
      // Under the lock: a conversation another process is writing is not pulled out from under it.
      remove: (id) =>
        Effect.scoped(
          lock(id).pipe(
            Effect.andThen(locate(id)),
            Effect.flatMap((loc) => io(loc.dir, () => fs.rm(loc.dir, { recursive: true, force: true })))
          )
        )
    } satisfies Omit<ConversationStore["Service"], "list">
  })

/** What the store does beyond listing. */
export type Ops = Effect.Success<ReturnType<typeof make>>
