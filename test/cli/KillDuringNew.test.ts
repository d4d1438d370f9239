/**
 * What `kill -9` during `query --new` leaves in `locks/` is swept by the next
 * writer (docs/storage.md#new-ids-and-locks): 20 kills — 10 the instant the new id's lock
 * appears (between taking the id and creating its directory), 10 at random
 * moments of the run — then one more `--new`: no lock of a conversation that
 * does not exist, no temp file. And a lock naming an impossible pid is taken.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { binary, runParley } from "../support/Cli.ts"
import { makeProject, type Project, writeScript } from "../support/Project.ts"

const newRun = (p: Project, script: string) =>
  spawn(
    process.execPath,
    [binary, "--storage", p.storage, "query", "--new", "--model", "scripted", "--script", script, "hi"],
    { cwd: p.root, stdio: "ignore" }
  )

const conversationIds = (p: Project): Set<string> =>
  new Set(
    fs
      .readdirSync(path.join(p.storage, "conversations"))
      .filter((n) => /^\d/.test(n))
      .map((n) => n.split("-")[0]!)
  )

/** Lock files naming no conversation, and anything else that is not a lock. */
const leftovers = (p: Project): Array<string> => {
  const ids = conversationIds(p)
  return fs
    .readdirSync(path.join(p.storage, "locks"))
    .filter((n) => !/^jp-c\d+\.lock$/.test(n) || !ids.has(n.slice(4, -5)))
}

describe("kill -9 during query --new", () => {
  it("20 kills, then one more --new: no lock for a missing conversation, no temp file", async () => {
    const p = makeProject()
    const script = writeScript(p, "s.json", [{ message: "ok" }])
    fs.mkdirSync(path.join(p.storage, "locks"))
    fs.mkdirSync(path.join(p.storage, "conversations"))
    // Leftover locks seen after any kill (each new run sweeps the ones before it, so count as they appear).
    let seenLeftoverLocks = 0
    for (let i = 0; i < 20; i++) {
      const child = newRun(p, script)
      const exited = new Promise((resolve) => child.on("exit", resolve))
      // Half the kills the instant a new lock appears, half at a random moment of the run.
      const watcher =
        i % 2 === 0
          ? fs.watch(path.join(p.storage, "locks"), (_event, name) => {
              if (name !== null && /^jp-c\d+\.lock$/.test(name)) child.kill("SIGKILL")
            })
          : undefined
      const timer = i % 2 === 1 ? setTimeout(() => child.kill("SIGKILL"), Math.random() * 500) : undefined
      await exited
      watcher?.close()
      clearTimeout(timer)
      seenLeftoverLocks += leftovers(p).filter((n) => /^jp-c\d+\.lock$/.test(n)).length
    }
    // The instant kills do leave what the sweep must remove (else this test could not fail).
    expect(seenLeftoverLocks).toBeGreaterThan(0)
    const last = runParley(
      ["--storage", p.storage, "query", "--new", "--model", "scripted", "--script", script, "hi"],
      { cwd: p.root }
    )
    expect(last.code).toBe(0)
    expect(leftovers(p)).toStrictEqual([])
    expect(runParley(["--storage", p.storage, "conversation", "check"], { cwd: p.root }).code).toBe(0)
    fs.rmSync(p.root, { recursive: true, force: true })
  }, 120_000)

  it("a lock naming pid 0, 1 or -1 is stale: the next writer takes it", () => {
    const p = makeProject()
    const script = writeScript(p, "s.json", [
      { message: "one" },
      { message: "two" },
      { message: "three" },
      { message: "four" }
    ])
    expect(
      runParley(["--storage", p.storage, "query", "--new", "--model", "scripted", "--script", script, "hi"], {
        cwd: p.root
      }).code
    ).toBe(0)
    const id = [...conversationIds(p)][0]!
    const lock = path.join(p.storage, "locks", `jp-c${id}.lock`)
    for (const pid of [0, 1, -1]) {
      fs.writeFileSync(lock, JSON.stringify({ pid, acquired_at: "2020-01-01T00:00:00Z" }) + "\n")
      const r = runParley(
        ["--storage", p.storage, "query", "--id", id, "--model", "scripted", "--script", script, `pid ${pid}`],
        { cwd: p.root }
      )
      expect([r.code, r.stderr.split("\n").slice(1).join("\n")]).toStrictEqual([0, ""])
      expect(fs.existsSync(lock)).toBe(false)
    }
    fs.rmSync(p.root, { recursive: true, force: true })
  })
})
