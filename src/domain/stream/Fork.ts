/**
 * The entries of a forked conversation (RFD 023 "Interaction with
 * `conversation fork`", JP's `conversation fork --from/--until`).
 *
 * 1. `from` (inclusive, as in JP): conversation events stamped before it
 *    are dropped (config deltas and unknown entries stay; compactions go
 *    once any event does, their turn numbers no longer fit);
 *    `until` (exclusive, as in JP): conversation events stamped at or after
 *    it are dropped, wherever they are. Config deltas and unknown entries are
 *    kept in place (parley never interprets them; JP's `retain` keeps them
 *    too). A cut that removes any event of turn N drops exactly the
 *    compactions with `to_turn ≥ N`, whatever their own timestamp: their turn
 *    numbers could point at the wrong turns (JP's `retain`, see `Retain.ts`).
 * 2. The result is split at its last complete turn boundary. The complete
 *    part is sanitized (so it satisfies the structural invariants); the
 *    incomplete turn, if any, is appended unchanged, so it can be resumed with
 *    `--continue-turn` or discarded in the fork, independently of the source.
 *    A cut that falls mid-turn therefore leaves that turn as the fork's
 *    incomplete turn instead of repairing it away.
 *
 * @example
 * ```ts
 * import { fork } from "parley/domain/stream/Fork"
 * import type { Conversation } from "parley"
 * declare const source: Conversation.Conversation
 * const entries = fork(source.entries, { until: "2026-03-05 19:40:00.0" })
 * ```
 *
 * @since 0.1.0
 */
import { isConversationEvent, type StreamEntry } from "../event/ConversationEvent.ts"
import { splitIncompleteTurn } from "./IncompleteTurn.ts"
import { sanitize } from "./Sanitize.ts"
import * as Timestamp from "../event/Timestamp.ts"
import { retain } from "./Retain.ts"

/** Where a fork starts and ends: events stamped at or after `from` and before `until`; absent: no bound. */
export interface ForkOptions {
  /** Keep only events stamped at or after this instant (inclusive, JP's `--from`; JP timestamp or RFC 3339 text). */
  readonly from?: string
  /** Keep only events stamped strictly before this instant (JP timestamp or RFC 3339 text). */
  readonly until?: string
}

const nanos = (text: string): bigint => {
  const at = Timestamp.toEpochNanos(text)
  if (at === undefined) throw new RangeError(`Not a timestamp: ${JSON.stringify(text)}`)
  return at
}

/**
 * `entries` without the conversation events stamped before `from`. Config
 * deltas and unknown entries stay (the config they build up still applies);
 * when any event goes, every compaction goes too: the turns it numbers are
 * no longer where it says.
 */
const keepFrom = (entries: ReadonlyArray<StreamEntry>, from: bigint): Array<StreamEntry> => {
  const kept = entries.filter((e) => !isConversationEvent(e) || Timestamp.toEpochNanos(e.timestamp)! >= from)
  return kept.length !== entries.length ? kept.filter((e) => e.type !== "compaction") : kept
}

/**
 * The events a fork of `entries` starts with. Throws a `RangeError` when
 * `until` is not a timestamp (the CLI validates it first).
 *
 * @example
 * ```ts
 * import { fork } from "parley/domain/stream/Fork"
 * import type { ChatRequest, ChatResponse, ConfigDelta, InquiryRequest, InquiryResponse, StreamEntry, ToolCallRequest, ToolCallResponse, TurnStart } from "parley"
 * declare const ts: TurnStart, ts2: TurnStart, q: ChatRequest, q2: ChatRequest, a: ChatResponse, call: ToolCallRequest
 * fork([ts, q, a, ts2, q2, call], {}) // [ts, q, a, ts2, q2, call] — the incomplete turn travels along
 * ```
 */
export const fork = (entries: ReadonlyArray<StreamEntry>, options: ForkOptions = {}): Array<StreamEntry> => {
  let kept: Array<StreamEntry> = entries.slice()
  if (options.until !== undefined) {
    const until = nanos(options.until)
    kept = retain(kept, (e) => Timestamp.toEpochNanos(e.timestamp)! < until)
  }
  if (options.from !== undefined) kept = keepFrom(kept, nanos(options.from))
  const { complete, incomplete } = splitIncompleteTurn(kept)
  return incomplete === null ? sanitize(complete) : [...sanitize(complete), ...incomplete.entries]
}
