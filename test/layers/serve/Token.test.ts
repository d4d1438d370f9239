// parley serve (docs/serve.md): the token of `parley serve` — 0600, reused, replaced when it is
// not private — and, for a PostgreSQL storage (docs/postgres.md), kept in the
// per-user config directory, one per database, never under a directory
// named after the url.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Token from "../../../src/layers/serve/Token.ts"
import * as ErrorLine from "../../../src/cli/ErrorLine.ts"
import * as Server from "../../../src/layers/serve/Server.ts"
import * as StorageStore from "../../../src/layers/store/StorageStore.ts"

const dirs: Array<string> = []
const saved = process.env["XDG_CONFIG_HOME"]
afterEach(() => {
  if (saved === undefined) delete process.env["XDG_CONFIG_HOME"]
  else process.env["XDG_CONFIG_HOME"] = saved
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})
const temp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "parley-token-"))
  dirs.push(d)
  return d
}

describe("serve token", () => {
  it("a storage directory: <storage>/serve-token, 0600, the same on the next start; a token others can read is replaced", () => {
    const storage = path.join(temp(), ".parley")
    const token = Token.loadOrCreate(storage)
    expect(token).toMatch(/^[0-9a-f]{64}$/)
    const file = path.join(storage, "serve-token")
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    expect(Token.loadOrCreate(storage)).toBe(token)
    fs.chmodSync(file, 0o644)
    const fresh = Token.loadOrCreate(storage)
    expect(fresh).not.toBe(token)
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
  })

  it("a link at serve-token is not followed, even to a private token of ours; a FIFO there does not block: each is replaced", () => {
    const storage = path.join(temp(), ".parley")
    fs.mkdirSync(storage, { mode: 0o700 })
    const target = path.join(temp(), "elsewhere")
    const planted = "ab".repeat(32)
    fs.writeFileSync(target, `${planted}\n`, { mode: 0o600 })
    const file = path.join(storage, "serve-token")
    fs.symlinkSync(target, file)
    const token = Token.loadOrCreate(storage)
    expect(token).not.toBe(planted)
    expect(fs.lstatSync(file).isFile()).toBe(true)
    expect(fs.readFileSync(target, "utf8")).toBe(`${planted}\n`)
    fs.rmSync(file)
    execFileSync("mkfifo", ["-m", "0600", file])
    const again = Token.loadOrCreate(storage)
    expect(again).toMatch(/^[0-9a-f]{64}$/)
    expect(fs.lstatSync(file).isFile()).toBe(true)
  })

  it("a PostgreSQL storage: in $XDG_CONFIG_HOME/parley/postgres/<hash>/serve-token, one per database (named by its hash, not the url, which may hold a password)", () => {
    const config = temp()
    process.env["XDG_CONFIG_HOME"] = config
    const cwd = process.cwd()
    const url = "postgres://me:pa55word@db.internal/parley"
    const token = Token.loadOrCreate(StorageStore.stateDirOf(url))
    const dirs = fs.readdirSync(path.join(config, "parley", "postgres"))
    expect(dirs).toHaveLength(1)
    expect(dirs[0]).toMatch(/^[0-9a-f]{16}$/)
    const dir = path.join(config, "parley", "postgres", dirs[0]!)
    expect(fs.readdirSync(dir)).toStrictEqual(["serve-token"])
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
    expect(fs.statSync(path.join(dir, "serve-token")).mode & 0o777).toBe(0o600)
    expect(Token.loadOrCreate(StorageStore.stateDirOf(url))).toBe(token)
    // The same database spelled another way (no password, other scheme) shares the token; another database does not.
    expect(Token.loadOrCreate(StorageStore.stateDirOf("postgresql://me@DB.internal:5432/parley"))).toBe(token)
    expect(Token.loadOrCreate(StorageStore.stateDirOf("postgres://db.internal/other"))).not.toBe(token)
    expect(fs.existsSync(path.join(cwd, "postgres:"))).toBe(false)
  })

  it("a PostgreSQL storage's token directory is used only when it is the user's alone: a link or one open to others is refused, unchanged", () => {
    const config = temp()
    process.env["XDG_CONFIG_HOME"] = config
    const url = "postgres://db.internal/parley"
    const dir = StorageStore.stateDirOf(url)
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    fs.chmodSync(dir, 0o755)
    // The CLI's line for the refusal (the server fails with the data: NotPrivate).
    const open = ErrorLine.line(Effect.runSync(Effect.flip(Server.forStorage(url))), {})
    expect(open).toBe(
      `Refusing to use ${dir}: other users have access to it (owner uid ${process.getuid!()}, mode 0755). It is yours: make it private (\`chmod 700 ${dir}\`), then run again.`
    )
    expect(fs.readdirSync(dir)).toStrictEqual([])
    fs.rmSync(dir, { recursive: true })
    const elsewhere = temp()
    fs.chmodSync(elsewhere, 0o700)
    fs.symlinkSync(elsewhere, dir)
    expect(Effect.runSync(Effect.flip(Server.forStorage(url))).message).toContain(
      `Refusing to use ${dir}: it is a symbolic link`
    )
    expect(fs.readdirSync(elsewhere)).toStrictEqual([])
    fs.rmSync(dir)
    // Missing: made 0700, and the token written.
    expect(Effect.runSync(Server.forStorage(url))).toMatch(/^[0-9a-f]{64}$/)
    expect(fs.lstatSync(dir).mode & 0o7777).toBe(0o700)
  })
})
