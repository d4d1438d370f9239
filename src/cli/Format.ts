/**
 * The `--format text|json` flag of data-producing commands.
 *
 * @example
 * ```ts
 * import { formatFlag } from "./Format.ts"
 * Command.make("ls", { format: formatFlag }, …)
 * ```
 */
import * as Flag from "effect/cli/Flag"

export const formatFlag = Flag.Literals("format", ["text", "json"]).pipe(
  Flag.withDescription("Output format"),
  Flag.withDefault("text" as const)
)
