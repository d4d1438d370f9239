/**
 * The `parley` executable: parses argv, runs the command with Node services,
 * prints user errors as one line on stderr, and maps them to exit codes
 * (1 failure, 2 usage, 130 interrupted).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Command from "effect/cli/Command"
import { CliFailure } from "./programs/cli/CliFailure.ts"
import { cli } from "./programs/cli/Main.ts"
import { VERSION } from "./programs/cli/Version.ts"

const describe = (error: unknown): { code: number; message: string } => {
  if (error instanceof CliFailure) return { code: error.code, message: error.message }
  if (typeof error === "object" && error !== null && "_tag" in error) {
    const tag = String((error as { _tag: unknown })._tag)
    // effect/cli has already printed parse errors and help.
    if (/^(MissingOption|MissingArgument|InvalidValue|UnknownSubcommand|UnrecognizedOption|DuplicateOption|ShowHelp|UserError)$/.test(tag)) {
      return { code: 2, message: "" }
    }
    const message = (error as { message?: unknown }).message
    return { code: 1, message: typeof message === "string" && message !== "" ? message : tag }
  }
  return { code: 1, message: String(error) }
}

// `parley … | head` closes the pipe early: that is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0)
    throw error
  })
}

const main = Command.run(cli, { version: VERSION }).pipe(
  Effect.provide(NodeServices.layer)
)

NodeRuntime.runMain(main, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => {
    if (Exit.isSuccess(exit)) return onExit(0)
    if (Cause.hasInterruptsOnly(exit.cause)) return onExit(130)
    const failure = Cause.squash(exit.cause)
    const { code, message } = describe(failure)
    if (message !== "") process.stderr.write(`parley: ${message}\n`)
    if (code === 1 && !(typeof failure === "object" && failure !== null && "_tag" in failure)) {
      // A defect, not a user error: keep the detail for bug reports.
      process.stderr.write(`${Cause.pretty(exit.cause)}\n`)
    }
    onExit(code)
  }
})
