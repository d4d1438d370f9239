/**
 * Writes a command's output to stdout, and its lines for the person to stderr. When the
 * descriptor is a pipe or a file it is written with `fs.writeSync`: the first use of
 * `process.stdout` or `process.stderr` builds a stream (for a pipe a socket: Node's streams,
 * net and their helpers, ~20 M instructions, about a tenth of `conversation print`'s start-up
 * beyond `node -e 0`, issue 50). A terminal, anything else, and whatever a direct write could
 * not take (a non-blocking pipe that is full, a closed pipe) go through the stream as before,
 * so a reader that went away is met as it was; from then on everything does, so the parts of
 * an output stay in order.
 *
 * @example
 * ```ts
 * import * as Stdout from "./Stdout.ts"
 * Stdout.write("# A conversation\n", (text) => text)
 * Stdout.writeStderr("conversation 17738399468 (new)\n")
 * ```
 */
import * as fs from "node:fs"

/** Whether descriptor `fd` is a pipe or a regular file (never a terminal). */
const probe = (fd: number): boolean => {
  try {
    const stat = fs.fstatSync(fd)
    return stat.isFIFO() || stat.isFile()
  } catch {
    return false
  }
}

/** One of the two outputs: written directly while it is a pipe or a file, else through Node's stream. */
const output = (fd: 1 | 2, name: "stdout" | "stderr") => {
  let plainOnce: boolean | undefined
  // Asked once: a run writes its reply in many parts.
  const plain = (): boolean => (plainOnce ??= probe(fd))
  // Set once anything went through the stream: all that follows goes that way too.
  let streamed = false
  return {
    isTerminal: (): boolean => !plain() && process[name].isTTY === true,
    write: (text: string, forTerminal: (text: string) => string): void => {
      if (streamed || !plain()) {
        const stream = process[name]
        stream.write(stream.isTTY === true ? forTerminal(text) : text)
        return
      }
      const bytes = Buffer.from(text, "utf8")
      let at = 0
      try {
        while (at < bytes.length) at += fs.writeSync(fd, bytes, at, bytes.length - at)
      } catch {
        // EAGAIN, EPIPE and the like: the stream handles them as it always did, from here on.
        streamed = true
        process[name].write(bytes.subarray(at))
      }
    }
  }
}

const stdout = output(1, "stdout")
const stderr = output(2, "stderr")

/** Whether stdout is a terminal (a pipe or a file is answered without making `process.stdout`). */
export const isTerminal = stdout.isTerminal

/**
 * Writes `text`, or a part of a command's output (a reply as it streams): parts are written in
 * order. On a terminal `forTerminal(text)` instead (what a terminal is shown, never obeyed).
 */
export const write = stdout.write

/** Whether stderr is a terminal (a pipe or a file is answered without making `process.stderr`). */
export const isStderrTerminal = stderr.isTerminal

/** Writes `line` on stderr as it is (the caller has made it printable where it must be). */
export const writeStderr = (line: string): void => stderr.write(line, (text) => text)
