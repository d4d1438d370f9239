/**
 * The `parley` command line, run: argv parsed by the command tree, the
 * command run with Node services, user errors printed as one line on stderr
 * and mapped to exit codes (1 failure, 2 usage; interrupted by SIGINT 130,
 * SIGTERM 143, SIGHUP 129; a reader that closed the output pipe ends the
 * run cleanly with 0). `bin.ts` imports this lazily, so `parley
 * --version` never loads it (issue 16: cold start).
 *
 * @example
 * ```ts
 * const { main } = await import("./Run.ts")
 * main()
 * ```
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Runtime from "effect/Runtime"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import { CliFailure } from "./CliFailure.ts"
import { printable } from "./Style.ts"
import { cli } from "./Main.ts"
import * as Usage from "./Usage.ts"
import { VERSION } from "./Version.ts"

const describe = (error: unknown): { code: number; message: string } => {
  if (error instanceof CliFailure) return { code: error.code, message: error.message }
  // effect/cli has already said what is wrong with the command line (src/cli/Usage.ts).
  if (CliError.isCliError(error)) return { code: 2, message: "" }
  if (typeof error === "object" && error !== null && "_tag" in error) {
    const tag = String((error as { _tag: unknown })._tag)
    const message = (error as { message?: unknown }).message
    return { code: 1, message: typeof message === "string" && message !== "" ? message : tag }
  }
  return { code: 1, message: String(error) }
}

const program = Command.run(cli, { version: VERSION }).pipe(
  Effect.provide([NodeServices.layer, Usage.layer])
)

/** Exit codes of the signals that interrupt a run (128 + the signal number). */
const SIGNALS = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const

/** What stopped a run from outside, and the exit code it gets. */
const STOPS = { ...SIGNALS, EPIPE: 0 } as const

/** Set once the run has started: ends it the way a signal does (every finalizer runs), exiting 0. */
let onBrokenPipe: (() => void) | undefined

// `parley … | head` closes the pipe early: that is not an error. Mid-run it
// is an interrupt, so the journal is still folded and the lock released.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error
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
    return [name, handler] as const
  })
  fiber.addObserver((exit) => {
    for (const [name, handler] of handlers) process.removeListener(name, handler)
    teardown(exit, (code) => {
      const final = stop !== undefined && Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? STOPS[stop] : code
      void Promise.all([drained(process.stdout), drained(process.stderr)]).then(() => {
        if (stop !== undefined || final !== 0) process.exit(final)
      })
    })
  })
})

/** Runs the command line of this process to its exit code. */
export const main = (): void => runMain(program, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => {
    if (Exit.isSuccess(exit)) return onExit(0)
    if (Cause.hasInterruptsOnly(exit.cause)) return onExit(130)
    const failure = Cause.squash(exit.cause)
    const { code, message } = describe(failure)
    // A provider's or a server's error text is quoted in the message: it must not drive the terminal.
    if (message !== "") process.stderr.write(`parley: ${printable(message, "\n\t")}\n`)
    if (code === 1 && !(typeof failure === "object" && failure !== null && "_tag" in failure)) {
      // A defect, not a user error: keep the detail for bug reports.
      process.stderr.write(`${Cause.pretty(exit.cause)}\n`)
    }
    onExit(code)
  }
})
