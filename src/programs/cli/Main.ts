/**
 * The `parley` command tree.
 *
 * @example
 * ```ts
 * import { cli } from "./Main.ts"
 * Command.runWith(cli, { version: VERSION })(["conversation", "check"])
 * ```
 */
import * as Command from "effect/cli/Command"
import { check } from "./conversation/Check.ts"
import { root } from "./Root.ts"

export const conversation = Command.make("conversation").pipe(
  Command.withSubcommands([check]),
  Command.withDescription("List, print, check and fork stored conversations")
)

export const cli = root.pipe(Command.withSubcommands([conversation]))
