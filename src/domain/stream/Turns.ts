/**
 * Turn iteration (JP's `iter_turns` / `iter_events_by_turn`, jp-reference
 * §4.3). A turn runs from a `turn_start` up to the next one; events before
 * the first `turn_start` form an implicit leading turn. A `turn_start` opens a
 * new turn only when the current group already holds an event, so a leading
 * `turn_start` opens turn 0 and consecutive `turn_start`s give a turn that
 * holds only a `turn_start`.
 *
 * Config deltas, compactions and unknown entries never shift the numbering;
 * they travel with their position: each belongs to the turn whose range
 * covers it. Turns cover the whole input without gaps (entries before the
 * first event belong to turn 0, entries after the last event to the last
 * turn); a stream without events has no turns.
 *
 * @example
 * ```ts
 * import * as Turns from "./Turns.ts"
 * Turns.turnCount([request, response, turnStart, request2]) // 2
 * ```
 */
import type { ConversationEvent, StreamEntry } from "../event/ConversationEvent.ts"
import { isConversationEvent } from "../event/ConversationEvent.ts"
import type { ChatRequest } from "../event/ChatRequest.ts"
import * as Timestamp from "../event/Timestamp.ts"

/** One turn: its 0-based index and its range `[start, end)` of the input array. */
export interface Turn {
  readonly index: number
  readonly start: number
  readonly end: number
  readonly entries: ReadonlyArray<StreamEntry>
}

/**
 * The turns of a stream, in order.
 *
 * @example
 * ```ts
 * turns([turnStart, request, delta, turnStart2, request2]).map((t) => [t.start, t.end]) // [[0, 3], [3, 5]]
 * ```
 */
export const turns = (entries: ReadonlyArray<StreamEntry>): Array<Turn> => {
  const out: Array<Turn> = []
  let start = 0
  let hasEvent = false
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!
    if (!isConversationEvent(e)) continue
    if (e.type === "turn_start" && hasEvent) {
      out.push({ index: out.length, start, end: i, entries: entries.slice(start, i) })
      start = i
    }
    hasEvent = true
  }
  if (hasEvent) out.push({ index: out.length, start, end: entries.length, entries: entries.slice(start) })
  return out
}

/** The number of turns: 0 for a stream without events, 1 when there is no `turn_start`. */
export const turnCount = (entries: ReadonlyArray<StreamEntry>): number => {
  let count = 0
  let hasEvent = false
  for (const e of entries) {
    if (!isConversationEvent(e)) continue
    if (e.type === "turn_start" && hasEvent) count++
    hasEvent = true
  }
  return hasEvent ? count + 1 : 0
}

/** One conversation event with the index of its turn. */
export interface EventInTurn {
  readonly turn: number
  readonly event: ConversationEvent
}

/**
 * Every conversation event with its turn index (config deltas, compactions
 * and unknown entries are skipped). Agrees with {@link turns}.
 *
 * @example
 * ```ts
 * eventsByTurn([request, turnStart, request2]).map((x) => x.turn) // [0, 1, 1]
 * ```
 */
export const eventsByTurn = (entries: ReadonlyArray<StreamEntry>): Array<EventInTurn> => {
  const out: Array<EventInTurn> = []
  let turn = 0
  let hasEvent = false
  for (const e of entries) {
    if (!isConversationEvent(e)) continue
    if (e.type === "turn_start" && hasEvent) turn++
    hasEvent = true
    out.push({ turn, event: e })
  }
  return out
}

/**
 * The structured-output schema of the current turn: that of the first
 * `chat_request` after the last `turn_start` (or from the start when there is
 * none). Later requests of the turn (interrupt replies) do not override it.
 *
 * @example
 * ```ts
 * currentTurnSchema([turnStart, requestWithSchema, reply, interruptReply]) // requestWithSchema.schema
 * ```
 */
export const currentTurnSchema = (entries: ReadonlyArray<StreamEntry>): ChatRequest["schema"] => {
  let from = 0
  for (let i = entries.length - 1; i >= 0; i--) {
    if (entries[i]!.type === "turn_start") {
      from = i
      break
    }
  }
  for (let i = from; i < entries.length; i++) {
    const e = entries[i]!
    if (e.type === "chat_request") return e.schema
  }
  return undefined
}

/**
 * The last turn whose first event is at or before `time` (timestamp text);
 * `undefined` when `time` precedes turn 0. Scanning stops at the first turn
 * that starts later.
 *
 * @example
 * ```ts
 * turnAtTime(entries, "2026-03-05 11:00:00.0")?.index // 0
 * ```
 */
export const turnAtTime = (entries: ReadonlyArray<StreamEntry>, time: string): Turn | undefined => {
  let found: Turn | undefined
  for (const turn of turns(entries)) {
    const first = turn.entries.find(isConversationEvent)
    if (first === undefined || Timestamp.compare(first.timestamp, time) > 0) break
    found = turn
  }
  return found
}
