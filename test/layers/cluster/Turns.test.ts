/**
 * A cluster runner's turns (docs/cluster.md#failover; found with the failover
 * bench): a start that finds the conversation's lock held by another runner
 * (which still runs the turn and is about to hand it off) must not take that
 * runner's `parley_cluster_turns` row. It did: the row named the runner that
 * could not start the turn while the turn ran on the other one; when the
 * shard went back to that one, it kept the turn and nobody resumed the row,
 * and with the named runner killed the turn never moved.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { SqlClient } from "effect/sql/SqlClient"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"
import type { ConversationId } from "../../../src/domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../../src/domain/storage/ConversationMetadata.ts"
import * as Migrations from "../../../src/layers/cluster/Migrations.ts"
import * as Turns from "../../../src/layers/cluster/Turns.ts"
import * as PgConversationStore from "../../../src/layers/store/pg/PgConversationStore.ts"
import * as PgLock from "../../../src/layers/store/pg/PgLock.ts"
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

const ID = "17700000000" as ConversationId

describe.skipIf(pgSkip !== undefined)(`cluster Turns${pgSkip === undefined ? "" : ` (skipped: ${pgSkip})`}`, () => {
  it("a start that finds the lock held leaves the holder's row; once the lock is free, the turn's row is its own", async () => {
    const url = freshDatabase(server!)
    const owners = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          const store = yield* ConversationStore
          yield* Migrations.migrate
          const metadata = ConversationMetadata.make({
            last_activated_at: Timestamp.make("2026-11-26T00:00:00.000000Z")
          })
          yield* Effect.scoped(store.create({ id: ID, metadata }))
          const owner = () =>
            Effect.map(
              sql<{ runner: string }>`SELECT runner FROM parley_cluster_turns WHERE conversation_id = ${ID}`,
              (rows) => rows[0]?.runner ?? "no row"
            )
          // Runner a runs the turn: it holds the conversation's lock, and the row names it.
          const held = yield* PgLock.tryLock(sql, ID)
          if (held._tag !== "Taken") return yield* Effect.die("the lock was not free")
          yield* sql`INSERT INTO parley_cluster_turns (conversation_id, runner, pid, since) VALUES (${ID}, 'a:1', 1, now())`
          const turns = yield* Turns.make({
            runner: "b:2",
            http: { address: "127.0.0.1:1", host: "127.0.0.1:1" },
            sql,
            services: {
              store,
              config: yield* Config,
              // Never reached: the turn ends (locked, or nothing to resume) before a model or tool is asked.
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
          // Runner b's sweep: the shard is b's now, the turn still a's.
          const locked = yield* turns.start(ID, { continueTurn: true })
          const whileHeld = yield* owner()
          // a hands it off (lets go of the lock); b's next sweep takes it: nothing to resume, so it ends and its row goes.
          yield* held.release
          const free = yield* turns.start(ID, { continueTurn: true })
          return {
            locked: locked._tag === "Failed" ? (locked.error as { _tag?: unknown })._tag : locked._tag,
            whileHeld,
            free: free._tag,
            after: yield* owner()
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
    // Without the fix: whileHeld "b:2" (taken over by the start that failed), after "no row" all the same.
    expect(owners).toStrictEqual({ locked: "ConversationLocked", whileHeld: "a:1", free: "Ended", after: "no row" })
  }, 60_000)
})
