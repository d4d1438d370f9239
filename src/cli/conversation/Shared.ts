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
import { FileConversationStore } from "../../layers/store/index.ts"
import type { ConversationStore } from "../../services/ConversationStore.ts"
import { CliFailure } from "../CliFailure.ts"
import { storageDir } from "../Root.ts"

/** Runs `effect` with the file store of the resolved storage directory. */
export const withStore = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const dir = yield* storageDir
    return yield* effect.pipe(Effect.provide(FileConversationStore.layer({ storageDir: dir })))
  }) as Effect.Effect<A, E, Exclude<R, ConversationStore> | Effect.Services<typeof storageDir>>

/** Parses `17738399468` or `jp-c17738399468`, failing with a clear message. */
export const parseIdArgument = (text: string) => {
  const id = ConversationId.parse(text)
  return id === undefined
    ? Effect.fail(new CliFailure({ code: 2, message: `"${text}" is not a conversation id (expected a number like 17738399468 or jp-c17738399468).` }))
    : Effect.succeed(id)
}
