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
import type { ConversationId } from "../../../src/domain/storage/ConversationId.ts"
import * as Handlers from "../../../src/layers/cluster/Handlers.ts"
import { freshDatabase, type PgServer, pgSkip, startPg } from "../../support/Pg.ts"
import { withRunner } from "../../support/RunnerTurns.ts"

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
    // Runner b owns the conversation's shard; its turn runs on runner a, whose sweep is played here.
    const seen = await withRunner(freshDatabase(server!), ({ sql, turns }) =>
      Effect.gen(function* () {
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

  it("a message delivered again after it was queued is answered as then, and nothing is done again", async () => {
    const id = "17700000009" as ConversationId
    const seen = await withRunner(freshDatabase(server!), ({ sql, store, turns, create }) =>
      Effect.gen(function* () {
        yield* create(id)
        yield* sql`INSERT INTO parley_cluster_turns (conversation_id, runner, pid, since) VALUES (${id}, 'a:1', 4242, now())`
        // The first delivery queued it under the message's id (and stopped the turn for a `now`).
        yield* store.messages!.enqueue(id, { message: "stop that", surface: "api", when: "now", nonce: "cluster-77" })
        const again = yield* Handlers.queuedBefore(turns, store, sql, id, "77")
        const watched = turns.queueWatched().has(id)
        const other = yield* Handlers.queuedBefore(turns, store, sql, id, "78")
        return { again, watched, other: other ?? "not queued before" }
      })
    )
    expect(seen).toStrictEqual({
      again: { conversation_id: "17700000009", pid: 4242, queued: 1 },
      watched: true,
      other: "not queued before"
    })
  }, 60_000)
})
