/**
 * Ctrl-Z (SIGTSTP) while a foreground `query` is served
 * (docs/decisions.md#ctrl-z-detaches): the run leaves the terminal and goes
 * on in the background (`layers/prompt/Background.ts`), its output in a log
 * (`DetachedRun.openLog`), after saying how to follow it. While a prompt
 * has the terminal the run stays. With no private place for its output, the
 * run stays in the foreground and says why (a run event).
 *
 * @internal
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as CtrlZ from "parley/layers/host/CtrlZ"
 * const waiting = CtrlZ.detachOnCtrlZ({
 *   storage: "/home/me/.parley",
 *   leave: Effect.void,
 *   banner: (log) => `parley: detached; its output goes to ${log}.\n`,
 *   cannotLeave: (error) => `${String(error)} The run stays in the foreground.`,
 *   forgetHangup: () => {}
 * })
 * ```
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import * as RunEvent from "../../domain/run/RunEvent.ts"
import { RunEvents } from "../../services/RunEvents.ts"
import * as Background from "../prompt/Background.ts"
import * as DetachedRun from "./DetachedRun.ts"

/** What leaving the terminal needs from the edge: its words, its status lines, its signal handlers. */
export interface Options {
  /** The run's storage: the log is kept under it. */
  readonly storage: string
  /** Takes the status lines down for good. */
  readonly leave: Effect.Effect<void>
  /** What stderr says as the run leaves, given its log file. */
  readonly banner: (logFile: string) => string
  /** The warning when no log could be opened (the run stays in the foreground). */
  readonly cannotLeave: (error: unknown) => string
  /** Stops SIGHUP from ending the run (the terminal it left may close). */
  readonly forgetHangup: () => void
}

/**
 * Waits for Ctrl-Z and leaves the terminal, for the caller's scope. Before
 * this runs (the run is not under way yet), Ctrl-Z stops the process as it
 * stops any program.
 */
export const detachOnCtrlZ = (options: Options): Effect.Effect<void, never, Scope.Scope | RunEvents> =>
  Effect.gen(function* () {
    let pressed = yield* Deferred.make<void>()
    const onStop = () => Deferred.doneUnsafe(pressed, Exit.void)
    const stopListening = () => void process.removeListener("SIGTSTP", onStop)
    yield* Effect.acquireRelease(
      Effect.sync(() => void process.on("SIGTSTP", onStop)),
      () => Effect.sync(stopListening)
    )
    // While a prompt is handed to the terminal (only a SIGTSTP sent by hand arrives then: the prompt's raw mode
    // makes Ctrl-Z a key), the run stays: a prompt left reading a terminal the process no longer owns would stop it.
    for (;;) {
      yield* Deferred.await(pressed)
      if (Background.markDetached()) break
      pressed = yield* Deferred.make<void>()
    }
    const opened = yield* Effect.result(
      Effect.try({ try: () => DetachedRun.openLog(options.storage), catch: (e) => e })
    )
    if (opened._tag === "Failure") {
      // No private place for its output: the run stays on this terminal.
      const hub = yield* RunEvents
      return yield* hub.publish(RunEvent.make.Warning({ text: options.cannotLeave(opened.failure) }))
    }
    const log = opened.success
    yield* options.leave
    yield* Effect.sync(() => {
      process.stderr.write(options.banner(log.file))
      // From here Ctrl-Z is job control's again: after `fg` (the view stays in the log) it stops the
      // process as it stops any program, and `bg` carries it on.
      stopListening()
      DetachedRun.leaveTerminal(log, options.forgetHangup)
    })
  })
