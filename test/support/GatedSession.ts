/**
 * A session (`ConversationSession.make`) over an in-memory "disk" whose first
 * write is gated: the test learns when that write started (`started`) and
 * decides when it finishes (`release`); `written` once it has. Every later
 * write goes straight to the disk.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type { StreamEntry } from "../../src/domain/event/ConversationEvent.ts"
import type { Conversation } from "../../src/domain/storage/Conversation.ts"
import * as ConversationSession from "../../src/services/ConversationSession.ts"

export const gatedSession = (conversation: Conversation) =>
  Effect.gen(function* () {
    const disk: Array<StreamEntry> = [...conversation.entries]
    const started = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const written = yield* Deferred.make<void>()
    let gated = true
    const session = yield* ConversationSession.make(conversation, {
      appendDurable: (entries) =>
        Effect.gen(function* () {
          if (gated) {
            gated = false
            yield* Deferred.succeed(started, undefined)
            yield* Deferred.await(release)
          }
          disk.push(...entries)
          yield* Deferred.succeed(written, undefined)
        }),
      rewrite: () => Effect.die("not used")
    })
    return { session, disk, started, release, written }
  })
