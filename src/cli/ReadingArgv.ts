/**
 * The reading commands' fast path, its half that reads the command line
 * (docs/decisions.md#fast-start, start-up): `parley conversation ls` and `parley conversation
 * print` are what people run most and want at once, and effect/cli alone
 * costs more than the 2× `node -e 0` they may take. So `bin.ts` asks
 * {@link parse} first: a command line it fully understands runs
 * `ReadingRun.ts` without effect/cli; anything else — `--help`, a flag it
 * does not know, a malformed id, a missing value — is `undefined`, and the
 * full command line (`Run.ts`) handles it, with effect/cli's own help,
 * suggestions and usage errors. The flags are those of `Root.ts`, `Ls.ts`
 * and `Print.ts`; a test keeps them the same.
 *
 * @example
 * ```ts
 * import { parse } from "./ReadingArgv.ts"
 * parse(["--storage", "x", "conversation", "ls", "--format", "json"])
 * // { _tag: "Ls", storage: "x", archived: false, format: "json" }
 * parse(["conversation", "ls", "--help"]) // undefined: effect/cli answers it
 * ```
 */
import type * as ConversationId from "../domain/storage/ConversationId.ts"
import * as ConversationIdText from "../domain/storage/ConversationIdText.ts"

/** A reading command line, understood. */
export type Reading =
  | {
      readonly _tag: "Ls"
      readonly storage: string | undefined
      readonly archived: boolean
      readonly format: "text" | "json"
    }
  | {
      readonly _tag: "Print"
      readonly storage: string | undefined
      readonly id: ConversationId.ConversationId
      readonly format: "markdown" | "json" | "html"
      readonly output: string | undefined
    }

/** `--name value` or `--name=value`: the value and how many words it took, or `undefined` when it is not this flag. */
const valued = (
  argv: ReadonlyArray<string>,
  i: number,
  name: string
): { readonly value: string | undefined; readonly words: number } | undefined => {
  const word = argv[i]!
  if (word === `--${name}`) return { value: argv[i + 1], words: 2 }
  if (word.startsWith(`--${name}=`)) return { value: word.slice(name.length + 3), words: 1 }
  return undefined
}

interface Seen {
  storage?: string
  archived?: boolean
  format?: string
  output?: string
  positional: Array<string>
}

/** Reads the words after `conversation <sub>` (and `--storage` anywhere); `false` for anything not understood. */
const words = (argv: ReadonlyArray<string>, flags: ReadonlyArray<"archived" | "format" | "output">): Seen | false => {
  const seen: Seen = { positional: [] }
  for (let i = 0; i < argv.length; ) {
    const word = argv[i]!
    if (word === "--archived" && flags.includes("archived") && seen.archived === undefined) {
      seen.archived = true
      i += 1
      continue
    }
    let matched = false
    for (const name of ["storage", ...flags.filter((f) => f !== "archived")] as const) {
      const v = valued(argv, i, name)
      if (v === undefined) continue
      // A flag given twice, or without its value, is effect/cli's to explain.
      if (v.value === undefined || v.value.startsWith("-") || seen[name] !== undefined) return false
      seen[name] = v.value
      i += v.words
      matched = true
      break
    }
    if (matched) continue
    if (word.startsWith("-")) return false
    seen.positional.push(word)
    i += 1
  }
  return seen
}

/** The reading command `argv` asks for, or `undefined` when the full command line must handle it. */
export const parse = (argv: ReadonlyArray<string>): Reading | undefined => {
  const at = argv.indexOf("conversation")
  if (at < 0) return undefined
  // Before `conversation` only the root's `--storage` may come.
  const before = words(argv.slice(0, at), [])
  if (before === false || before.positional.length > 0) return undefined
  const sub = argv[at + 1]
  const rest = argv.slice(at + 2)
  if (sub === "ls") {
    const seen = words(rest, ["archived", "format"])
    if (seen === false || seen.positional.length > 0) return undefined
    if (seen.storage !== undefined && before.storage !== undefined) return undefined
    if (seen.format !== undefined && seen.format !== "text" && seen.format !== "json") return undefined
    return {
      _tag: "Ls",
      storage: seen.storage ?? before.storage,
      archived: seen.archived ?? false,
      format: (seen.format ?? "text") as "text" | "json"
    }
  }
  if (sub === "print") {
    const seen = words(rest, ["format", "output"])
    if (seen === false || seen.positional.length !== 1) return undefined
    if (seen.storage !== undefined && before.storage !== undefined) return undefined
    if (seen.format !== undefined && seen.format !== "markdown" && seen.format !== "json" && seen.format !== "html")
      return undefined
    const id = ConversationIdText.parse(seen.positional[0]!)
    if (id === undefined) return undefined
    return {
      _tag: "Print",
      storage: seen.storage ?? before.storage,
      id,
      format: (seen.format ?? "markdown") as "markdown" | "json" | "html",
      output: seen.output
    }
  }
  return undefined
}
