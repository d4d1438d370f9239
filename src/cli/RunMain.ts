/**
 * How a parley process runs its program and ends (docs/decisions.md#fast-start): user
 * errors printed as one line on stderr and mapped to exit codes (1 failure,
 * 2 usage; interrupted by SIGINT 130, SIGTERM 143, SIGHUP 129; a reader that
 * closed the output pipe ends the run cleanly with 0, unless the command
 * asked to finish instead: `persistOnBrokenStdout`). Shared by the full
 * command line (`Run.ts`, effect/cli) and the reading commands' fast path
 * (`ReadingRun.ts`), so this module imports no command code.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { main } from "./RunMain.ts"
 * main(Effect.log("hi"), () => false)
 * ```
 */
import * as Cause from "effect/Cause"
import type * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Predicate from "effect/Predicate"
import * as Runtime from "effect/Runtime"
import type { CliFailure } from "./CliFailure.ts"
import { printable } from "./Style.ts"

/**
 * Told by its tag: importing the class would load effect/Schema into every
 * command, `conversation ls` included, which needs it nowhere else (docs/decisions.md#fast-start).
 */
const isCliFailure = (error: unknown): error is CliFailure => Predicate.isTagged(error, "CliFailure")

/** What an error means for the person: its exit code and line (empty: already said, as effect/cli does for usage). */
const describe = (error: unknown, isUsage: (error: unknown) => boolean): { code: number; message: string } => {
  if (isCliFailure(error)) return { code: error.code, message: error.message }
  // effect/cli has already said what is wrong with the command line (src/cli/Usage.ts).
  if (isUsage(error)) return { code: 2, message: "" }
  if (typeof error === "object" && error !== null && "_tag" in error) {
    const tag = String((error as { _tag: unknown })._tag)
    const message = (error as { message?: unknown }).message
    return { code: 1, message: typeof message === "string" && message !== "" ? message : tag }
  }
  return { code: 1, message: String(error) }
}

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

/** Set once the run has started: ends it the way a signal does (every finalizer runs), exiting 0. */
let onBrokenPipe: (() => void) | undefined

/** The streams whose reader going away stops the run (RFD 027's pipeline semantics, the default). */
const stopsWhenClosed = new Set<NodeJS.WriteStream>([process.stdout, process.stderr])

/**
 * A reader that closes stdout no longer stops the run (`query
 * --persist-on-sigpipe`, RFD 027's background semantics): what is written
 * there afterwards goes nowhere, and the turn runs to its end.
 */
export const persistOnBrokenStdout = (): void => void stopsWhenClosed.delete(process.stdout)

// `parley … | head` closes the pipe early: that is not an error. Mid-run it
// is an interrupt, so the journal is still folded and the lock released.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error
    if (!stopsWhenClosed.has(stream)) return
    if (onBrokenPipe === undefined) process.exit(0)
    onBrokenPipe()
  })
}

/** Resolves once everything written to `stream` has reached the OS (a pipe may be full). */
const drained = (stream: NodeJS.WriteStream): Promise<void> =>
  new Promise((resolve) => (stream.writableLength === 0 ? resolve() : stream.write("", () => resolve())))

/**
 * Like `NodeRuntime.runMain`, but SIGHUP (a closed terminal, a dropped SSH
 * session) interrupts the run too, and each signal exits with its own code.
 * Interruption runs every finalizer: open questions are recorded
 * `Cancelled{user}`, tools are stopped, the journal is folded, the lock is
 * released. Output is flushed before the process exits, so `check --format
 * json | cat` gets the whole document even when it exits 1.
 */
const runMain = Runtime.makeRunMain(({ fiber, teardown }) => {
  let stop: keyof typeof STOPS | undefined
  const stopBy = (cause: keyof typeof STOPS) => () => {
    stop ??= cause
    fiber.interruptUnsafe(fiber.id)
  }
  onBrokenPipe = stopBy("EPIPE")
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
      void Promise.all([drained(process.stdout), drained(process.stderr)]).then(() => {
        if (stop !== undefined || final !== 0) process.exit(final)
        // The command is over and its output out: something left holding the event loop (a
        // connection a stalled client never closed) gets two seconds, not forever.
        else setTimeout(() => process.exit(final), 2000).unref()
      })
    })
  })
})

/** Runs `program` to this process's exit code; `isUsage` tells effect/cli's usage errors (already printed). */
export const main = <E>(program: Effect.Effect<unknown, E>, isUsage: (error: unknown) => boolean): void =>
  runMain(program, {
    disableErrorReporting: true,
    teardown: (exit, onExit) => {
      if (Exit.isSuccess(exit)) return onExit(0)
      if (Cause.hasInterruptsOnly(exit.cause)) return onExit(130)
      const failure = Cause.squash(exit.cause)
      const { code, message } = describe(failure, isUsage)
      // A provider's or a server's error text is quoted in the message: it must not drive the terminal.
      if (message !== "") process.stderr.write(`parley: ${printable(message, "\n\t")}\n`)
      if (code === 1 && !(typeof failure === "object" && failure !== null && "_tag" in failure)) {
        // A defect, not a user error: keep the detail for bug reports.
        process.stderr.write(`${Cause.pretty(exit.cause)}\n`)
      }
      onExit(code)
    }
  })
