/**
 * What `parley conversation ls` lists: the storage's conversations (the
 * damaged ones apart), which of them run now and with which open questions
 * (their sockets, `Running`), and the notifications that failed since the
 * last listing (each taken once, `SpoolDir.takeErrors`). A killed asker's
 * question is closed first (`UnhostedAsks`), so it is never listed as
 * waiting.
 *
 * @internal
 * @example
 * ```ts
 * import * as Listing from "parley/layers/host/Listing"
 * const listing = Listing.gather("/work/.parley", false) // needs a ConversationStore
 * ```
 */
import * as Effect from "effect/Effect"
import * as UnhostedAsks from "../../programs/UnhostedAsks.ts"
import { ConversationStore } from "../../services/ConversationStoreTag.ts"
import * as Spool from "../notify/SpoolDir.ts"
import * as Running from "./Running.ts"

/** The listing of the storage at `dir`. */
export const gather = (dir: string, archived: boolean) =>
  Effect.gen(function* () {
    const listed = yield* ConversationStore.use((s) => s.list({ archived }))
    // Live runs answer on their sockets (docs/decisions.md#ctrl-z-detaches): pid and open questions.
    const running = yield* Running.of(
      dir,
      listed.conversations.map((r) => r.id)
    )
    // A killed asker's question is closed, never listed as waiting (as `parley inbox` does): listed again if so.
    const rows =
      (yield* UnhostedAsks.reap(UnhostedAsks.of(listed.conversations, running))) === 0
        ? listed.conversations
        : (yield* ConversationStore.use((s) => s.list({ archived }))).conversations
    // A notification that failed is shown once, on its conversation's row.
    const failed = Spool.takeErrors(
      dir,
      rows.map((r) => r.id)
    )
    return { rows, damaged: listed.damaged, running, failed }
  })
