/**
 * Validated append to the current turn (JP's `TurnMut::build`, jp-reference
 * §4.4). The window is every entry from the last `turn_start` (inclusive) to
 * the end, or the whole stream when there is none, plus the earlier events of
 * the same batch. Checks are count-based, so ids may be reused across turns
 * and across cycles within a turn:
 * - a `tool_call_response` needs more requests than responses with its id;
 * - an `inquiry_response` likewise against `inquiry_request`s.
 * A batch that begins with a `turn_start` starts a new turn (the window is
 * then empty); any other `turn_start` in a batch is dropped, as in JP.
 * On a stream without any event (new, or only config deltas), a batch that
 * does not start a turn gets a `turn_start` prepended, stamped like its first
 * event (JP's `current_turn_mut`). A legacy stream whose events precede any
 * `turn_start` keeps receiving appends in its implicit turn: parley does not
 * copy JP's quirk #3 of splitting it with an injected `turn_start`.
 * A failed batch appends nothing.
 *
 * @example
 * ```ts
 * import * as TurnAppend from "./TurnAppend.ts"
 * const result = TurnAppend.validate(stream, [response]) // { _tag: "Ok", events } or { _tag: "Rejected", … }
 * ```
 */
import type { StreamEntry } from "../event/ConversationEvent.ts"
import { isConversationEvent } from "../event/ConversationEvent.ts"
import { TurnStart } from "../event/TurnStart.ts"

export type AppendRejection =
  | { readonly _tag: "OrphanedToolCallResponse"; readonly id: string }
  | { readonly _tag: "DuplicateToolCallResponse"; readonly id: string }
  | { readonly _tag: "OrphanedInquiryResponse"; readonly id: string }
  | { readonly _tag: "DuplicateInquiryResponse"; readonly id: string }

export type AppendResult =
  | { readonly _tag: "Ok"; readonly entries: ReadonlyArray<StreamEntry> }
  | { readonly _tag: "Rejected"; readonly rejection: AppendRejection }

/** A readable sentence for a rejection. */
export const describeRejection = (r: AppendRejection): string => {
  switch (r._tag) {
    case "OrphanedToolCallResponse":
      return `tool call response "${r.id}" has no matching tool call request in the current turn`
    case "DuplicateToolCallResponse":
      return `tool call "${r.id}" already has a response for every request in the current turn`
    case "OrphanedInquiryResponse":
      return `inquiry response "${r.id}" has no matching inquiry request in the current turn`
    case "DuplicateInquiryResponse":
      return `inquiry "${r.id}" already has a response for every request in the current turn`
  }
}

/** Index of the first entry of the current turn's window. */
export const currentTurnStart = (stream: ReadonlyArray<StreamEntry>): number => {
  for (let i = stream.length - 1; i >= 0; i--) if (stream[i]!.type === "turn_start") return i
  return 0
}

/** Counts of requests and responses per id in the current turn window. */
export interface TurnCounts {
  readonly toolRequests: Map<string, number>
  readonly toolResponses: Map<string, number>
  readonly inquiryRequests: Map<string, number>
  readonly inquiryResponses: Map<string, number>
}

const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1)

const count = (counts: TurnCounts, e: StreamEntry): void => {
  switch (e.type) {
    case "tool_call_request":
      bump(counts.toolRequests, e.id)
      break
    case "tool_call_response":
      bump(counts.toolResponses, e.id)
      break
    case "inquiry_request":
      bump(counts.inquiryRequests, e.id)
      break
    case "inquiry_response":
      bump(counts.inquiryResponses, e.id)
      break
  }
}

/** The counts of the current turn window of `stream`. */
export const turnCounts = (stream: ReadonlyArray<StreamEntry>): TurnCounts => {
  const counts: TurnCounts = {
    toolRequests: new Map(),
    toolResponses: new Map(),
    inquiryRequests: new Map(),
    inquiryResponses: new Map()
  }
  for (let i = currentTurnStart(stream); i < stream.length; i++) count(counts, stream[i]!)
  return counts
}

/**
 * Validates a batch against the current turn of `stream` (which is not
 * modified). Returns the entries to append (turn starts removed) or why the
 * whole batch is rejected.
 */
export const validate = (
  stream: ReadonlyArray<StreamEntry>,
  batch: ReadonlyArray<StreamEntry>,
  counts: TurnCounts = turnCounts(stream)
): AppendResult => validateAgainst({ hasEvents: stream.some(isConversationEvent), counts }, batch)

/**
 * {@link validate} against what a store keeps instead of the stream: whether
 * it holds any event yet, and the current turn's counts.
 */
export const validateAgainst = (
  tail: { readonly hasEvents: boolean; readonly counts: TurnCounts },
  batch: ReadonlyArray<StreamEntry>
): AppendResult => {
  const { counts } = tail
  const startsTurn = batch.length > 0 && batch[0]!.type === "turn_start"
  // Counts added by this batch live in an overlay, so validation costs
  // O(batch) however long the turn is, and a rejected batch changes nothing.
  const overlay = new Map<string, number>()
  const get = (kind: keyof TurnCounts, id: string): number =>
    (startsTurn ? 0 : counts[kind].get(id) ?? 0) + (overlay.get(`${kind}\u0000${id}`) ?? 0)
  const add = (kind: keyof TurnCounts, id: string) => {
    const k = `${kind}\u0000${id}`
    overlay.set(k, (overlay.get(k) ?? 0) + 1)
  }
  const out: Array<StreamEntry> = []
  const firstEvent = batch.find(isConversationEvent)
  if (!startsTurn && firstEvent !== undefined && !tail.hasEvents) {
    out.push(new TurnStart({ timestamp: firstEvent.timestamp }))
  }
  for (let i = 0; i < batch.length; i++) {
    const e = batch[i]!
    switch (e.type) {
      case "turn_start":
        if (i === 0) out.push(e)
        continue
      case "tool_call_request":
        add("toolRequests", e.id)
        break
      case "inquiry_request":
        add("inquiryRequests", e.id)
        break
      case "tool_call_response": {
        const reqs = get("toolRequests", e.id)
        if (reqs === 0) return { _tag: "Rejected", rejection: { _tag: "OrphanedToolCallResponse", id: e.id } }
        if (get("toolResponses", e.id) >= reqs) {
          return { _tag: "Rejected", rejection: { _tag: "DuplicateToolCallResponse", id: e.id } }
        }
        add("toolResponses", e.id)
        break
      }
      case "inquiry_response": {
        const reqs = get("inquiryRequests", e.id)
        if (reqs === 0) return { _tag: "Rejected", rejection: { _tag: "OrphanedInquiryResponse", id: e.id } }
        if (get("inquiryResponses", e.id) >= reqs) {
          return { _tag: "Rejected", rejection: { _tag: "DuplicateInquiryResponse", id: e.id } }
        }
        add("inquiryResponses", e.id)
        break
      }
    }
    out.push(e)
  }
  return { _tag: "Ok", entries: out }
}

/**
 * Moves `counts` past entries that were appended (a `turn_start` starts a
 * fresh window). Stores keep their counts this way instead of recounting
 * the turn on every append.
 */
export const advance = (counts: TurnCounts, appended: ReadonlyArray<StreamEntry>): void => {
  for (const e of appended) {
    if (e.type === "turn_start") {
      counts.toolRequests.clear()
      counts.toolResponses.clear()
      counts.inquiryRequests.clear()
      counts.inquiryResponses.clear()
    } else {
      count(counts, e)
    }
  }
}
