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
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { SqlClient } from "effect/sql/SqlClient"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"
import type { ConversationId } from "../../../src/domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../../src/domain/storage/ConversationMetadata.ts"
import * as Migrations from "../../../src/layers/cluster/Migrations.ts"
import * as Sweep from "../../../src/layers/cluster/Sweep.ts"
import * as Turns from "../../../src/layers/cluster/Turns.ts"
import * as Scripted from "../../../src/layers/provider/Scripted.ts"
import * as PgConversationStore from "../../../src/layers/store/pg/PgConversationStore.ts"
import { Config } from "../../../src/services/Config.ts"
import { ConversationStore } from "../../../src/services/ConversationStore.ts"
import { Executor } from "../../../src/services/Executor.ts"
import { freshDatabase, type PgServer, pgSkip, startPg } from "../../support/Pg.ts"

let server: PgServer | undefined
beforeAll(async () => {
  if (pgSkip === undefined) server = await startPg()
}, 60_000)
afterAll(() => server?.stop())

const ID = "17700000002" as ConversationId

describe.skipIf(pgSkip !== undefined)(`cluster Sweep${pgSkip === undefined ? "" : ` (skipped: ${pgSkip})`}`, () => {
  it("a message queued for a turn elsewhere that ended without it is delivered here once that turn's row is gone", async () => {
    const url = freshDatabase(server!)
    const seen = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          const store = yield* ConversationStore
          yield* Migrations.migrate
          const metadata = ConversationMetadata.make({
            last_activated_at: Timestamp.make("2026-11-30T00:00:00.000000Z")
          })
          yield* Effect.scoped(store.create({ id: ID, metadata }))
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
              provider: yield* Scripted.make([{ message: "Noted", toolCalls: [], delayMs: 0 }]),
              chooseModel: () => Effect.succeed("scripted"),
              root: "/nonexistent"
            }
          })
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
    // Without the watch: nothing said, the message left queued.
    expect(seen).toStrictEqual({
      whileThere: { started: false, watched: true },
      watchedAfter: false,
      said: ["use the blue one", "Noted"]
    })
  }, 60_000)

  it("a turn still elsewhere, or whose shard is away for now, stays watched; one running here is left to its run", async () => {
    const url = freshDatabase(server!)
    const seen = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          const store = yield* ConversationStore
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
              provider: { stream: () => Stream.die("no model is asked here") },
              chooseModel: () => Effect.fail({ message: "no model is asked here" }),
              root: "/nonexistent"
            }
          })
          yield* Migrations.migrate
          const [there, moved, here] = ["17700000003", "17700000004", "17700000005"] as Array<ConversationId>
          for (const id of [there, moved, here]) turns.watchQueue(id!)
          const sweep = Sweep.deliverStranded(
            turns,
            new Map([
              [there!, "a:1"],
              [here!, "b:2"]
            ]),
            (id) => id !== moved
          )
          yield* sweep
          const first = [...turns.queueWatched().keys()]
          // The shard back (it was away for a moment): no row, nothing queued in the store: forgotten, nothing started.
          yield* Sweep.deliverStranded(turns, new Map([[there!, "a:1"]]), () => true)
          return { first, afterwards: [...turns.queueWatched().keys()], started: turns.running().length }
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
    // 3 runs on a: watched still. 4 not owned here for now: watched still. 5 runs here: its run takes it.
    // Then 4 has nothing queued (no store holds a message of it): forgotten, no run started for it.
    expect(seen).toStrictEqual({ first: ["17700000003", "17700000004"], afterwards: ["17700000003"], started: 0 })
  }, 60_000)
})
