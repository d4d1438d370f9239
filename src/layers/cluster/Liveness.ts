/**
 * Whether a cluster's runners live, from PostgreSQL (docs/cluster.md#failover):
 * each runner holds an advisory lock of its own (keyed by its address) on a
 * connection it keeps for its life, and every runner looks, ten times a
 * second, which registered runners' locks are no longer held. A process
 * that dies (`kill -9` included) closes its connections, and the server lets
 * go of its locks at once, so its peers see it gone within two checks (every
 * 100 ms: one small statement, cheap beside the failover time it saves)
 * and mark it unhealthy in `cluster_runners`: the engine moves its shards at
 * its next assignment refresh, and the sweep resumes its turns.
 *
 * Effect's own check is a ping from one runner (a cluster singleton): a
 * ping to a dead runner fails only after its timeout, and when the dead
 * runner is the one that ran the check, nobody checks until its heartbeat
 * expires (`shardLockExpiration`): failover took about 6 s then. The lock
 * needs no singleton and no timeout. A live runner whose event loop lags
 * keeps its lock (its connection stays open), so lag is never taken for
 * death; one whose connection to the database was lost takes its lock again
 * and is marked healthy again by the engine's own check.
 *
 * @example
 * ```ts
 * import type { SqlClient } from "effect/sql/SqlClient"
 * import * as Effect from "effect/Effect"
 * import * as Liveness from "parley/layers/cluster/Liveness"
 * declare const sql: SqlClient
 * const runner = Effect.scoped(
 *   Effect.gen(function* () {
 *     yield* Liveness.hold(sql, "127.0.0.1:13141")
 *     yield* Effect.forkScoped(Liveness.watch(sql, "127.0.0.1:13141"))
 *   })
 * )
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as crypto from "node:crypto"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import type { SqlClient } from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import * as PgLock from "../store/pg/PgLock.ts"
import * as Trace from "./Trace.ts"

/** The first key of every runner's liveness lock ("parl"); the second is its address' {@link keyOf}. */
export const NAMESPACE = 0x7061726c

/** The second key of a runner's liveness lock: 31 bits of its address' SHA-256 (positive, as `pg_locks` shows it). */
export const keyOf = (address: string): number =>
  crypto.createHash("sha256").update(address).digest().readUInt32BE(0) & 0x7fffffff

/** How often a runner looks that its own lock's connection still answers. */
const KEEP = "1 second"

/** Checks in a row that must find a runner's lock free before it is marked unhealthy. */
const MISSES = 2

/** Takes `address`' lock on a connection of its own (tried for up to 6 s: a process that just died may still hold it). */
const take = (sql: SqlClient, address: string) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const conn: Connection = yield* Scope.provide(sql.reserve, scope)
    const locked = PgLock.on(
      sql,
      conn,
      sql<{ ok: boolean }>`SELECT pg_try_advisory_lock(${NAMESPACE}::int, ${keyOf(address)}::int) AS ok`
    ).pipe(Effect.map((rows) => rows[0]?.ok === true))
    yield* locked.pipe(
      Effect.repeat({ until: (ok) => ok, schedule: Schedule.spaced("100 millis"), times: 60 }),
      Effect.onError(() => Scope.close(scope, Exit.void))
    )
    return { conn, scope }
  })

/**
 * Holds this runner's liveness lock while the scope lives: taken before it
 * returns (so the runner registers with its lock held), and taken again on
 * a new connection when its connection stops answering.
 */
export const hold = (sql: SqlClient, address: string) =>
  Effect.gen(function* () {
    let held = yield* take(sql, address)
    yield* Effect.addFinalizer(() => Scope.close(held.scope, Exit.void))
    const keep = Effect.gen(function* () {
      yield* Effect.sleep(KEEP)
      const alive = yield* Effect.isSuccess(PgLock.on(sql, held.conn, sql`SELECT 1`))
      if (alive) return
      yield* Scope.close(held.scope, Exit.void)
      held = yield* take(sql, address).pipe(Effect.retry(Schedule.spaced(KEEP)))
    })
    yield* Effect.forkScoped(Effect.forever(keep))
  })

/**
 * One look: the healthy runners other than `me` whose lock nobody holds. One
 * statement: its rows are the healthy runners (`address`, no `k`) and the
 * held liveness locks' second keys (`k`, no `address`), in no set order.
 */
export const unheld = (sql: SqlClient, me: string) =>
  Effect.map(
    // oid decodes to a number (the keys are 31 bits); a NULL of either column to null.
    sql<{ address: string | null; k: number | null }>`SELECT address, NULL::oid AS k
      FROM cluster_runners WHERE healthy
      UNION ALL
      SELECT NULL, objid FROM pg_locks
      WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND classid = ${NAMESPACE}::bigint::oid
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    (rows) => {
      const held = new Set(rows.flatMap((r) => (r.k === null ? [] : [r.k])))
      return rows.flatMap((r) =>
        r.address === null || r.address === me || held.has(keyOf(r.address)) ? [] : [r.address]
      )
    }
  )

/**
 * Every `every` (100 ms), marks unhealthy the registered runners whose liveness lock
 * was free at {@link MISSES} looks in a row (any runner may: the mark is the
 * same whoever writes it).
 */
export const watch = (sql: SqlClient, me: string, every: Duration.Input = "100 millis") =>
  Effect.suspend(() => {
    const misses = new Map<string, number>()
    const look = Effect.gen(function* () {
      const gone = yield* unheld(sql, me)
      for (const a of misses.keys()) if (!gone.includes(a)) misses.delete(a)
      for (const address of gone) {
        const n = (misses.get(address) ?? 0) + 1
        misses.set(address, n)
        if (n < MISSES) continue
        misses.delete(address)
        yield* Trace.line("liveness: gone", address)
        yield* sql`UPDATE cluster_runners SET healthy = false WHERE address = ${address} AND healthy`
      }
    })
    return Effect.forever(Effect.andThen(Effect.sleep(every), Effect.ignore(look)))
  })
