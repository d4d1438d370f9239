/**
 * Picking ids for new conversations.
 *
 * @example
 * ```ts
 * import { freshId } from "./NewConversation.ts"
 * const id = yield* freshId // the current decisecond, or the next free one
 * ```
 */
import * as Effect from "effect/Effect"
import * as ConversationId from "../domain/storage/ConversationId.ts"
import { ConversationStore } from "../services/ConversationStore.ts"

/** A fresh id for "now" that no stored conversation (live or archived) uses. */
export const freshId = Effect.gen(function*() {
  const store = yield* ConversationStore
  const taken = new Set((yield* store.list({ archived: true })).map((r) => r.id as string))
  let n = BigInt(ConversationId.fromEpochMillis(Date.now()))
  while (taken.has(String(n))) n++
  return String(n) as ConversationId.ConversationId
})
