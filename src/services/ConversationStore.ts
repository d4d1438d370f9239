/**
 * Where conversations live (docs/storage.md): list, read, create, open, check.
 *
 * A conversation is changed only through a {@link ConversationSession}, a
 * scoped handle that `open` (an existing conversation) or `create` (a new
 * one, with an id unique across processes) hands out. While the scope is
 * open the session holds the cross-process lock; closing the scope folds
 * what is durable on disk back into JP's files and releases the lock.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { ConversationStore } from "parley"
 * import type { ConversationId, StreamEntry } from "parley"
 *
 * declare const id: ConversationId.ConversationId
 * declare const event: StreamEntry
 *
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const store = yield* ConversationStore
 *   const session = yield* store.open(id) // lock taken, leftovers folded
 *   yield* session.append([event])        // durable, then visible
 * })) // scope closed: journal folded into events.json, lock released
 * ```
 *
 * @since 0.1.0
 */
// The contract and its tag are in ConversationStoreTag.ts (what `conversation ls` imports, free of
// effect/Schema; docs/decisions.md#fast-start); this public module adds the store's errors, importable from here as
// before.
export * from "./ConversationStoreTag.ts"
export * from "./StoreErrors.ts"
