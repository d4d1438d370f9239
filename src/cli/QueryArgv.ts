/**
 * `parley query`'s fast path, its half that reads the command line
 * (docs/decisions.md#fast-start; docs/startup.md#start-up-of-a-query): a
 * plain query loaded effect/cli's whole command tree, every command's flags
 * and handlers, before its first request. So `bin.ts` asks {@link parse}: a
 * command line it fully understands runs `QueryFast.ts` without the command
 * tree; anything else — `--help`, a flag it does not know, a value it would
 * refuse, a flag given twice, flags that conflict, a malformed `--id`, and
 * `--detach` and `--compact`, which only the full command line runs — is
 * `undefined`, and `Run.ts` handles it with effect/cli's own help and usage
 * errors. Plain code: reading a command line loads no Effect. The flags are
 * those of `Root.ts` and `Query.ts`; a test keeps them the same.
 *
 * @example
 * ```ts
 * import { parse } from "./QueryArgv.ts"
 * parse(["query", "hi", "--new", "--model", "scripted"])
 * // { storage: undefined, …, message: "hi", target: { _tag: "New" }, model: "scripted", … }
 * parse(["query", "--help"]) // undefined: effect/cli answers it
 * ```
 */
import type * as ConversationId from "../domain/storage/ConversationId.ts"
import * as ConversationIdText from "../domain/storage/ConversationIdText.ts"
import type { DetachedPolicy } from "../domain/tool/Config.ts"
import * as FastArgv from "./FastArgv.ts"

/** Which conversation a query line names (`Query.Target`'s cases, as plain data). */
export type QueryTarget =
  | { readonly _tag: "New" }
  | { readonly _tag: "MostRecent" }
  | { readonly _tag: "Id"; readonly id: ConversationId.ConversationId }

/** A query command line, understood: the root's flags and the command's. */
export interface QueryLine {
  readonly storage: string | undefined
  readonly config: string | undefined
  /** The message as given; `undefined` when omitted (then read from stdin, as the command does). */
  readonly message: string | undefined
  readonly target: QueryTarget
  readonly model: string | undefined
  /** `--script` as given (else `$PARLEY_SCRIPT`, read where it runs). */
  readonly script: string | undefined
  readonly continueTurn: boolean
  readonly discardTurn: boolean
  readonly detachedPolicy: DetachedPolicy | undefined
  readonly format: "text" | "json" | "jsonl"
  readonly persistOnSigpipe: boolean
}

/** The flags that take a value, each with the values it accepts (`undefined`: any). */
export const VALUED: Readonly<Record<string, ReadonlyArray<string> | undefined>> = {
  storage: undefined,
  config: undefined,
  id: undefined,
  model: undefined,
  script: undefined,
  "detached-policy": ["assistant", "wait", "defer", "deny"],
  format: ["text", "json", "jsonl"]
}

/** The boolean flags. */
export const BOOLEAN: ReadonlyArray<string> = ["new", "continue-turn", "discard-turn", "persist-on-sigpipe"]

/** The command's flags this path leaves to the full command line (a test checks every flag is in one list). */
export const DECLINED: ReadonlyArray<string> = ["detach", "compact"]

/** The query command line `argv` is, or `undefined` when the full command line must handle it. */
export const parse = (argv: ReadonlyArray<string>): QueryLine | undefined => {
  const line = FastArgv.command(argv, ["query"], { valued: VALUED, booleans: BOOLEAN })
  if (line === undefined || line.seen.positional.length > 1) return undefined
  const { seen } = line
  const isNew = seen.booleans.has("new")
  const continueTurn = seen.booleans.has("continue-turn")
  const discardTurn = seen.booleans.has("discard-turn")
  const idText = seen.values.get("id")
  // Conflicting flags and a malformed id are usage errors: the command's to word.
  if (continueTurn && discardTurn) return undefined
  if (isNew && idText !== undefined) return undefined
  const id = idText === undefined ? undefined : ConversationIdText.parse(idText)
  if (idText !== undefined && id === undefined) return undefined
  return {
    storage: line.storage,
    config: line.config,
    message: seen.positional[0],
    target: isNew ? { _tag: "New" } : id === undefined ? { _tag: "MostRecent" } : { _tag: "Id", id },
    model: seen.values.get("model"),
    script: seen.values.get("script"),
    continueTurn,
    discardTurn,
    detachedPolicy: seen.values.get("detached-policy") as DetachedPolicy | undefined,
    format: (seen.values.get("format") ?? "text") as QueryLine["format"],
    persistOnSigpipe: seen.booleans.has("persist-on-sigpipe")
  }
}
