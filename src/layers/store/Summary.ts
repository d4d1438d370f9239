/**
 * The listing row of a conversation, the same for every store.
 *
 * @example
 * ```ts
 * import { summaryOf } from "parley/layers/store/Summary"
 * import type { Conversation } from "parley"
 * declare const conversation: Conversation.Conversation
 * summaryOf(conversation, "/path/to/dir").incomplete // null, or { state, tool? }
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import { conversationTokens } from "../../domain/model/ContextWindow.ts"
import type { Conversation } from "../../domain/storage/Conversation.ts"
import * as ConversationModel from "../../domain/storage/Conversation.ts"
import * as ConversationMetadataModel from "../../domain/storage/ConversationMetadata.ts"
import * as Labels from "../../domain/storage/Labels.ts"
import { incompleteSummary } from "../../domain/stream/IncompleteTurn.ts"
import * as OpenQuestions from "../../domain/stream/OpenQuestions.ts"
import * as Timestamp from "../../domain/event/Timestamp.ts"
import type { ConversationSummary } from "../../services/ConversationStore.ts"

export const summaryOf = (conversation: Conversation, path: string): ConversationSummary => {
  const last = ConversationModel.lastEventAt(conversation.entries)
  const incomplete = incompleteSummary(conversation.entries)
  return {
    id: conversation.id,
    title: conversation.metadata.title ?? null,
    events: ConversationModel.eventCount(conversation.entries),
    lastEventAt: last === undefined ? null : Timestamp.toRfc3339(last),
    lastActivatedAt: conversation.metadata.last_activated_at,
    archived: conversation.archived,
    incomplete,
    tokens: conversationTokens(conversation.entries),
    labels: Labels.normalize(conversation.metadata.labels),
    path,
    lastError: ConversationMetadataModel.lastError(conversation.metadata),
    // Kept with the row: `parley inbox` lists waiting turns without reading their logs again.
    ...(incomplete?.state === "waiting-for-input" ? { waiting: OpenQuestions.ofEntries(conversation.entries) } : {})
  }
}
