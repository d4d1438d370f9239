/**
 * A runner's liveness (src/layers/cluster/Liveness.ts) on a real PostgreSQL:
 * one look lists the healthy runners, other than the looker, whose lock
 * nobody holds; the watch marks such a runner unhealthy after two looks, and
 * a runner whose lock goes (its process died: here the server ends its
 * session) after two more. The engine's `cluster_runners` is stood in for by the two
 * columns the looks read and write.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Context from "effect/Context"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { SqlClient } from "effect/sql/SqlClient"
import * as Liveness from "../../../src/layers/cluster/Liveness.ts"
import * as PgConversationStore from "../../../src/layers/store/pg/PgConversationStore.ts"
import { freshDatabase, type PgServer, pgSkip, startPg } from "../../support/Pg.ts"

let server: PgServer | undefined
beforeAll(async () => {
  if (pgSkip === undefined) server = await startPg()
}, 60_000)
afterAll(() => server?.stop())

/** Runs `f` with a pool on a fresh database holding the registered runners `rows` (address, healthy). */
const withRunners = <A>(
  rows: ReadonlyArray<readonly [string, boolean]>,
  f: (sql: SqlClient, db: string) => Effect.Effect<A, unknown, Scope.Scope>
): Promise<A> => {
  const db = freshDatabase(server!)
  return Effect.runPromise(
    // The scope closes before the pool does: a hold's finalizer still has its connection.
    Effect.scoped(
      Effect.gen(function* () {
        const sql = yield* SqlClient
        yield* sql`CREATE TABLE cluster_runners (address text PRIMARY KEY, healthy boolean NOT NULL)`
        for (const [address, healthy] of rows)
          yield* sql`INSERT INTO cluster_runners (address, healthy) VALUES (${address}, ${healthy})`
        return yield* f(sql, db)
      })
    ).pipe(Effect.provide(Layer.orDie(PgConversationStore.clientLayer({ url: db, maxConnections: 5 }))))
  )
}

/** Ends the server sessions holding `address`' liveness lock, as a runner's death ends its connections: how many. */
const killHolder = (sql: SqlClient, address: string) =>
  Effect.map(
    sql<{ ended: boolean }>`SELECT pg_terminate_backend(pid) AS ended FROM pg_locks
      WHERE locktype = 'advisory' AND granted AND objsubid = 2
        AND classid = ${Liveness.NAMESPACE}::bigint::oid AND objid = ${Liveness.keyOf(address)}::bigint::oid
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    (rows) => rows.filter((r) => r.ended).length
  )

/** The registered runners marked healthy, in address order. */
const healthy = (sql: SqlClient) =>
  Effect.map(sql<{ address: string }>`SELECT address FROM cluster_runners WHERE healthy ORDER BY address`, (rows) =>
    rows.map((r) => r.address)
  )

/** Waits (every 20 ms, at most 10 s) until `healthy` reads `want`. */
const until = (sql: SqlClient, want: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    for (let i = 0; i < 500; i++) {
      const now = yield* healthy(sql)
      if (JSON.stringify(now) === JSON.stringify(want)) return now
      yield* Effect.sleep("20 millis")
    }
    return yield* healthy(sql)
  })

describe.skipIf(pgSkip !== undefined)(`cluster Liveness${pgSkip === undefined ? "" : ` (skipped: ${pgSkip})`}`, () => {
  it("one look lists the healthy runners but the looker whose lock nobody holds", async () => {
    const gone = await withRunners(
      [
        ["127.0.0.1:1", true],
        ["127.0.0.1:2", true],
        ["127.0.0.1:3", true],
        ["127.0.0.1:4", false]
      ],
      (sql) =>
        Effect.gen(function* () {
          // :1 looks, :2 holds its lock, :3 registered without one, :4 already unhealthy.
          yield* Liveness.hold(sql, "127.0.0.1:2")
          return yield* Liveness.unheld(sql, "127.0.0.1:1")
        })
    )
    expect(gone).toEqual(["127.0.0.1:3"])
  }, 30_000)

  it("the watch marks a runner without its lock unhealthy, and one whose lock went", async () => {
    const seen = await withRunners(
      [
        ["127.0.0.1:1", true],
        ["127.0.0.1:2", true],
        ["127.0.0.1:3", true]
      ],
      (sql, db) =>
        Effect.gen(function* () {
          // :2 holds its lock on a pool of its own (its own process, as it were), in a scope of its own.
          const life = yield* Scope.make()
          const other = yield* Layer.buildWithScope(
            Layer.orDie(PgConversationStore.clientLayer({ url: db, maxConnections: 2 })),
            life
          )
          yield* Liveness.hold(Context.get(other, SqlClient), "127.0.0.1:2").pipe(Scope.provide(life))
          yield* Effect.forkScoped(Liveness.watch(sql, "127.0.0.1:1", "20 millis"))
          const first = yield* until(sql, ["127.0.0.1:1", "127.0.0.1:2"])
          // :2's process dies: the server ends its session, and so lets go of its lock; nothing of :2 runs on (its
          // hold would take the lock again a second later).
          const ended = yield* killHolder(sql, "127.0.0.1:2")
          yield* Scope.close(life, Exit.void)
          const after = yield* until(sql, ["127.0.0.1:1"])
          return { first, ended, after }
        })
    )
    expect(seen).toEqual({ first: ["127.0.0.1:1", "127.0.0.1:2"], ended: 1, after: ["127.0.0.1:1"] })
  }, 30_000)
})
