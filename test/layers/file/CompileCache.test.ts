// The compile cache's directory is the user's alone before Node reads code from it:
// made 0700, an old one of ours that others could only read is closed, and a
// symlink, a file or a directory others can write in turns the cache off.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as CompileCache from "../../../src/layers/file/CompileCache.ts"
import { bundle } from "../../support/Cli.ts"
import { tempDir } from "../../support/Fixtures.ts"

const dir = tempDir("parley-compile-cache-")
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const mode = (p: string) => fs.statSync(p).mode & 0o777

describe("the compile cache directory", () => {
  it("is under XDG_CACHE_HOME, else ~/.cache; none without either", () => {
    expect(CompileCache.directory({ HOME: "/home/ada" })).toBe("/home/ada/.cache/parley/compile-cache")
    expect(CompileCache.directory({ HOME: "/home/ada", XDG_CACHE_HOME: "/c" })).toBe("/c/parley/compile-cache")
    expect(CompileCache.directory({ HOME: "" })).toBeUndefined()
  })

  it("is made 0700 (and parley/ above it), whatever the umask", () => {
    const cache = path.join(dir, "new", "parley", "compile-cache")
    const umask = process.umask(0)
    try {
      expect(CompileCache.ready(cache)).toBe(true)
    } finally {
      process.umask(umask)
    }
    expect(mode(cache)).toBe(0o700)
    expect(mode(path.dirname(cache))).toBe(0o700)
  })

  it("an old one others could read is closed; one others could write in, a symlink or a file is not used", () => {
    const old = path.join(dir, "old")
    fs.mkdirSync(old, { mode: 0o755 })
    fs.chmodSync(old, 0o755)
    expect(CompileCache.ready(old)).toBe(true)
    expect(mode(old)).toBe(0o700)

    const open = path.join(dir, "open")
    fs.mkdirSync(open)
    fs.chmodSync(open, 0o777)
    expect(CompileCache.ready(open)).toBe(false)
    expect(mode(open)).toBe(0o777)

    const link = path.join(dir, "link")
    fs.symlinkSync(old, link)
    expect(CompileCache.ready(link)).toBe(false)

    const file = path.join(dir, "file")
    fs.writeFileSync(file, "")
    expect(CompileCache.ready(file)).toBe(false)
  })

  it("a directory above it that is a link is taken for where it leads (a linked /home); one others can write in is not", () => {
    const real = path.join(dir, "real-homes")
    fs.mkdirSync(path.join(real, "ada"), { recursive: true })
    const linked = path.join(dir, "linked-homes")
    fs.symlinkSync(real, linked)
    expect(CompileCache.ready(path.join(linked, "ada", ".cache", "parley", "compile-cache"))).toBe(true)
    const shared = path.join(dir, "shared")
    fs.mkdirSync(shared)
    fs.chmodSync(shared, 0o777)
    expect(CompileCache.ready(path.join(shared, "parley", "compile-cache"))).toBe(false)
    fs.chmodSync(shared, 0o1777)
    expect(CompileCache.ready(path.join(shared, "parley2", "compile-cache"))).toBe(true)
  })

  it("parley makes it 0700 and Node fills it; the command still runs when it cannot be used", () => {
    const home = path.join(dir, "home")
    fs.mkdirSync(home)
    const env = { ...process.env, HOME: home, XDG_CACHE_HOME: "", NODE_COMPILE_CACHE: undefined }
    const r = spawnSync(process.execPath, [bundle, "--storage", path.join(dir, "s"), "conversation", "ls"], {
      encoding: "utf8",
      env,
      timeout: 60_000
    })
    expect(r.status, r.stderr).toBe(0)
    const cache = path.join(home, ".cache", "parley", "compile-cache")
    expect(mode(cache)).toBe(0o700)
    expect(fs.readdirSync(cache).length).toBeGreaterThan(0)

    const open = path.join(dir, "home-open")
    fs.mkdirSync(path.join(open, ".cache", "parley", "compile-cache"), { recursive: true })
    fs.chmodSync(path.join(open, ".cache", "parley", "compile-cache"), 0o777)
    const refused = spawnSync(process.execPath, [bundle, "--storage", path.join(dir, "s"), "conversation", "ls"], {
      encoding: "utf8",
      env: { ...env, HOME: open },
      timeout: 60_000
    })
    expect(refused.status, refused.stderr).toBe(0)
    expect(fs.readdirSync(path.join(open, ".cache", "parley", "compile-cache"))).toStrictEqual([])
  })
})
