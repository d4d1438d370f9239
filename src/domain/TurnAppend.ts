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
import type { StreamEntry } from "./ConversationEvent.ts"
import { isConversationEvent } from "./ConversationEvent.ts"
import { TurnStart } from "./TurnStart.ts"

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
): AppendResult => {
  const startsTurn = batch.length > 0 && batch[0]!.type === "turn_start"
  // Work on copies so a rejected batch leaves the caller's counts untouched.
  const c: TurnCounts = startsTurn
    ? { toolRequests: new Map(), toolResponses: new Map(), inquiryRequests: new Map(), inquiryResponses: new Map() }
    : {
      toolRequests: new Map(counts.toolRequests),
      toolResponses: new Map(counts.toolResponses),
      inquiryRequests: new Map(counts.inquiryRequests),
      inquiryResponses: new Map(counts.inquiryResponses)
    }
  const out: Array<StreamEntry> = []
  const firstEvent = batch.find(isConversationEvent)
  if (!startsTurn && firstEvent !== undefined && !stream.some(isConversationEvent)) {
    out.push(new TurnStart({ timestamp: firstEvent.timestamp }))
  }
  for (let i = 0; i < batch.length; i++) {
    const e = batch[i]!
    if (e.type === "turn_start") {
      if (i === 0) out.push(e)
      continue
    }
    if (e.type === "tool_call_response") {
      const reqs = c.toolRequests.get(e.id) ?? 0
      if (reqs === 0) return { _tag: "Rejected", rejection: { _tag: "OrphanedToolCallResponse", id: e.id } }
      if ((c.toolResponses.get(e.id) ?? 0) >= reqs) {
        return { _tag: "Rejected", rejection: { _tag: "DuplicateToolCallResponse", id: e.id } }
      }
    } else if (e.type === "inquiry_response") {
      const reqs = c.inquiryRequests.get(e.id) ?? 0
      if (reqs === 0) return { _tag: "Rejected", rejection: { _tag: "OrphanedInquiryResponse", id: e.id } }
      if ((c.inquiryResponses.get(e.id) ?? 0) >= reqs) {
        return { _tag: "Rejected", rejection: { _tag: "DuplicateInquiryResponse", id: e.id } }
      }
    }
    count(c, e)
    out.push(e)
  }
  return { _tag: "Ok", entries: out }
}
