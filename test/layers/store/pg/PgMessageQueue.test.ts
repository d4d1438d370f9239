/**
 * The PostgreSQL store's message queue (docs/cli.md#talk-to-a-running-turn), on a real
 * server: messages kept in `parley_queue`, not among the events; ids in the
 * order the sends were answered, also when they race; a withdraw wins only
 * before a take; the queue goes with its conversation.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Timestamp from "../../../../src/domain/event/Timestamp.ts"
import * as ConversationMetadata from "../../../../src/domain/storage/ConversationMetadata.ts"
import * as PgConversationStore from "../../../../src/layers/store/pg/PgConversationStore.ts"
import { ConversationStore } from "../../../../src/services/ConversationStore.ts"
import { freshDatabase, type PgServer, pgSkip, psql, startPg } from "../../../support/Pg.ts"

let server: PgServer | undefined
beforeAll(async () => {
  if (pgSkip === undefined) server = await startPg()
}, 60_000)
afterAll(() => server?.stop())

describe.skipIf(pgSkip !== undefined)(
  `PostgreSQL message queue${pgSkip === undefined ? "" : ` (skipped: ${pgSkip})`}`,
  () => {
    it("queues beside the events, in id order under a race; withdraw before take; removed with its conversation", async () => {
      const url = freshDatabase(server!)
      const program = Effect.gen(function* () {
        const store = yield* ConversationStore
        const queue = store.messages!
        const id = yield* Effect.scoped(
          Effect.map(
            store.create({ metadata: ConversationMetadata.make({ last_activated_at: Timestamp.now() }) }),
            (s) => s.id
          )
        )
        const sent = yield* Effect.forEach(
          ["one", "two", "three", "four"],
          (message) => queue.enqueue(id, { message, surface: "api", when: "after" }),
          { concurrency: "unbounded" }
        )
        const listed = yield* queue.list(id)
        // Each sender got the id its message has in the queue, and the ids are 1..4.
        for (const s of sent) expect(listed.find((m) => m.id === s.id)?.message).toBe(s.message)
        expect(listed.map((m) => m.id)).toStrictEqual([1, 2, 3, 4])
        yield* queue.take(id, 1)
        expect(yield* queue.withdraw(id, 1)).toBe("delivered")
        expect(yield* queue.withdraw(id, 2)).toBe("withdrawn")
        expect(yield* queue.withdraw(id, 2)).toBe("already-withdrawn")
        expect(yield* queue.withdraw(id, 9)).toBe("unknown")
        expect((yield* queue.list(id)).map((m) => m.state)).toStrictEqual(["taken", "withdrawn", "queued", "queued"])
        const loaded = yield* store.load(id)
        expect(loaded.entries).toHaveLength(0)
        yield* store.remove(id)
        return id
      })
      const id = await Effect.runPromise(program.pipe(Effect.provide(Layer.orDie(PgConversationStore.layer({ url })))))
      expect(psql(url, `SELECT count(*) FROM parley_queue WHERE conversation_id = '${id}'`).trim()).toBe("0")
    }, 60_000)
  }
)
