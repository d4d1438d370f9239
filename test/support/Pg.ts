/**
 * A throwaway PostgreSQL server for the tests of PostgreSQL storage (docs/postgres.md#tests-and-costs): `initdb` into a
 * temp dir, `postgres` listening on a unix socket in that dir and on
 * 127.0.0.1 at a free port, trust auth, database "parley". PostgreSQL
 * refuses to run as root, so as root the server runs as the `postgres` user
 * (`runuser`). `stop()` stops it (`pg_ctl -m immediate`) and removes the
 * directory: a test run leaves no server behind.
 *
 * Nor does a run that never calls `stop()` (a failed `beforeAll`, a vitest
 * worker killed, a bench interrupted): the server dies with its owner.
 * `postgres` daemonizes and does not watch its parent, so each server has a
 * watchdog, a detached `sh` that polls the owner's pid once a second and,
 * when it is gone, stops the server and removes the directory. The
 * directory names its owner (`owner`), and every start first sweeps the
 * directories of owners that are gone (a watchdog killed too: `kill -9` of
 * the whole group).
 *
 * When the binaries are absent, {@link pgSkip} says so and the tests skip.
 */
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as FileLock from "../../src/layers/store/FileLock.ts"

export interface PgServer {
  readonly url: string
  readonly port: number
  readonly dir: string
  /** The watchdog's pid (tests of the watchdog and the sweep). */
  readonly watchdog: number | undefined
  readonly stop: () => void
  /** Stops the server and keeps its data (a server that goes away mid-run); `restart` brings it back on the same port. */
  readonly halt: () => void
  readonly restart: () => void
}

const pgBin = (): string | undefined => {
  const root = "/usr/lib/postgresql"
  const versions = fs.existsSync(root) ? fs.readdirSync(root).sort((a, b) => Number(b) - Number(a)) : []
  return versions.map((v) => path.join(root, v, "bin")).find((d) => fs.existsSync(path.join(d, "initdb")))
}

/** Why the PostgreSQL tests skip, or undefined when they can run. */
export const pgSkip: string | undefined =
  pgBin() === undefined
    ? "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (install Debian's postgresql package)"
    : undefined

/** A port nothing listens on right now. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

const PREFIX = "parley-pg-"

/**
 * Whether the process that `dir`'s `owner` file names is gone. False when
 * there is no such file, or it names no pid: not ours to judge.
 */
export const ownerGone = (dir: string): boolean => {
  let owner: number
  try {
    owner = Number(fs.readFileSync(path.join(dir, "owner"), "utf8"))
  } catch {
    return false
  }
  return Number.isInteger(owner) && owner > 0 && !FileLock.isAlive(owner)
}

/** Runs a server binary, as the `postgres` user when we are root (PostgreSQL refuses root). */
const runner = (bin: string) => {
  const asRoot = process.getuid?.() === 0
  const argv = (cmd: string, args: ReadonlyArray<string>): [string, Array<string>] =>
    asRoot ? ["runuser", ["-u", "postgres", "--", path.join(bin, cmd), ...args]] : [path.join(bin, cmd), [...args]]
  return {
    asRoot,
    argv,
    run: (cmd: string, args: ReadonlyArray<string>) =>
      execFileSync(...argv(cmd, args), { stdio: "pipe", timeout: 60_000 })
  }
}

/**
 * Stops the servers and removes the directories of owners that are gone
 * (whose watchdog went too). Directories without an `owner` file are not
 * ours to judge and are left alone. `root`: where the servers' directories
 * are (a test that must see what its own sweep does keeps them apart).
 */
export const sweepStale = (root: string = os.tmpdir()): void => {
  const bin = pgBin()
  let names: Array<string> = []
  try {
    names = fs.readdirSync(root).filter((n) => n.startsWith(PREFIX))
  } catch {
    return
  }
  for (const name of names) {
    const dir = path.join(root, name)
    if (!ownerGone(dir)) continue
    try {
      if (bin !== undefined && fs.existsSync(path.join(dir, "data", "postmaster.pid")))
        runner(bin).run("pg_ctl", ["-D", path.join(dir, "data"), "-m", "immediate", "-w", "stop"])
    } catch {
      // not running any more
    }
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * The watchdog of a server: a detached `sh` (its own session, so a signal to
 * the owner's group does not take it along) that waits for the owner to go,
 * then runs `stop` and removes `dir`. It exits without doing anything once
 * `dir` is gone (a normal stop).
 */
const watchdog = (owner: number, dir: string, stop: [string, Array<string>]): number | undefined => {
  const script =
    "owner=$1; dir=$2; shift 2\n" +
    'while kill -0 "$owner" 2>/dev/null && [ -d "$dir" ]; do sleep 1; done\n' +
    '[ -d "$dir" ] && { "$@" >/dev/null 2>&1; rm -rf "$dir"; }\n'
  const child = spawn("sh", ["-c", script, "parley-pg-watchdog", String(owner), dir, stop[0], ...stop[1]], {
    detached: true,
    stdio: "ignore"
  })
  child.unref()
  return child.pid
}

/** `maxConnections`: the server's `max_connections` (the cluster bench holds one connection per waiting turn). */
export const startPg = async (options: { readonly maxConnections?: number } = {}): Promise<PgServer> => {
  const bin = pgBin()
  if (bin === undefined) throw new Error(pgSkip)
  sweepStale()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), PREFIX))
  fs.writeFileSync(path.join(dir, "owner"), String(process.pid))
  const data = path.join(dir, "data")
  const sock = path.join(dir, "sock")
  fs.mkdirSync(data)
  fs.mkdirSync(sock)
  const { asRoot, argv, run } = runner(bin)
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim())
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim())
    for (const p of [data, sock]) fs.chownSync(p, uid, gid)
    fs.chmodSync(dir, 0o755)
  }
  const port = await freePort()
  const stopArgs = ["-D", data, "-m", "immediate", "-w", "stop"]
  const dog = watchdog(process.pid, dir, argv("pg_ctl", stopArgs))
  let started = false
  const stop = () => {
    try {
      if (dog !== undefined) process.kill(dog, "SIGKILL")
    } catch {
      // gone already
    }
    try {
      if (started) run("pg_ctl", stopArgs)
    } finally {
      started = false
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
  const startServer = () =>
    run("pg_ctl", [
      "-D",
      data,
      "-l",
      path.join(dir, "sock", "server.log"),
      "-w",
      "-t",
      "30",
      "-o",
      `-k ${sock} -p ${port} -c listen_addresses=127.0.0.1 -c max_connections=${options.maxConnections ?? 100} -c fsync=off`,
      "start"
    ])
  const halt = () => {
    // "fast": the server ends every session (their clients see the connection go), as a restart or a failover does.
    run("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"])
    started = false
  }
  const restart = () => {
    startServer()
    started = true
  }
  try {
    run("initdb", ["-D", data, "-U", "parley", "--auth=trust", "-E", "UTF8", "--no-sync"])
    started = true
    startServer()
    run("createdb", ["-h", sock, "-p", String(port), "-U", "parley", "parley"])
  } catch (error) {
    stop()
    throw error
  }
  return { url: `postgres://parley@127.0.0.1:${port}/parley`, port, dir, watchdog: dog, stop, halt, restart }
}

let databases = 0

/** A new, empty database on `server` (each test its own): its url. */
export const freshDatabase = (server: PgServer): string => {
  const bin = pgBin()!
  const name = `t${process.pid}_${++databases}`
  execFileSync(
    path.join(bin, "psql"),
    [
      "-X",
      "-q",
      "-h",
      "127.0.0.1",
      "-p",
      String(server.port),
      "-U",
      "parley",
      "-d",
      "parley",
      "-c",
      `CREATE DATABASE ${name}`
    ],
    { stdio: "pipe", timeout: 30_000 }
  )
  return `postgres://parley@127.0.0.1:${server.port}/${name}`
}

/** Runs SQL on a database (tests that damage rows on purpose). */
export const psql = (url: string, command: string): string => {
  const u = new URL(url)
  return execFileSync(
    path.join(pgBin()!, "psql"),
    [
      "-X",
      "-q",
      "-A",
      "-t",
      "-h",
      u.hostname,
      "-p",
      u.port,
      "-U",
      u.username,
      "-d",
      u.pathname.slice(1),
      "-c",
      command
    ],
    { encoding: "utf8", timeout: 30_000 }
  )
}
