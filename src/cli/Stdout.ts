/**
 * Writes a command's whole output to stdout without making `process.stdout` (Node's streams, net
 * and their helpers, ~5 ms of a listing's start-up: issue 50): `ProcessOutput.write`, which hands
 * over to the stream whatever a direct write could not take, so a reader that went away is met as
 * it was. A terminal gets what a terminal is shown.
 *
 * @example
 * ```ts
 * import * as Stdout from "./Stdout.ts"
 * Stdout.write("# A conversation\n", (text) => text)
 * ```
 */
import * as ProcessOutput from "../layers/ProcessOutput.ts"

/** Writes `text`; on a terminal `forTerminal(text)` instead (what a terminal is shown, never obeyed). */
export const write = (text: string, forTerminal: (text: string) => string): void =>
  ProcessOutput.write("stdout", ProcessOutput.isTerminal("stdout") ? forTerminal(text) : text, true)
