// The reaper script on its own (docs/tools.md#tool-processes-are-bounded): groups it was told about
// die when its stdin closes, groups it was told to forget do not, and the
// signals that end parley do not end it first. And the gate that keeps a
// tool from starting before its group is listed. The end-to-end proof (parley
// killed with -9 / SIGHUP) is test/programs/cli/ToolProcesses.test.ts.
import { afterEach, describe, expect, it } from "@effect/vitest"
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Reaper from "../../../src/layers/executor/Reaper.ts"
import * as ToolProcess from "../../../src/layers/executor/ToolProcess.ts"
import { repoRoot } from "../../support/Fixtures.ts"
import { isRunning } from "./helpers.ts"

const started: Array<ChildProcess> = []
afterEach(() => {
  for (const c of started.splice(0)) {
    try {
      process.kill(-c.pid!, "SIGKILL")
    } catch {
      // gone
    }
  }
})

/** A detached `sleep` leading its own process group. */
const group = (): number => {
  const child = spawn("sleep", ["1000"], { detached: true, stdio: "ignore" })
  started.push(child)
  return child.pid!
}

const reaper = () => {
  const child = spawn("sh", ["-c", Reaper.SCRIPT, "parley-reaper"], {
    detached: true,
    stdio: ["pipe", "ignore", "ignore"]
  })
  started.push(child)
  return child
}

const exited = (child: ChildProcess) => new Promise<void>((resolve) => child.once("exit", () => resolve()))

/** Polls until `check` holds (true) or 5 s pass (false). */
const until = async (check: () => boolean): Promise<boolean> => {
  const deadline = Date.now() + 15_000 // a tsx child on a loaded 2-core machine can take seconds to start
  while (!check()) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return true
}

// SigIgn in /proc/PID/status: a hex mask with bit n-1 for signal n.
const IGNORED = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 14) // HUP INT QUIT TERM
const hasTraps = (pid: number) => {
  const line = fs
    .readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("SigIgn:"))
  return line !== undefined && (Number.parseInt(line.slice(7).trim(), 16) & IGNORED) === IGNORED
}

describe("the reaper script", () => {
  it("on end of input kills every group still listed, and only those", async () => {
    const [a, b, c] = [group(), group(), group()]
    const r = reaper()
    r.stdin!.write(`+${a}\n+${b}\n+${c}\n-${b}\n-999999\n`)
    r.stdin!.end()
    await exited(r)
    expect(await until(() => !isRunning(a) && !isRunning(c))).toBe(true)
    expect(isRunning(b)).toBe(true)
  })

  it("ignores SIGHUP, SIGINT and SIGTERM: only losing parley ends it", async () => {
    const a = group()
    const r = reaper()
    r.stdin!.write(`+${a}\n`)
    expect(await until(() => hasTraps(r.pid!))).toBe(true)
    for (const signal of ["SIGHUP", "SIGINT", "SIGTERM"] as const) r.kill(signal)
    r.stdin!.end()
    await exited(r)
    // Ended by the end of its input, not by a signal (which would also skip the kill).
    expect([r.signalCode, r.exitCode]).toStrictEqual([null, 0])
    expect(await until(() => !isRunning(a))).toBe(true)
  })
})

describe("the gate in front of a tool command", () => {
  const gated = (dir: string) =>
    spawn("sh", ["-c", ToolProcess.gated(`cat > request; touch ran`)], {
      cwd: dir,
      stdio: ["pipe", "ignore", "ignore"]
    })

  it("runs the command once a line arrives, and the command's stdin starts after that line", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-gate-"))
    const child = gated(dir)
    child.stdin!.end(`\n{"tool":{}}`)
    await exited(child)
    expect(child.exitCode).toBe(0)
    expect(fs.readFileSync(path.join(dir, "request"), "utf8")).toBe(`{"tool":{}}`)
    expect(fs.existsSync(path.join(dir, "ran"))).toBe(true)
    fs.rmSync(dir, { recursive: true })
  })

  it("never runs the command when stdin closes first (parley died before listing the group)", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-gate-"))
    const child = gated(dir)
    child.stdin!.end()
    await exited(child)
    expect(child.exitCode).toBe(125)
    expect(fs.readdirSync(dir)).toStrictEqual([])
    fs.rmSync(dir, { recursive: true })
  })
})

describe("a command run through the gate", () => {
  // What `sh -c command` prints and returns: the gate runs the command in its own shell, it must not show.
  const commands = [
    `echo "$0|$#|$1"`,
    "nosuchcommand-parley",
    "echo a\nfi",
    "if true",
    "exit 3",
    "cat",
    "printf '%s' \"$(cat)\" >&2",
    ""
  ]
  it.each(commands)("%j prints, fails and exits as sh -c would", (command) => {
    const plain = spawnSync("sh", ["-c", command], { input: "request", encoding: "utf8" })
    const gate = spawnSync("sh", ["-c", ToolProcess.gated(command)], { input: "\nrequest", encoding: "utf8" })
    expect([gate.stdout, gate.stderr, gate.status]).toStrictEqual([plain.stdout, plain.stderr, plain.status])
  })
})

describe("a tool whose group is listed with a dead reaper (it must not run unguarded)", () => {
  it("does not start until a live reaper has its group: parley killed right after, the tool dies too", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-reaper-dead-"))
    // The child's reaper dies the instant before its tool is spawned, before the child has heard of it.
    const child = spawn(
      process.execPath,
      ["--import", "tsx", path.join(repoRoot, "test/support/reaperChild.ts"), dir],
      { cwd: repoRoot, stdio: "ignore" }
    )
    started.push(child)
    expect(await until(() => fs.existsSync(path.join(dir, "pgid")))).toBe(true)
    const pgid = Number(fs.readFileSync(path.join(dir, "pgid"), "utf8"))
    expect(isRunning(pgid)).toBe(true)
    child.kill("SIGKILL")
    await exited(child)
    const gone = await until(() => !isRunning(pgid))
    try {
      process.kill(-pgid, "SIGKILL") // never leave it behind, whatever the outcome
    } catch {
      // gone
    }
    expect(gone).toBe(true)
    fs.rmSync(dir, { recursive: true, force: true })
  })
})
