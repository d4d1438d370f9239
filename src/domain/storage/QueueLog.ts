/**
 * The queue of messages sent to a running turn, folded from its log
 * (`QueuedMessage.ts` decodes the log; docs/cli.md#talk-to-a-running-turn).
 * Free of effect/Schema, so `conversation ls` counts a queue without loading
 * it (docs/decisions.md#fast-start).
 *
 * @example
 * ```ts
 * import * as QueueLog from "parley/domain/storage/QueueLog"
 * const log = QueueLog.fold([{ op: "queue", nonce: "a", message: "hi", surface: "api", when: "after", at: "2026-11-29T07:00:00Z" }])
 * QueueLog.describe(QueueLog.pending(log, new Set()).length) // "1 message queued"
 * ```
 *
 * @since 0.1.0
 */
/** Where a message was typed (`QueuedMessage.Surface` is its Schema). */
export type Surface = "terminal" | "attach" | "page" | "api" | "cluster"

/** When the running turn gets it (`QueuedMessage.When` is its Schema). */
export type When = "after" | "next" | "now"

/** One record of the queue's log (`QueuedMessage.Record` is its Schema). */
export type Record =
  | {
      readonly op: "queue"
      readonly nonce: string
      readonly message: string
      readonly surface: Surface
      readonly when: When
      readonly at: string
    }
  | { readonly op: "withdraw"; readonly id: number; readonly nonce: string }
  | { readonly op: "take"; readonly id: number }

/** A queued message as senders and listings see it. */
export interface QueuedMessage {
  /** Its place among the queued messages: 1, 2, … (the order they are delivered in). */
  readonly id: number
  readonly nonce: string
  readonly message: string
  readonly surface: Surface
  readonly when: When
  readonly at: string
  /** `queued`, `taken` by a run (delivered unless that run died first) or `withdrawn`. */
  readonly state: "queued" | "taken" | "withdrawn"
}

/** The queue as its log says. */
export interface Log {
  readonly messages: ReadonlyArray<QueuedMessage>
}

/** Folds a log's records, in their order, into the queue. */
export const fold = (records: ReadonlyArray<Record>): Log => {
  const messages: Array<QueuedMessage> = []
  for (const r of records) {
    if (r.op === "queue") {
      const { op: _op, ...rest } = r
      messages.push({ ...rest, id: messages.length + 1, state: "queued" })
      continue
    }
    const m = messages[r.id - 1]
    // Only the first of a withdraw and a take counts: the other came too late.
    if (m === undefined || m.state !== "queued") continue
    messages[r.id - 1] = { ...m, state: r.op === "take" ? "taken" : "withdrawn" }
  }
  return { messages }
}

/**
 * The messages still to deliver, in id order: queued, or taken by a run that
 * died before it recorded them (`delivered`: the nonces the events hold).
 */
export const pending = (log: Log, delivered: ReadonlySet<string>): ReadonlyArray<QueuedMessage> =>
  log.messages.filter((m) => m.state !== "withdrawn" && !delivered.has(m.nonce))

/** What a withdraw found: the message withdrawn, too late (taken), already withdrawn, or no such id. */
export type Withdrawn = "withdrawn" | "delivered" | "already-withdrawn" | "unknown"

/** How the log treated the withdraw of `id` whose record carries `nonce`. */
export const withdrawOutcome = (records: ReadonlyArray<Record>, id: number, nonce: string): Withdrawn => {
  const at = records.findIndex((r) => r.op === "withdraw" && r.nonce === nonce)
  // Its own record not read back: nothing says it was logged, so nothing is said withdrawn.
  if (at < 0) return "unknown"
  const before = fold(records.slice(0, at)).messages[id - 1]
  if (before === undefined) return "unknown"
  return before.state === "queued" ? "withdrawn" : before.state === "taken" ? "delivered" : "already-withdrawn"
}

/** "1 message queued", "3 messages queued", or "" for none. */
export const describe = (count: number): string =>
  count === 0 ? "" : `${count} message${count === 1 ? "" : "s"} queued`
