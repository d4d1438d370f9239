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

type Output = "stdout" | "stderr"

/** The outputs whose reader going away stops the run (RFD 027's pipeline semantics, the default). */
const stopsWhenClosed = new Set<Output>(["stdout", "stderr"])

/**
 * A reader that closes stdout no longer stops the run (`query
 * --persist-on-sigpipe`, RFD 027's background semantics): what is written
 * there afterwards goes nowhere, and the turn runs to its end.
 */
export const persistOnBrokenStdout = (): void => void stopsWhenClosed.delete("stdout")

// `parley … | head` closes the pipe early: that is not an error. Mid-run it
// is an interrupt, so the journal is still folded and the lock released.
const onError = (name: Output) => (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error
  if (!stopsWhenClosed.has(name)) return
  if (onBrokenPipe === undefined) process.exit(0)
  onBrokenPipe()
}

/** The outputs a stream was made for (the rest were never written through one: nothing to flush). */
const made = new Set<Output>()

/**
 * Watches `name` for a closed reader once Node makes its stream: `process.stdout` builds it on
 * first use, and building one loads Node's streams and `net` (for a pipe), about a tenth of
 * `conversation print`'s start-up beyond `node -e 0` (issue 50), which a command writing with
 * `fs.writeSync` (`cli/Stdout.ts`) or nothing at all never needs.
 */
const watch = (name: Output): void => {
  const own = Object.getOwnPropertyDescriptor(process, name)
  const make = (stream: NodeJS.WriteStream): NodeJS.WriteStream => {
    if (!made.has(name)) stream.on("error", onError(name))
    made.add(name)
    return stream
  }
  if (own?.get === undefined || own.configurable !== true) return void make(process[name])
  const get = own.get
  Object.defineProperty(process, name, {
    configurable: true,
    enumerable: own.enumerable === true,
    get: () => make(get.call(process))
  })
}
watch("stdout")
watch("stderr")

/** Resolves once everything written to `name` has reached the OS (a pipe may be full). */
const drained = (name: Output): Promise<void> => {
  if (!made.has(name)) return Promise.resolve()
  const stream = process[name]
  return new Promise((resolve) => (stream.writableLength === 0 ? resolve() : stream.write("", () => resolve())))
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
      void Promise.all([drained("stdout"), drained("stderr")]).then(() => {
        if (stop !== undefined || final !== 0) return process.exit(final)
        // The command is over and its output out: something left holding the event loop (a
        // connection a stalled client never closed) gets two seconds, not forever.
        setTimeout(() => process.exit(final), 2000).unref()
        // Once nothing is left, exit at once: left to itself, Node frees the heap page by page
        // before it exits, which the OS does anyway (a scripted turn: ~3 ms of its start-up).
        process.once("beforeExit", () => process.exit(final))
      })
    })
  })
})
