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
 * This module is the one home of where turns begin (docs/decisions.md#one-home-for-each-stream-rule): the
 * forward rule of {@link turns} / {@link turnCount} / {@link eventsByTurn},
 * and {@link currentTurnStart}, the backward rule that validated append,
 * {@link currentTurnSchema} and the incomplete-turn analysis use.
 *
 * @example
 * ```ts
 * import * as Turns from "parley/domain/stream/Turns"
 * import type { ChatRequest, ChatResponse, ConfigDelta, InquiryRequest, InquiryResponse, StreamEntry, ToolCallRequest, ToolCallResponse, TurnStart } from "parley"
 * declare const turnStart: TurnStart, request: ChatRequest, response: ChatResponse, request2: ChatRequest
 * Turns.turnCount([request, response, turnStart, request2]) // 2
 * ```
 *
 * @since 0.1.0
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
 * The forward turn rule, shared by {@link turns}, {@link turnCount} and
 * {@link eventsByTurn}: walks the conversation events in order and calls
 * `visit` with each event, its index and its turn; returns the number of
 * turns. A `turn_start` opens a new turn only when the current one already
 * holds an event.
 */
const walkTurns = (
  entries: ReadonlyArray<StreamEntry>,
  visit: (event: ConversationEvent, index: number, turn: number) => void
): number => {
  let turn = 0
  let hasEvent = false
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!
    if (!isConversationEvent(e)) continue
    if (e.type === "turn_start" && hasEvent) turn++
    hasEvent = true
    visit(e, i, turn)
  }
  return hasEvent ? turn + 1 : 0
}

const ignore = (): void => {}

/**
 * The turns of a stream, in order.
 *
 * @example
 * ```ts
 * import { turns } from "parley/domain/stream/Turns"
 * import type { ChatRequest, ChatResponse, ConfigDelta, InquiryRequest, InquiryResponse, StreamEntry, ToolCallRequest, ToolCallResponse, TurnStart } from "parley"
 * declare const turnStart: TurnStart, turnStart2: TurnStart, request: ChatRequest, request2: ChatRequest, delta: ConfigDelta
 * turns([turnStart, request, delta, turnStart2, request2]).map((t) => [t.start, t.end]) // [[0, 3], [3, 5]]
 * ```
 */
export const turns = (entries: ReadonlyArray<StreamEntry>): Array<Turn> => {
  // Turn 0 starts at index 0, so entries before the first event belong to it.
  const starts: Array<number> = []
  walkTurns(entries, (_, i, turn) => {
    if (turn === starts.length) starts.push(turn === 0 ? 0 : i)
  })
  return starts.map((start, index) => {
    const end = starts[index + 1] ?? entries.length
    return { index, start, end, entries: entries.slice(start, end) }
  })
}

/** The number of turns: 0 for a stream without events, 1 when there is no `turn_start`. */
export const turnCount = (entries: ReadonlyArray<StreamEntry>): number => walkTurns(entries, ignore)

/**
 * The turn of every entry, by position: events by the forward rule, and the
 * entries that are not events (config deltas, compactions, unknown kinds) in
 * the turn they stand in (before the first event: turn 0). JP's
 * `projection::assign_turn_indices`, which compaction ranges are read against.
 *
 * @example
 * ```ts
 * import { turnIndexOf } from "parley/domain/stream/Turns"
 * import type { ChatRequest, ConfigDelta, TurnStart } from "parley"
 * declare const delta: ConfigDelta, ts: TurnStart, ts2: TurnStart, q: ChatRequest, q2: ChatRequest
 * Array.from(turnIndexOf([delta, ts, q, delta, ts2, q2])) // [0, 0, 0, 0, 1, 1]
 * ```
 */
export const turnIndexOf = (entries: ReadonlyArray<StreamEntry>): Int32Array => {
  const out = new Int32Array(entries.length)
  let turn = 0
  let hasEvent = false
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!
    if (isConversationEvent(e)) {
      if (e.type === "turn_start" && hasEvent) turn++
      hasEvent = true
    }
    out[i] = turn
  }
  return out
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
 * import { eventsByTurn } from "parley/domain/stream/Turns"
 * import type { ChatRequest, ChatResponse, ConfigDelta, InquiryRequest, InquiryResponse, StreamEntry, ToolCallRequest, ToolCallResponse, TurnStart } from "parley"
 * declare const turnStart: TurnStart, request: ChatRequest, request2: ChatRequest
 * eventsByTurn([request, turnStart, request2]).map((x) => x.turn) // [0, 1, 1]
 * ```
 */
export const eventsByTurn = (entries: ReadonlyArray<StreamEntry>): Array<EventInTurn> => {
  const out: Array<EventInTurn> = []
  walkTurns(entries, (event, _, turn) => out.push({ turn, event }))
  return out
}

/** Options of {@link currentTurnStart}. */
export interface CurrentTurnOptions {
  /**
   * Skip trailing bare `turn_start`s (ones followed by no other event), so a
   * stray `turn_start` cannot hide the last turn that holds something. The
   * incomplete-turn analysis wants this (`sanitize` trims such starts);
   * validated append and {@link currentTurnSchema} do not: after a fresh
   * `turn_start` the current turn is the new, empty one.
   */
  readonly skipTrailingBareTurnStarts?: boolean
}

/**
 * Where the current (last) turn starts, the one home of that rule read
 * backwards: the index of its `turn_start`, or of the stream's first event
 * when no `turn_start` precedes (a legacy implicit turn); -1 when the stream
 * holds no event (with `skipTrailingBareTurnStarts`: no event other than
 * `turn_start`s). Config deltas, compactions and unknown entries never start
 * a turn. Scans backwards and stops at the `turn_start` it finds.
 *
 * Every event from the result on belongs to the last turn of {@link turns}
 * (which also counts leading non-events into turn 0).
 *
 * @example
 * ```ts
 * import { currentTurnStart } from "parley/domain/stream/Turns"
 * import type { ChatRequest, ChatResponse, ConfigDelta, InquiryRequest, InquiryResponse, StreamEntry, ToolCallRequest, ToolCallResponse, TurnStart } from "parley"
 * declare const ts: TurnStart, ts2: TurnStart, q: ChatRequest, q2: ChatRequest, a: ChatResponse, call: ToolCallRequest
 * declare const delta: ConfigDelta
 * currentTurnStart([ts, q, a, ts2])                                        // 3
 * currentTurnStart([ts, q, a, ts2], { skipTrailingBareTurnStarts: true })  // 0
 * currentTurnStart([delta, q])                                             // 1
 * ```
 */
export const currentTurnStart = (entries: ReadonlyArray<StreamEntry>, options: CurrentTurnOptions = {}): number => {
  const skip = options.skipTrailingBareTurnStarts === true
  // The earliest event seen so far other than a turn_start.
  let first = -1
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!
    if (!isConversationEvent(e)) continue
    if (e.type !== "turn_start") first = i
    else if (!skip || first >= 0) return i
  }
  return first
}

/**
 * Removes the trailing bare `turn_start`s of `entries` in place (trailing
 * entries that are not events are passed over and kept) and returns it: the
 * one home of that trim, for `sanitize` (step 6) and for the entries a
 * resumed turn merges back, so appends land in the resumed turn.
 *
 * @example
 * ```ts
 * import { trimTrailingTurnStarts } from "parley/domain/stream/Turns"
 * import type { ChatRequest, StreamEntry, TurnStart } from "parley"
 * declare const ts: TurnStart, ts2: TurnStart, q: ChatRequest
 * trimTrailingTurnStarts([ts, q, ts2]) // [ts, q]
 * ```
 */
export const trimTrailingTurnStarts = (entries: Array<StreamEntry>): Array<StreamEntry> => {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!
    if (!isConversationEvent(e)) continue
    if (e.type !== "turn_start") break
    entries.splice(i, 1)
  }
  return entries
}

/**
 * The structured-output schema of the current turn: that of the first
 * `chat_request` after the last `turn_start` (or from the start when there is
 * none). Later requests of the turn (interrupt replies) do not override it.
 *
 * @example
 * ```ts
 * import { currentTurnSchema } from "parley/domain/stream/Turns"
 * import type { ChatRequest, ChatResponse, ConfigDelta, InquiryRequest, InquiryResponse, StreamEntry, ToolCallRequest, ToolCallResponse, TurnStart } from "parley"
 * declare const turnStart: TurnStart, requestWithSchema: ChatRequest, reply: ChatResponse, interruptReply: ChatRequest
 * currentTurnSchema([turnStart, requestWithSchema, reply, interruptReply]) // requestWithSchema.schema
 * ```
 */
export const currentTurnSchema = (entries: ReadonlyArray<StreamEntry>): ChatRequest["schema"] => {
  for (let i = Math.max(0, currentTurnStart(entries)); i < entries.length; i++) {
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
 * import { turnAtTime } from "parley/domain/stream/Turns"
 * import type { ChatRequest, ChatResponse, ConfigDelta, InquiryRequest, InquiryResponse, StreamEntry, ToolCallRequest, ToolCallResponse, TurnStart } from "parley"
 * declare const entries: ReadonlyArray<StreamEntry>
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
