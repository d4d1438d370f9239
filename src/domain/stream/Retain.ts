/**
 * Which compactions survive when events are removed from a stream (JP's
 * `ConversationStream::retain`; docs/decisions.md#discard-keeps-compactions): a compaction names turns by
 * position, so once any event of turn N is removed, the turns from N on may
 * be renumbered or have lost an event the compaction covered, and every
 * compaction whose range reaches turn N (`to_turn ≥ N`) is dropped, whatever
 * its own timestamp. Compactions that end before N lose nothing and stay.
 * Fork (`--until`) and discarding an incomplete turn both go through here.
 *
 * @example
 * ```ts
 * import { retainCompactions } from "parley/domain/stream/Retain"
 * import type { StreamEntry } from "parley"
 * declare const kept: ReadonlyArray<StreamEntry> // events of turn 3 and later were removed
 * retainCompactions(kept, 3) // compactions with to_turn ≤ 2 remain
 * ```
 *
 * @since 0.1.0
 */
import type { ConversationEvent, StreamEntry } from "../event/ConversationEvent.ts"
import { isConversationEvent } from "../event/ConversationEvent.ts"
import { turnIndexOf } from "./Turns.ts"

/** `entries` without the compactions that reach `firstRemovedTurn`. */
export const retainCompactions = (entries: ReadonlyArray<StreamEntry>, firstRemovedTurn: number): Array<StreamEntry> =>
  entries.filter((e) => e.type !== "compaction" || e.rule.to_turn < firstRemovedTurn)

/**
 * Keeps the entries `keep` accepts (entries that are not events are always
 * kept) and applies {@link retainCompactions} for the earliest turn, in the
 * original numbering, that lost an event.
 *
 * @example
 * ```ts
 * import { retain } from "parley/domain/stream/Retain"
 * import type { StreamEntry } from "parley"
 * declare const entries: ReadonlyArray<StreamEntry>
 * retain(entries, (e) => e.timestamp < "2026-03-05 10:00:00")
 * ```
 */
export const retain = (
  entries: ReadonlyArray<StreamEntry>,
  keep: (e: ConversationEvent) => boolean
): Array<StreamEntry> => {
  const turnOf = turnIndexOf(entries)
  let firstRemoved = Number.POSITIVE_INFINITY
  const kept: Array<StreamEntry> = []
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!
    if (!isConversationEvent(e) || keep(e)) kept.push(e)
    else if (turnOf[i]! < firstRemoved) firstRemoved = turnOf[i]!
  }
  return firstRemoved === Number.POSITIVE_INFINITY ? kept : retainCompactions(kept, firstRemoved)
}
