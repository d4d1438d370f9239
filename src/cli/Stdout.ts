/**
 * Writes a command's whole output to stdout. When stdout is a pipe or a file it is written with
 * `fs.writeSync` on descriptor 1: the first use of `process.stdout` builds a stream (Node's
 * streams, net and their helpers: ~20 M instructions, about a tenth of `conversation print`'s
 * start-up beyond `node -e 0`, issue 50). A terminal, anything else, and whatever a direct write
 * could not take (a non-blocking pipe that is full, a closed pipe) go through `process.stdout` as
 * before, so a reader that went away is met as it was.
 *
 * @example
 * ```ts
 * import * as Stdout from "./Stdout.ts"
 * Stdout.write("# A conversation\n", (text) => text)
 * ```
 */
import * as fs from "node:fs"

/** Whether descriptor 1 is a pipe or a regular file (never a terminal). */
const plain = (): boolean => {
  try {
    const stat = fs.fstatSync(1)
    return stat.isFIFO() || stat.isFile()
  } catch {
    return false
  }
}

/** Writes `text`; on a terminal `forTerminal(text)` instead (what a terminal is shown, never obeyed). */
export const write = (text: string, forTerminal: (text: string) => string): void => {
  if (!plain()) {
    process.stdout.write(process.stdout.isTTY === true ? forTerminal(text) : text)
    return
  }
  const bytes = Buffer.from(text, "utf8")
  let at = 0
  try {
    while (at < bytes.length) at += fs.writeSync(1, bytes, at, bytes.length - at)
  } catch {
    // EAGAIN, EPIPE and the like: the stream handles them as it always did.
    process.stdout.write(bytes.subarray(at))
  }
}
