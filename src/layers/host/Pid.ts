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
import * as Effect from "effect/Effect"

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

/**
 * Whether `pid` still runs a second after its host's connection dropped: a
 * process killed with -9 closes its sockets before the kernel marks it gone.
 */
export const stillAlive = (pid: number): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    for (let i = 0; i < 20; i++) {
      if (!alive(pid)) return false
      yield* Effect.sleep("50 millis")
    }
    return alive(pid)
  })
