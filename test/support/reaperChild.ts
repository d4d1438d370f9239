/**
 * Child process for the reaper test (docs/tools.md#tool-processes-are-bounded): its reaper dies just
 * before a tool starts, before this process has heard of it (no event loop
 * turn in between), as a reaper that failed to start or was killed would.
 * The tool then runs; the test kills this process with SIGKILL and looks for
 * the tool's group.
 */
import * as fs from "node:fs"
import * as Effect from "effect/Effect"
import * as Reaper from "../../src/layers/executor/Reaper.ts"
import * as ToolProcess from "../../src/layers/executor/ToolProcess.ts"

const dir = process.argv[2]!
const state = (pid: number): string => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
  } catch {
    return "X"
  }
}
Reaper.ready()
const reaper = Reaper.pid()!
process.kill(reaper, "SIGKILL")
while (state(reaper) !== "Z" && state(reaper) !== "X") {
  // Spin without yielding: the reaper's exit event must not be handled yet.
}
Effect.runFork(
  ToolProcess.run(
    `echo $$ > "${dir}/pgid.tmp" && mv "${dir}/pgid.tmp" "${dir}/pgid"; exec sleep 30`,
    dir,
    "{}",
    1_000_000,
    { PATH: process.env["PATH"] ?? "/usr/bin:/bin" }
  )
)
