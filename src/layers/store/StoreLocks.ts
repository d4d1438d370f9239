/**
 * The file store's conversation locks (docs/storage.md#new-ids-and-locks): taking
 * a conversation's lock for a scope, reserving an id for a new conversation
 * (its lock taken and no directory of it anywhere), and sweeping what killed
 * writers left in `locks/`. `FileConversationOps.ts` builds on these; the
 * lock file itself is `FileLock.ts`.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as StoreLocks from "parley/layers/store/StoreLocks"
 * const locks = StoreLocks.make("/home/me/project/.parley")
 * const id = Effect.scoped(locks.reserveFresh) // a new id, its lock held until the scope closes
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import { ConversationExists, ConversationLocked, type StoreIoError } from "../../services/StoreErrors.ts"
import * as ConversationDir from "./ConversationDir.ts"
import * as FileLock from "./FileLock.ts"
import * as FileCalls from "./FileCalls.ts"
import { io } from "./FileIo.ts"

/** How `reserve` found an id: taken by us, held by a live process, or used by a directory already. */
type Reservation =
  | { readonly _tag: "Reserved" }
  | { readonly _tag: "Held"; readonly pid: number }
  | { readonly _tag: "Exists" }

/** The lock file of conversation `id` in the storage directory `root` (JP's name for it). */
export const lockPath = (root: string, id: string): string => path.join(root, "locks", `jp-c${id}.lock`)

/**
 * The locks of the storage directory `root` (absolute). `closeCalls`: how a
 * session's close reads and writes (`FileCalls.ts`): its lock's release, and
 * the fold and metadata of the sessions opened under these locks.
 */
export const make = (root: string, closeCalls: FileCalls.FileCalls = FileCalls.promised) => {
  const conversationsDir = path.join(root, "conversations")
  const lockFile = (id: string) => lockPath(root, id)
  // FileLock says -1 when the lock file names no pid (being written, or damaged): the holder is then unknown.
  const locked = (id: string, pid: number) =>
    new ConversationLocked({ id, path: lockFile(id), ...(pid >= 0 ? { holder: pid } : {}) })
  const release = (id: string) =>
    Effect.promise(() => FileLock.release(lockFile(id), closeCalls).catch(() => undefined))

  /** The conversation's lock, held until the scope closes. */
  const lock = (
    id: ConversationId.ConversationId
  ): Effect.Effect<void, ConversationLocked | StoreIoError, Scope.Scope> =>
    Effect.acquireRelease(
      io(lockFile(id), () => FileLock.acquire(lockFile(id))).pipe(
        Effect.flatMap((r) => (r._tag === "Held" ? Effect.fail(locked(id, r.pid)) : Effect.void))
      ),
      () => release(id)
    )

  /** The ids of every conversation directory, live or archived. */
  const existingIds = async (): Promise<Set<string>> => {
    const names = [
      ...(await ConversationDir.dirsIn(conversationsDir)),
      ...(await ConversationDir.dirsIn(path.join(conversationsDir, ".archive")))
    ]
    return new Set<string>(names.map((n) => ConversationId.fromDirname(n)!))
  }

  /**
   * Drops what killed writers left in `locks/` (docs/storage.md#new-ids-and-locks): lock temp files
   * of dead processes, and stale locks of conversations that do not exist
   * (a `kill -9` between taking a new id and creating its directory). A
   * lock a live process holds stays, whatever it names. Best effort: a
   * failure here never fails the writer that sweeps.
   */
  const sweepLocks = Effect.promise(async () => {
    try {
      const dir = path.join(root, "locks")
      await FileLock.sweepTemps(dir)
      const others = (await fs.readdir(dir)).flatMap((name) => {
        const id = /^jp-c(\d+)\.lock$/.exec(name)?.[1]
        const file = path.join(dir, name)
        return id === undefined || FileLock.heldHere(file) ? [] : [{ id, file }]
      })
      // Only this process's own locks (a writer's usual case): no listing of every conversation.
      if (others.length === 0) return
      const existing = await existingIds()
      for (const { id, file } of others) if (!existing.has(id)) await FileLock.dropIfStale(file)
    } catch {
      // Best effort (above).
    }
  })

  /** Takes the lock of `id`, then looks for its directory; lets go unless the id is free. */
  const tryReserve = async (id: ConversationId.ConversationId): Promise<Reservation> => {
    const r = await FileLock.acquire(lockFile(id))
    if (r._tag === "Held") return { _tag: "Held", pid: r.pid }
    let exists: boolean
    try {
      exists = (await ConversationDir.locate(conversationsDir, id)) !== undefined
    } catch (error) {
      // No finalizer holds the lock yet: let go of it here, or this process keeps the id until it exits.
      await FileLock.release(lockFile(id)).catch(() => undefined)
      throw error
    }
    if (!exists) return { _tag: "Reserved" }
    await FileLock.release(lockFile(id))
    return { _tag: "Exists" }
  }

  /**
   * Takes `id` for a new conversation: its lock, and no directory of it may
   * exist. "Held" and "Exists" leave nothing taken; "Reserved" holds the
   * lock until the scope closes.
   */
  const reserve = (id: ConversationId.ConversationId) =>
    Effect.uninterruptible(
      io(lockFile(id), () => tryReserve(id)).pipe(
        Effect.tap((r) => (r._tag === "Reserved" ? Effect.addFinalizer(() => release(id)) : Effect.void))
      )
    )

  /** The first id from "now" on that no other process holds or has used. */
  const reserveFresh = Effect.gen(function* () {
    const taken = yield* io(conversationsDir, existingIds)
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

  return { lock, sweepLocks, reserveFresh, reserveExact, closeCalls } as const
}
