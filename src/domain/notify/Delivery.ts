/**
 * The rules of delivering a notification (docs/questions-and-approvals.md#delivery),
 * apart from the I/O: the spool entry a notification is kept as until it is
 * delivered, the order entries go out in, what an HTTP status means
 * (delivered, try again, give up), and how long to wait before the next try.
 *
 * @example
 * ```ts
 * import * as Delivery from "parley/domain/notify/Delivery"
 * Delivery.outcomeOf(503) // "retry"
 * Delivery.outcomeOf(204) // "delivered"
 * Delivery.outcomeOf(404) // "failed"
 * Delivery.backoffMs(0) // 250
 * Delivery.afterFailure(undefined, 1_000) // { failures: 1, until: 1_250 }
 * Delivery.entryName({ created: 1764387000000, n: 3, target: "webhook", delivery_id: "ab12" }) // "1764387000000-000003-webhook-ab12.json"
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Schema from "effect/Schema"

/** Where an entry goes: the `[notify]` command, or its webhook. */
export const Target = Schema.Literals(["command", "webhook"])
export type Target = typeof Target.Type

/**
 * One notification waiting in the spool for one target: the exact bytes
 * sent (`body`: every retry signs and sends the same bytes), when it was
 * made (the retry bound counts from then, across processes), and its
 * position among the entries made by its process (`n`).
 */
export const Entry = Schema.Struct({
  target: Target,
  event: Schema.String,
  delivery_id: Schema.String,
  conversation_id: Schema.String,
  created: Schema.Number,
  n: Schema.Number,
  body: Schema.String
})
export type Entry = typeof Entry.Type

/** The suffix of an entry a process has claimed (`<entry>.claimed-<pid>`). */
export const CLAIMED = ".claimed-"

/** The file name of an entry: sorted by name is sorted by creation (the order events happened). */
export const entryName = (e: Pick<Entry, "created" | "n" | "target" | "delivery_id">): string =>
  `${String(e.created).padStart(13, "0")}-${String(e.n).padStart(6, "0")}-${e.target}-${e.delivery_id}.json`

/** Whether `name` is an unclaimed entry's file. */
export const isEntry = (name: string): boolean => /^\d{13}-\d{6}-(command|webhook)-[0-9a-f]+\.json$/.test(name)

/** The pid that claimed `name`, when it is a claimed entry's file. */
export const claimant = (name: string): { readonly entry: string; readonly pid: number } | undefined => {
  const at = name.indexOf(CLAIMED)
  if (at < 0 || !isEntry(name.slice(0, at))) return undefined
  const pid = Number(name.slice(at + CLAIMED.length))
  return Number.isInteger(pid) && pid > 0 ? { entry: name.slice(0, at), pid } : undefined
}

/** What one try's answer means. */
export type Outcome = "delivered" | "retry" | "failed"

/**
 * An HTTP status's meaning: 2xx delivered; 5xx, 408 and 429 the receiver
 * may take it later; any other status will not change by trying again.
 */
export const outcomeOf = (status: number): Outcome =>
  status >= 200 && status < 300 ? "delivered" : status >= 500 || status === 408 || status === 429 ? "retry" : "failed"

/** The longest wait between two tries. */
const MAX_BACKOFF_MS = 30_000

/** The wait before try `attempt + 1` (0-based): 250 ms doubling, at most 30 s. */
export const backoffMs = (attempt: number): number => Math.min(MAX_BACKOFF_MS, 250 * 2 ** Math.min(attempt, 10))

/**
 * A target's backoff, kept across processes: how many tries in a row the
 * receiver did not take (refused, timed out, a 5xx, no answer before its
 * process ended), and when the next try may start. Every process of the
 * storage keeps to it, so a receiver that is down or hangs is not tried
 * again by each short run, and none of them waits for it as it ends.
 */
export interface Backoff {
  readonly failures: number
  readonly until: number
}

/**
 * The backoff after one more try the receiver did not take, at `now`. A count
 * goes on only while the failures follow each other (this one within the next
 * step's length of the last backoff's end): an outage long over starts again
 * at the first step.
 */
export const afterFailure = (previous: Backoff | undefined, now: number): Backoff => {
  const goesOn = previous !== undefined && now - previous.until <= backoffMs(previous.failures)
  const failures = goesOn ? previous.failures + 1 : 1
  return { failures, until: now + backoffMs(failures - 1) }
}

/**
 * How long, from `now`, until a try may start: 0 when it may start now. A
 * backoff that ends further ahead than its own step (a clock set back, or
 * machines with different clocks sharing a storage, or a file edited by hand)
 * is not kept to: it could hold every try off for as long as it says, as
 * only a try rewrites it.
 */
export const waitMs = (backoff: Backoff | undefined, now: number): number => {
  if (backoff === undefined) return 0
  const wait = backoff.until - now
  return wait > 0 && wait <= backoffMs(backoff.failures - 1) ? wait : 0
}

/** A backoff read back (a file of the spool): undefined unless well formed. */
export const backoffOf = (value: unknown): Backoff | undefined => {
  if (typeof value !== "object" || value === null || !("failures" in value) || !("until" in value)) return undefined
  const { failures, until } = value
  const valid =
    typeof failures === "number" && Number.isSafeInteger(failures) && failures > 0 && typeof until === "number"
  return valid && Number.isFinite(until) ? { failures, until } : undefined
}

/** Default bound of retries, from an entry's creation (`retry_for`). */
export const DEFAULT_RETRY_FOR_MS = 10 * 60_000

/** Default bound of one try (`timeout`). */
export const DEFAULT_TIMEOUT_MS = 10_000

/** Whether an entry made at `created` may still be tried at `now`. */
export const withinBound = (created: number, now: number, retryForMs: number): boolean => now - created <= retryForMs
