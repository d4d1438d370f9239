/**
 * A conversation's write lock in PostgreSQL
 * (docs/decisions.md#database-storage-beside-the-directory): a session-level
 * advisory lock taken on a connection reserved for the session's scope. The
 * lock lives exactly as long as that connection: a killed process's
 * connection ends and PostgreSQL releases its locks, so a lock cannot go
 * stale. While it is held, `parley_locks` names the holder (pid, host,
 * backend pid) so a second writer fails at once saying who has it.
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
import type { SqlClient } from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import type { SqlError } from "effect/sql/SqlError"

/** The advisory lock key of a conversation: its id (digits) as a bigint, so two ids never share a lock. */
export const key = (id: string): string => id

/** Runs `effect`'s statements on `conn` (effect/sql's transaction slot, depth 0). */
export const on = <A, E, R>(sql: SqlClient, conn: Connection, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(effect, sql.transactionService, [conn, 0] as const)

/** Runs `body` in a transaction on `conn`: committed when it returns, rolled back when it fails. */
export const transaction = <A, E, R>(
  sql: SqlClient,
  conn: Connection,
  body: Effect.Effect<A, E, R>
): Effect.Effect<A, E | SqlError, R> =>
  on(
    sql,
    conn,
    Effect.uninterruptible(
      Effect.gen(function* () {
        yield* sql.unsafe("BEGIN")
        const a = yield* Effect.onError(body, () => Effect.ignore(sql.unsafe("ROLLBACK")))
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

/** What trying the lock gave: held by us on `conn`, or by someone else. */
export type Attempt =
  | {
      readonly _tag: "Taken"
      readonly conn: Connection
      /** Lets go of the lock and its connection before the scope closes (a fresh id that turned out taken). */
      readonly release: Effect.Effect<void>
    }
  | { readonly _tag: "Held"; readonly holder: Holder | undefined }
  /** `absent` was asked and the conversation exists: its lock was not touched. */
  | { readonly _tag: "Exists" }

/**
 * Tries `id`'s lock on a connection reserved for the scope. Taken: the scope
 * owns the connection and, on close, deletes the holder row and unlocks
 * (the connection's end would release it anyway). Held: nothing is kept.
 *
 * With `absent` (a fresh id for `create`), the lock is tried only when no
 * conversation `id` exists, in the same statement: a creator whose id
 * another process has just created never takes that conversation's lock,
 * even for a moment, so an `open` racing it never reads "locked" (a holder
 * still creating it holds the lock, and then the attempt is Held).
 */
export const tryLock = (
  sql: SqlClient,
  id: string,
  options?: { readonly absent?: boolean }
): Effect.Effect<Attempt, SqlError, Scope.Scope> =>
  Effect.uninterruptible(
    Effect.gen(function* () {
      // Its own scope: a lock we do not get gives its connection back at once (create tries id after id).
      const own = yield* Scope.make()
      const attempt = Effect.gen(function* () {
        const conn = yield* Scope.provide(sql.reserve, own)
        const [row] = yield* on(
          sql,
          conn,
          options?.absent === true
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
        if (row?.ok !== true) {
          // On this connection: waiting for another one while holding this one could deadlock a full pool.
          const [holder] = yield* on(
            sql,
            conn,
            sql<{ pid: number; host: string }>`SELECT pid, host FROM parley_locks WHERE conversation_id = ${id}`
          )
          return { _tag: "Held", holder } as const
        }
        // Runs before the connection goes back to the pool (the connection's end would release the lock anyway).
        yield* Scope.addFinalizer(
          own,
          on(
            sql,
            conn,
            // One statement, one round trip. PostgreSQL runs the DELETE (a WITH nothing reads) after the SELECT, so the
            // lock is free a moment before the row goes: a taker's upsert of its own row in between survives, as the
            // DELETE re-checks backend_pid on the row's newest version (checked with the unlock and the DELETE 2 s apart).
            Effect.ignore(
              sql`WITH gone AS (DELETE FROM parley_locks WHERE conversation_id = ${id} AND backend_pid = pg_backend_pid())
              SELECT pg_advisory_unlock(${key(id)}::bigint)`
            )
          )
        )
        yield* on(
          sql,
          conn,
          sql`INSERT INTO parley_locks (conversation_id, pid, host, backend_pid) VALUES (${id}, ${process.pid}, ${os.hostname()}, ${row.backend})
        ON CONFLICT (conversation_id) DO UPDATE SET pid = EXCLUDED.pid, host = EXCLUDED.host, backend_pid = EXCLUDED.backend_pid, since = now()`
        )
        return { _tag: "Taken", conn, release: Scope.close(own, Exit.void) } as const
      })
      const result = yield* Effect.onError(attempt, (cause) => Scope.close(own, Exit.failCause(cause)))
      if (result._tag !== "Taken") yield* Scope.close(own, Exit.void)
      else yield* Effect.addFinalizer((exit) => Scope.close(own, exit))
      return result
    })
  )
