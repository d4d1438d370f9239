// The fast paths' code caches (src/layers/file/CodeCache.ts): written by a run that found none, at a
// successful exit, private, one per command, Node version and options; refused ones are replaced, other
// builds' removed; a run goes on without one.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as CodeCache from "../../../src/layers/file/CodeCache.ts"
import { bundle } from "../../support/Cli.ts"
import { tempDir } from "../../support/Fixtures.ts"

const dir = tempDir("parley-code-cache-")
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("a bundle's key and its cache file", () => {
  it("the key is the hash on the bundle's last line; a file without one has none", () => {
    expect(CodeCache.keyOf('"use strict";var a=1;\n//parley-bundle 0123456789abcdef0123456789abcdef\n')).toBe(
      "0123456789abcdef0123456789abcdef"
    )
    expect(CodeCache.keyOf('"use strict";var a=1;\n')).toBeUndefined()
    expect(CodeCache.keyOf("//parley-bundle 0123456789abcdef\nvar a=1;\n")).toBeUndefined()
  })

  it("a cache file names the bundle, the command, the build, Node and its options", () => {
    const a = CodeCache.cacheFile("/c", "parley-query.cjs", "query", "k1", "v24.21.0", "")
    expect(path.dirname(a)).toBe("/c")
    expect(path.basename(a)).toMatch(/^parley-query\.cjs~query~k1~v24\.21\.0~[0-9a-f]+\.v8$/)
    expect(
      CodeCache.cacheFile("/c", "parley-query.cjs", "query", "k1", "v24.21.0", "--max-old-space-size=100")
    ).not.toBe(a)
    // A profile is a file name's part, whatever it holds.
    expect(path.basename(CodeCache.cacheFile("/c", "b.cjs", "../x y", "k", "v1", ""))).toMatch(/^b\.cjs~___x_y~k~v1~/)
  })

  it("runs a CommonJS script and returns its exports, its require relative to it", () => {
    const file = path.join(dir, "script.cjs")
    fs.writeFileSync(file, 'exports.base = require("path").basename(__filename);exports.sum = (a, b) => a + b\n')
    const exported = CodeCache.load(file, "test", undefined) as { base: string; sum: (a: number, b: number) => number }
    expect(exported.base).toBe("script.cjs")
    expect(exported.sum(2, 3)).toBe(5)
  })
})

describe("the built parley's code caches", () => {
  const storage = path.join(dir, "s")
  fs.mkdirSync(storage, { mode: 0o700 })
  const home = path.join(dir, "home")
  fs.mkdirSync(home)
  const cache = path.join(home, ".cache", "parley", "compile-cache")
  const env = { ...process.env, HOME: home, XDG_CACHE_HOME: "", NODE_COMPILE_CACHE: undefined, NODE_OPTIONS: undefined }
  const parley = (args: ReadonlyArray<string>, nodeArgs: ReadonlyArray<string> = []) =>
    spawnSync(process.execPath, [...nodeArgs, bundle, "--storage", storage, ...args], {
      encoding: "utf8",
      env,
      timeout: 60_000
    })
  const caches = () =>
    fs.existsSync(cache)
      ? fs
          .readdirSync(cache)
          .filter((f) => f.endsWith(".v8"))
          .sort()
      : []
  const of = (profile: string) => caches().filter((f) => f.startsWith(`parley-reading.cjs~${profile}~`))

  it("a run writes its command's cache (0600) at a successful exit, the next uses it as it is", () => {
    expect(parley(["conversation", "ls"]).status).toBe(0)
    const [ls] = of("Ls-text")
    expect(ls).toBeDefined()
    const file = path.join(cache, ls!)
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    expect(fs.statSync(file).size).toBeGreaterThan(10_000)
    const written = fs.statSync(file).mtimeMs
    const again = parley(["conversation", "ls"])
    expect(again.status, again.stderr).toBe(0)
    expect(again.stdout).toContain("No conversations yet")
    expect(fs.statSync(file).mtimeMs).toBe(written)
    // Another command of the same script has its own; no temporary file is left.
    expect(parley(["conversation", "ls", "--format", "json"]).status).toBe(0)
    expect(of("Ls-json")).toHaveLength(1)
    expect(fs.readdirSync(cache).filter((f) => f.endsWith(".tmp"))).toStrictEqual([])
  })

  it("a failed run writes none; other Node options have their own", () => {
    const failed = parley(["conversation", "print", "17758406187"])
    expect(failed.status).toBe(1)
    expect(of("Print-markdown")).toStrictEqual([])
    const before = of("Ls-text")
    expect(parley(["conversation", "ls"], ["--max-old-space-size=200"]).status).toBe(0)
    expect(of("Ls-text")).toHaveLength(before.length + 1)
  })

  it("a cache V8 refuses is replaced, and the run goes on; another build's is removed, another command's kept", () => {
    for (const f of of("Ls-text")) fs.rmSync(path.join(cache, f))
    expect(parley(["conversation", "ls"]).status).toBe(0)
    const [ls] = of("Ls-text")
    const file = path.join(cache, ls!)
    fs.writeFileSync(file, "not a code cache")
    const refused = parley(["conversation", "ls"])
    expect(refused.status, refused.stderr).toBe(0)
    expect(refused.stdout).toContain("No conversations yet")
    expect(fs.statSync(file).size).toBeGreaterThan(10_000)

    const older = ls!.replace(/~[0-9a-f]{32}~/, `~${"0".repeat(32)}~`)
    const otherCommand = older.replace("~Ls-text~", "~Print-html~")
    fs.writeFileSync(path.join(cache, older), "old build")
    fs.writeFileSync(path.join(cache, otherCommand), "old build, another command")
    fs.rmSync(file)
    expect(parley(["conversation", "ls"]).status).toBe(0)
    expect(caches()).not.toContain(older)
    expect(caches()).toContain(otherCommand)
    expect(caches()).toContain(ls)
  })

  it("a cache directory others can write in is not used: nothing is written, the command runs", () => {
    const open = path.join(dir, "home-open")
    const openCache = path.join(open, ".cache", "parley", "compile-cache")
    fs.mkdirSync(openCache, { recursive: true })
    fs.chmodSync(openCache, 0o777)
    const r = spawnSync(process.execPath, [bundle, "--storage", storage, "conversation", "ls"], {
      encoding: "utf8",
      env: { ...env, HOME: open },
      timeout: 60_000
    })
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toContain("No conversations yet")
    expect(fs.readdirSync(openCache)).toStrictEqual([])
  })
})
