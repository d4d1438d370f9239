/**
 * `parley conversation attach`'s fast path, its half that reads the command
 * line (docs/decisions.md#fast-start, start-up): a person who attaches wants
 * the run on screen at once, and loading effect/cli's whole command tree
 * (every command's flags and handlers) first made attach take about twice
 * what `conversation print` takes. So `bin.ts` asks {@link parse}: a command
 * line it fully understands runs `AttachFast.ts` without the command tree;
 * anything else — `--help`, a flag it does not know, a value it would refuse,
 * a flag given twice, a malformed id — is `undefined`, and the full command
 * line (`Run.ts`) handles it with effect/cli's own help and usage errors. The
 * flags are those of `Root.ts` and `Attach.ts`; a test keeps them the same.
 *
 * @example
 * ```ts
 * import { parse } from "./AttachArgv.ts"
 * parse(["--storage", "s", "conversation", "attach", "17738399468", "--tail=5"])
 * // { storage: "s", config: undefined, id: "17738399468", tail: 5 }
 * parse(["conversation", "attach", "--help"]) // undefined: effect/cli answers it
 * ```
 */
import type * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as ConversationIdText from "../../domain/storage/ConversationIdText.ts"

/** An attach command line, understood: the root's flags and the command's. */
export interface AttachLine {
  readonly storage: string | undefined
  readonly config: string | undefined
  readonly id: ConversationId.ConversationId | undefined
  readonly tail: number | undefined
}

/** The flags this path reads, all with a value: the root's two, then attach's own. */
export const VALUED: ReadonlyArray<string> = ["storage", "config", "tail"]

interface Seen {
  readonly values: Map<string, string>
  readonly positional: Array<string>
}

/** Reads `words`, allowing the flags in `names`; `false` for anything not understood. */
const read = (words: ReadonlyArray<string>, names: ReadonlyArray<string>): Seen | false => {
  const seen: Seen = { values: new Map(), positional: [] }
  for (let i = 0; i < words.length; ) {
    const word = words[i]!
    if (!word.startsWith("-")) {
      seen.positional.push(word)
      i += 1
      continue
    }
    // `-h`, `--`, a flag this path does not know: effect/cli's.
    if (!word.startsWith("--")) return false
    const eq = word.indexOf("=")
    const name = eq > 0 ? word.slice(2, eq) : word.slice(2)
    const value = eq > 0 ? word.slice(eq + 1) : words[i + 1]
    // A flag given twice, without its value, or with a value like a flag: effect/cli explains them.
    if (!names.includes(name) || seen.values.has(name) || value === undefined || value.startsWith("-")) return false
    seen.values.set(name, value)
    i += eq > 0 ? 1 : 2
  }
  return seen
}

/** The attach command line `argv` is, or `undefined` when the full command line must handle it. */
export const parse = (argv: ReadonlyArray<string>): AttachLine | undefined => {
  const at = argv.indexOf("conversation")
  if (at < 0 || argv[at + 1] !== "attach") return undefined
  // Before `conversation` only the root's flags may come.
  const before = read(argv.slice(0, at), ["storage", "config"])
  if (before === false || before.positional.length > 0) return undefined
  const seen = read(argv.slice(at + 2), VALUED)
  if (seen === false || seen.positional.length > 1) return undefined
  for (const k of ["storage", "config"]) if (before.values.has(k) && seen.values.has(k)) return undefined
  const text = seen.positional[0]
  const id = text === undefined ? undefined : ConversationIdText.parse(text)
  if (text !== undefined && id === undefined) return undefined
  const tail = seen.values.get("tail")
  // A whole number of events, as effect/cli's integer flag reads it; anything else is its to refuse.
  if (tail !== undefined && !/^\d{1,9}$/.test(tail)) return undefined
  return {
    storage: seen.values.get("storage") ?? before.values.get("storage"),
    config: seen.values.get("config") ?? before.values.get("config"),
    id,
    tail: tail === undefined ? undefined : Number(tail)
  }
}
