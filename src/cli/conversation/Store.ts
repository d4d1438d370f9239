/**
 * The store of a storage (a directory, or a `postgres://` url: docs/postgres.md) for the `conversation` commands
 * (docs/decisions.md#fast-start: no effect/cli here, so the reading commands' fast path
 * (`ReadingRun.ts`) and the effect/cli commands share it).
 *
 * @example
 * ```ts
 * import { withStoreAt } from "./Store.ts"
 * withStoreAt({ dir: "/work/.parley", given: undefined }, ConversationStore.use((s) => s.list({ archived: false })))
 * ```
 */
import * as Effect from "effect/Effect"
import type { MissingPackage } from "../../domain/package/MissingPackage.ts"
import type { ConversationStore } from "../../services/ConversationStore.ts"
import type { StoreIoError } from "../../services/StoreErrors.ts"
import type { CliFailure } from "../CliFailure.ts"
import * as StorageStore from "../../layers/store/StorageStore.ts"

/** The storage of an invocation (a directory or a database url): resolved, and as given (`--storage`, `$PARLEY_STORAGE`), which hints repeat. */
export interface StorageAt {
  readonly dir: string
  readonly given: string | undefined
  /** `--config FILE` as given (absolute), which hints repeat too. */
  readonly configGiven?: string | undefined
}

/**
 * Runs `effect` with the store of `storage`; a store error that names
 * a command to run next becomes its CLI line, the command carrying
 * `--storage` when it was given, so it works when pasted.
 */
export const withStoreAt = <A, E, R>(storage: StorageAt, effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    // The store alone, not Live's layers: listing and printing load nothing of the query path
    // (and a postgres:// storage loads the PostgreSQL store only then).
    // Its callers are commands: their sessions close with blocking file calls (`FileCalls.ts`), which a
    // long-lived caller (attach, the interactive inbox) would feel only while it closes one.
    Effect.provide(StorageStore.storeLayer(storage.dir, { blockingClose: true })),
    // ErrorLine (and effect/Schema, which CliFailure needs) is loaded only when something failed:
    // `conversation ls` that succeeds never loads them (docs/decisions.md#fast-start).
    Effect.catch((e) =>
      Effect.flatMap(
        Effect.promise(() => import("../ErrorLine.ts")),
        (ErrorLine): Effect.Effect<never, E | CliFailure | StoreIoError | MissingPackage> =>
          Effect.fail(
            ErrorLine.hasNextStep(e) ? ErrorLine.failure(e, { storage: storage.given, config: storage.configGiven }) : e
          )
      )
    )
    // The store's own failure (a database that cannot be reached) reaches RunMain as it is: its message is its line.
  ) as Effect.Effect<A, E | CliFailure | StoreIoError | MissingPackage, Exclude<R, ConversationStore>>
