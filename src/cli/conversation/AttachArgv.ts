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
import * as FastArgv from "../FastArgv.ts"

/** An attach command line, understood: the root's flags and the command's. */
export interface AttachLine {
  readonly storage: string | undefined
  readonly config: string | undefined
  readonly id: ConversationId.ConversationId | undefined
  readonly tail: number | undefined
}

/** The flags this path reads, all with a value: the root's two, then attach's own. */
export const VALUED: ReadonlyArray<string> = ["storage", "config", "tail"]

/** The attach command line `argv` is, or `undefined` when the full command line must handle it. */
export const parse = (argv: ReadonlyArray<string>): AttachLine | undefined => {
  const line = FastArgv.command(argv, ["conversation", "attach"], {
    valued: Object.fromEntries(VALUED.map((name) => [name, undefined]))
  })
  if (line === undefined || line.seen.positional.length > 1) return undefined
  const { seen } = line
  const text = seen.positional[0]
  const id = text === undefined ? undefined : ConversationIdText.parse(text)
  if (text !== undefined && id === undefined) return undefined
  const tail = seen.values.get("tail")
  // A whole number of events, as effect/cli's integer flag reads it; anything else is its to refuse.
  if (tail !== undefined && !/^\d{1,9}$/.test(tail)) return undefined
  return {
    storage: line.storage,
    config: line.config,
    id,
    tail: tail === undefined ? undefined : Number(tail)
  }
}
