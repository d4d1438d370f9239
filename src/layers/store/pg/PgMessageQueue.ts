/**
 * The PostgreSQL store's message queue (`MessageQueue`; docs/postgres.md):
 * the same append-only log as the file store's (`domain/storage/QueuedMessage.ts`),
 * one row per record in `parley_queue` (created by the store's migrations),
 * never among the conversation's events. Each append holds a transaction
 * lock of its conversation, so the rows' order is the order they became
 * visible in: a sender reading its message back sees its final id.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { SqlClient } from "effect/sql/SqlClient"
 * import * as PgMessageQueue from "parley/layers/store/pg/PgMessageQueue"
 * const queue = Effect.map(SqlClient, (sql) => PgMessageQueue.make(sql, "postgres://db/parley"))
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as crypto from "node:crypto"
import * as Effect from "effect/Effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type { ConversationId } from "../../../domain/storage/ConversationId.ts"
import * as QueuedMessage from "../../../domain/storage/QueuedMessage.ts"
import type { MessageQueue } from "../../../services/ConversationStoreTag.ts"
import { ConversationNotFound, StoreIoError } from "../../../services/StoreErrors.ts"

const failed = (at: string, doing: string) => (error: SqlError) =>
  new StoreIoError({ path: at, reason: `${doing}: ${error.message}` })

/** The queue over `sql` (`at`: where, for errors). */
export const make = (sql: SqlClient, at: string): MessageQueue => {
  const exists = (id: ConversationId) =>
    sql<{ id: string }>`SELECT id FROM parley_conversations WHERE id = ${id}`.pipe(
      Effect.mapError(failed(at, `reading conversation ${id}`)),
      Effect.flatMap((rows) => (rows.length === 0 ? Effect.fail(new ConversationNotFound({ id })) : Effect.void))
    )
  // One round trip: no row says the conversation does not exist, one row with no record that its queue is empty
  // (it was an existence check, then the read: two per list, twice per answered turn in a cluster).
  const read = (id: ConversationId) =>
    sql<{ record: string | null }>`SELECT q.record FROM parley_conversations c
      LEFT JOIN parley_queue q ON q.conversation_id = c.id WHERE c.id = ${id} ORDER BY q.seq`.pipe(
      Effect.mapError(failed(at, `reading the queue of ${id}`)),
      Effect.flatMap((rows) =>
        rows.length === 0
          ? Effect.fail(new ConversationNotFound({ id }))
          : Effect.succeed(
              QueuedMessage.parse(
                rows
                  .map((r) => r.record)
                  .filter((r) => r !== null)
                  .join("\n")
              )
            )
      )
    )
  const append = (id: ConversationId, record: QueuedMessage.Record) =>
    exists(id).pipe(
      Effect.andThen(
        sql
          .withTransaction(
            Effect.andThen(
              sql`SELECT pg_advisory_xact_lock(hashtext(${`parley_queue:${id}`}))`,
              sql`INSERT INTO parley_queue (conversation_id, record) VALUES (${id}, ${JSON.stringify(record)})`
            )
          )
          .pipe(Effect.mapError(failed(at, `queueing a message of ${id}`)))
      ),
      Effect.asVoid
    )
  const nonce = () => crypto.randomBytes(8).toString("hex")
  return {
    enqueue: (id, m) =>
      Effect.gen(function* () {
        const tag = m.nonce ?? nonce()
        if (m.nonce !== undefined) {
          const seen = QueuedMessage.fold(yield* read(id)).messages.find((q) => q.nonce === tag)
          if (seen !== undefined) return seen
        }
        const when = new Date().toISOString()
        yield* append(id, { ...m, op: "queue", nonce: tag, at: when })
        const mine = QueuedMessage.fold(yield* read(id)).messages.find((q) => q.nonce === tag)
        // Committed but not read back: the sender is told, never given an id nothing holds.
        if (mine === undefined)
          return yield* new StoreIoError({ path: at, reason: `the queued message of ${id} could not be read back` })
        return mine
      }),
    list: (id) => Effect.map(read(id), (records) => QueuedMessage.fold(records).messages),
    take: (id, n) => append(id, { op: "take", id: n }),
    withdraw: (id, n) =>
      Effect.gen(function* () {
        const tag = nonce()
        yield* append(id, { op: "withdraw", id: n, nonce: tag })
        return QueuedMessage.withdrawOutcome(yield* read(id), n, tag)
      })
  }
}
