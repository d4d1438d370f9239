/**
 * The `parley` command line, run: argv parsed by the command tree, the
 * command run with Node services, user errors printed as one line on stderr
 * and mapped to exit codes (1 failure, 2 usage; interrupted by SIGINT 130,
 * SIGTERM 143, SIGHUP 129; a reader that closed the output pipe ends the
 * run cleanly with 0). `bin.ts` imports this lazily, so `parley
 * --version` never loads it (docs/decisions.md#fast-start: cold start).
 *
 * @example
 * ```ts
 * const { main } = await import("./Run.ts")
 * main()
 * ```
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Effect from "effect/Effect"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Urandom from "../layers/file/Urandom.ts"
import { cli } from "./Main.ts"
import * as RunMain from "./RunMain.ts"
import * as Usage from "./Usage.ts"
import { VERSION } from "./Version.ts"

const program = Command.run(cli, { version: VERSION }).pipe(Effect.provide([NodeServices.layer, Usage.layerOf(cli)]))

/** Runs the command line of this process to its exit code (`RunMain`). */
export const main = (): void => {
  // Event ids from /dev/urandom: Web Crypto's first use loads Node's whole crypto stack (EventId.useRandomSource).
  Urandom.useForEventIds()
  RunMain.main(program, CliError.isCliError)
}
