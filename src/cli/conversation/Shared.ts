/**
 * Helpers shared by the `conversation` subcommands: the file store for this
 * invocation's storage directory, and conversation id parsing.
 *
 * @example
 * ```ts
 * import { withStore } from "./Shared.ts"
 * withStore(Effect.gen(function*() { const store = yield* ConversationStore; … }))
 * ```
 */
import * as Effect from "effect/Effect"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import type { ConversationStore } from "../../services/ConversationStore.ts"
import type { CliFailure } from "../CliFailure.ts"
import { storage } from "../Root.ts"
import * as Usage from "../Usage.ts"
import { withStoreAt } from "./Store.ts"

/**
 * Runs `effect` with the file store of the resolved storage directory
 * (`Store.withStoreAt`); the commands an error names carry `--storage` when
 * it was given, so they work when pasted.
 */
export const withStore = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(storage, (at) => withStoreAt(at, effect)) as Effect.Effect<
    A,
    E | CliFailure,
    Exclude<R, ConversationStore> | Effect.Services<typeof storage>
  >

/** Parses `17738399468` or `jp-c17738399468`, failing with a usage error of `parley conversation <command>`. */
export const parseIdArgument = (text: string, command: string) => {
  const id = ConversationId.parse(text)
  return id === undefined
    ? Effect.fail(
        Usage.failure(
          ["parley", "conversation", command],
          `"${text}" is not a conversation id (expected a number like 17738399468 or jp-c17738399468).`
        )
      )
    : Effect.succeed(id)
}
