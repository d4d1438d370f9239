/**
 * A `parley query` run as a host (docs/questions-and-approvals.md#runs-beyond-the-terminal): once its conversation is known
 * (a run nobody watches: once it calls a tool, asks, or has run 200 ms), the run is served on the conversation's socket (`HostPath`) for as long as
 * the run lives, so other terminals can follow it, answer its questions and
 * stop it. Stopping it from a client is what SIGTERM does. A host that
 * cannot listen (an odd file system, a full disk) only costs those clients:
 * the run goes on, and says why once.
 *
 * @example
 * ```ts
 * import * as Host from "./Host.ts"
 * yield* Effect.forkScoped(Host.serveWhenKnown(run))
 * ```
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as RunEvent from "../domain/run/RunEvent.ts"
import type { PendingAnswers } from "../services/PendingAnswers.ts"
import { RunEvents } from "../services/RunEvents.ts"
import * as Detach from "./Detach.ts"
import * as CtrlZ from "../layers/host/CtrlZ.ts"
import * as DetachedRun from "../layers/host/DetachedRun.ts"
import type { DetachedPolicy } from "../domain/tool/Config.ts"
import * as ErrorLine from "./ErrorLine.ts"
import * as Hint from "./Hint.ts"
import * as HostWhenKnown from "../layers/host/HostWhenKnown.ts"
import type * as Live from "./Live.ts"
import * as PersonTerminal from "../layers/prompt/PersonTerminal.ts"
import * as InterruptMenu from "../layers/prompt/InterruptMenu.ts"
import * as RunMain from "./RunMain.ts"
import { VERSION } from "./Version.ts"

/** Stops this process's run the way SIGTERM does (every finalizer runs; exit 143). */
const interrupt = Effect.sync(() => void process.kill(process.pid, "SIGTERM"))

/**
 * How long a run nobody watches goes before it is served anyway: its host
 * (effect/rpc's server and the socket) is a fifth of a scripted turn's
 * start-up, and a turn that ends sooner is never followed from elsewhere
 * (docs/startup.md#start-up-of-a-query).
 */
export const HOST_AFTER_MS = 200

/**
 * Whether the run is to be served now: at once when somebody watches it
 * (`--detach`, `serve`: they wait for its socket) or a person is at its
 * terminal (Ctrl-C's menu and Ctrl-Z come with the host); otherwise at its
 * first tool call or question, or once it has run {@link HOST_AFTER_MS} —
 * and never when it stops before.
 */
const due = (run: Live.Run["Service"], hub: RunEvents["Service"]): Effect.Effect<boolean> =>
  run.watched || PersonTerminal.isInteractive()
    ? Effect.succeed(true)
    : Effect.raceFirst(
        Effect.as(Effect.sleep(HOST_AFTER_MS), true),
        Effect.map(
          Stream.runHead(
            Stream.filter(
              hub.events,
              (e) => e._tag === "ToolCallsAnnounced" || e._tag === "QuestionOpened" || e._tag === "Stopped"
            )
          ),
          (e) => Option.isSome(e) && e.value._tag !== "Stopped"
        )
      )

/** Serves the run once its conversation is known (and {@link due}); lives in the caller's scope. */
export const serveWhenKnown = (
  run: Live.Run["Service"]
): Effect.Effect<void, never, Scope.Scope | RunEvents | PendingAnswers> =>
  Effect.gen(function* () {
    const hub = yield* RunEvents
    const known = yield* HostWhenKnown.serve({
      storage: run.settings.storage,
      due: due(run, hub),
      interrupt,
      script: run.hint.script,
      detachedPolicy: run.hint.detachedPolicy,
      parley: VERSION,
      unavailable: (e) =>
        hub.publish(RunEvent.make.Warning({ text: `${ErrorLine.line(e, {})} Other terminals cannot reach this run.` }))
    })
    if (Option.isNone(known)) return
    const id = known.value.conversation_id
    // The policy the run follows whatever happens to its terminal, as the run said; else the prompter's default.
    const policy = known.value.detached_policy
    // A `query --detach` (and `serve`) waits for this: the conversation exists, its host listens, and the run is
    // under way — its model chosen — or has done its work without one (a discard). A run that fails its model
    // check or has nothing to do ends without saying it started (docs/questions-and-approvals.md#runs-beyond-the-terminal: under load, a message with an unknown
    // model was announced, then failed).
    if (!(yield* HostWhenKnown.underway)) return
    yield* Effect.sync(() => DetachedRun.announce(id, policy ?? (run.watched ? "wait" : "assistant")))
    if (PersonTerminal.isInteractive()) {
      // Ctrl-C at the terminal asks what to do (RFD 027's interrupt menu); SIGINT from elsewhere still stops.
      const reply = { paused: run.status.paused, send: InterruptMenu.sendNow(id, run.hint) }
      yield* InterruptMenu.watch({
        say: (text) => void Effect.runFork(run.status.line(text)),
        aborted: run.aborted,
        reply
      })
      yield* detachOnCtrlZ(run, id, policy)
    }
  })

/**
 * Ctrl-Z (SIGTSTP) while the run is served: it leaves the terminal and goes
 * on in the background (`CtrlZ`), after saying how to follow it.
 */
const detachOnCtrlZ = (run: Live.Run["Service"], id: string, policy: DetachedPolicy | undefined) => {
  const ctx = { storage: run.hint.storage, config: run.hint.config }
  return CtrlZ.detachOnCtrlZ({
    storage: run.settings.storage,
    leave: run.status.leave,
    cannotLeave: (error) => `${ErrorLine.line(error, ctx)} The run stays in the foreground.`,
    banner: (log) =>
      [
        "",
        `parley: detached; the run of ${id} goes on in the background (pid ${process.pid}), its output in ${log}.`,
        `    ${Hint.command(["conversation", "attach", id], ctx)}    Follow it here again.`,
        // Left with Ctrl-Z, the run's questions wait for the person unless a policy was set (PromptBackend.detachedDefault).
        Detach.whoAnswers(id, policy ?? "wait", ctx),
        `    ${Hint.command(["conversation", "kill", id], ctx)}    Stop it (the turn stays resumable).`,
        ""
      ].join("\n"),
    forgetHangup: () => RunMain.forgetSignal("SIGHUP")
  })
}
