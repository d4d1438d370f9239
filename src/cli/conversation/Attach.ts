/**
 * `parley conversation attach [ID]`
 * (docs/questions-and-approvals.md#runs-beyond-the-terminal): follow a running turn from
 * this terminal — its events so far (`--tail=N`: only the last N), then live, with the same status lines
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
import * as Flag from "effect/cli/Flag"
import { storage } from "../Root.ts"
import * as AttachRun from "./AttachRun.ts"
import { parseIdArgument } from "./Shared.ts"
import * as Usage from "../Usage.ts"

export const attach = Command.make(
  "attach",
  {
    id: Argument.String("id").pipe(
      Argument.withDescription("The conversation whose running turn to follow (default: the run started last)"),
      Argument.optional
    ),
    tail: Flag.Int("tail").pipe(
      Flag.withDescription("Show only the last N events the run kept before following it live (0: live only)"),
      Flag.optional
    )
  },
  ({ id: text, tail }) =>
    Effect.gen(function* () {
      const { dir, given, configGiven } = yield* storage
      const id = Option.isSome(text) ? yield* parseIdArgument(text.value, "attach") : undefined
      if (Option.isSome(tail) && tail.value < 0)
        return yield* Usage.failure(["parley", "conversation", "attach"], "--tail takes a number of events, 0 or more.")
      yield* AttachRun.attach({
        id,
        storage: dir,
        storageGiven: given,
        configGiven,
        ...(Option.isSome(tail) ? { tail: tail.value } : {})
      })
    })
).pipe(Command.withDescription("Follow a running turn from this terminal and answer its questions (Ctrl-Z detaches)"))
