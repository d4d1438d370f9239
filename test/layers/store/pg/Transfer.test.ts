/**
 * Lossless (docs/postgres.md#import-and-export): JP storage directories go file → PostgreSQL → file
 * byte for byte — the corpus (the committed subset always, all 21 when
 * ../shared is beside the clone) and every history folder (legacy and
 * damaged conversations are kept as their files). The PostgreSQL store then
 * lists and checks the corpus as the file store does. Copies only: nothing
 * under ../shared or test/fixtures is touched.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql/SqlClient"
import * as FileConversationStore from "../../../../src/layers/store/FileConversationStore.ts"
import * as PgConversationStore from "../../../../src/layers/store/pg/PgConversationStore.ts"
import * as Transfer from "../../../../src/layers/store/pg/Transfer.ts"
import { ConversationStore } from "../../../../src/services/ConversationStore.ts"
import { copyToTemp, corpora, historyCorpora, snapshotTree, tempDir } from "../../../support/Fixtures.ts"
import { freshDatabase, type PgServer, pgSkip, startPg } from "../../../support/Pg.ts"

let server: PgServer | undefined
beforeAll(async () => {
  if (pgSkip === undefined) server = await startPg()
}, 60_000)
afterAll(() => server?.stop())

/** Imports `storage` into a fresh database and exports it to a new directory: (the export, the database url, how many). */
const roundTrip = (storage: string) => {
  const url = freshDatabase(server!)
  const out = tempDir("parley-export-")
  const db = Layer.provideMerge(
    Layer.effectDiscard(PgConversationStore.migrate),
    PgConversationStore.clientLayer({ url })
  )
  return Effect.gen(function* () {
    const imported = yield* Transfer.importDir(storage)
    const exported = yield* Transfer.exportTo(out)
    return { out, url, imported, exported }
  }).pipe(Effect.provide(db))
}

const fileView = (storage: string) =>
  ConversationStore.use((s) => Effect.all([s.list({ archived: true }), s.check()])).pipe(
    Effect.provide(FileConversationStore.layer({ storageDir: storage }))
  )
const pgView = (url: string) =>
  ConversationStore.use((s) => Effect.all([s.list({ archived: true }), s.check()])).pipe(
    Effect.provide(Layer.orDie(PgConversationStore.layer({ url })))
  )

describe.skipIf(pgSkip !== undefined)(
  `file → PostgreSQL → file${pgSkip === undefined ? "" : ` (skipped: ${pgSkip})`}`,
  () => {
    for (const corpus of corpora) {
      it.live.skipIf(corpus.absent)(
        `${corpus.label}: every byte comes back; list and check agree with the file store`,
        () =>
          Effect.gen(function* () {
            const storage = copyToTemp(corpus.dir)
            const { out, url, imported, exported } = yield* roundTrip(storage)
            expect([imported, exported]).toStrictEqual([corpus.conversations, corpus.conversations])
            expect(snapshotTree(out)).toStrictEqual(snapshotTree(storage))
            expect(fs.readdirSync(path.join(out, "conversations", ".archive"))).toHaveLength(corpus.archived.length)
            const [[fileList, fileCheck], [pgList, pgCheck]] = [yield* fileView(storage), yield* pgView(url)]
            const strip = <A extends { path: string }>(rows: ReadonlyArray<A>) =>
              rows.map(({ path: _, ...rest }) => rest)
            expect(strip(pgList.conversations)).toStrictEqual(strip(fileList.conversations))
            expect(pgList.damaged).toStrictEqual([])
            expect(strip(pgCheck).sort((a, b) => (a.id < b.id ? -1 : 1))).toStrictEqual(
              strip(fileCheck).sort((a, b) => (a.id < b.id ? -1 : 1))
            )
            expect(pgCheck.every((r) => r.ok && r.roundtrip === "identical")).toBe(true)
            fs.rmSync(storage, { recursive: true, force: true })
            fs.rmSync(out, { recursive: true, force: true })
          }),
        300_000
      )
    }

    it.live(
      "an import leaves the tables analyzed: the planner knows how many events a conversation has",
      () =>
        Effect.gen(function* () {
          const storage = copyToTemp(corpora[0]!.dir)
          const url = freshDatabase(server!)
          const db = Layer.provideMerge(
            Layer.effectDiscard(PgConversationStore.migrate),
            PgConversationStore.clientLayer({ url })
          )
          const { estimated, events, analyzed } = yield* Effect.gen(function* () {
            yield* Transfer.importDir(storage)
            const sql = yield* SqlClient
            const [largest] = yield* sql<{ id: string; n: number }>`SELECT conversation_id AS id, count(*)::int AS n
              FROM parley_events GROUP BY conversation_id ORDER BY count(*) DESC LIMIT 1`
            const plan = yield* sql<{ "QUERY PLAN": string }>`EXPLAIN SELECT json FROM parley_events
              WHERE conversation_id = ${largest!.id} ORDER BY seq`
            const analyzed = yield* sql<{ relname: string }>`SELECT relname FROM pg_stat_user_tables
              WHERE relname IN ('parley_conversations', 'parley_events') AND last_analyze IS NOT NULL ORDER BY relname`
            const estimated = Number(/rows=(\d+)/.exec(plan[0]!["QUERY PLAN"])![1])
            return { estimated, events: largest!.n, analyzed: analyzed.map((r) => r.relname) }
          }).pipe(Effect.provide(db))
          expect(analyzed).toStrictEqual(["parley_conversations", "parley_events"])
          // Unanalyzed, the planner guesses (670 rows for the corpus conversation of about 22,000) and sorts them on disk.
          expect(Math.abs(estimated - events) / events).toBeLessThan(0.2)
          fs.rmSync(storage, { recursive: true, force: true })
        }),
      120_000
    )

    for (const history of historyCorpora) {
      it.live.skipIf(history.absent)(
        `${history.label}: every folder comes back byte for byte (damaged ones kept as their files)`,
        () =>
          Effect.gen(function* () {
            const root = copyToTemp(history.dir)
            let conversations = 0
            for (const folder of fs
              .readdirSync(root)
              .filter((n) => fs.statSync(path.join(root, n)).isDirectory())
              .sort()) {
              const storage = path.join(root, folder)
              const { out, url, imported } = yield* roundTrip(storage)
              conversations += imported
              expect(snapshotTree(out), folder).toStrictEqual(snapshotTree(storage))
              const [list] = yield* pgView(url)
              const [fileList] = yield* fileView(storage)
              expect(
                list.conversations.map((c) => c.id),
                folder
              ).toStrictEqual(fileList.conversations.map((c) => c.id))
              fs.rmSync(out, { recursive: true, force: true })
            }
            expect(conversations).toBe(history.conversations)
            fs.rmSync(root, { recursive: true, force: true })
          }),
        300_000
      )
    }
  }
)
