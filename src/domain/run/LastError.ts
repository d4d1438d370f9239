/**
 * The error a conversation's last run ended in, kept with the conversation
 * until its next run (docs/cli.md#a-run-that-failed): a run nobody watches (a
 * cluster runner's, a `parley serve` child's, a detached one) that fails
 * must say so where a person looks: `ls`, `GET /api/conversations`, the page.
 * Stored in `metadata.json` under parley's own key (`ConversationMetadata.lastError`),
 * which both storages keep and their listings read.
 *
 * @example
 * ```ts
 * import * as Cause from "effect/Cause"
 * import * as LastError from "parley/domain/run/LastError"
 * const e = LastError.fromCause(Cause.fail(new Error("the model is down")), "2026-11-29T04:00:00Z")
 * e.message // "the model is down"
 * LastError.text(e) // "failed: the model is down"
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

/** The error a run ended in: its one-line message, and when it ended (RFC 3339). */
export const LastError = Schema.Struct({ message: Schema.String, at: Schema.String })
export type LastError = typeof LastError.Type

/** The longest message kept: a row is listed on every `ls`, so a provider's whole reply body is cut. */
export const MAX_MESSAGE = 500

/** The one-line message of `error` (its `message`, else its text), newlines folded, at most {@link MAX_MESSAGE} characters. */
export const messageOf = (error: unknown): string => {
  const message =
    error instanceof Error
      ? error.message
      : Predicate.hasProperty(error, "message")
        ? String(error.message)
        : Predicate.hasProperty(error, "_tag")
          ? String(error._tag)
          : String(error)
  const line = message.replaceAll(/\s*\n\s*/g, " ").trim()
  const said = line === "" && Predicate.hasProperty(error, "_tag") ? String(error._tag) : line
  return said.length > MAX_MESSAGE ? `${said.slice(0, MAX_MESSAGE - 1)}…` : said
}

/** The {@link LastError} of a run that ended in `cause` at `at`. */
export const fromCause = (cause: Cause.Cause<unknown>, at: string): LastError => ({
  message: messageOf(Cause.squash(cause)),
  at
})

/** Whether a run that ended in `cause` failed (an interruption alone, a stop or a hand-off, is not a failure). */
export const isFailure = (cause: Cause.Cause<unknown>): boolean => !Cause.hasInterruptsOnly(cause)

/** How `ls` and the page say it: `failed: …` (LastErrorText.ts: `ls` says it without loading Schema). */
export { text } from "./LastErrorText.ts"

/** `v` read as a {@link LastError}, or `null` (absent, or of another shape); LastErrorText.ts: listings read it without Schema. */
export { read } from "./LastErrorText.ts"
