/**
 * Writes a command's whole output to stdout with `fs.writeSync` on descriptor 1: the first use of
 * `process.stdout` builds a stream (Node's streams, net and their helpers, ~5 ms of a listing's
 * start-up: issue 50), and so does `node:tty`, so a terminal is told by its file's type. A pipe, a
 * file and a socket (what a Node parent's `spawn` gives) get the text as it is; a character device
 * (a terminal: anything else of that type, `/dev/null`, shows nothing) gets what a terminal is
 * shown. Whatever a direct write could not take (a non-blocking descriptor that is full, a closed
 * pipe) goes through `process.stdout` as before, so a reader that went away is met as it was.
 *
 * @example
 * ```ts
 * import * as Stdout from "./Stdout.ts"
 * Stdout.write("# A conversation\n", (text) => text)
 * ```
 */
import * as fs from "node:fs"

/** How descriptor 1 is written: `text` as it is, `terminal` for what a terminal is shown; `undefined`: through `process.stdout`. */
const kind = (): "text" | "terminal" | undefined => {
  try {
    const stat = fs.fstatSync(1)
    if (stat.isFIFO() || stat.isFile() || stat.isSocket()) return "text"
    return stat.isCharacterDevice() ? "terminal" : undefined
  } catch {
    return undefined
  }
}

/** Writes `text`; on a terminal `forTerminal(text)` instead (what a terminal is shown, never obeyed). */
export const write = (text: string, forTerminal: (text: string) => string): void => {
  const to = kind()
  if (to === undefined) {
    process.stdout.write(process.stdout.isTTY === true ? forTerminal(text) : text)
    return
  }
  const bytes = Buffer.from(to === "terminal" ? forTerminal(text) : text, "utf8")
  let at = 0
  try {
    while (at < bytes.length) at += fs.writeSync(1, bytes, at, bytes.length - at)
  } catch {
    // EAGAIN, EPIPE and the like: the stream handles them as it always did.
    process.stdout.write(bytes.subarray(at))
  }
}
