import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as FileLock from "../../../src/layers/store/FileLock.ts"
import { repoRoot, tempDir } from "../../support/Fixtures.ts"

/**
 * Starts `racers` processes that each try the lock once. Nobody lets go
 * until every racer has answered (a loaded machine may start one long after
 * the others, and a holder that exited would leave a stale lock to take over).
 */
const race = async (file: string, racers: number): Promise<Array<string>> => {
  const startAt = Date.now() + 1500 // usually after every child has loaded
  const children = Array.from({ length: racers }, () =>
    spawn(process.execPath, ["--import", "tsx", path.join(repoRoot, "test/support/lockChild.ts"), file, String(startAt)], { cwd: repoRoot }))
  const answers = await Promise.all(children.map((child) =>
    new Promise<string>((resolve, reject) => {
      let out = ""
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString()
        if (out.endsWith("\n")) resolve(out.trim())
      })
      child.on("error", reject)
      child.on("exit", () => resolve(out.trim()))
    })))
  await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : (child.on("exit", resolve), child.stdin.end())))))
  return answers
}

describe("FileLock", () => {
  it("racing processes: exactly one takes a free lock", async () => {
    for (let round = 0; round < 2; round++) {
      const file = path.join(tempDir(), "locks", "jp-c1.lock")
      const results = await race(file, 4)
      expect(results.filter((r) => r === "Acquired").length).toBe(1)
      expect(results.filter((r) => r === "Held").length).toBe(3)
    }
  })

  it("racing processes: exactly one takes over a stale lock", async () => {
    for (let round = 0; round < 2; round++) {
      const file = path.join(tempDir(), "locks", "jp-c1.lock")
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, JSON.stringify({ pid: 2 ** 22 + 4321, acquired_at: "x" }))
      const results = await race(file, 4)
      expect(results.filter((r) => r === "Acquired").length).toBe(1)
    }
  })

  it("a lock left by a dead process that had our pid is stale; our own live lock is not", async () => {
    const file = path.join(tempDir(), "locks", "jp-c2.lock")
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, JSON.stringify({ pid: process.pid, acquired_at: "earlier run" }))
    expect(await FileLock.acquire(file)).toStrictEqual({ _tag: "Acquired" })
    expect(await FileLock.acquire(file)).toStrictEqual({ _tag: "Held", pid: process.pid })
    await FileLock.release(file)
    expect(fs.existsSync(file)).toBe(false)
  })

  it("an unreadable lock being written right now counts as held", async () => {
    const file = path.join(tempDir(), "locks", "jp-c3.lock")
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, "")
    expect((await FileLock.acquire(file))._tag).toBe("Held")
  })
})
