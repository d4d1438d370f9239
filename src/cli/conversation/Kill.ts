/**
 * `parley conversation kill ID [--force]`
 * (docs/questions-and-approvals.md#runs-beyond-the-terminal): stops a running turn
 * the way SIGTERM does — open questions `Cancelled{user}`, tools stopped with
 * their process groups, the journal folded, the lock released — and returns
 * once the run has stopped (its host no longer answers). `--force` kills the
 * host process when it has not stopped within 5 s (its tools die with it, as
 * after any kill -9 of parley; the turn stays resumable).
 *
 * @example
 * ```sh
 * parley conversation kill 17738399468
 * ```
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as HostClient from "../../layers/host/HostClient.ts"
import { CliFailure } from "../CliFailure.ts"
import * as Hint from "../Hint.ts"
import * as HostPath from "../../layers/host/HostPath.ts"
import * as ErrorLine from "../ErrorLine.ts"
import { storage } from "../Root.ts"
import { ConversationStore } from "../../services/ConversationStore.ts"
import { parseIdArgument } from "./Shared.ts"
import { withStoreAt } from "./Store.ts"

/** How long a run may take to stop before `--force` kills it. */
const GRACE_MS = 5000

export const kill = Command.make(
  "kill",
  {
    id: Argument.String("id").pipe(Argument.withDescription("The conversation whose running turn to stop")),
    force: Flag.Boolean("force").pipe(
      Flag.withDescription("Kill the run's process if it has not stopped within 5 s"),
      Flag.withDefault(false)
    )
  },
  ({ id: text, force }) =>
    Effect.gen(function* () {
      const { dir, given, configGiven } = yield* storage
      const id = yield* parseIdArgument(text, "kill")
      const socket = HostPath.of(dir, id)
      const notRunning = new CliFailure({ code: 1, message: `${ConversationId.display(id)} has no running turn.` })
      const live = yield* HostClient.reachable(socket).pipe(
        Effect.mapError((e) => ErrorLine.failure(e, { storage: given, config: configGiven }))
      )
      // Nothing runs: say whether there is such a conversation at all (a typo is not "not running").
      if (!live)
        return yield* withStoreAt(
          { dir, given },
          ConversationStore.use((s) => s.load(id))
        ).pipe(Effect.andThen(notRunning))
      const { info, stopped: done } = yield* HostClient.stop(socket, { graceMs: GRACE_MS, force }).pipe(
        Effect.mapError((e) =>
          e._tag === "NotPrivate" || e._tag === "HostProtocolMismatch"
            ? ErrorLine.failure(e, { storage: given, config: configGiven })
            : notRunning
        )
      )
      if (!done) {
        return yield* new CliFailure({
          code: 1,
          message: `The run of ${ConversationId.display(id)} (pid ${info.pid}) did not stop within ${GRACE_MS / 1000} s; ${Hint.command(["conversation", "kill", id, "--force"], { storage: given, config: configGiven })} kills it.`
        })
      }
      yield* Console.error(
        `Stopped the run of ${ConversationId.display(id)} (pid ${info.pid}). What finished is saved; resume with: ${Hint.resume(id, { storage: given, config: configGiven, script: info.script, detachedPolicy: info.detached_policy })}`
      )
    })
).pipe(Command.withDescription("Stop a conversation's running turn (like SIGTERM; --force kills it after 5 s)"))
