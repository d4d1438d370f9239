import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import * as PgConversationStore from "../src/layers/store/pg/PgConversationStore.ts"
import { freshDatabase, startPg } from "../test/support/Pg.ts"
const server = await startPg()
try {
  const url = freshDatabase(server)
  const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]!.toFixed(2) }
  await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const sql = yield* SqlClient
    const conn = yield* sql.reserve
    const times: number[] = []
    for (let i = 0; i < 600; i++) {
      const t0 = performance.now()
      yield* Effect.provideService(sql`SELECT 1`, sql.transactionService, [conn, 0] as const)
      if (i >= 100) times.push(performance.now() - t0)
    }
    console.log("SELECT 1 p50/p90/p99/max", [0.5, 0.9, 0.99, 1].map((p) => pct(times, p)).join(" "))
    const t2: number[] = []
    for (let i = 0; i < 600; i++) {
      const t0 = performance.now()
      yield* Effect.promise(() => new Promise((r) => setImmediate(r)))
      if (i >= 100) t2.push(performance.now() - t0)
    }
    console.log("setImmediate p50/p90/p99/max", [0.5, 0.9, 0.99, 1].map((p) => pct(t2, p)).join(" "))
  })).pipe(Effect.provide(Layer.orDie(PgConversationStore.clientLayer({ url })))))
} finally { server.stop() }
