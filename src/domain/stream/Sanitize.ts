/**
 * Structural repair of a stream before it is shown to a provider (JP's
 * `ConversationStream::sanitize`, jp-reference §4.5, with RFD 082's
 * turn-scoped pairing). Pure: returns a new array; entries that survive are
 * the same objects, in the same order.
 *
 * Steps, in order:
 * 1. If a `chat_request` exists, drop every event before the first one except
 *    `turn_start`s (config deltas, compactions and unknown entries stay).
 * 2. Drop `tool_call_response`s that pair with no earlier request of their
 *    turn.
 * 3. After each `tool_call_request` left without a response in its turn,
 *    insert a synthetic response `Tool call was interrupted.` (`is_error`
 *    true) stamped with the request's timestamp.
 * 4. Drop `inquiry_response`s that pair with no earlier request of their turn.
 * 5. Drop `inquiry_request`s left without a response in their turn.
 * 6. While the last event (ignoring config deltas, compactions, unknown
 *    entries) is a `turn_start`, remove it. JP removes only one; removing
 *    them all makes sanitize idempotent (`sanitize(sanitize(s))` equals
 *    `sanitize(s)`).
 * 7. Normalize turn starts: when there is a `chat_request`, keep only the last
 *    of the `turn_start`s before the first one, and insert a `turn_start` at
 *    the first `chat_request` when none precedes it (stamped with that
 *    request's timestamp). Without a `chat_request`, insert one at index 0
 *    unless the first event already is a `turn_start` (stamped with the entry
 *    at index 0, or the epoch when that entry is not an event).
 *
 * Pairing (steps 2–5) is per turn (a turn ends at the next `turn_start`) and
 * per id, first-in first-out in document order: a response closes the
 * earliest still-open request with its id in the same turn. So ids reused
 * across turns never satisfy each other, legacy two-segment inquiry ids that
 * repeat within a turn pair by order (RFD 082), and a reused tool-call id with
 * a missing response is repaired. JP HEAD pairs tool calls globally and by
 * set (jp-reference §9 quirk #2); parley pairs them like inquiries, because
 * a provider needs every request answered within its own turn.
 *
 * Quirk #1 (jp-reference §9): with no `chat_request` and a stream that already
 * starts with a `turn_start`, JP inserts a second `turn_start` at index 0.
 * parley does not: the leading `turn_start` already marks the turn.
 *
 * Sanitize does not split off an incomplete last turn; callers that must keep
 * it (resume, fork) split first (`IncompleteTurn.splitIncompleteTurn`) and
 * sanitize only the complete part (RFD 023).
 *
 * @example
 * ```ts
 * import { sanitize } from "./Sanitize.ts"
 * const repaired = sanitize(conversation.entries)
 * ```
 */
import type { StreamEntry } from "../event/ConversationEvent.ts"
import { isConversationEvent } from "../event/ConversationEvent.ts"
import * as Timestamp from "../event/Timestamp.ts"
import { ToolCallResponse } from "../event/ToolCallResponse.ts"
import { TurnStart } from "../event/TurnStart.ts"

/** The text of the synthetic response given to an interrupted tool call. */
export const INTERRUPTED_TOOL_CALL = "Tool call was interrupted."

/** The timestamp JP gives an inserted `turn_start` when its slot holds no event. */
export const EPOCH: Timestamp.Timestamp = Timestamp.make("1970-01-01 00:00:00.0")

/** Result of pairing one kind of request/response per turn and id. */
interface Pairing {
  /** Indices of requests that no response closes. */
  readonly openRequests: ReadonlySet<number>
  /** Indices of responses that close no request. */
  readonly orphanResponses: ReadonlySet<number>
}

/**
 * FIFO pairing of `requestType` / `responseType` entries that carry an `id`,
 * per turn (a `turn_start` begins a new turn) and per id.
 */
const pair = (
  entries: ReadonlyArray<StreamEntry>,
  requestType: "tool_call_request" | "inquiry_request",
  responseType: "tool_call_response" | "inquiry_response"
): Pairing => {
  const openRequests = new Set<number>()
  const orphanResponses = new Set<number>()
  // Per id, the still-open request indices of the current turn, oldest first.
  let open = new Map<string, Array<number>>()
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!
    if (e.type === "turn_start") {
      for (const queue of open.values()) for (const j of queue) openRequests.add(j)
      open = new Map()
    } else if (e.type === requestType) {
      const id = (e as { readonly id: string }).id
      const queue = open.get(id)
      if (queue === undefined) open.set(id, [i])
      else queue.push(i)
    } else if (e.type === responseType) {
      const id = (e as { readonly id: string }).id
      const queue = open.get(id)
      if (queue === undefined || queue.length === 0) orphanResponses.add(i)
      else queue.shift()
    }
  }
  for (const queue of open.values()) for (const j of queue) openRequests.add(j)
  return { openRequests, orphanResponses }
}

/** Step 1: drop non-`turn_start` events before the first `chat_request`. */
const dropLeadingNonUserEvents = (entries: ReadonlyArray<StreamEntry>): Array<StreamEntry> => {
  const first = entries.findIndex((e) => e.type === "chat_request")
  if (first <= 0) return entries.slice()
  const out: Array<StreamEntry> = []
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!
    if (i < first && isConversationEvent(e) && e.type !== "turn_start") continue
    out.push(e)
  }
  return out
}

/** Steps 2–3: drop orphan tool responses, answer open tool requests. */
const repairToolCalls = (entries: ReadonlyArray<StreamEntry>): Array<StreamEntry> => {
  const { openRequests, orphanResponses } = pair(entries, "tool_call_request", "tool_call_response")
  if (openRequests.size === 0 && orphanResponses.size === 0) return entries.slice()
  const out: Array<StreamEntry> = []
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!
    if (orphanResponses.has(i)) continue
    out.push(e)
    if (openRequests.has(i) && e.type === "tool_call_request") {
      out.push(new ToolCallResponse({ timestamp: e.timestamp, id: e.id, content: INTERRUPTED_TOOL_CALL, is_error: true }))
    }
  }
  return out
}

/** Steps 4–5: drop orphan inquiry responses, then unanswered inquiry requests. */
const repairInquiries = (entries: ReadonlyArray<StreamEntry>): Array<StreamEntry> => {
  const { openRequests, orphanResponses } = pair(entries, "inquiry_request", "inquiry_response")
  if (openRequests.size === 0 && orphanResponses.size === 0) return entries.slice()
  return entries.filter((_, i) => !orphanResponses.has(i) && !openRequests.has(i))
}

/** Step 6: remove trailing `turn_start`s (ignoring trailing non-events). */
const trimTrailingEmptyTurns = (entries: Array<StreamEntry>): Array<StreamEntry> => {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!
    if (!isConversationEvent(e)) continue
    if (e.type !== "turn_start") break
    entries.splice(i, 1)
  }
  return entries
}

/** Step 7: one `turn_start` before the first `chat_request` (or at the start). */
const normalizeTurnStarts = (entries: Array<StreamEntry>): Array<StreamEntry> => {
  if (!entries.some((e) => isConversationEvent(e) && e.type !== "turn_start")) return entries
  const firstRequest = entries.findIndex((e) => e.type === "chat_request")
  if (firstRequest >= 0) {
    let lastStart = -1
    for (let i = 0; i < firstRequest; i++) if (entries[i]!.type === "turn_start") lastStart = i
    if (lastStart >= 0) {
      return entries.filter((e, i) => i >= firstRequest || e.type !== "turn_start" || i === lastStart)
    }
    entries.splice(firstRequest, 0, new TurnStart({ timestamp: entries[firstRequest]!.timestamp as Timestamp.Timestamp }))
    return entries
  }
  // No chat_request: the stream must open with a turn_start (parley's answer to quirk #1).
  const firstEvent = entries.find(isConversationEvent)
  if (firstEvent !== undefined && firstEvent.type === "turn_start") return entries
  const slot = entries[0]!
  const timestamp = isConversationEvent(slot) ? slot.timestamp : EPOCH
  entries.splice(0, 0, new TurnStart({ timestamp }))
  return entries
}

/**
 * Repairs a stream for a provider request (steps above). Never mutates its
 * input.
 *
 * @example
 * ```ts
 * sanitize([request, toolCall]) // [turnStart, request, toolCall, interruptedResponse]
 * ```
 */
export const sanitize = (entries: ReadonlyArray<StreamEntry>): Array<StreamEntry> => {
  let out = dropLeadingNonUserEvents(entries)
  out = repairToolCalls(out)
  out = repairInquiries(out)
  out = trimTrailingEmptyTurns(out)
  return normalizeTurnStarts(out)
}
