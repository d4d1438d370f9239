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
import { answer } from "./conversation/Answer.ts"
import { attach } from "./conversation/Attach.ts"
import { check } from "./conversation/Check.ts"
import { compact } from "./conversation/Compact.ts"
import { fork } from "./conversation/Fork.ts"
import { kill } from "./conversation/Kill.ts"
import { ls } from "./conversation/Ls.ts"
import { print } from "./conversation/Print.ts"
import { send } from "./conversation/Send.ts"
import { exportCommand, importCommand } from "./conversation/Transfer.ts"
import { ask } from "./Ask.ts"
import { demo } from "./Demo.ts"
import { inbox } from "./Inbox.ts"
import { query } from "./Query.ts"
import { root } from "./Root.ts"
import { serve } from "./Serve.ts"

export const conversation = Command.make("conversation").pipe(
  Command.withSubcommands([ls, print, check, fork, answer, attach, send, kill, compact, exportCommand, importCommand]),
  Command.withDescription(
    "List, print, check, fork, answer, attach to, send to, compact, stop, export and import conversations"
  )
)

export const cli = root.pipe(Command.withSubcommands([query, conversation, inbox, ask, serve, demo]))
