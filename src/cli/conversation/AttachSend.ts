/**
 * `m` in `conversation attach` (docs/questions-and-approvals.md#runs-beyond-the-terminal): the person sends a message to the
 * running turn from the attached terminal. The keys and the prompts are
 * `layers/prompt/AttachKeys.ts`'s; here the message goes through
 * `programs/Send.ts` with surface `attach`, and the attach learns what waits
 * in the queue.
 *
 * @example
 * ```ts
 * import * as AttachSend from "./AttachSend.ts"
 * declare const at: Parameters<typeof AttachSend.sendFrom>[0]
 * declare const id: Parameters<typeof AttachSend.sendFrom>[1]
 * const sent = AttachSend.sendFrom(at, id, "use the other branch", "next")
 * ```
 */
import * as Effect from "effect/Effect"
import type { ConversationId } from "../../domain/storage/ConversationId.ts"
import * as QueuedMessage from "../../domain/storage/QueuedMessage.ts"
import type { When } from "../../domain/storage/QueuedMessage.ts"
import * as HostTurns from "../../layers/host/HostTurns.ts"
import * as Queued from "../../programs/Queued.ts"
import * as Send from "../../programs/Send.ts"
import { type StorageAt, withStoreAt } from "./Store.ts"

/** Sends `message` to `id` as typed at an attached terminal (a `now` is resumed in the background, as `send` does). */
export const sendFrom = (at: StorageAt, id: ConversationId, message: string, when: When) =>
  withStoreAt(
    at,
    Send.send({
      id,
      message,
      when,
      surface: "attach",
      // The send command's module (effect/cli flags) loads when a message needs a run, not with attach.
      start: () =>
        Effect.flatMap(
          Effect.promise(() => import("./Send.ts")),
          (SendCommand) => SendCommand.background(at.dir, id, at.given, at.configGiven)
        )
    }).pipe(Effect.provide(HostTurns.layer(at.dir)))
  )

/** " 2 messages queued." for what waits in `id`'s queue (empty when none, or when it cannot be read). */
export const queuedLine = (at: StorageAt, id: ConversationId): Effect.Effect<string> =>
  withStoreAt(at, Queued.pendingCount(id)).pipe(
    Effect.map((n) => (n === 0 ? "" : ` ${QueuedMessage.describe(n)}.`)),
    Effect.orElseSucceed(() => "")
  )
