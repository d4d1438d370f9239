/**
 * A parley process's two outputs (docs/decisions.md#fast-start): a reader that closed a pipe
 * ends the process cleanly with 0 (the run's way, `ProcessMain.ts`, once one has started),
 * unless the command asked to finish instead ({@link persistOnBrokenStdout}); and the exit,
 * once what was written has reached the OS. Plain code: the listing's fast path
 * (`cli/conversation/LsFast.ts`) ends through it without loading Effect.
 *
 * @internal
 * @example
 * ```ts
 * import * as ProcessOutput from "parley/layers/ProcessOutput"
 * process.stdout.write("done\n")
 * ProcessOutput.exitOnceFlushed(0, false)
 * ```
 */

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

/** Ends a reader's closing of a pipe the way `stop` does (a run's interrupt), from now on. */
export const stopOnBrokenPipe = (stop: () => void): void => {
  onBrokenPipe = stop
}

/**
 * Exits with `code` once everything written has reached the OS: at once when `now` (a stop, a
 * failure), else once nothing is left holding the event loop, or after two seconds.
 */
export const exitOnceFlushed = (code: number, now: boolean): void =>
  void Promise.all([drained("stdout"), drained("stderr")]).then(() => {
    if (now) return process.exit(code)
    // The command is over and its output out: something left holding the event loop (a
    // connection a stalled client never closed) gets two seconds, not forever.
    setTimeout(() => process.exit(code), 2000).unref()
    // Once nothing is left, exit at once: left to itself, Node frees the heap page by page
    // before it exits, which the OS does anyway (a scripted turn: ~3 ms of its start-up).
    process.once("beforeExit", () => process.exit(code))
  })
