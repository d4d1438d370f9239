/**
 * A conversation's write lock in PostgreSQL
 * (docs/decisions.md#database-storage-beside-the-directory): a session-level
 * advisory lock. It lives at most as long as the connection it was taken
 * on: a killed process's connections end and PostgreSQL releases their
 * locks, so a lock cannot go stale. While it is held, `parley_locks` names
 * the holder (pid, host, backend pid) so a second writer fails at once
 * saying who has it.
 *
 * Two ways to keep a process's locks ({@link Locks}): each on a connection
 * reserved for it ({@link own}: a command's one conversation), or all of
 * them on a few connections the process keeps ({@link shared}: a cluster
 * runner's hundreds of waiting turns, which would otherwise be as many
 * server processes, each woken for its turn's writes; docs/cluster.md).
 * A connection runs one statement at a time, so each lock's {@link Slot}
 * has a permit that a statement ({@link onSlot}) or a whole transaction
 * ({@link transaction}) holds.
 *
 * @example
 * ```ts
 * import * as PgLock from "parley/layers/store/pg/PgLock"
 * PgLock.key("17738399468") // "17738399468": the id itself, a bigint
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as os from "node:os"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import type { SqlClient } from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import { ConnectionError, SqlError, UnknownError } from "effect/sql/SqlError"
import * as ServerLost from "./ServerLost.ts"

/** The advisory lock key of a conversation: its id (digits) as a bigint, so two ids never share a lock. */
export const key = (id: string): string => id

/** Runs `effect`'s statements on `conn` (effect/sql's transaction slot, depth 0). */
export const on = <A, E, R>(sql: SqlClient, conn: Connection, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(effect, sql.transactionService, [conn, 0] as const)

/** A held lock's connection: its statements go through {@link onSlot} or {@link transaction}. */
export interface Slot {
  readonly conn: Connection
  /** One statement or transaction at a time on the connection. */
  readonly permit: Semaphore.Semaphore
  /** Shared with other locks: a statement, once sent, runs to its end (an interrupt's cancel could hit the next one). */
  readonly shared: boolean
  /** Whether the lock was let go: a shared connection outlives it, so the session's later statements must fail. */
  readonly released: () => boolean
  /** The connection can no longer be trusted (a ROLLBACK failed): no new lock goes to it. */
  readonly broken: Effect.Effect<void>
}

/** Two connections in a row lost as the lock was tried: the server is going away. */
const gone = () =>
  new SqlError({
    reason: new ConnectionError({
      cause: new Error("the lock's connection was lost twice"),
      message: "the lock's connection was lost twice in a row"
    })
  })

const letGo = () =>
  new SqlError({
    reason: new UnknownError({
      cause: new Error("the conversation's lock was let go"),
      message: "the conversation's lock was let go: its session is closed"
    })
  })

/** Runs `effect`'s statements on `slot`'s connection, holding its permit throughout; fails once the lock is let go. */
export const onSlot = <A, E, R>(
  sql: SqlClient,
  slot: Slot,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | SqlError, R> =>
  slot.permit.withPermit(
    Effect.suspend((): Effect.Effect<A, E | SqlError, R> => {
      if (slot.released()) return Effect.fail(letGo())
      const run = on(sql, slot.conn, effect)
      return slot.shared ? Effect.uninterruptible(run) : run
    })
  )

/**
 * Runs `body` in a transaction on `slot`'s connection: committed when it
 * returns, rolled back when it fails. It holds the permit from BEGIN to the
 * end, so no other lock's statement on a shared connection joins it.
 */
export const transaction = <A, E, R>(
  sql: SqlClient,
  slot: Slot,
  body: Effect.Effect<A, E, R>
): Effect.Effect<A, E | SqlError, R> =>
  onSlot(
    sql,
    slot,
    Effect.uninterruptible(
      Effect.gen(function* () {
        yield* sql.unsafe("BEGIN")
        // A ROLLBACK that fails leaves the connection in a transaction nobody ends: no new lock may go to it.
        const a = yield* Effect.onError(body, () => Effect.catchCause(sql.unsafe("ROLLBACK"), () => slot.broken))
        yield* sql.unsafe("COMMIT")
        return a
      })
    )
  )

/** Who holds a lock (when its row says). */
export interface Holder {
  readonly pid: number
  readonly host: string
}

/** What trying the lock gave: held by us on `slot`, or by someone else. */
export type Attempt =
  | {
      readonly _tag: "Taken"
      readonly slot: Slot
      /** Lets go of the lock (and an own connection) before the scope closes (a fresh id that turned out taken). */
      readonly release: Effect.Effect<void>
    }
  | { readonly _tag: "Held"; readonly holder: Holder | undefined }
  /** `absent` was asked and the conversation exists: its lock was not touched. */
  | { readonly _tag: "Exists" }

/** How a process keeps its conversations' locks. */
export interface Locks {
  /**
   * Tries `id`'s lock for the scope. Taken: on close, the holder row is
   * deleted and the lock let go. Held: nothing is kept.
   *
   * With `absent` (a fresh id for `create`), the lock is tried only when no
   * conversation `id` exists, in the same statement: a creator whose id
   * another process has just created never takes that conversation's lock,
   * even for a moment, so an `open` racing it never reads "locked" (a holder
   * still creating it holds the lock, and then the attempt is Held).
   */
  readonly tryLock: (
    id: string,
    options?: { readonly absent?: boolean }
  ) => Effect.Effect<Attempt, SqlError, Scope.Scope>
  /**
   * Whether locks share connections. A session then reads its conversation
   * on the pool: a long read on a shared connection would hold up every
   * other lock's writes on it.
   */
  readonly shared: boolean
}

type Tried = { readonly _tag: "Ok"; readonly backend: number } | Exclude<Attempt, { _tag: "Taken" }>

/** Tries `id`'s lock on `conn` (the caller holds the connection). */
const attemptOn = (sql: SqlClient, conn: Connection, id: string, absent: boolean): Effect.Effect<Tried, SqlError> =>
  Effect.gen(function* () {
    const [row] = yield* on(
      sql,
      conn,
      absent
        ? sql<{
            ok: boolean | null
            backend: number
          }>`SELECT CASE WHEN EXISTS (SELECT 1 FROM parley_conversations WHERE id = ${id}) THEN NULL
              ELSE pg_try_advisory_lock(${key(id)}::bigint) END AS ok, pg_backend_pid() AS backend`
        : sql<{
            ok: boolean | null
            backend: number
          }>`SELECT pg_try_advisory_lock(${key(id)}::bigint) AS ok, pg_backend_pid() AS backend`
    )
    if (row !== undefined && row.ok === null) return { _tag: "Exists" } as const
    if (row?.ok === true) return { _tag: "Ok", backend: row.backend } as const
    // On this connection: waiting for another one while holding this one could deadlock a full pool.
    const [holder] = yield* on(sql, conn, sql<Holder>`SELECT pid, host FROM parley_locks WHERE conversation_id = ${id}`)
    return { _tag: "Held", holder } as const
  })

/** Names this process as the holder (the lock is held on `conn`, whose server process is `backend`). */
const recordHolder = (sql: SqlClient, conn: Connection, id: string, backend: number) =>
  on(
    sql,
    conn,
    sql`INSERT INTO parley_locks (conversation_id, pid, host, backend_pid) VALUES (${id}, ${process.pid}, ${os.hostname()}, ${backend})
        ON CONFLICT (conversation_id) DO UPDATE SET pid = EXCLUDED.pid, host = EXCLUDED.host, backend_pid = EXCLUDED.backend_pid, since = now()`
  )

/**
 * Deletes the holder row and lets go of the lock, on the connection it was
 * taken on. One statement, one round trip. PostgreSQL runs the DELETE (a
 * WITH nothing reads) after the SELECT, so the lock is free a moment before
 * the row goes: a taker's upsert of its own row in between survives, as the
 * DELETE re-checks backend_pid on the row's newest version (checked with
 * the unlock and the DELETE 2 s apart).
 */
const unlock = (sql: SqlClient, conn: Connection, id: string) =>
  on(
    sql,
    conn,
    sql`WITH gone AS (DELETE FROM parley_locks WHERE conversation_id = ${id} AND backend_pid = pg_backend_pid())
              SELECT pg_advisory_unlock(${key(id)}::bigint)`
  )

/** Each lock on a connection reserved for it from `sql`'s pool, given back when the lock is let go. */
export const own = (sql: SqlClient): Locks => ({
  shared: false,
  tryLock: (id, options) =>
    Effect.uninterruptible(
      Effect.gen(function* () {
        // Its own scope: a lock we do not get gives its connection back at once (create tries id after id).
        const mine = yield* Scope.make()
        const attempt = Effect.gen(function* () {
          const conn = yield* Scope.provide(sql.reserve, mine)
          const tried = yield* attemptOn(sql, conn, id, options?.absent === true)
          if (tried._tag !== "Ok") return tried
          let done = false
          // Runs before the connection goes back to the pool (a connection that died has let go already).
          yield* Scope.addFinalizer(
            mine,
            Effect.suspend(() => {
              done = true
              return Effect.ignore(unlock(sql, conn, id))
            })
          )
          yield* recordHolder(sql, conn, id, tried.backend)
          const slot: Slot = {
            conn,
            permit: Semaphore.makeUnsafe(1),
            shared: false,
            released: () => done,
            broken: Effect.void
          }
          return { _tag: "Taken", slot, release: Scope.close(mine, Exit.void) } as const
        })
        const result = yield* Effect.onError(attempt, (cause) => Scope.close(mine, Exit.failCause(cause)))
        if (result._tag !== "Taken") yield* Scope.close(mine, Exit.void)
        else yield* Effect.addFinalizer((exit) => Scope.close(mine, exit))
        return result
      })
    )
})

/** A connection shared by the process's locks. */
interface Shared {
  readonly conn: Connection
  readonly permit: Semaphore.Semaphore
  /** Keeps the connection out of the pool until it is let go. */
  readonly scope: Scope.Closeable
  /** The locks held on it. */
  holders: number
  /** Gone, or no longer trusted: new locks go to a fresh connection; it is let go after its last lock. */
  lost: boolean
  /** Given back to the pool (after `retire` has cleaned it). */
  closed: boolean
}

/** The connection `id`'s locks go to, of `k` (the same one for an id, so its attempts meet at one permit). */
const indexOf = (id: string, k: number): number => {
  let h = 0
  for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) | 0
  return Math.abs(h) % k
}

/**
 * Every lock on one of `k` connections reserved from `sql`'s pool when first
 * needed and kept for the scope (the pool needs more than `k`). Advisory
 * locks are re-entrant within a server session, so the process keeps its
 * own table of the ids it holds: a second attempt in the process is Held
 * (by this process), checked and recorded under the connection's permit.
 * A connection whose server went away (or that a failed ROLLBACK or unlock
 * left untrusted) is replaced for new locks; the locks on it ended with it
 * (as an own connection's would) and their sessions' writes fail on it.
 */
export const shared = (sql: SqlClient, k: number): Effect.Effect<Locks, never, Scope.Scope> =>
  Effect.gen(function* () {
    const parent = yield* Effect.scope
    const slots: Array<Shared | undefined> = Array.from({ length: k }, () => undefined)
    const opening = Array.from({ length: k }, () => Semaphore.makeUnsafe(1))
    const held = new Map<string, Shared>()
    const me: Holder = { pid: process.pid, host: os.hostname() }

    /** Only the wait for the pool can be interrupted: a connection it gives is in the table before anything else. */
    const open = (i: number) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          const current = slots[i]
          if (current !== undefined && !current.lost) return current
          const scope = yield* Scope.fork(parent)
          const conn = yield* restore(Scope.provide(sql.reserve, scope)).pipe(
            Effect.onError(() => Scope.close(scope, Exit.void))
          )
          const slot: Shared = { conn, permit: Semaphore.makeUnsafe(1), scope, holders: 0, lost: false, closed: false }
          slots[i] = slot
          return slot
        })
      )
    const slotAt = (i: number) =>
      Effect.suspend(() => {
        const current = slots[i]
        return current !== undefined && !current.lost ? Effect.succeed(current) : opening[i]!.withPermit(open(i))
      })

    /** Gives a lost connection back once nothing holds a lock on it, first letting go of any lock left on it. */
    const retire = (slot: Shared) =>
      slot.permit.withPermit(
        Effect.suspend(() => {
          if (!slot.lost || slot.holders > 0 || slot.closed) return Effect.void
          slot.closed = true
          // Out of any transaction a failed ROLLBACK left, without any lock: else its server process ends, and the
          // pool, finding the connection dead, never lends it again.
          const clean = on(
            sql,
            slot.conn,
            Effect.andThen(Effect.ignore(sql.unsafe("ROLLBACK")), sql`SELECT pg_advisory_unlock_all()`)
          )
          const end = on(sql, slot.conn, Effect.ignore(sql`SELECT pg_terminate_backend(pg_backend_pid())`))
          return Effect.andThen(
            Effect.catchCause(clean, () => end),
            Scope.close(slot.scope, Exit.void)
          )
        })
      )

    /** Under the slot's permit (taken by the caller): the table, the lock, the holder row. */
    const attempt = (slot: Shared, id: string, absent: boolean) =>
      Effect.gen(function* () {
        if (slot.lost) return { _tag: "Lost" } as const
        if (held.has(id)) return { _tag: "Held", holder: me } as const
        const tried = yield* attemptOn(sql, slot.conn, id, absent)
        if (tried._tag !== "Ok") return tried
        // Not recorded: let go of the lock; if that fails too, the lock may stay on the connection: no new one goes to it.
        yield* recordHolder(sql, slot.conn, id, tried.backend).pipe(
          Effect.onError(() =>
            Effect.catchCause(unlock(sql, slot.conn, id), () =>
              Effect.sync(() => {
                slot.lost = true
              })
            )
          )
        )
        held.set(id, slot)
        slot.holders++
        return { _tag: "Ok" } as const
      }).pipe(
        Effect.tapError((error) =>
          Effect.sync(() => {
            if (ServerLost.isServerLost(error)) slot.lost = true
          })
        )
      )

    /** Lets go of `id` under the permit, so the next attempt on the slot sees the table and the lock agree. */
    const release = (slot: Shared, view: { done: boolean }, id: string) =>
      slot.permit
        .withPermit(
          Effect.gen(function* () {
            view.done = true
            const unlocked = yield* Effect.exit(unlock(sql, slot.conn, id))
            if (held.get(id) === slot) held.delete(id)
            slot.holders--
            // A live connection whose unlock failed may still hold the lock: no new lock goes to it.
            if (unlocked._tag === "Failure") slot.lost = true
          })
        )
        .pipe(Effect.andThen(Effect.suspend(() => retire(slot))))

    /** Waits for the slot's permit interruptibly; the attempt itself runs to its end. */
    const once = (
      id: string,
      absent: boolean,
      restore: <A, E, R>(e: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    ) =>
      Effect.gen(function* () {
        const slot = yield* restore(slotAt(indexOf(id, k)))
        // takeScoped: the permit's release is registered in the step that takes it (an interrupt between a take and
        // an `ensuring` would keep the permit for good).
        const permit = yield* Scope.make()
        yield* restore(Scope.provide(slot.permit.takeScoped(1), permit)).pipe(
          Effect.onError(() => Scope.close(permit, Exit.void))
        )
        const tried = yield* Effect.ensuring(attempt(slot, id, absent), Scope.close(permit, Exit.void)).pipe(
          Effect.ensuring(Effect.suspend(() => (slot.lost ? retire(slot) : Effect.void)))
        )
        return { slot, tried }
      })

    const tryLock: Locks["tryLock"] = (id, options) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          const absent = options?.absent === true
          // A connection found gone is replaced once: its other locks ended with it, this one need not.
          const { slot, tried } = yield* once(id, absent, restore).pipe(
            Effect.catchIf(ServerLost.isServerLost, () => Effect.succeed(undefined)),
            Effect.flatMap((first) =>
              first !== undefined && first.tried._tag !== "Lost" ? Effect.succeed(first) : once(id, absent, restore)
            )
          )
          if (tried._tag === "Lost") return yield* Effect.fail(gone())
          if (tried._tag !== "Ok") return tried
          const view = { done: false }
          const mine = yield* Scope.make()
          yield* Scope.addFinalizer(mine, release(slot, view, id))
          yield* Effect.addFinalizer((exit) => Scope.close(mine, exit))
          const taken: Slot = {
            conn: slot.conn,
            permit: slot.permit,
            shared: true,
            released: () => view.done,
            broken: Effect.sync(() => {
              slot.lost = true
            })
          }
          return { _tag: "Taken", slot: taken, release: Scope.close(mine, Exit.void) } as const
        })
      )

    return { shared: true, tryLock } satisfies Locks
  })
