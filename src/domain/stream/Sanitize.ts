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
 * Pairing (steps 2–5) is `Pairing`'s rule, the one the incomplete-turn
 * analysis and validated append use, applied per turn (a turn ends at the
 * next `turn_start`): per id, first-in first-out in document order, a
 * response closes the earliest still-open request with its id in the same
 * turn. So ids reused across turns never satisfy each other, legacy
 * two-segment inquiry ids that repeat within a turn pair by order (RFD 082),
 * and a reused tool-call id with a missing response is repaired. JP HEAD pairs tool calls globally and by
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
 * import { sanitize } from "parley/domain/stream/Sanitize"
 * import type { Conversation } from "parley"
 * declare const conversation: Conversation.Conversation
 * const repaired = sanitize(conversation.entries)
 * ```
 *
 * @since 0.1.0
 */
import type { StreamEntry } from "../event/ConversationEvent.ts"
import { isConversationEvent } from "../event/ConversationEvent.ts"
import * as Timestamp from "../event/Timestamp.ts"
import { ToolCallResponse } from "../event/ToolCallResponse.ts"
import { TurnStart } from "../event/TurnStart.ts"
import * as Pairing from "./Pairing.ts"
import { trimTrailingTurnStarts } from "./Turns.ts"

/** The text of the synthetic response given to an interrupted tool call. */
export const INTERRUPTED_TOOL_CALL = "Tool call was interrupted."

/** The timestamp JP gives an inserted `turn_start` when its slot holds no event. */
export const EPOCH: Timestamp.Timestamp = Timestamp.make("1970-01-01 00:00:00.0")

/** What pairing found, per kind: requests that no response closes, responses that close no request. */
interface Unpaired {
  readonly openRequests: ReadonlySet<number>
  readonly orphanResponses: ReadonlySet<number>
}

/**
 * `Pairing`'s rule per turn (a `turn_start` begins a new turn), tool calls
 * and inquiries apart. Steps 2–5 only drop tool responses or insert them
 * after tool requests, so one pass before them finds what each step needs.
 */
const pair = (entries: ReadonlyArray<StreamEntry>): Record<Pairing.PairKind, Unpaired> => {
  const tool = { openRequests: new Set<number>(), orphanResponses: new Set<number>() }
  const inquiry = { openRequests: new Set<number>(), orphanResponses: new Set<number>() }
  const pairer = Pairing.make<number>()
  const closeTurn = () => {
    for (const i of pairer.open("tool")) tool.openRequests.add(i)
    for (const i of pairer.open("inquiry")) inquiry.openRequests.add(i)
    pairer.reset()
  }
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!
    if (e.type === "turn_start") closeTurn()
    const step = pairer.step(e, i)
    if (Pairing.isOrphan(step)) (step.kind === "tool" ? tool : inquiry).orphanResponses.add(i)
  }
  closeTurn()
  return { tool, inquiry }
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

/**
 * Steps 2–5: drop orphan tool responses, answer open tool requests, drop
 * orphan inquiry responses and unanswered inquiry requests.
 */
const repairPairs = (entries: ReadonlyArray<StreamEntry>): Array<StreamEntry> => {
  const { tool, inquiry } = pair(entries)
  const out: Array<StreamEntry> = []
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!
    if (tool.orphanResponses.has(i) || inquiry.orphanResponses.has(i) || inquiry.openRequests.has(i)) continue
    out.push(e)
    if (tool.openRequests.has(i) && e.type === "tool_call_request") {
      out.push(
        new ToolCallResponse({ timestamp: e.timestamp, id: e.id, content: INTERRUPTED_TOOL_CALL, is_error: true })
      )
    }
  }
  return out
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
    entries.splice(
      firstRequest,
      0,
      new TurnStart({ timestamp: entries[firstRequest]!.timestamp as Timestamp.Timestamp })
    )
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
 * import { sanitize } from "parley/domain/stream/Sanitize"
 * import type { ChatRequest, ChatResponse, ConfigDelta, InquiryRequest, InquiryResponse, StreamEntry, ToolCallRequest, ToolCallResponse, TurnStart } from "parley"
 * declare const request: ChatRequest, toolCall: ToolCallRequest
 * sanitize([request, toolCall]) // [turnStart, request, toolCall, interruptedResponse]
 * ```
 */
export const sanitize = (entries: ReadonlyArray<StreamEntry>): Array<StreamEntry> => {
  let out = dropLeadingNonUserEvents(entries)
  out = repairPairs(out)
  // Step 6: remove trailing `turn_start`s (ignoring trailing non-events).
  out = trimTrailingTurnStarts(out)
  return normalizeTurnStarts(out)
}
