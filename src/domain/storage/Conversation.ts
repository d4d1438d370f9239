/**
 * A whole conversation as stored: id, metadata, the opaque base config and
 * the entry stream.
 *
 * The base config is either `base_config.json` (kept as its exact text) or
 * "packed" — the legacy layout where `events.json` starts with the base
 * `config_delta` (kept as that entry). parley never interprets config.
 *
 * @example
 * ```ts
 * import * as Conversation from "./Conversation.ts"
 * const c = Conversation.make({ id, title: "Hello", now })
 * c.entries.length // 0
 * ```
 */
import type { StreamEntry } from "../event/ConversationEvent.ts"
import { isConversationEvent } from "../event/ConversationEvent.ts"
import type { ConversationId } from "./ConversationId.ts"
import * as ConversationMetadata from "./ConversationMetadata.ts"
import type * as Timestamp from "../event/Timestamp.ts"

export type BaseConfig =
  | { readonly _tag: "File"; readonly text: string }
  | { readonly _tag: "Packed" }

export interface Conversation {
  readonly id: ConversationId
  readonly archived: boolean
  readonly metadata: ConversationMetadata.ConversationMetadata
  readonly baseConfig: BaseConfig
  readonly entries: ReadonlyArray<StreamEntry>
}

/** A new, empty conversation (current format: `base_config.json` holding `{}`). */
export const make = (options: { id: ConversationId; title?: string; now: Timestamp.Timestamp }): Conversation => ({
  id: options.id,
  archived: false,
  metadata: ConversationMetadata.make({
    ...(options.title !== undefined ? { title: options.title } : {}),
    last_activated_at: options.now
  }),
  baseConfig: { _tag: "File", text: "{}\n" },
  entries: []
})

/** Conversation events (not config deltas, compactions or unknown entries). */
export const eventCount = (entries: ReadonlyArray<StreamEntry>): number => {
  let n = 0
  for (const e of entries) if (isConversationEvent(e)) n++
  return n
}

/** The timestamp of the last entry that has one. */
export const lastEventAt = (entries: ReadonlyArray<StreamEntry>): string | undefined => {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!
    if (isConversationEvent(e)) return e.timestamp
  }
  return undefined
}

/** A title from the first message: its first line, trimmed to 80 chars. */
export const titleFrom = (message: string): string | undefined => {
  const line = message.trim().split("\n", 1)[0]?.trim() ?? ""
  if (line.length === 0) return undefined
  return line.length > 80 ? line.slice(0, 77).trimEnd() + "…" : line
}
