/**
 * One cluster runner's turns (`layers/cluster/Turns.ts`) on a fresh
 * PostgreSQL database, without the cluster around them: the tests of the
 * runner's parts (`test/layers/cluster`) play the other runners with rows
 * of `parley_cluster_turns` and requests of `parley_cluster_stops`.
 */
import { PgClient } from "@effect/sql-pg"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { SqlClient } from "effect/sql/SqlClient"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
import type { ConversationId } from "../../src/domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../src/domain/storage/ConversationMetadata.ts"
import * as Migrations from "../../src/layers/cluster/Migrations.ts"
import * as Turns from "../../src/layers/cluster/Turns.ts"
import * as PgConversationStore from "../../src/layers/store/pg/PgConversationStore.ts"
import { Config } from "../../src/services/Config.ts"
import { ConversationStore } from "../../src/services/ConversationStore.ts"
import { Executor } from "../../src/services/Executor.ts"
import { Provider } from "../../src/services/Provider.ts"

/** What a test's body gets: the database, the store on it, and runner `b:2`'s turns. */
export interface Runner {
  readonly sql: SqlClient
  readonly pg: PgClient.PgClient
  readonly store: ConversationStore["Service"]
  readonly turns: Turns.Turns
  /** Creates conversation `id`, empty. */
  readonly create: (id: ConversationId) => Effect.Effect<void, unknown>
}

/**
 * Runs `body` against runner `b:2` on the database at `url` (migrated). No
 * tool runs; the model is `provider` (none by default: a turn that asks it
 * dies).
 */
export const withRunner = <A>(
  url: string,
  body: (runner: Runner) => Effect.Effect<A, unknown, Scope.Scope>,
  provider: Provider["Service"] = Provider.of({ stream: () => Stream.die("no model is asked here") })
): Promise<A> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const sql = yield* SqlClient
        const pg = yield* PgClient.PgClient
        const store = yield* ConversationStore
        yield* Migrations.migrate
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
            provider,
            chooseModel: () => Effect.succeed("scripted"),
            root: "/nonexistent"
          }
        })
        const metadata = ConversationMetadata.make({ last_activated_at: Timestamp.make("2026-11-26T00:00:00.000000Z") })
        const create = (id: ConversationId) => Effect.scoped(Effect.asVoid(store.create({ id, metadata })))
        return yield* body({ sql, pg, store, turns, create })
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
