// Issue 23: the token of `parley serve` — 0600, reused, replaced when it is
// not private — and, for a PostgreSQL storage (issue 24), kept in the
// per-user config directory, one per database, never under a directory
// named after the url.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Token from "../../../src/cli/serve/Token.ts"

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

  it("a PostgreSQL storage: in $XDG_CONFIG_HOME/parley, one file per url (named by its hash, not the url, which may hold a password)", () => {
    const config = temp()
    process.env["XDG_CONFIG_HOME"] = config
    const cwd = process.cwd()
    const url = "postgres://me:pa55word@db.internal/parley"
    const token = Token.loadOrCreate(url)
    const files = fs.readdirSync(path.join(config, "parley"))
    expect(files).toHaveLength(1)
    expect(files[0]).toMatch(/^serve-token-[0-9a-f]{16}$/)
    expect(files[0]).not.toContain("pa55word")
    expect(fs.statSync(path.join(config, "parley")).mode & 0o777).toBe(0o700)
    expect(fs.statSync(path.join(config, "parley", files[0]!)).mode & 0o777).toBe(0o600)
    expect(Token.loadOrCreate(url)).toBe(token)
    expect(Token.loadOrCreate("postgres://db.internal/other")).not.toBe(token)
    expect(fs.existsSync(path.join(cwd, "postgres:"))).toBe(false)
  })
})
