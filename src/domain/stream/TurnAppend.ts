/**
 * Validated append to the current turn (JP's `TurnMut::build`, jp-reference
 * §4.4). The window is every entry from the last `turn_start` (inclusive) to
 * the end, or the whole stream when there is none (`Turns.currentTurnStart`),
 * plus the earlier events of the same batch. Responses pair with requests by
 * `Pairing`'s rule (per id, first in first out), so ids may be reused across
 * turns and across cycles within a turn:
 * - a `tool_call_response` needs an open `tool_call_request` with its id
 *   (`OrphanedToolCallResponse` when the window has none with that id,
 *   `DuplicateToolCallResponse` when all of them are answered);
 * - an `inquiry_response` likewise against `inquiry_request`s.
 * This is JP's count rule (requests must outnumber responses) on every window
 * without orphans; a response already orphaned in a damaged window does not
 * use up a later request, so append accepts exactly the responses `sanitize`
 * and the incomplete-turn analysis pair.
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
 * import * as TurnAppend from "parley/domain/stream/TurnAppend"
 * import type { ChatRequest, ChatResponse, ConfigDelta, InquiryRequest, InquiryResponse, StreamEntry, ToolCallRequest, ToolCallResponse, TurnStart } from "parley"
 * declare const stream: ReadonlyArray<StreamEntry>, response: ChatResponse
 * const result = TurnAppend.validate(stream, [response]) // { _tag: "Ok", events } or { _tag: "Rejected", … }
 * ```
 *
 * @since 0.1.0
 */
import type { StreamEntry } from "../event/ConversationEvent.ts"
import { isConversationEvent } from "../event/ConversationEvent.ts"
import { TurnStart } from "../event/TurnStart.ts"
import * as Pairing from "./Pairing.ts"
import { currentTurnStart } from "./Turns.ts"

/** Why a batch breaks the current turn's rules. */
export type AppendRejection =
  | { readonly _tag: "OrphanedToolCallResponse"; readonly id: string }
  | { readonly _tag: "DuplicateToolCallResponse"; readonly id: string }
  | { readonly _tag: "OrphanedInquiryResponse"; readonly id: string }
  | { readonly _tag: "DuplicateInquiryResponse"; readonly id: string }

/** The batch as it will be written, or why it cannot be. */
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

/**
 * The pairing state of the current turn window: its open requests per kind
 * and id (named for the counts it once held). Stores keep one per
 * conversation and move it with {@link advance}; treat it as opaque.
 */
export type TurnCounts = Pairing.Pairer<null>

/** The pairing state of the current turn window of `stream`. */
export const turnCounts = (stream: ReadonlyArray<StreamEntry>): TurnCounts => {
  const counts = Pairing.make<null>()
  for (let i = Math.max(0, currentTurnStart(stream)); i < stream.length; i++) counts.step(stream[i]!, null)
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

const rejection = (orphan: Pairing.Orphan): AppendRejection => {
  const { id } = orphan
  if (orphan.kind === "tool") {
    return orphan._tag === "Unrequested"
      ? { _tag: "OrphanedToolCallResponse", id }
      : { _tag: "DuplicateToolCallResponse", id }
  }
  return orphan._tag === "Unrequested"
    ? { _tag: "OrphanedInquiryResponse", id }
    : { _tag: "DuplicateInquiryResponse", id }
}

/**
 * {@link validate} against what a store keeps instead of the stream: whether
 * it holds any event yet, and the current turn's pairing state (read, never
 * modified).
 */
export const validateAgainst = (
  tail: { readonly hasEvents: boolean; readonly counts: TurnCounts },
  batch: ReadonlyArray<StreamEntry>
): AppendResult => {
  const startsTurn = batch.length > 0 && batch[0]!.type === "turn_start"
  if (batch.length === 1 && !startsTurn) return validateOne(tail, batch)
  // A tentative pairer records the batch apart from the stored state, so
  // validation costs O(batch) however long the turn is, and a rejected batch
  // changes nothing. A batch that starts a turn pairs against an empty window.
  const pairer = startsTurn ? Pairing.make<null>() : tail.counts.tentative()
  const out: Array<StreamEntry> = []
  const firstEvent = batch.find(isConversationEvent)
  if (!startsTurn && firstEvent !== undefined && !tail.hasEvents) {
    out.push(new TurnStart({ timestamp: firstEvent.timestamp }))
  }
  for (let i = 0; i < batch.length; i++) {
    const e = batch[i]!
    if (e.type === "turn_start") {
      if (i === 0) out.push(e)
      continue
    }
    const step = pairer.step(e, null)
    if (Pairing.isOrphan(step)) return { _tag: "Rejected", rejection: rejection(step) }
    out.push(e)
  }
  return { _tag: "Ok", entries: out }
}

/**
 * One entry (the coordinator appends its events one at a time): checked
 * against the stored pairing state directly, so nothing is allocated for
 * an entry that pairs.
 */
const validateOne = (
  tail: { readonly hasEvents: boolean; readonly counts: TurnCounts },
  batch: ReadonlyArray<StreamEntry>
): AppendResult => {
  const e = batch[0]!
  const orphan = tail.counts.orphan(e)
  if (orphan !== undefined) return { _tag: "Rejected", rejection: rejection(orphan) }
  return {
    _tag: "Ok",
    entries: !tail.hasEvents && isConversationEvent(e) ? [new TurnStart({ timestamp: e.timestamp }), e] : batch
  }
}

/**
 * Moves `counts` past entries that were appended (a `turn_start` starts a
 * fresh window). Stores keep their state this way instead of re-pairing
 * the turn on every append.
 */
export const advance = (counts: TurnCounts, appended: ReadonlyArray<StreamEntry>): void => {
  for (const e of appended) {
    if (e.type === "turn_start") counts.reset()
    else counts.step(e, null)
  }
}
