/**
 * A stop message delivered again (docs/cluster.md#how-it-works): the cluster
 * stores a `Stop` and delivers it until its owner's reply is stored. When
 * the shard moves under the entity after the stop took effect and before
 * the reply was stored, the next delivery found no turn and answered
 * `404 NotRunning` for a turn the first one had stopped (seen twice under
 * the whole serve suite's load). Each delivery carries the message's
 * request id: the process a stop stops is noted under it before the stop is
 * made, and a later delivery answers that pid.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { SqlClient } from "effect/sql/SqlClient"
import type { ConversationId } from "../../../src/domain/storage/ConversationId.ts"
import * as Handlers from "../../../src/layers/cluster/Handlers.ts"
import * as Migrations from "../../../src/layers/cluster/Migrations.ts"
import * as Turns from "../../../src/layers/cluster/Turns.ts"
import * as PgConversationStore from "../../../src/layers/store/pg/PgConversationStore.ts"
import { Config } from "../../../src/services/Config.ts"
import { ConversationStore } from "../../../src/services/ConversationStore.ts"
import { Executor } from "../../../src/services/Executor.ts"
import { Provider } from "../../../src/services/Provider.ts"
import { freshDatabase, type PgServer, pgSkip, startPg } from "../../support/Pg.ts"

let server: PgServer | undefined
beforeAll(async () => {
  if (pgSkip === undefined) server = await startPg()
}, 60_000)
afterAll(() => server?.stop())

const ID = "17700000001" as ConversationId

/** What a stop answered: the pid, or the refusal's tag. */
const outcome = <E extends { readonly _tag: string }>(stop: Effect.Effect<number, E>) =>
  Effect.match(stop, { onSuccess: (pid) => pid as number | string, onFailure: (e) => e._tag })

describe.skipIf(pgSkip !== undefined)(`cluster Handlers${pgSkip === undefined ? "" : ` (skipped: ${pgSkip})`}`, () => {
  it("a stop delivered again after it stopped the turn elsewhere answers the same pid; a new stop finds none", async () => {
    const url = freshDatabase(server!)
    const seen = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          const store = yield* ConversationStore
          yield* Migrations.migrate
          // Runner b owns the conversation's shard; its turn runs on runner a, whose sweep is played here.
          const turns = yield* Turns.make({
            runner: "b:2",
            http: { address: "127.0.0.1:1", host: "127.0.0.1:1" },
            sql,
            services: {
              store,
              config: yield* Config,
              executor: Executor.of({
                definitions: [],
                execute: () => Effect.die("no tool runs here"),
                permission: () => "unattended",
                kind: () => undefined
              }),
              provider: Provider.of({ stream: () => Stream.die("no model is asked here") }),
              chooseModel: () => Effect.fail({ message: "no model is asked here" }),
              root: "/nonexistent"
            }
          })
          const runsOnA = (pid: number) =>
            sql`INSERT INTO parley_cluster_turns (conversation_id, runner, pid, since) VALUES (${ID}, 'a:1', ${pid}, now())`
          // a's sweep: takes the requests addressed to it and stops the turn (its row goes).
          const sweepOfA = Effect.gen(function* () {
            const asked = yield* sql<{ conversation_id: string }>`DELETE FROM parley_cluster_stops
              WHERE runner = 'a:1' RETURNING conversation_id`
            for (const r of asked)
              yield* sql`DELETE FROM parley_cluster_turns WHERE conversation_id = ${r.conversation_id} AND runner = 'a:1'`
          }).pipe(Effect.andThen(Effect.sleep("50 millis")), Effect.forever)
          const stop = (requestId: string) => outcome(Handlers.stopAnywhere(turns, sql, ID, requestId))

          yield* runsOnA(4242)
          const a = yield* Effect.forkScoped(sweepOfA)
          // A message queued for the turn meanwhile: stopped, the turn does not go on with it.
          turns.watchQueue(ID)
          const first = yield* stop("m1")
          const watched = turns.queueWatched().has(ID)
          const again = yield* stop("m1")
          const another = yield* stop("m2")

          // A delivery cut short (its entity interrupted) after it asked a, before a stopped the turn: the request
          // is taken back, the turn runs on; the next delivery stops it.
          yield* Fiber.interrupt(a)
          yield* runsOnA(4343)
          const cut = yield* Effect.forkScoped(stop("m3"))
          for (;;) {
            const asked = yield* sql`SELECT 1 FROM parley_cluster_stops WHERE conversation_id = ${ID}`
            if (asked.length > 0) break
            yield* Effect.sleep("20 millis")
          }
          yield* Fiber.interrupt(cut)
          const leftRunning = (yield* sql`SELECT 1 FROM parley_cluster_turns WHERE conversation_id = ${ID}`).length
          yield* Effect.forkScoped(sweepOfA)
          const redelivered = yield* stop("m3")
          const rows = (yield* sql`SELECT 1 FROM parley_cluster_turns WHERE conversation_id = ${ID}`).length
          return { first, watched, again, another, leftRunning, redelivered, rows }
        })
      ).pipe(
        Effect.provide(
          Layer.mergeAll(
            PgConversationStore.layer({ url }),
            PgConversationStore.clientLayer({ url }),
            Config.layerEmpty
          ).pipe(Layer.orDie)
        )
      )
    )
    // Without the note: again "NotRunning".
    expect(seen).toStrictEqual({
      first: 4242,
      watched: false,
      again: 4242,
      another: "NotRunning",
      leftRunning: 1,
      redelivered: 4343,
      rows: 0
    })
  }, 60_000)
})
