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

/** Words a boolean flag may read as its value: effect/cli's to decide, not this path's. */
const BOOLEAN_WORDS = new Set(["true", "false", "yes", "no", "on", "off", "y", "n", "1", "0"])

/** `--name value` or `--name=value` split into its name, value and how many words it took; `undefined` for a non-flag. */
const flagAt = (
  argv: ReadonlyArray<string>,
  i: number
): { readonly name: string; readonly value: string | undefined; readonly words: number } | undefined => {
  const word = argv[i]!
  if (!word.startsWith("--") || word === "--") return undefined
  const eq = word.indexOf("=")
  if (eq > 0) return { name: word.slice(2, eq), value: word.slice(eq + 1), words: 1 }
  const name = word.slice(2)
  return name in VALUED ? { name, value: argv[i + 1], words: 2 } : { name, value: undefined, words: 1 }
}

interface Seen {
  readonly values: Map<string, string>
  readonly options: Array<string>
  readonly booleans: Set<string>
  readonly positional: Array<string>
}

/** Reads every word but `ask`; `false` for anything not understood. */
const read = (argv: ReadonlyArray<string>): Seen | false => {
  const seen: Seen = { values: new Map(), options: [], booleans: new Set(), positional: [] }
  for (let i = 0; i < argv.length; ) {
    const word = argv[i]!
    const flag = flagAt(argv, i)
    if (flag === undefined) {
      // `-h`, `-v`, `--` and the like are effect/cli's.
      if (word.startsWith("-")) return false
      seen.positional.push(word)
      i += 1
      continue
    }
    if (BOOLEAN.includes(flag.name) && flag.words === 1 && !word.includes("=")) {
      if (seen.booleans.has(flag.name) || BOOLEAN_WORDS.has(argv[i + 1] ?? "")) return false
      seen.booleans.add(flag.name)
      i += 1
      continue
    }
    if (!(flag.name in VALUED)) return false
    // A flag without its value, a value like a flag, a value the flag refuses: effect/cli explains them.
    if (flag.value === undefined || flag.value.startsWith("-")) return false
    const allowed = VALUED[flag.name]
    if (allowed !== undefined && !allowed.includes(flag.value)) return false
    if (flag.name === "option") seen.options.push(flag.value)
    else if (seen.values.has(flag.name)) return false
    else seen.values.set(flag.name, flag.value)
    i += flag.words
  }
  return seen
}

/** The ask command line `argv` is, or `undefined` when the full command line must handle it. */
export const parse = (argv: ReadonlyArray<string>): AskLine | undefined => {
  const at = argv.indexOf("ask")
  if (at < 0) return undefined
  // Before `ask` only the root's flags may come.
  const before = read(argv.slice(0, at))
  if (before === false || before.positional.length > 0 || before.options.length > 0 || before.booleans.size > 0)
    return undefined
  if ([...before.values.keys()].some((k) => k !== "storage" && k !== "config")) return undefined
  const seen = read(argv.slice(at + 1))
  if (seen === false || seen.positional.length > 1) return undefined
  for (const k of ["storage", "config"]) if (before.values.has(k) && seen.values.has(k)) return undefined
  const value = (name: string) => Option.fromUndefinedOr(seen.values.get(name))
  return {
    storage: seen.values.get("storage") ?? before.values.get("storage"),
    config: seen.values.get("config") ?? before.values.get("config"),
    flags: {
      text: Option.fromUndefinedOr(seen.positional[0]),
      type: (seen.values.get("type") ?? "boolean") as AskFlags["type"],
      option: seen.options,
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
