// The fast paths' code caches (src/layers/file/CodeCache.ts): written by a run that found none, at a
// successful exit, private, one per command, Node version and options; refused ones are replaced, other
// builds' removed; a run goes on without one.
import { spawn, spawnSync } from "node:child_process"
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

  it("Node's options count, its loaders' paths do not", () => {
    expect(CodeCache.flagsOf(["--require", "/tmp/a.cjs", "--max-old-space-size=100"], "--import=/tmp/b.mjs -r c")).toBe(
      "--max-old-space-size=100"
    )
    expect(CodeCache.flagsOf([], "--stack-size=900")).toBe("--stack-size=900")
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
  // A listing's cache is the listing's own script's (dist/parley-ls.cjs); a print's, the reading commands'.
  const of = (profile: string) =>
    caches().filter((f) => f.startsWith(`parley-${profile.startsWith("Ls-") ? "ls" : "reading"}.cjs~${profile}~`))

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

  it("a run ended by a signal it handles (Ctrl-C here) keeps its cache, as a person ends an ask or leaves an attach", async () => {
    // A storage of its own: the others stay empty.
    const asks = path.join(dir, "asks")
    fs.mkdirSync(asks, { mode: 0o700 })
    const ask = spawn(process.execPath, [bundle, "--storage", asks, "ask", "Deploy?", "--new"], {
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    // Once it is asking (its question listed), Ctrl-C; bounded, and the ask ended whatever happens.
    try {
      const deadline = Date.now() + 20_000
      for (;;) {
        const listed = spawnSync(process.execPath, [bundle, "--storage", asks, "inbox"], { encoding: "utf8", env })
        if (listed.stdout.includes("Deploy?")) break
        if (Date.now() > deadline) throw new Error(`the ask was not listed: ${listed.stdout}${listed.stderr}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    } catch (error) {
      ask.kill("SIGKILL")
      throw error
    }
    ask.kill("SIGINT")
    const code = await new Promise<number | null>((resolve) => ask.once("exit", (c) => resolve(c)))
    expect(code).toBe(130)
    expect(caches().filter((f) => f.startsWith("parley-ask.cjs~ask~"))).toHaveLength(1)
  })

  it("a failed run writes none; other Node options have their own", () => {
    const failed = parley(["conversation", "print", "17758406187"])
    expect(failed.status).toBe(1)
    expect(of("Print-markdown")).toStrictEqual([])
    const before = of("Ls-text")
    expect(parley(["conversation", "ls"], ["--max-old-space-size=200"]).status).toBe(0)
    expect(of("Ls-text")).toHaveLength(before.length + 1)
  })

  it("a cache V8 refuses is replaced, and the run goes on; the four newest of a command's stay, another command's are kept", () => {
    for (const f of of("Ls-text")) fs.rmSync(path.join(cache, f))
    expect(parley(["conversation", "ls"]).status).toBe(0)
    const [ls] = of("Ls-text")
    const file = path.join(cache, ls!)
    fs.writeFileSync(file, "not a code cache")
    const refused = parley(["conversation", "ls"])
    expect(refused.status, refused.stderr).toBe(0)
    expect(refused.stdout).toContain("No conversations yet")
    expect(fs.statSync(file).size).toBeGreaterThan(10_000)

    // Of one command's files (other builds, Node versions, options) the four newest stay: two installs run in
    // turn each keep theirs, the oldest builds' go; another command's are its own.
    for (const f of of("Ls-text")) fs.rmSync(path.join(cache, f))
    const builds = [1, 2, 3, 4, 5].map((n) => ls!.replace(/~[0-9a-f]{32}-[0-9a-f]+~/, `~${String(n).repeat(32)}-0~`))
    builds.forEach((b, n) => {
      fs.writeFileSync(path.join(cache, b), "another build")
      // Build 1 the oldest, 5 the newest.
      fs.utimesSync(path.join(cache, b), 1_000_000 + n, 1_000_000 + n)
    })
    const otherCommand = builds[0]!.replace("parley-ls.cjs~Ls-text~", "parley-reading.cjs~Print-html~")
    fs.writeFileSync(path.join(cache, otherCommand), "another build, another command")
    fs.utimesSync(path.join(cache, otherCommand), 1_000_000, 1_000_000)
    // What a process that is gone left: a temporary file, and a mark with its cache (which goes with it).
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid
    const marked = otherCommand.replace("~Print-html~", "~Print-json~")
    fs.writeFileSync(path.join(cache, marked), "a cache whose reader died")
    fs.writeFileSync(path.join(cache, `${marked}.${gone}.run`), "")
    fs.writeFileSync(path.join(cache, `${otherCommand}.${gone}.tmp`), "half written")
    expect(parley(["conversation", "ls"]).status).toBe(0)
    expect(of("Ls-text")).toStrictEqual([ls!, ...builds.slice(2)].sort())
    expect(caches()).toContain(otherCommand)
    expect(caches()).not.toContain(marked)
    expect(fs.readdirSync(cache).filter((f) => /\.(run|tmp)$/.test(f))).toStrictEqual([])
  })

  it("a damaged cache crashes one run, not the next; one others could write is not used, and is replaced", () => {
    for (const f of of("Ls-text")) fs.rmSync(path.join(cache, f))
    expect(parley(["conversation", "ls"]).status).toBe(0)
    const [ls] = of("Ls-text")
    const file = path.join(cache, ls!)
    const good = fs.readFileSync(file)
    // V8 checks no checksum: handed this, it aborts the process as it deserializes (SIGTRAP).
    const damaged = Buffer.from(good)
    for (let i = 1_000; i < damaged.length; i += 4_096) damaged[i]! ^= 0x5a
    fs.writeFileSync(file, damaged)
    const crashed = parley(["conversation", "ls"])
    expect(crashed.status).not.toBe(0)
    // Its mark is left behind: the next run takes the cache for damaged, runs without it, and writes a new one.
    const healed = parley(["conversation", "ls"])
    expect(healed.status, healed.stderr).toBe(0)
    expect(healed.stdout).toContain("No conversations yet")
    expect(fs.readFileSync(file).equals(damaged)).toBe(false)
    expect(fs.readdirSync(cache).filter((f) => f.endsWith(".run"))).toStrictEqual([])
    // Another's write: group-writable, so not read, and written again the user's alone.
    fs.chmodSync(file, 0o660)
    expect(parley(["conversation", "ls"]).status).toBe(0)
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
  })

  it("a run killed while it used a cache has it made again by the next; one still running leaves it", () => {
    const [ls] = of("Ls-text")
    const file = path.join(cache, ls!)
    const written = fs.statSync(file).mtimeMs
    // A live process's mark (this test's own pid): the cache is used as it is.
    fs.writeFileSync(`${file}.${process.pid}.run`, "")
    expect(parley(["conversation", "ls"]).status).toBe(0)
    expect(fs.statSync(file).mtimeMs).toBe(written)
    fs.rmSync(`${file}.${process.pid}.run`)
    // A gone process's mark: made again.
    const gone = spawnSync(process.execPath, ["-e", "0"])
    expect(gone.status).toBe(0)
    fs.writeFileSync(`${file}.${gone.pid}.run`, "")
    expect(parley(["conversation", "ls"]).status).toBe(0)
    expect(fs.statSync(file).mtimeMs).not.toBe(written)
    expect(fs.readdirSync(cache).filter((f) => f.endsWith(".run"))).toStrictEqual([])
  })

  it("a script edited in place (the same length, the same last line) is not run from the old one's cache", () => {
    const copy = path.join(dir, "dist-copy")
    fs.cpSync(path.dirname(bundle), copy, { recursive: true, filter: (f) => !f.includes(`${path.sep}.bin`) })
    const entry = path.join(copy, "parley.mjs")
    const ls = () =>
      spawnSync(process.execPath, [entry, "--storage", storage, "conversation", "ls"], {
        encoding: "utf8",
        env,
        timeout: 60_000
      })
    expect(ls().stdout).toContain("No conversations yet")
    const script = path.join(copy, "parley-ls.cjs")
    const text = fs.readFileSync(script, "utf8")
    expect(text).toContain("No conversations yet")
    fs.writeFileSync(script, text.replace("No conversations yet", "No conversations YET"))
    expect(ls().stdout).toContain("No conversations YET")
    fs.rmSync(copy, { recursive: true, force: true })
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
