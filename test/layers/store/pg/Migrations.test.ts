/**
 * The PostgreSQL store's migrations (docs/postgres.md): applied once each, in order,
 * recorded in `parley_migrations`; entry texts compressed with lz4 on a
 * server that has it (Debian's PostgreSQL 15 does).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PgConversationStore from "../../../../src/layers/store/pg/PgConversationStore.ts"
import { ConversationStore } from "../../../../src/services/ConversationStore.ts"
import { freshDatabase, type PgServer, pgSkip, psql, startPg } from "../../../support/Pg.ts"

let server: PgServer | undefined
beforeAll(async () => {
  if (pgSkip === undefined) server = await startPg()
}, 60_000)
afterAll(() => server?.stop())

const open = (url: string) =>
  Effect.runPromise(
    ConversationStore.use((s) => s.list()).pipe(Effect.provide(Layer.orDie(PgConversationStore.layer({ url }))))
  )

describe.skipIf(pgSkip !== undefined)(`migrations${pgSkip === undefined ? "" : ` (skipped: ${pgSkip})`}`, () => {
  it("applied once each across two starts; entry texts use lz4", async () => {
    const url = freshDatabase(server!)
    await open(url)
    await open(url)
    expect(
      psql(url, "SELECT migration_id || ' ' || name FROM parley_migrations ORDER BY migration_id").trim().split("\n")
    ).toStrictEqual(["1 conversations", "2 events_lz4", "3 queue"])
    expect(
      psql(
        url,
        "SELECT attcompression FROM pg_attribute WHERE attrelid = 'parley_events'::regclass AND attname = 'json'"
      ).trim()
    ).toBe("l")
  }, 60_000)
})
