/**
 * Whether a descriptor is a terminal (`tty.isatty`), asked without loading `node:tty` where the
 * answer is plain: loading it loads `net` and Node's streams (~3 ms of a scripted turn, issue 50),
 * and a run fed a pipe, a file or `/dev/null` is asked this at every start. Only a character
 * device can be a terminal, and on Linux the memory devices (`/dev/null`, `/dev/zero`,
 * `/dev/urandom`: major 1) never are; any other character device is asked of `node:tty`, loaded
 * then.
 *
 * @internal
 * @example
 * ```ts
 * import { isTerminal } from "parley/layers/file/IsTerminal"
 * isTerminal(0) // false under `parley query … < /dev/null`, without node:tty
 * ```
 */
import * as fs from "node:fs"

const MEMORY_DEVICES = 1

/** A device number's major (glibc's `major()`: bits 8–19 and 32–43). */
const majorOf = (rdev: number): number => ((rdev >>> 8) & 0xfff) | (Math.floor(rdev / 2 ** 32) & ~0xfff)

/** Whether `fd` is a terminal; false for a descriptor that is not open. */
export const isTerminal = (fd: number): boolean => {
  let stat: fs.Stats
  try {
    stat = fs.fstatSync(fd)
  } catch {
    return false
  }
  if (!stat.isCharacterDevice()) return false
  if (process.platform === "linux" && majorOf(stat.rdev) === MEMORY_DEVICES) return false
  return process.getBuiltinModule("node:tty").isatty(fd)
}
