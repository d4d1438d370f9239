/**
 * A conversation's last run error (`LastError.ts`) as a listing reads and
 * says it, without Schema: `conversation ls` reads it from every row and
 * loads no codec (docs/startup.md#start-up-of-the-reading-commands).
 *
 * @example
 * ```ts
 * import { read, text } from "parley/domain/run/LastErrorText"
 * read({ message: "the model is down", at: "2026-11-29T04:00:00Z" }) // the same, as a LastError
 * read("nope") // null
 * text({ message: "the model is down" }) // "failed: the model is down"
 * ```
 *
 * @since 0.1.0
 * @internal
 */

/** The error a run ended in (`LastError.LastError`'s type): its one-line message, and when it ended. */
export interface LastErrorShape {
  readonly message: string
  readonly at: string
}

/** How `ls` and the page say it: `failed: …`. */
export const text = (e: { readonly message: string }): string => `failed: ${e.message}`

/** `v` read as a last error, or `null` (absent, or of another shape). */
export const read = (v: unknown): LastErrorShape | null => {
  if (typeof v !== "object" || v === null) return null
  const { message, at } = v as Record<string, unknown> // An object's fields, checked just below.
  return typeof message === "string" && typeof at === "string" ? { message, at } : null
}
