/**
 * `--compact[=SPEC]` (`-k`), JP's flag on `query` and `conversation compact`
 * (RFD 064): a bare `--compact` applies the configured rules; each
 * `--compact=SPEC` adds an inline rule (`Compact.parseSpec`). Repeatable. As
 * with every optional value here, the spec is attached with `=`
 * (`-k=s:..-3`): a separate word stays the message.
 *
 * @example
 * ```ts
 * import { compactFlag, parseCompact } from "./CompactFlag.ts"
 * Command.make("query", { compact: compactFlag }, (f) => parseCompact(["parley", "query"], f.compact))
 * ```
 */
import * as Effect from "effect/Effect"
import * as Flag from "effect/cli/Flag"
import * as Compact from "../domain/stream/Compact.ts"
import type { CliFailure } from "./CliFailure.ts"
import * as Usage from "./Usage.ts"

export const compactFlag = Flag.String("compact").pipe(
  Flag.withAlias("k"),
  Flag.withDescription(
    "Compact first: bare, with the configured rules; --compact=POLICIES[:RANGE] adds a rule (r, t[=MODE], s joined by +; FROM..TO, N or -N). Repeatable"
  ),
  Flag.withOptionalValue(""),
  Flag.atLeast(0)
)

/** The flag's values as a `Compact.CompactFlag` (`undefined` when not given); a bad spec is a usage error. */
export const parseCompact = (
  command: ReadonlyArray<string>,
  values: ReadonlyArray<string>
): Effect.Effect<Compact.CompactFlag | undefined, CliFailure> => {
  if (values.length === 0) return Effect.succeed(undefined)
  const flag = Compact.parseCompactFlag(values)
  return typeof flag === "string" ? Effect.fail(Usage.failure(command, `--compact: ${flag}.`)) : Effect.succeed(flag)
}
