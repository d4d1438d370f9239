/**
 * How a parley process runs its program (docs/decisions.md#fast-start): SIGINT, SIGTERM
 * and SIGHUP interrupt it (every finalizer runs) and each exits with its
 * own code (130, 143, 129); a reader that closed the output pipe ends it
 * cleanly with 0, unless the command asked to finish instead
 * ({@link persistOnBrokenStdout}); output is flushed before the process
 * exits. What the exit code and the error line of a failure are is the
 * edge's (`cli/RunMain.ts`), told through `teardown`.
 *
 * @internal
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as ProcessMain from "parley/layers/ProcessMain"
 * ProcessMain.runMain(Effect.log("hi"), { teardown: (_exit, onExit) => onExit(0) })
 * ```
 */
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Runtime from "effect/Runtime"
import { exitOnceFlushed, stopOnBrokenPipe } from "./ProcessOutput.ts"

export { persistOnBrokenStdout } from "./ProcessOutput.ts"

/** Exit codes of the signals that interrupt a run (128 + the signal number). */
const SIGNALS = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const

/** What stopped a run from outside, and the exit code it gets. */
const STOPS = { ...SIGNALS, EPIPE: 0 } as const

/** The signal handlers of the running program, by signal. */
const installed = new Map<string, () => void>()

/** Stops `signal` from ending the program (a run detached from its terminal ignores SIGHUP). */
export const forgetSignal = (signal: keyof typeof SIGNALS): void => {
  const handler = installed.get(signal)
  if (handler !== undefined) process.removeListener(signal, handler)
  installed.delete(signal)
}

/**
 * Like `NodeRuntime.runMain`, but SIGHUP (a closed terminal, a dropped SSH
 * session) interrupts the run too, and each signal exits with its own code.
 * Interruption runs every finalizer: open questions are recorded
 * `Cancelled{user}`, tools are stopped, the journal is folded, the lock is
 * released. Output is flushed before the process exits, so `check --format
 * json | cat` gets the whole document even when it exits 1.
 */
export const runMain = Runtime.makeRunMain(({ fiber, teardown }) => {
  let stop: keyof typeof STOPS | undefined
  const stopBy = (cause: keyof typeof STOPS) => () => {
    stop ??= cause
    fiber.interruptUnsafe(fiber.id)
  }
  stopOnBrokenPipe(stopBy("EPIPE"))
  const handlers = Object.keys(SIGNALS).map((name) => {
    const handler = stopBy(name as keyof typeof SIGNALS)
    process.on(name, handler)
    installed.set(name, handler)
    return [name, handler] as const
  })
  fiber.addObserver((exit) => {
    for (const [name, handler] of handlers) process.removeListener(name, handler)
    teardown(exit, (code) => {
      const final =
        stop !== undefined && Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? STOPS[stop] : code
      // A stop or a failure exits at once; a success once nothing is left holding the loop.
      exitOnceFlushed(final, stop !== undefined || final !== 0)
    })
  })
})
