/**
 * The `code` of something thrown, read without a cast: a Node system
 * error's (`ENOENT`, `EEXIST`, …), a JSON-RPC error's number, a driver's
 * SQLSTATE. Whatever was thrown is `unknown`; these look before they read.
 *
 * @example
 * ```ts
 * import * as fs from "node:fs"
 * import * as ErrorCode from "parley/layers/ErrorCode"
 * try {
 *   fs.readFileSync("/nowhere")
 * } catch (error) {
 *   ErrorCode.of(error) // "ENOENT"
 * }
 * ErrorCode.codeOf({ code: -32042 }) // -32042
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Predicate from "effect/Predicate"

/** The `code` property of `error`, whatever its type; undefined when it has none. */
export const codeOf = (error: unknown): unknown => (Predicate.hasProperty(error, "code") ? error.code : undefined)

/** The `code` of `error` when it is text (a system error's, such as `ENOENT`); undefined otherwise. */
export const of = (error: unknown): string | undefined => {
  const code = codeOf(error)
  return typeof code === "string" ? code : undefined
}

/** The `message` of `error` when it has one as text; undefined otherwise. */
export const messageOf = (error: unknown): string | undefined =>
  Predicate.hasProperty(error, "message") && typeof error.message === "string" ? error.message : undefined
