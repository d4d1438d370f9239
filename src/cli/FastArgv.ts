/**
 * The command-line reader the fast paths share (`AskArgv`, `AttachArgv`;
 * docs/decisions.md#fast-start): a command line read exactly, or `false`
 * for anything not fully understood, which then goes to effect/cli with its
 * own help and usage errors. The root's flags (`--storage`, `--config`) may
 * come before the command or after it, not both.
 *
 * @example
 * ```ts
 * import { command } from "./FastArgv.ts"
 * command(["--storage", "s", "ask", "Go?"], ["ask"], { valued: { storage: undefined, config: undefined } })
 * // { storage: "s", config: undefined, seen: { positional: ["Go?"], … } }
 * ```
 */

/** A command's flags. */
export interface Flags {
  /** The flags that take a value, each with the values it accepts (`undefined`: any). */
  readonly valued: Readonly<Record<string, ReadonlyArray<string> | undefined>>
  /** The boolean flags. */
  readonly booleans?: ReadonlyArray<string>
  /** The valued flags that may be given more than once (their values in `Seen.repeated`). */
  readonly repeated?: ReadonlyArray<string>
}

/** What a command line said. */
export interface Seen {
  readonly values: Map<string, string>
  readonly repeated: Array<string>
  readonly booleans: Set<string>
  readonly positional: Array<string>
}

/** Words a boolean flag may read as its value: effect/cli's to decide, not a fast path's. */
const BOOLEAN_WORDS = new Set(["true", "false", "yes", "no", "on", "off", "y", "n", "1", "0"])

const ROOT: Flags = { valued: { storage: undefined, config: undefined } }

/** `--name value` or `--name=value` split into its name, value and how many words it took; `undefined` for a non-flag. */
const flagAt = (
  argv: ReadonlyArray<string>,
  i: number,
  flags: Flags
): { readonly name: string; readonly value: string | undefined; readonly words: number } | undefined => {
  const word = argv[i]!
  if (!word.startsWith("--") || word === "--") return undefined
  const eq = word.indexOf("=")
  if (eq > 0) return { name: word.slice(2, eq), value: word.slice(eq + 1), words: 1 }
  const name = word.slice(2)
  return name in flags.valued ? { name, value: argv[i + 1], words: 2 } : { name, value: undefined, words: 1 }
}

/** Reads `argv` with `flags`; `false` for anything not understood. */
export const read = (argv: ReadonlyArray<string>, flags: Flags): Seen | false => {
  const seen: Seen = { values: new Map(), repeated: [], booleans: new Set(), positional: [] }
  for (let i = 0; i < argv.length; ) {
    const word = argv[i]!
    const flag = flagAt(argv, i, flags)
    if (flag === undefined) {
      // `-h`, `-v`, `--` and the like are effect/cli's.
      if (word.startsWith("-")) return false
      seen.positional.push(word)
      i += 1
      continue
    }
    if (flags.booleans?.includes(flag.name) && flag.words === 1 && !word.includes("=")) {
      if (seen.booleans.has(flag.name) || BOOLEAN_WORDS.has(argv[i + 1] ?? "")) return false
      seen.booleans.add(flag.name)
      i += 1
      continue
    }
    if (!(flag.name in flags.valued)) return false
    // A flag without its value, a value like a flag, a value the flag refuses: effect/cli explains them.
    if (flag.value === undefined || flag.value.startsWith("-")) return false
    const allowed = flags.valued[flag.name]
    if (allowed !== undefined && !allowed.includes(flag.value)) return false
    if (flags.repeated?.includes(flag.name)) seen.repeated.push(flag.value)
    else if (seen.values.has(flag.name)) return false
    else seen.values.set(flag.name, flag.value)
    i += flag.words
  }
  return seen
}

/**
 * `argv` as the command `words` (`["ask"]`, `["conversation", "attach"]`)
 * with `flags`, the root's flags before it or after it; `undefined` when
 * it is another command or not fully understood.
 */
export const command = (
  argv: ReadonlyArray<string>,
  words: ReadonlyArray<string>,
  flags: Flags
): { readonly storage: string | undefined; readonly config: string | undefined; readonly seen: Seen } | undefined => {
  const at = argv.indexOf(words[0]!)
  if (at < 0 || words.some((w, k) => argv[at + k] !== w)) return undefined
  // Before the command only the root's flags may come.
  const before = read(argv.slice(0, at), ROOT)
  if (before === false || before.positional.length > 0) return undefined
  const seen = read(argv.slice(at + words.length), flags)
  if (seen === false) return undefined
  for (const k of ["storage", "config"]) if (before.values.has(k) && seen.values.has(k)) return undefined
  return {
    storage: seen.values.get("storage") ?? before.values.get("storage"),
    config: seen.values.get("config") ?? before.values.get("config"),
    seen
  }
}
