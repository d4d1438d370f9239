/**
 * The file store of a storage directory for the `conversation` commands
 * (issue 28: no effect/cli here, so the reading commands' fast path
 * (`ReadingRun.ts`) and the effect/cli commands share it).
 *
 * @example
 * ```ts
 * import { withStoreAt } from "./Store.ts"
 * withStoreAt({ dir: "/work/.parley", given: undefined }, ConversationStore.use((s) => s.list({ archived: false })))
 * ```
 */
import * as Effect from "effect/Effect"
import * as FileConversationStore from "../../layers/store/FileConversationStore.ts"
import type { ConversationStore } from "../../services/ConversationStore.ts"
import type { CliFailure } from "../CliFailure.ts"
import * as ErrorLine from "../ErrorLine.ts"

/** The storage directory of an invocation: resolved, and as given (`--storage`, `$PARLEY_STORAGE`), which hints repeat. */
export interface StorageAt {
  readonly dir: string
  readonly given: string | undefined
}

/**
 * Runs `effect` with the file store of `storage`; a store error that names
 * a command to run next becomes its CLI line, the command carrying
 * `--storage` when it was given, so it works when pasted.
 */
export const withStoreAt = <A, E, R>(storage: StorageAt, effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    // The store alone, not Live's layers: listing and printing load nothing of the query path.
    Effect.provide(FileConversationStore.layer({ storageDir: storage.dir })),
    Effect.mapError((e): E | CliFailure => ErrorLine.hasNextStep(e) ? ErrorLine.failure(e, { storage: storage.given }) : e)
  ) as Effect.Effect<A, E | CliFailure, Exclude<R, ConversationStore>>
