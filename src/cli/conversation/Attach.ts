/**
 * `parley conversation attach [ID]`
 * (docs/questions-and-approvals.md#runs-beyond-the-terminal): follow a running turn from
 * this terminal — its events so far, then live, with the same status lines
 * and prompts as `query`; Ctrl-Z detaches, Ctrl-C stops the run. Without an
 * id: the run started last in this storage. The work is in `AttachRun`.
 *
 * @example
 * ```sh
 * parley conversation attach 17738399468
 * ```
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import { storage } from "../Root.ts"
import * as AttachRun from "./AttachRun.ts"
import { parseIdArgument } from "./Shared.ts"

export const attach = Command.make(
  "attach",
  {
    id: Argument.String("id").pipe(
      Argument.withDescription("The conversation whose running turn to follow (default: the run started last)"),
      Argument.optional
    )
  },
  ({ id: text }) =>
    Effect.gen(function* () {
      const { dir, given, configGiven } = yield* storage
      const id = Option.isSome(text) ? yield* parseIdArgument(text.value, "attach") : undefined
      yield* AttachRun.attach({ id, storage: dir, storageGiven: given, configGiven })
    })
).pipe(Command.withDescription("Follow a running turn from this terminal and answer its questions (Ctrl-Z detaches)"))
