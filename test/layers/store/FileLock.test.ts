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
    spawn(
      process.execPath,
      ["--import", "tsx", path.join(repoRoot, "test/support/lockChild.ts"), file, String(startAt)],
      { cwd: repoRoot }
    )
  )
  const answers = await Promise.all(
    children.map(
      (child) =>
        new Promise<string>((resolve, reject) => {
          let out = ""
          child.stdout.on("data", (d: Buffer) => {
            out += d.toString()
            if (out.endsWith("\n")) resolve(out.trim())
          })
          child.on("error", reject)
          child.on("exit", () => resolve(out.trim()))
        })
    )
  )
  await Promise.all(
    children.map(
      (child) =>
        new Promise((resolve) =>
          child.exitCode !== null ? resolve(undefined) : (child.on("exit", resolve), child.stdin.end())
        )
    )
  )
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

  it("a lock naming pid 0, 1 or -1 is stale (those 'signal' process groups and look alive forever)", async () => {
    for (const pid of [0, 1, -1]) {
      const file = path.join(tempDir(), "locks", "jp-c4.lock")
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, JSON.stringify({ pid, acquired_at: "x" }))
      expect(await FileLock.acquire(file)).toStrictEqual({ _tag: "Acquired" })
      await FileLock.release(file)
    }
  })

  it("a live pid holds only if it is the process that took the lock: its start time, or else a parley or jp program", async () => {
    const file = path.join(tempDir(), "locks", "jp-c5.lock")
    fs.mkdirSync(path.dirname(file), { recursive: true })
    const stranger = spawn("sleep", ["30"])
    const holder = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "parley"])
    try {
      await new Promise((resolve) => setTimeout(resolve, 200))
      const start = await FileLock.processStart(holder.pid!)
      expect(start).toMatch(/^\d+$/)
      const cases: Array<[object, string]> = [
        [{ pid: stranger.pid }, "Acquired"], // a live program that is not parley: the pid was reused
        [{ pid: holder.pid }, "Held"], // a parley process (older lock without a start time)
        [{ pid: holder.pid, proc_start: start }, "Held"],
        [{ pid: holder.pid, proc_start: String(Number(start) - 1) }, "Acquired"], // another process had that pid
        [{ pid: stranger.pid, proc_start: await FileLock.processStart(stranger.pid!) }, "Held"] // a library's process: its start time says it
      ]
      for (const [record, expected] of cases) {
        fs.writeFileSync(file, JSON.stringify({ ...record, acquired_at: "x" }))
        expect([record, (await FileLock.acquire(file))._tag]).toStrictEqual([record, expected])
        await FileLock.release(file)
      }
    } finally {
      stranger.kill("SIGKILL")
      holder.kill("SIGKILL")
    }
  })

  it("sweepTemps removes dead writers' temp files and nothing live; dropIfStale removes only a stale lock", async () => {
    const dir = path.join(tempDir(), "locks")
    fs.mkdirSync(dir, { recursive: true })
    const dead = 2 ** 22 + 99
    const names = [`jp-c6.lock.${dead}.abc.tmp`, `jp-c6.lock.${process.ppid}.def.tmp`, "jp-c6.lock", "jp-c7.lock"]
    for (const n of names)
      fs.writeFileSync(
        path.join(dir, n),
        JSON.stringify({
          pid: n === "jp-c6.lock" ? dead : process.ppid,
          acquired_at: "x",
          proc_start: await FileLock.processStart(process.ppid)
        })
      )
    await FileLock.sweepTemps(dir)
    expect(fs.readdirSync(dir).sort()).toStrictEqual(names.slice(1).sort())
    expect(await FileLock.dropIfStale(path.join(dir, "jp-c6.lock"))).toBe(true)
    expect(await FileLock.dropIfStale(path.join(dir, "jp-c7.lock"))).toBe(false)
    expect(await FileLock.dropIfStale(path.join(dir, "jp-c8.lock"))).toBe(true)
    expect(fs.readdirSync(dir).sort()).toStrictEqual([`jp-c6.lock.${process.ppid}.def.tmp`, "jp-c7.lock"])
  })

  it("a takeover lock a dead process left a moment ago is swept at once, and the stale lock it guarded is dropped", async () => {
    // kill -9 of a writer mid-takeover (10x suite, KillDuringNew): the next writer came within the
    // grace meant for an unreadable file and left both the takeover lock and the stale lock behind.
    const dir = path.join(tempDir(), "locks")
    fs.mkdirSync(dir, { recursive: true })
    const dead = 2 ** 22 + 98
    const live = await FileLock.processStart(process.ppid)
    const write = (name: string, pid: number) =>
      fs.writeFileSync(path.join(dir, name), JSON.stringify({ pid, acquired_at: "x" }))
    write("jp-c9.lock", dead)
    write("jp-c9.lock.takeover", dead)
    await FileLock.sweepTemps(dir)
    expect(fs.readdirSync(dir)).toStrictEqual(["jp-c9.lock"])
    // acquire itself treats a dead taker's fresh takeover lock the same way.
    write("jp-c9.lock.takeover", dead)
    expect(await FileLock.dropIfStale(path.join(dir, "jp-c9.lock"))).toBe(true)
    expect(fs.readdirSync(dir)).toStrictEqual([])
    // A live taker's takeover lock stays, and so does the lock it guards.
    write("jp-c10.lock", dead)
    fs.writeFileSync(
      path.join(dir, "jp-c10.lock.takeover"),
      JSON.stringify({ pid: process.ppid, acquired_at: "x", proc_start: live })
    )
    await FileLock.sweepTemps(dir)
    expect(await FileLock.dropIfStale(path.join(dir, "jp-c10.lock"))).toBe(false)
    expect(fs.readdirSync(dir).sort()).toStrictEqual(["jp-c10.lock", "jp-c10.lock.takeover"])
  })

  it("a takeover lock naming this process that it did not take (a pid 1 restarted after a kill -9 mid-takeover) is a namesake's: the lock is taken", async () => {
    const dir = path.join(tempDir(), "locks")
    fs.mkdirSync(dir, { recursive: true })
    const file = path.join(dir, "jp-c11.lock")
    const ours = JSON.stringify({ pid: process.pid, acquired_at: "x", proc_start: "1" })
    fs.writeFileSync(file, ours)
    fs.writeFileSync(`${file}.takeover`, ours)
    expect(await FileLock.acquire(file)).toStrictEqual({ _tag: "Acquired" })
    expect(fs.readdirSync(dir)).toStrictEqual(["jp-c11.lock"])
    await FileLock.release(file)
    expect(fs.readdirSync(dir)).toStrictEqual([])
  })

  it("an unreadable lock being written right now counts as held", async () => {
    const file = path.join(tempDir(), "locks", "jp-c3.lock")
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, "")
    expect((await FileLock.acquire(file))._tag).toBe("Held")
  })
})
