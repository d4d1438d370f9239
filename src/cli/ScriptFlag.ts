/**
 * The `--script FILE` flag of the commands that may call the scripted model
 * (`query`, `conversation compact`): steps for the scripted model, default
 * `$PARLEY_SCRIPT`. One definition, so both read it alike.
 *
 * @example
 * ```ts
 * import { scriptFlag, scriptPath } from "./ScriptFlag.ts"
 * Command.make("query", { script: scriptFlag }, (f) => Effect.log(scriptPath(f.script)))
 * ```
 */
import * as path from "node:path"
import * as Config from "effect/Config"
import * as Option from "effect/Option"
import * as Flag from "effect/cli/Flag"

export const scriptFlag = Flag.String("script").pipe(
  Flag.withDescription("Steps for the scripted model (JSON file; default $PARLEY_SCRIPT)"),
  Flag.withFallbackConfig(Config.String("PARLEY_SCRIPT")),
  Flag.optional
)

/** The flag's file, absolute (so a printed command works from anywhere); none when unset or empty. */
export const scriptPath = (script: Option.Option<string>): string | undefined =>
  Option.match(script, {
    onNone: () => undefined,
    onSome: (file) => (file === "" ? undefined : path.resolve(file))
  })
