/**
 * A model's tool call whose arguments nest too deeply (docs/decisions.md#deep-tool-arguments).
 * `JSON.parse` reads any depth, but what comes after does not: the call is
 * recorded, shown, validated and sent back to the model in the next
 * request, and the SDKs' `JSON.stringify` overflows the stack at a few
 * thousand levels. So arguments deeper than {@link MAX_DEPTH} are replaced,
 * where the reply is folded into events, by a one-key marker object that
 * says how deep they were; the executor answers such a call with a tool
 * error for the model, and the turn goes on.
 *
 * @example
 * ```ts
 * import * as DeepArguments from "parley/domain/tool/DeepArguments"
 * const deep = JSON.parse(`{"x":${"[".repeat(10_000)}${"]".repeat(10_000)}}`)
 * const args = DeepArguments.bounded(deep) // { parley_arguments_replaced: "nested 10001 levels deep; the limit is 100" }
 * DeepArguments.replaced(args) // "nested 10001 levels deep; the limit is 100"
 * DeepArguments.bounded({ path: "a.txt" }) // the same object
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import type { JsonObject } from "effect/Schema"
import * as JsonText from "../storage/JsonText.ts"

/** The deepest arguments kept (the arguments object itself is level 1). */
export const MAX_DEPTH = 100

/** The one key of the marker that stands for arguments too deep to keep. */
export const MARKER_KEY = "parley_arguments_replaced"

/** `args`, or the marker when they nest deeper than {@link MAX_DEPTH}. */
export const bounded = (args: JsonObject): JsonObject => {
  const depth = JsonText.depth(args)
  return depth <= MAX_DEPTH ? args : { [MARKER_KEY]: `nested ${depth} levels deep; the limit is ${MAX_DEPTH}` }
}

/** Why the arguments were replaced, when `args` is the marker. */
export const replaced = (args: JsonObject): string | undefined => {
  const reason = args[MARKER_KEY]
  return typeof reason === "string" && Object.keys(args).length === 1 ? reason : undefined
}

/** The tool error the model gets for such a call. */
export const toolError = (name: string, reason: string): string =>
  `The call to tool \`${name}\` was not run: its arguments were ${reason}. Call it again with flatter arguments.`
