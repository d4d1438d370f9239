/**
 * The file store's message queue (`MessageQueue`, docs/storage.md#layout): a
 * private append-only log, `.parley-queue.jsonl`, beside `events.json` —
 * JP's readers never see it. Records are appended with `O_APPEND` in one
 * write each, so concurrent senders need no lock and the log's order is the
 * ids' order (`domain/storage/QueuedMessage.ts`); a directory renamed under
 * a writer (a new title's slug) is found again.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as MessageQueueFile from "parley/layers/store/MessageQueueFile"
 * import type { ConversationId } from "parley/domain/storage/ConversationId"
 * declare const id: ConversationId
 * const queue = MessageQueueFile.make("/home/me/project/.parley/conversations")
 * const queued = queue.enqueue(id, { message: "also check the tests", surface: "terminal", when: "after" })
 * ```
 *
 * @since 0.1.0
 */
import * as crypto from "node:crypto"
import * as fsSync from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import type { ConversationId } from "../../domain/storage/ConversationId.ts"
import * as QueuedMessage from "../../domain/storage/QueuedMessage.ts"
import type { MessageQueue } from "../../services/ConversationStoreTag.ts"
import { ConversationNotFound, StoreIoError } from "../../services/StoreErrors.ts"
import * as AtomicFile from "./AtomicFile.ts"
import * as ConversationDir from "./ConversationDir.ts"
import { io } from "./FileIo.ts"
import * as QueueCount from "./QueueCount.ts"

/** The queue's file in a conversation's directory. */
export const FILE = QueueCount.FILE

/** How often an append follows a directory renamed under it before it gives up. */
const ATTEMPTS = 5

/** The queue file of a conversation, or none when it has no directory. */
type FileOf = (id: ConversationId) => Promise<string | undefined>

/**
 * The queue file of each conversation under `conversationsDir`: in the directory it was found in last
 * while that is still there, else found again (a rename moves it; an archive too). Finding it lists
 * every conversation, and a turn reads its queue at each step.
 */
const locator = (conversationsDir: string): FileOf => {
  const known = new Map<ConversationId, string>()
  return async (id) => {
    const dir = known.get(id)
    if (
      dir !== undefined &&
      (await fs.stat(dir).then(
        (s) => s.isDirectory(),
        () => false
      ))
    )
      return path.join(dir, FILE)
    const loc = await ConversationDir.locate(conversationsDir, id)
    if (loc === undefined) {
      known.delete(id)
      return undefined
    }
    known.set(id, loc.dir)
    return path.join(loc.dir, FILE)
  }
}

const notFound = (id: ConversationId) => Effect.fail(new ConversationNotFound({ id }))

/** The records of `id`'s queue (none when it has no file yet). */
const read = (conversationsDir: string, fileOf: FileOf, id: ConversationId) =>
  io(conversationsDir, async () => {
    const file = await fileOf(id)
    if (file === undefined) return undefined
    const text = QueueCount.readCapped(file) ?? ""
    return typeof text === "string" ? QueuedMessage.parse(text) : { file, tooLarge: text.tooLarge }
  }).pipe(
    Effect.flatMap(
      (records): Effect.Effect<ReadonlyArray<QueuedMessage.Record>, ConversationNotFound | StoreIoError> =>
        records === undefined
          ? notFound(id)
          : "tooLarge" in records
            ? Effect.fail(
                new StoreIoError({
                  path: records.file,
                  reason: `the queue file is ${records.tooLarge} bytes, more than the ${QueueCount.MAX_BYTES} parley reads; move it aside to start a new queue`
                })
              )
            : Effect.succeed(records)
    )
  )

/** Appends one record (one write, `O_APPEND`, private), following a renamed directory. */
const append = (conversationsDir: string, fileOf: FileOf, id: ConversationId, record: QueuedMessage.Record) =>
  io(conversationsDir, async () => {
    for (let attempt = 1; ; attempt++) {
      const file = await fileOf(id)
      if (file === undefined) return false
      try {
        // Never through a symlink: a link planted in the conversation's directory must not redirect the append.
        const flags = fsSync.constants.O_WRONLY | fsSync.constants.O_APPEND | fsSync.constants.O_CREAT
        const handle = await fs.open(file, flags | QueueCount.NOFOLLOW, 0o600)
        try {
          await handle.write(QueuedMessage.line(record))
          await handle.sync()
        } finally {
          await handle.close()
        }
        return true
      } catch (error) {
        if (!AtomicFile.isNotFound(error) || attempt >= ATTEMPTS) throw error
      }
    }
  }).pipe(Effect.flatMap((ok) => (ok ? Effect.void : notFound(id))))

const nonce = () => crypto.randomBytes(8).toString("hex")

/** The queue of the conversations under `conversationsDir`. */
export const make = (conversationsDir: string): MessageQueue => {
  const fileOf = locator(conversationsDir)
  return {
    enqueue: (id, m) =>
      Effect.gen(function* () {
        const tag = m.nonce ?? nonce()
        if (m.nonce !== undefined) {
          const seen = QueuedMessage.fold(yield* read(conversationsDir, fileOf, id)).messages.find(
            (q) => q.nonce === tag
          )
          if (seen !== undefined) return seen
        }
        const at = new Date().toISOString()
        yield* append(conversationsDir, fileOf, id, { ...m, op: "queue", nonce: tag, at })
        const mine = QueuedMessage.fold(yield* read(conversationsDir, fileOf, id)).messages.find((q) => q.nonce === tag)
        // Appended but not read back (a torn write): the sender is told, never given an id nothing holds.
        if (mine === undefined)
          return yield* new StoreIoError({
            path: path.join(conversationsDir, String(id)),
            reason: "the queued message could not be read back from the conversation's queue"
          })
        return mine
      }),
    list: (id) => Effect.map(read(conversationsDir, fileOf, id), (records) => QueuedMessage.fold(records).messages),
    take: (id, n) => append(conversationsDir, fileOf, id, { op: "take", id: n }),
    withdraw: (id, n) =>
      Effect.gen(function* () {
        const tag = nonce()
        yield* append(conversationsDir, fileOf, id, { op: "withdraw", id: n, nonce: tag })
        return QueuedMessage.withdrawOutcome(yield* read(conversationsDir, fileOf, id), n, tag)
      })
  }
}
