/**
 * `parley ask`'s fast path, its half that reads the command line
 * (docs/decisions.md#fast-start, start-up): a script that asks waits for the
 * question to be listed, and loading effect/cli's whole command tree first
 * doubled that wait. So `bin.ts` asks {@link parse} (after `ReadingArgv`):
 * a command line it fully understands runs `AskFast.ts` without the command
 * tree; anything else — `--help`, a flag it does not know, a value it would
 * refuse, a flag given twice — is `undefined`, and the full command line
 * (`Run.ts`) handles it with effect/cli's own help and usage errors. The
 * flags are those of `Root.ts` and `Ask.ts`; a test keeps them the same.
 *
 * @example
 * ```ts
 * import { parse } from "./AskArgv.ts"
 * parse(["ask", "Deploy?", "--timeout", "10m"])
 * // { storage: undefined, config: undefined, flags: { text: Option.some("Deploy?"), timeout: Option.some("10m"), … } }
 * parse(["ask", "--help"]) // undefined: effect/cli answers it
 * ```
 */
import * as Option from "effect/Option"
import type { AskFlags } from "./AskFlags.ts"
import * as FastArgv from "./FastArgv.ts"

/** An ask command line, understood: the root's flags and the command's. */
export interface AskLine {
  readonly storage: string | undefined
  readonly config: string | undefined
  readonly flags: AskFlags
}

/** The flags that take a value, each with the values it accepts (`undefined`: any). */
export const VALUED: Readonly<Record<string, ReadonlyArray<string> | undefined>> = {
  storage: undefined,
  config: undefined,
  type: ["boolean", "text", "select", "secret"],
  option: undefined,
  default: undefined,
  context: undefined,
  key: undefined,
  conversation: undefined,
  source: undefined,
  timeout: undefined,
  "on-timeout": ["default", "fail"],
  format: ["text", "json"]
}

/** The boolean flags. */
export const BOOLEAN: ReadonlyArray<string> = ["new", "claude-code-hook"]

/** The ask command line `argv` is, or `undefined` when the full command line must handle it. */
export const parse = (argv: ReadonlyArray<string>): AskLine | undefined => {
  const line = FastArgv.command(argv, ["ask"], { valued: VALUED, booleans: BOOLEAN, repeated: ["option"] })
  if (line === undefined || line.seen.positional.length > 1) return undefined
  const { seen } = line
  const value = (name: string) => Option.fromUndefinedOr(seen.values.get(name))
  return {
    storage: line.storage,
    config: line.config,
    flags: {
      text: Option.fromUndefinedOr(seen.positional[0]),
      type: (seen.values.get("type") ?? "boolean") as AskFlags["type"],
      option: seen.repeated,
      default: value("default"),
      context: value("context"),
      key: value("key"),
      conversation: value("conversation"),
      new: seen.booleans.has("new"),
      source: value("source"),
      timeout: value("timeout"),
      onTimeout: (seen.values.get("on-timeout") ?? "fail") as AskFlags["onTimeout"],
      format: (seen.values.get("format") ?? "text") as AskFlags["format"],
      claudeCodeHook: seen.booleans.has("claude-code-hook")
    }
  }
}
