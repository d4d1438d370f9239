/**
 * PgLock (docs/postgres.md#guarantees; found running the cluster): `create` tries
 * fresh ids with `absent`, and an id another process has just created must
 * not have its lock taken, even for a moment (an `open` racing it would read
 * "locked"). Without `absent` the lock is tried as before.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import * as ConversationMetadata from "../../../../src/domain/storage/ConversationMetadata.ts"
import * as Timestamp from "../../../../src/domain/event/Timestamp.ts"
import * as PgConversationStore from "../../../../src/layers/store/pg/PgConversationStore.ts"
import * as PgLock from "../../../../src/layers/store/pg/PgLock.ts"
import { ConversationStore } from "../../../../src/services/ConversationStore.ts"
import { freshDatabase, type PgServer, pgSkip, psql, startPg } from "../../../support/Pg.ts"

let server: PgServer | undefined
beforeAll(async () => {
  if (pgSkip === undefined) server = await startPg()
}, 60_000)
afterAll(() => server?.stop())

const advisoryLocks = (url: string): string =>
  psql(url, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").trim()

describe.skipIf(pgSkip !== undefined)(`PgLock${pgSkip === undefined ? "" : ` (skipped: ${pgSkip})`}`, () => {
  it("absent: an existing conversation's lock is never taken; a missing one's is; plain tryLock takes either", async () => {
    const url = freshDatabase(server!)
    const metadata = ConversationMetadata.make({ last_activated_at: Timestamp.make("2026-11-26T00:00:00.000000Z") })
    await Effect.runPromise(
      ConversationStore.use((s) => Effect.scoped(s.create({ id: "17700000000" as never, metadata }))).pipe(
        Effect.provide(Layer.orDie(PgConversationStore.layer({ url })))
      )
    )
    const tags = await Effect.runPromise(
      Effect.gen(function* () {
        const sql = yield* SqlClient
        const tag = (id: string, absent: boolean) =>
          Effect.scoped(
            Effect.map(PgLock.tryLock(sql, id, { absent }), (a) => {
              return `${a._tag}:${advisoryLocks(url)}`
            })
          )
        return [yield* tag("17700000000", true), yield* tag("17700000001", true), yield* tag("17700000000", false)]
      }).pipe(Effect.provide(Layer.orDie(PgConversationStore.clientLayer({ url }))))
    )
    // Exists with no advisory lock held; Taken (one lock) for the missing id and for plain tryLock.
    expect(tags).toStrictEqual(["Exists:0", "Taken:1", "Taken:1"])
    expect(advisoryLocks(url)).toBe("0")
  }, 60_000)
})
