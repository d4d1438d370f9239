/**
 * A message queued for a turn that runs on another runner (its shard came to
 * this one, its tool still runs there): that turn takes it at its next
 * request or as it ends, unless it read its queue for the last time just
 * before the message came. Then nobody started a run for it until the next
 * message. The owner now watches the conversation, and its sweep starts a
 * run (`--continue-turn`, which delivers what is queued) once that turn's
 * row is gone.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type { ConversationId } from "../../../src/domain/storage/ConversationId.ts"
import * as Sweep from "../../../src/layers/cluster/Sweep.ts"
import * as Scripted from "../../../src/layers/provider/Scripted.ts"
import * as PgLock from "../../../src/layers/store/pg/PgLock.ts"
import { freshDatabase, type PgServer, pgSkip, startPg } from "../../support/Pg.ts"
import { withRunner } from "../../support/RunnerTurns.ts"

let server: PgServer | undefined
beforeAll(async () => {
  if (pgSkip === undefined) server = await startPg()
}, 60_000)
afterAll(() => server?.stop())

const ID = "17700000002" as ConversationId

describe.skipIf(pgSkip !== undefined)(`cluster Sweep${pgSkip === undefined ? "" : ` (skipped: ${pgSkip})`}`, () => {
  it("a message queued for a turn elsewhere that ended without it is delivered here once that turn's row is gone", async () => {
    const model = await Effect.runPromise(Scripted.make([{ message: "Noted", toolCalls: [], delayMs: 0 }]))
    const seen = await withRunner(
      freshDatabase(server!),
      ({ sql, store, turns, create }) =>
        Effect.gen(function* () {
          yield* create(ID)
          // The turn runs on a; b (the owner) queued a message for it and watches.
          yield* sql`INSERT INTO parley_cluster_turns (conversation_id, runner, pid, since) VALUES (${ID}, 'a:1', 1, now())`
          yield* store.messages!.enqueue(ID, { message: "use the blue one", surface: "api", when: "next", nonce: "n1" })
          turns.watchQueue(ID)
          const rows = () =>
            Effect.map(
              sql<{
                conversation_id: string
                runner: string
              }>`SELECT conversation_id, runner FROM parley_cluster_turns`,
              (rs) => new Map(rs.map((r) => [r.conversation_id, r.runner]))
            )
          // Still running there: nothing starts here, the watch stays.
          yield* Sweep.deliverStranded(turns, yield* rows(), () => true)
          const whileThere = { started: turns.get(ID) !== undefined, watched: turns.queueWatched().has(ID) }
          // a's turn ends having read its queue before the message came: its row goes.
          yield* sql`DELETE FROM parley_cluster_turns WHERE conversation_id = ${ID}`
          yield* Sweep.deliverStranded(turns, yield* rows(), () => true)
          const run = turns.get(ID)
          if (run !== undefined) yield* Deferred.await(run.ended)
          const entries = (yield* store.load(ID)).entries
          return {
            whileThere,
            watchedAfter: turns.queueWatched().has(ID),
            said: entries.flatMap((e) =>
              e.type === "chat_request" ? [e.content] : e.type === "chat_response" ? [e.message] : []
            )
          }
        }),
      model
    )
    // Without the watch: nothing said, the message left queued.
    expect(seen).toStrictEqual({
      whileThere: { started: false, watched: true },
      watchedAfter: false,
      said: ["use the blue one", "Noted"]
    })
  }, 60_000)

  it("a turn still elsewhere, or whose shard is away for now, stays watched; one running here is left to its run", async () => {
    const seen = await withRunner(freshDatabase(server!), ({ turns }) =>
      Effect.gen(function* () {
        const [there, moved, here] = ["17700000003", "17700000004", "17700000005"] as Array<ConversationId>
        for (const id of [there, moved, here]) turns.watchQueue(id!)
        yield* Sweep.deliverStranded(
          turns,
          new Map([
            [there!, "a:1"],
            [here!, "b:2"]
          ]),
          (id) => id !== moved
        )
        const first = [...turns.queueWatched().keys()]
        // The shard back (it was away for a moment): no row, nothing queued in the store: forgotten, nothing started.
        yield* Sweep.deliverStranded(turns, new Map([[there!, "a:1"]]), () => true)
        return { first, afterwards: [...turns.queueWatched().keys()], started: turns.running().length }
      })
    )
    // 3 runs on a: watched still. 4 not owned here for now: watched still. 5 runs here: its run takes it.
    // Then 4 has nothing queued (no store holds a message of it): forgotten, no run started for it.
    expect(seen).toStrictEqual({ first: ["17700000003", "17700000004"], afterwards: ["17700000003"], started: 0 })
  }, 60_000)

  it("a stop request is taken as its notice comes, not at the next sweep; after its connection is lost too", async () => {
    const seen = await withRunner(freshDatabase(server!), ({ sql, pg, turns }) =>
      Effect.gen(function* () {
        yield* Effect.forkScoped(Sweep.stopsOnNotice({ sql, runner: "b:2", turns }, pg.listen))
        // A turn of b's that no longer runs here (handed off a moment ago): asked to stop, its row goes. No sweep runs
        // here: only a notice can take the request. Sent until it is (the listener may not be listening yet).
        const taken = (id: ConversationId) =>
          Effect.gen(function* () {
            yield* sql`INSERT INTO parley_cluster_turns (conversation_id, runner, pid, since) VALUES (${id}, 'b:2', 1, now())`
            yield* sql`INSERT INTO parley_cluster_stops (conversation_id, runner) VALUES (${id}, 'b:2')`
            for (let i = 0; i < 100; i++) {
              yield* sql`SELECT pg_notify(${Sweep.STOPS_CHANNEL}, 'b:2')`
              yield* Effect.sleep("100 millis")
              const rows = yield* sql`SELECT 1 FROM parley_cluster_turns WHERE conversation_id = ${id}`
              if (rows.length === 0) return true
            }
            return false
          })
        const first = yield* taken("17700000006" as ConversationId)
        // The listening connection ends (a server restart, a network gone): listened to again a second later.
        yield* sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%'`
        const second = yield* taken("17700000007" as ConversationId)
        return { first, second }
      })
    )
    expect(seen).toStrictEqual({ first: true, second: true })
  }, 60_000)

  it("a stop asked while a start of the turn retries (its lock held a moment) waits for it: no row is claimed again", async () => {
    const id = "17700000008" as ConversationId
    const rows = await withRunner(freshDatabase(server!), ({ sql, pg, turns, create }) =>
      Effect.gen(function* () {
        yield* create(id)
        // Another process holds the conversation a while: b's start retries (200 ms apart, five times).
        const held = yield* PgLock.own(sql).tryLock(id)
        if (held._tag !== "Taken") return yield* Effect.die("the lock was not free")
        const start = yield* Effect.forkScoped(turns.start(id, { continueTurn: true }))
        yield* Effect.sleep("300 millis")
        yield* Effect.forkScoped(Sweep.stopsOnNotice({ sql, runner: "b:2", turns }, pg.listen))
        yield* sql`INSERT INTO parley_cluster_stops (conversation_id, runner) VALUES (${id}, 'b:2')`
        for (let i = 0; i < 30; i++) {
          yield* sql`SELECT pg_notify(${Sweep.STOPS_CHANNEL}, 'b:2')`
          yield* Effect.sleep("50 millis")
          if ((yield* sql`SELECT 1 FROM parley_cluster_stops WHERE conversation_id = ${id}`).length === 0) break
        }
        yield* Fiber.join(start)
        return (yield* sql`SELECT runner FROM parley_cluster_turns WHERE conversation_id = ${id}`).length
      })
    )
    // Without the wait: 1 (the retry claimed the row again after the stop removed it; the sweep would resume it).
    expect(rows).toBe(0)
  }, 60_000)
})
