/**
 * What a statement costs PostgreSQL when the statements of a cluster's turns
 * go each to its own connection (docs/cluster.md#figures): a turn's writes
 * run on its lock's connection (`layers/store/pg/PgLock.ts`), so 300
 * waiting turns are 300 server processes, each woken a few times per answer.
 * `node --import tsx bench/pgspread.ts [K]` (K connections, default 300) on a
 * throwaway server (test/support/Pg.ts): the server's CPU per statement (an
 * UPDATE or a SELECT by key) when every statement goes to one connection,
 * and when each goes to the next of the K; the two alternate, three times
 * each. The server's CPU is read from /proc/<pid>/schedstat (nanoseconds:
 * /proc/<pid>/stat counts 10 ms ticks, as much as 300 backends use in a
 * pass). Printed, not a goal.
 */
import * as fs from "node:fs"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import * as PgConversationStore from "../src/layers/store/pg/PgConversationStore.ts"
import * as PgLock from "../src/layers/store/pg/PgLock.ts"
import { freshDatabase, pgSkip, startPg } from "../test/support/Pg.ts"
import { pgPids } from "./cluster.ts"

const K = Number(process.argv[2] ?? "300")
const ROUNDS = 3

/** Nanoseconds a process has run on a CPU (0 once it is gone). */
const onCpuNs = (pid: number): number => {
  try {
    return Number(fs.readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0])
  } catch {
    return 0
  }
}

const measure = (dir: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient
    // No autovacuum in the middle of a pass.
    yield* sql`CREATE TABLE t (id text PRIMARY KEY, n int) WITH (autovacuum_enabled = off)`
    yield* sql`INSERT INTO t SELECT i::text, 0 FROM generate_series(0, ${2 * K - 1}) i`
    // Reserved in the scope `Effect.scoped` gives: given back however this ends.
    const conns: Array<Connection> = yield* Effect.forEach(Array.from({ length: K }), () => sql.reserve, {
      concurrency: 50
    })
    const serverNs = () => pgPids(dir).reduce((a, p) => a + onCpuNs(p), 0)
    const pass = (pick: (i: number) => Connection) =>
      Effect.gen(function* () {
        for (let i = 0; i < 2 * K; i += 2) {
          yield* PgLock.on(sql, pick(i), sql`UPDATE t SET n = n + 1 WHERE id = ${String(i)}`)
          yield* PgLock.on(sql, pick(i + 1), sql`SELECT n FROM t WHERE id = ${String(i + 1)}`)
        }
      })
    // Each connection once first: its first statements load the server's caches.
    yield* pass((i) => conns[i % K]!)
    const ways = [
      { label: "one connection, back to back", pick: () => conns[0]!, ns: 0 },
      { label: `each to the next of ${K} connections`, pick: (i: number) => conns[i % K]!, ns: 0 }
    ]
    for (let r = 0; r < ROUNDS; r++)
      for (const way of ways) {
        const before = serverNs()
        yield* pass(way.pick)
        way.ns += serverNs() - before
      }
    for (const way of ways)
      console.log(
        `  ${way.label}: ${(way.ns / 1e6 / (ROUNDS * 2 * K)).toFixed(3)} ms of the server's CPU per statement`
      )
  })

if (pgSkip !== undefined) console.log(`skipped: ${pgSkip}`)
else {
  const pg = await startPg({ maxConnections: K + 20 })
  try {
    const url = freshDatabase(pg)
    console.log(`${K} connections to one PostgreSQL, ${ROUNDS * 2 * K} statements each way:`)
    await Effect.runPromise(
      Effect.scoped(measure(pg.dir)).pipe(
        Effect.provide(Layer.orDie(PgConversationStore.clientLayer({ url, maxConnections: K + 5 })))
      )
    )
  } finally {
    pg.stop()
  }
}
