/**
 * Messages sent to a conversation while a turn runs (docs/cli.md#talk-to-a-running-turn):
 * kept beside the conversation, never inside its events, until the run that
 * holds the conversation delivers them as a `chat_request`.
 *
 * The queue is a log of records, appended and never rewritten, so two
 * senders need no lock: a message's id is its place among the `queue`
 * records (1, 2, …), and a `withdraw` and a `take` of the same id are
 * ordered by the log — whichever comes first wins. A message is delivered
 * once its `chat_request` (metadata {@link METADATA_KEY}) is in the events:
 * a run killed after it took a message and before it recorded it leaves the
 * message pending, and the next run delivers it; one killed after it
 * recorded it finds it delivered, so it is never sent twice.
 *
 * @example
 * ```ts
 * import * as QueuedMessage from "parley/domain/storage/QueuedMessage"
 * const log = QueuedMessage.fold([
 *   { op: "queue", nonce: "a", message: "also check the tests", surface: "terminal", when: "after", at: "2026-11-29T07:00:00Z" },
 *   { op: "queue", nonce: "b", message: "never mind", surface: "api", when: "after", at: "2026-11-29T07:00:01Z" },
 *   { op: "withdraw", id: 2, nonce: "c" }
 * ])
 * QueuedMessage.pending(log, new Set()).map((m) => m.id) // [1]
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import type { StreamEntry } from "../event/ConversationEvent.ts"
import * as JsonText from "./JsonText.ts"
import type * as QueueLog from "./QueueLog.ts"

/** Where a message was typed: the record keeps who said it. */
export const Surface = Schema.Literals([
  "terminal",
  "attach",
  "page",
  "api",
  "cluster"
]) satisfies Schema.Codec<QueueLog.Surface>
export type Surface = QueueLog.Surface

/**
 * When the running turn gets it: `after` it ends (a new turn), at its `next`
 * request to the model (after the current tool results), or `now` (the turn
 * is stopped as Ctrl-C stops it, then goes on with the message).
 */
export const When = Schema.Literals(["after", "next", "now"]) satisfies Schema.Codec<QueueLog.When>
export type When = QueueLog.When

/** One record of the queue's log. */
export const Record = Schema.Union([
  Schema.Struct({
    op: Schema.Literal("queue"),
    /** The sender's random tag: how it finds the id its record got. */
    nonce: Schema.String,
    message: Schema.String,
    surface: Surface,
    when: When,
    at: Schema.String
  }),
  Schema.Struct({ op: Schema.Literal("withdraw"), id: Schema.Number, nonce: Schema.String }),
  Schema.Struct({ op: Schema.Literal("take"), id: Schema.Number })
]) satisfies Schema.Codec<QueueLog.Record>
export type Record = QueueLog.Record

export { fold, type Log, type QueuedMessage } from "./QueueLog.ts"

/** Decodes a log file's text (a torn last line, of a writer killed mid-append, is skipped). */
export const parse = (text: string): ReadonlyArray<Record> =>
  text.split("\n").flatMap((line) => {
    if (line.trim() === "") return []
    try {
      const decoded = Schema.decodeUnknownOption(Record)(JsonText.parse(line))
      return decoded._tag === "Some" ? [decoded.value] : []
    } catch {
      return []
    }
  })

/**
 * One record as a log line. It starts with a newline too: after a torn write
 * (a short write, a disk full) the next record still starts a line of its own
 * (blank lines are skipped).
 */
export const line = (record: Record): string => `\n${JSON.stringify(record)}\n`

/**
 * parley's metadata key on a `chat_request` that delivered a queued message:
 * `{ id, nonce, via }`. Delivery is matched by the nonce of its queue record
 * (a fork or a copy starts a queue of its own, whose ids start at 1 again).
 */
export const METADATA_KEY = "parley_message"

/** The nonces of the queued messages the events already hold. */
export const deliveredIn = (entries: ReadonlyArray<StreamEntry>): ReadonlySet<string> => {
  const nonces = new Set<string>()
  for (const e of entries) {
    if (e.type !== "chat_request") continue
    const m = e.metadata[METADATA_KEY]
    if (m === undefined || !JsonText.isObject(m)) continue
    const n = m["nonce"]
    if (typeof n === "string") nonces.add(n)
  }
  return nonces
}

export { describe, pending, type Withdrawn, withdrawOutcome } from "./QueueLog.ts"
