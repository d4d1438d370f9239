/**
 * A killed `parley ask` in a listing (docs/ask.md): a conversation whose row
 * says an asker waits there while no live asker hosts it (its socket does
 * not answer) may hold the question of an asker that was killed. Only those
 * are opened, and their questions closed as cancelled when no live process
 * holds the conversation (`Ask.reapAbandoned`), so a plain listing stays a
 * listing and a killed asker's question is never listed as waiting.
 *
 * Light on purpose: `conversation ls` uses it on its start-up path, so the
 * asker's program (and effect/Schema with it) is loaded only when a row
 * needs it.
 *
 * @internal
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as UnhostedAsks from "parley/programs/UnhostedAsks"
 * import type { ConversationSummary } from "parley/services/ConversationStore"
 * declare const rows: ReadonlyArray<ConversationSummary>
 * // How many questions of killed askers were closed (then list again).
 * const closed = UnhostedAsks.reap(UnhostedAsks.of(rows, new Map()))
 * ```
 */
import * as Effect from "effect/Effect"
import type { ConversationSummary } from "../services/ConversationStoreTag.ts"

export { of } from "../domain/run/UnhostedAsk.ts"

/** Closes the killed askers' questions of `ids`; how many were closed (the asker's program is loaded only for some). */
export const reap = (ids: ReadonlyArray<ConversationSummary["id"]>) =>
  ids.length === 0
    ? Effect.succeed(0)
    : Effect.flatMap(
        Effect.promise(() => import("./Ask.ts")),
        (Ask) =>
          Effect.map(
            Effect.forEach(ids, (id) => Effect.orElseSucceed(Ask.reapAbandoned(id), () => 0)),
            (closed) => closed.reduce((a, b) => a + b, 0)
          )
      )
