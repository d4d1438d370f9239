/**
 * How a command ends with a non-zero exit code and one clear line on stderr
 * (no stack traces for user errors).
 *
 * @example
 * ```ts
 * import { CliFailure } from "./CliFailure.ts"
 * return yield* new CliFailure({ code: 1, message: "2 conversations failed the check" })
 * ```
 */
import * as Schema from "effect/Schema"

export class CliFailure extends Schema.TaggedError<CliFailure>()("CliFailure", {
  code: Schema.Number,
  /** Printed to stderr; empty when the command already said everything. */
  message: Schema.String
}) {}
