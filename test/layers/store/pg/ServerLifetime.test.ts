/**
 * A test run leaves no PostgreSQL server behind (docs/postgres.md), even when the
 * process that started one never stops it: `kill -9` of the owner, and of
 * the owner and its watchdog together (then the next start sweeps it).
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { repoRoot, tempDir } from "../../../support/Fixtures.ts"
import { pgSkip, sweepStale } from "../../../support/Pg.ts"

const out = tempDir("parley-pg-life-")
// The servers' own directories are below it (as root they run as `postgres`, which must get through).
fs.chmodSync(out, 0o755)
const started: Array<ChildProcess> = []
/** The temp roots of the orphans: only a sweep given each one reaches its server. */
const roots: Array<string> = []
afterAll(() => {
  for (const c of started) c.kill("SIGKILL")
  // A test that failed before its own sweep leaves its server running: no other sweep looks in these roots.
  for (const root of roots) sweepStale(root)
  fs.rmSync(out, { recursive: true, force: true })
})

const until = async (f: () => boolean | Promise<boolean>, ms: number): Promise<boolean> => {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100)))
    if (await f()) return true
  return await f()
}

/** Whether something accepts connections on the port. */
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, "127.0.0.1")
    socket.once("connect", () => (socket.destroy(), resolve(true)))
    socket.once("error", () => resolve(false))
  })

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** A child that starts a server and is then killed without stopping it. */
const orphanedServer = async (name: string) => {
  const dir = path.join(out, name)
  fs.mkdirSync(dir)
  // The server's directory goes under a temp root of its own: another test file's start sweeps the shared one,
  // which would stop this test's orphan before its own sweep is tried (a flake when files run at once).
  const root = path.join(dir, "tmp")
  fs.mkdirSync(root)
  roots.push(root)
  const child = spawn(process.execPath, ["--import", "tsx", path.join(repoRoot, "test/support/pgChild.ts"), dir], {
    cwd: repoRoot,
    env: { ...process.env, TMPDIR: root },
    stdio: "ignore"
  })
  started.push(child)
  expect(await until(() => fs.existsSync(path.join(dir, "server.json")), 60_000)).toBe(true)
  const server = JSON.parse(fs.readFileSync(path.join(dir, "server.json"), "utf8")) as {
    dir: string
    port: number
    watchdog: number
  }
  expect(await listening(server.port)).toBe(true)
  expect(fs.existsSync(server.dir)).toBe(true)
  return { child, server, root }
}

describe.skipIf(pgSkip !== undefined)(
  `throwaway PostgreSQL servers die with their owner${pgSkip === undefined ? "" : ` (skipped: ${pgSkip})`}`,
  () => {
    it("kill -9 of the owner: its watchdog stops the server and removes its directory within seconds", async () => {
      const { child, server } = await orphanedServer("owner")
      child.kill("SIGKILL")
      expect(await until(async () => !fs.existsSync(server.dir) && !(await listening(server.port)), 15_000)).toBe(true)
      expect(await until(() => !alive(server.watchdog), 5_000)).toBe(true)
    }, 90_000)

    it("kill -9 of the owner and its watchdog: the next start's sweep stops the server and removes its directory", async () => {
      const { child, server, root } = await orphanedServer("both")
      process.kill(server.watchdog, "SIGKILL")
      child.kill("SIGKILL")
      await until(() => !alive(child.pid!), 5_000)
      // Nothing else stops it.
      await new Promise((r) => setTimeout(r, 1500))
      expect(await listening(server.port)).toBe(true)
      sweepStale(root)
      expect(fs.existsSync(server.dir)).toBe(false)
      expect(await listening(server.port)).toBe(false)
    }, 90_000)
  }
)
