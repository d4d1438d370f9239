/**
 * Whether a process runs (docs/questions-and-approvals.md#runs-beyond-the-terminal: `conversation kill` waits for a host to
 * be gone; `conversation attach` tells a dead host from a stalled one).
 *
 * @internal
 * @example
 * ```ts
 * import * as Pid from "parley/layers/host/Pid"
 * Pid.alive(process.pid) // true
 * ```
 */
import * as fs from "node:fs"

/** Whether `pid` runs (a zombie — exited, not yet reaped by its parent — does not). */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z"
  } catch {
    // No /proc (macOS): the signal said enough.
    return true
  }
}
