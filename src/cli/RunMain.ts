/**
 * How a parley process ends (docs/decisions.md#fast-start): user errors
 * printed as one line on stderr and mapped to exit codes (1 failure, 2
 * usage; interrupted 130). The signals' exit codes and the closed pipe are
 * `layers/ProcessMain.ts`'s, which runs the program. Shared by the full
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
import { runMain } from "../layers/ProcessMain.ts"
import type { CliFailure } from "./CliFailure.ts"
import { printable } from "./Style.ts"

export { forgetSignal, persistOnBrokenStdout } from "../layers/ProcessMain.ts"

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
