/**
 * The `ConversationStore` on JP's on-disk layout (docs/storage.md#layout):
 *
 * ```text
 * <storage>/conversations/<id>[-<slug>]/{metadata.json, base_config.json?, events.json}
 * <storage>/conversations/.archive/<id>[-<slug>]/…
 * <storage>/locks/jp-c<id>.lock
 * ```
 *
 * - `open(id)` takes the lock, then folds any journal an earlier run left
 *   (so a turn that reached only the journal is healed by the next command
 *   that opens the conversation), and hands out a {@link ConversationSession}
 *   whose appends go to `events.json.journal` (see `Journal.ts`). Closing the
 *   scope folds the journal in place — only the new tail of `events.json` is
 *   written — writes the metadata, and releases the lock.
 * - `create` reserves the id with the lock (exclusive create, next id when
 *   taken), so two processes never share a conversation, and builds the
 *   directory under a dot-name before renaming it into place.
 * - `list`, `load` and `check` read without the lock; a damaged conversation
 *   is reported by name and never fails the others.
 *
 * @example
 * ```ts
 * import * as FileConversationStore from "parley/layers/store/FileConversationStore"
 * const layer = FileConversationStore.layer({ storageDir: "/home/me/project/.parley" })
 * ```
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ConversationStore, type Listing as Listed, type MessageQueue } from "../../services/ConversationStoreTag.ts"
import type { StoreIoError } from "../../services/StoreErrors.ts"
import * as ConversationDir from "./ConversationDir.ts"
import type * as FileConversationOps from "./FileConversationOps.ts"
import * as Listing from "./Listing.ts"

export const JOURNAL = ConversationDir.JOURNAL
export const INDEX = Listing.INDEX

/** Options of the file layer. */
export interface Options {
  /** The storage directory (holds `config.toml` and `conversations/`). */
  readonly storageDir: string
  /**
   * Closes sessions with blocking file calls (`FileCalls.blocking`): for a
   * command that exits once its sessions are closed, which then has nothing
   * else to run. A server leaves it off: its other requests would wait for
   * the disk meanwhile.
   */
  readonly blockingClose?: boolean | undefined
}

/**
 * Lists, building the error only when listing failed: the error classes need
 * effect/Schema, which a listing that succeeds never loads (docs/decisions.md#fast-start).
 */
const listing = (conversationsDir: string, archived: boolean): Effect.Effect<Listed, StoreIoError> =>
  Effect.tryPromise({ try: () => Listing.list(conversationsDir, { archived }), catch: (error) => error }).pipe(
    Effect.catch((error) =>
      Effect.flatMap(
        Effect.promise(() => import("./FileIo.ts")),
        (FileIo) => Effect.fail(FileIo.ioError(conversationsDir, error))
      )
    )
  )

/**
 * Builds the store over a storage directory. Listing is here; the rest
 * (`FileConversationOps.ts`, with the event codec) is loaded once, on the
 * first call that needs it, so `conversation ls` starts within 2× `node -e
 * 0` (docs/startup.md#start-up-of-the-reading-commands).
 */
export const make = (options: Options) =>
  Effect.sync(() => {
    const root = path.resolve(options.storageDir)
    const conversationsDir = path.join(root, "conversations")
    // Kept once built; a failed load is not kept (a chunk replaced by a rebuild under a
    // long-running server), so the next call loads again.
    let built: FileConversationOps.Ops | undefined
    let loading: Promise<typeof FileConversationOps> | undefined
    const ops = Effect.suspend(() =>
      built !== undefined
        ? Effect.succeed(built)
        : Effect.promise(
            () =>
              (loading ??= import("./FileConversationOps.ts").catch((error: unknown) => {
                loading = undefined
                throw error
              }))
          ).pipe(
            Effect.flatMap((m) => m.make(root, options.blockingClose === true)),
            Effect.map((o) => (built ??= o))
          )
    )
    // The queue (its codec needs effect/Schema) is loaded on its first use, as the ops are; made once: it
    // keeps where it found each conversation.
    let madeQueue: MessageQueue | undefined
    const queue = Effect.promise(() => import("./MessageQueueFile.ts")).pipe(
      Effect.map((m) => (madeQueue ??= m.make(conversationsDir)))
    )
    const messages: MessageQueue = {
      enqueue: (id, m) => Effect.flatMap(queue, (q) => q.enqueue(id, m)),
      list: (id) => Effect.flatMap(queue, (q) => q.list(id)),
      take: (id, n) => Effect.flatMap(queue, (q) => q.take(id, n)),
      withdraw: (id, n) => Effect.flatMap(queue, (q) => q.withdraw(id, n))
    }
    return ConversationStore.of({
      messages,
      list: (opts) => listing(conversationsDir, opts?.archived === true),
      load: (id) => Effect.flatMap(ops, (o) => o.load(id)),
      version: (id) => Effect.flatMap(ops, (o) => o.version(id)),
      open: (id) => Effect.flatMap(ops, (o) => o.open(id)),
      create: (init) => Effect.flatMap(ops, (o) => o.create(init)),
      check: (id) => Effect.flatMap(ops, (o) => o.check(id)),
      remove: (id) => Effect.flatMap(ops, (o) => o.remove(id))
    })
  })

/** The file-backed store as a layer. */
export const layer = (options: Options): Layer.Layer<ConversationStore> =>
  Layer.effect(ConversationStore, make(options))
