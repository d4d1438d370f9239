/**
 * A throwaway PostgreSQL server for the tests of issue 24: `initdb` into a
 * temp dir, `postgres` listening on a unix socket in that dir and on
 * 127.0.0.1 at a free port, trust auth, database "parley". PostgreSQL
 * refuses to run as root, so as root the server runs as the `postgres` user
 * (`runuser`). `stop()` stops it (`pg_ctl -m immediate`) and removes the
 * directory: a test run leaves no server behind.
 *
 * When the binaries are absent, {@link pgSkip} says so and the tests skip.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

export interface PgServer {
  readonly url: string
  readonly port: number
  readonly dir: string
  readonly stop: () => void
}

const pgBin = (): string | undefined => {
  const root = "/usr/lib/postgresql"
  const versions = fs.existsSync(root) ? fs.readdirSync(root).sort((a, b) => Number(b) - Number(a)) : []
  return versions.map((v) => path.join(root, v, "bin")).find((d) => fs.existsSync(path.join(d, "initdb")))
}

/** Why the PostgreSQL tests skip, or undefined when they can run. */
export const pgSkip: string | undefined = pgBin() === undefined
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

export const startPg = async (): Promise<PgServer> => {
  const bin = pgBin()
  if (bin === undefined) throw new Error(pgSkip)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-pg-"))
  const data = path.join(dir, "data")
  const sock = path.join(dir, "sock")
  fs.mkdirSync(data)
  fs.mkdirSync(sock)
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim())
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim())
    for (const p of [data, sock]) fs.chownSync(p, uid, gid)
    fs.chmodSync(dir, 0o755)
  }
  const run = (cmd: string, args: ReadonlyArray<string>) =>
    asRoot
      ? execFileSync("runuser", ["-u", "postgres", "--", path.join(bin, cmd), ...args], { stdio: "pipe", timeout: 60_000 })
      : execFileSync(path.join(bin, cmd), args, { stdio: "pipe", timeout: 60_000 })
  const port = await freePort()
  let started = false
  const stop = () => {
    try {
      if (started) run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"])
    } finally {
      started = false
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
  try {
    run("initdb", ["-D", data, "-U", "parley", "--auth=trust", "-E", "UTF8", "--no-sync"])
    started = true
    run("pg_ctl", [
      "-D", data, "-l", path.join(dir, "sock", "server.log"), "-w", "-t", "30",
      "-o", `-k ${sock} -p ${port} -c listen_addresses=127.0.0.1 -c max_connections=100 -c fsync=off`,
      "start"
    ])
    run("createdb", ["-h", sock, "-p", String(port), "-U", "parley", "parley"])
  } catch (error) {
    stop()
    throw error
  }
  return { url: `postgres://parley@127.0.0.1:${port}/parley`, port, dir, stop }
}

let databases = 0

/** A new, empty database on `server` (each test its own): its url. */
export const freshDatabase = (server: PgServer): string => {
  const bin = pgBin()!
  const name = `t${process.pid}_${++databases}`
  execFileSync(path.join(bin, "psql"), ["-X", "-q", "-h", "127.0.0.1", "-p", String(server.port), "-U", "parley", "-d", "parley", "-c", `CREATE DATABASE ${name}`], { stdio: "pipe", timeout: 30_000 })
  return `postgres://parley@127.0.0.1:${server.port}/${name}`
}

/** Runs SQL on a database (tests that damage rows on purpose). */
export const psql = (url: string, command: string): string => {
  const u = new URL(url)
  return execFileSync(path.join(pgBin()!, "psql"), ["-X", "-q", "-A", "-t", "-h", u.hostname, "-p", u.port, "-U", u.username, "-d", u.pathname.slice(1), "-c", command], { encoding: "utf8", timeout: 30_000 })
}
