// MCP servers (docs/mcp.md): the watchdog a stdio MCP server runs under. It forwards stdin,
// ignores the terminal's SIGINT/SIGHUP, and when its stdin ends (parley
// closed it, or parley died) it stops the server's whole process group.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Supervisor from "../../../src/layers/mcp/Supervisor.ts"
import { killMarked, marked, newMark, waitGone } from "./everything.ts"

const marks: Array<string> = []
afterEach(() => {
  for (const m of marks.splice(0)) killMarked(m)
})

const start = (command: string, args: ReadonlyArray<string>, graceMs?: number) => {
  const mark = newMark()
  marks.push(mark)
  const w = Supervisor.wrap(command, args, graceMs)
  const child = spawn(w.command, w.args, {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, PARLEY_MCP_TEST: mark }
  })
  let out = ""
  child.stdout.on("data", (d: Buffer) => (out += d.toString()))
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  const read = async (text: string) => {
    while (!out.includes(text)) await new Promise((r) => setTimeout(r, 10))
  }
  return { child, mark, exit, read }
}

describe("the MCP stdio watchdog", () => {
  it("forwards stdin, ignores SIGINT and SIGHUP, and exits with the server when stdin ends", async () => {
    const w = start("cat", [])
    w.child.stdin.write("hello\n")
    await w.read("hello\n")
    w.child.kill("SIGINT")
    w.child.kill("SIGHUP")
    w.child.stdin.write("still here\n")
    await w.read("still here\n") // both signals were ignored: the pipe still works
    w.child.stdin.end()
    expect(await w.exit).toBe(0)
    expect(await waitGone(w.mark)).toStrictEqual([])
  })

  it("a server that ignores EOF is stopped with its whole process group (what a kill -9 of parley leaves)", async () => {
    const w = start("sh", ["-c", "sleep 60 & sleep 60; wait"])
    while (marked(w.mark).length < 4) await new Promise((r) => setTimeout(r, 10)) // watchdog, sh, two sleeps
    w.child.stdin.end()
    expect(await w.exit).toBe(143) // SIGTERM, after the grace
    expect(await waitGone(w.mark)).toStrictEqual([])
  })

  it("SIGTERM stops the group at once, even during the grace after EOF", async () => {
    // A grace longer than the test's timeout: only SIGTERM cutting it short lets the test pass.
    const w = start("sleep", ["600"], 600_000)
    while (marked(w.mark).length < 2) await new Promise((r) => setTimeout(r, 10))
    w.child.stdin.end()
    w.child.kill("SIGTERM")
    expect(await w.exit).toBe(143)
    expect(await waitGone(w.mark)).toStrictEqual([])
  })

  it("SIGTERM the instant the server has started still stops its group (the signal handlers come first)", async () => {
    // The race the flaky test above hit under load: a watchdog that installed
    // its handlers after starting the server died of the SIGTERM itself (exit
    // null), leaving the server running. Here the signal comes at once, every time.
    const childrenOf = (pid: number) => {
      try {
        return fs
          .readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
          .trim()
          .split(" ")
          .filter((p) => p !== "")
      } catch {
        return []
      }
    }
    for (let round = 0; round < 8; round++) {
      const w = start("sleep", ["600"], 600_000)
      while (childrenOf(w.child.pid!).length === 0) await new Promise((r) => setImmediate(r))
      w.child.stdin.end()
      w.child.kill("SIGTERM")
      expect(await w.exit).toBe(143)
      expect(await waitGone(w.mark)).toStrictEqual([])
    }
  })

  it("a command that cannot start: exit 127 and the reason on stderr", async () => {
    const w = start("parley-no-such-command", [])
    let err = ""
    w.child.stderr.on("data", (d: Buffer) => (err += d.toString()))
    expect(await w.exit).toBe(127)
    expect(err).toBe('cannot start "parley-no-such-command": spawn parley-no-such-command ENOENT\n')
  })
})
