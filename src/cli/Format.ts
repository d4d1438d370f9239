/**
 * The `--format text|json` flag of data-producing commands, and `query`'s,
 * which also streams (`jsonl`: docs/cli.md#machine-output).
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

/** `query`'s `--format`: `jsonl` streams the run's events, one JSON object a line, then the report. */
export const queryFormatFlag = Flag.Literals("format", ["text", "json", "jsonl"]).pipe(
  Flag.withDescription(
    "Output format: text (the reply), json (one document at the end), jsonl (events as they happen)"
  ),
  Flag.withDefault("text" as const)
)
