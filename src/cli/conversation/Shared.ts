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
import { CliFailure } from "../CliFailure.ts"
import * as ErrorLine from "../ErrorLine.ts"
import * as Live from "../Live.ts"
import { storage } from "../Root.ts"
import * as Usage from "../Usage.ts"

/**
 * Runs `effect` with the file store of the resolved storage directory; a
 * store error that names a command to run next becomes its CLI line, the
 * command carrying `--storage` when it was given, so it works when pasted.
 */
export const withStore = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const { dir, given } = yield* storage
    return yield* effect.pipe(
      Effect.provide(Live.storeLayer(dir)),
      Effect.mapError((e): E | CliFailure => ErrorLine.hasNextStep(e) ? ErrorLine.failure(e, { storage: given }) : e)
    )
  }) as Effect.Effect<A, E | CliFailure, Exclude<R, ConversationStore> | Effect.Services<typeof storage>>

/** Parses `17738399468` or `jp-c17738399468`, failing with a usage error of `parley conversation <command>`. */
export const parseIdArgument = (text: string, command: string) => {
  const id = ConversationId.parse(text)
  return id === undefined
    ? Effect.fail(Usage.failure(["parley", "conversation", command], `"${text}" is not a conversation id (expected a number like 17738399468 or jp-c17738399468).`))
    : Effect.succeed(id)
}
