// The CLI build's stand-ins for node:fs and node:fs/promises (scripts/facadeFree.mjs): code bundled
// with them reads what Node's own modules give, loads node:fs/promises only when it is called, prints
// no warning, and a name the stand-in lacks fails the build instead of reading as undefined.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { build } from "esbuild"
import { tempDir } from "../support/Fixtures.ts"

// @ts-expect-error: a plain .mjs build script, no declarations (scripts/ is not TypeScript)
const { facadeFree } = (await import("../../scripts/facadeFree.mjs")) as { facadeFree: import("esbuild").Plugin }

const dir = tempDir("parley-facade-free-")
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** Bundles `source` as the CLI build does (ESM for Node, `require` from the banner) and runs it. */
const bundled = async (name: string, source: string) => {
  const entry = path.join(dir, `${name}.mjs`)
  fs.writeFileSync(entry, source)
  const outfile = path.join(dir, `${name}.out.mjs`)
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    logLevel: "silent",
    logOverride: { "import-is-undefined": "error" },
    banner: { js: "import { createRequire as __cr } from 'node:module';const require = __cr(import.meta.url);" },
    plugins: [facadeFree]
  })
  return spawnSync(process.execPath, [outfile], { cwd: dir, encoding: "utf8", timeout: 30_000 })
}

describe("node:fs and node:fs/promises through the build's stand-ins", () => {
  it("read what Node's own modules give, in every form of import", async () => {
    fs.writeFileSync(path.join(dir, "hello.txt"), "hello")
    const r = await bundled(
      "forms",
      `import * as fs from "node:fs"
import fsDefault, { readFileSync, constants, promises } from "node:fs"
import * as fsp from "node:fs/promises"
import fspDefault, { readFile, constants as pconstants } from "node:fs/promises"
const own = process.getBuiltinModule("node:fs")
const loaded = () => process.moduleLoadList.includes("NativeModule internal/fs/promises")
const before = loaded()
const out = {
  before,
  sync: readFileSync("hello.txt", "utf8") + fs.readFileSync("hello.txt", "utf8") + fsDefault.readFileSync("hello.txt", "utf8"),
  viaPromises: await promises.readFile("hello.txt", "utf8") + await fs.promises.readFile("hello.txt", "utf8"),
  viaFsp: await fsp.readFile("hello.txt", "utf8") + await readFile("hello.txt", "utf8") + await fspDefault.readFile("hello.txt", "utf8"),
  constants: constants === own.constants,
  pconstants: [pconstants.O_NOFOLLOW, fsp.constants.F_OK, fspDefault.constants.O_RDONLY],
  own: [own.constants.O_NOFOLLOW, own.constants.F_OK, own.constants.O_RDONLY],
  stats: fs.statSync("hello.txt") instanceof fs.Stats,
  after: loaded()
}
console.log(JSON.stringify(out))`
    )
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
    const out = JSON.parse(r.stdout) as Record<string, unknown>
    expect(out).toStrictEqual({
      before: false,
      sync: "hellohellohello",
      viaPromises: "hellohello",
      viaFsp: "hellohellohello",
      constants: true,
      pconstants: out["own"],
      own: out["own"],
      stats: true,
      after: true
    })
    expect((out["own"] as Array<number>).every((n) => typeof n === "number")).toBe(true)
  })

  it("readFile, readdir, stat and lstat given a path go through node:fs's callbacks: the same values and errors, node:fs/promises not loaded", async () => {
    fs.mkdirSync(path.join(dir, "tree", "sub"), { recursive: true })
    fs.writeFileSync(path.join(dir, "tree", "a.txt"), "aé")
    fs.symlinkSync("a.txt", path.join(dir, "tree", "link"))
    fs.writeFileSync(path.join(dir, "tree", "sub", "b.txt"), "b")
    fs.symlinkSync("sub", path.join(dir, "tree", "sublink"))
    const r = await bundled(
      "callbacks",
      `import * as fsp from "node:fs/promises"
const loaded = () => process.moduleLoadList.includes("NativeModule internal/fs/promises")
// Each call as data: its value, or its error's own fields.
const shown = (p) => p.then(
  (v) => ({ value: Buffer.isBuffer(v) ? [...v] : Array.isArray(v) ? v.map((d) => typeof d === "string" ? d : [d.name, d.isDirectory(), d.isSymbolicLink()]).sort() : typeof v === "string" ? v : { size: String(v.size), dir: v.isDirectory(), link: v.isSymbolicLink(), big: typeof v.size === "bigint" } }),
  (e) => ({ error: [e.constructor.name, e.code, e.syscall, e.path, e.errno, e.message] })
)
const calls = (f) => [
  f.readFile("tree/a.txt", "utf8"), f.readFile("tree/a.txt"), f.readFile("tree/a.txt", { encoding: "latin1" }),
  f.readFile("tree/missing"), f.readFile("tree"), f.readFile("tree/a.txt", { encoding: "nonsense" }),
  f.readdir("tree"), f.readdir("tree", { withFileTypes: true }), f.readdir("tree/a.txt"), f.readdir("tree/missing"),
  f.stat("tree/link"), f.lstat("tree/link"), f.stat("tree", { bigint: true }), f.stat("tree/missing"), f.lstat("tree/missing/x")
]
// Left to node:fs/promises: a recursive readdir (the callback form follows symlinked directories), a null options, a third argument.
const forwarded = (f) => [f.readdir("tree", { recursive: true }), f.stat("tree", null), f.readFile("tree/a.txt", "utf8", "extra")]
const ours = await Promise.all(calls(fsp).map(shown))
const before = loaded()
ours.push(...(await Promise.all(forwarded(fsp).map(shown))))
const nodeOwn = process.getBuiltinModule("node:fs/promises")
const own = await Promise.all([...calls(nodeOwn), ...forwarded(nodeOwn)].map(shown))
// A FileHandle is node:fs/promises' own.
const handle = await process.getBuiltinModule("node:fs/promises").open("tree/a.txt")
const viaHandle = await fsp.readFile(handle, "utf8")
await handle.close()
console.log(JSON.stringify({ before, same: JSON.stringify(ours) === JSON.stringify(own), ours, own, viaHandle }))`
    )
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
    const out = JSON.parse(r.stdout) as {
      before: boolean
      same: boolean
      ours: unknown
      own: unknown
      viaHandle: string
    }
    expect(out.ours).toStrictEqual(out.own)
    expect(out.same).toBe(true)
    expect(out.before).toBe(false)
    expect(out.viaHandle).toBe("aé")
    // The errors were errors: a missing file says ENOENT, a directory read as a file EISDIR.
    expect(JSON.stringify(out.ours)).toMatch(/ENOENT[\s\S]*EISDIR[\s\S]*ERR_INVALID_ARG_VALUE[\s\S]*ENOTDIR/)
  })

  it("mkdir, rm, access, unlink, rename, link and writeFile given paths go through node:fs's callbacks: the same values, errors and files, node:fs/promises not loaded", async () => {
    for (const side of ["ours", "own"]) fs.mkdirSync(path.join(dir, "paths", side), { recursive: true })
    const r = await bundled(
      "path-callbacks",
      `import * as fsp from "node:fs/promises"
import * as fs from "node:fs"
const loaded = () => process.moduleLoadList.includes("NativeModule internal/fs/promises")
const shown = (p) => p.then(
  (v) => ({ value: v === undefined ? null : v }),
  (e) => ({ error: [e.constructor.name, e.code, e.syscall, e.path, e.dest, e.errno, e.message] })
)
// One after another (each may depend on the one before), in a directory of each side's own, by relative paths.
const steps = (f) => [
  () => f.mkdir("a/b/c", { recursive: true, mode: 0o700 }), () => f.mkdir("a/b/c", { recursive: true }), () => f.mkdir("a"),
  () => f.mkdir("x/y"), () => f.mkdir("d", 0o750),
  () => f.writeFile("a/t.txt", "té", { mode: 0o600 }), () => f.writeFile("a/t.txt", "x", { flag: "wx" }),
  () => f.writeFile("a/u.bin", new Uint8Array([1, 2, 3])), () => f.writeFile("a/v.txt", "v", "latin1"), () => f.writeFile("missing/t", "t"),
  () => f.link("a/t.txt", "a/l.txt"), () => f.link("a/t.txt", "a/l.txt"), () => f.link("missing", "a/m"),
  () => f.rename("a/l.txt", "a/r.txt"), () => f.rename("missing", "a/s"),
  () => f.access("a/r.txt"), () => f.access("a/r.txt", fs.constants.W_OK), () => f.access("missing"),
  () => f.unlink("a/r.txt"), () => f.unlink("a/r.txt"), () => f.unlink("a"),
  () => f.rm("a/u.bin"), () => f.rm("missing"), () => f.rm("missing", { force: true }), () => f.rm("a/b"), () => f.rm("a/b", { recursive: true }),
  () => f.writeFile("w.txt", "w", { flag: "a", encoding: "nonsense" })
]
const tree = (d) => fs.readdirSync(d, { recursive: true }).sort().map((n) => { const s = fs.lstatSync(d + "/" + n); return [n, s.mode & 0o7777 & ~process.umask(), s.isFile() ? fs.readFileSync(d + "/" + n, "hex") : null] })
const run = async (f, side) => { process.chdir(side); const out = []; for (const s of steps(f)) out.push(await shown(s())); process.chdir(".."); return { out, tree: tree(side) } }
process.chdir("paths")
const ours = await run(fsp, "ours")
const before = loaded()
const own = await run(process.getBuiltinModule("node:fs/promises"), "own")
console.log(JSON.stringify({ before, ours, own }))`
    )
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
    const out = JSON.parse(r.stdout) as { before: boolean; ours: unknown; own: unknown }
    expect(out.ours).toStrictEqual(out.own)
    expect(out.before).toBe(false)
    // The errors were errors, where each step should fail.
    expect((out.ours as { out: Array<{ error?: Array<unknown> }> }).out.map((o) => o.error?.[1] ?? "ok")).toStrictEqual(
      [
        ...["ok", "ok", "EEXIST", "ENOENT", "ok"],
        ...["ok", "EEXIST", "ok", "ok", "ENOENT"],
        ...["ok", "EEXIST", "ENOENT", "ok", "ENOENT"],
        ...["ok", "ok", "ENOENT", "ok", "ENOENT", "EISDIR"],
        ...["ok", "ENOENT", "ok", "ERR_FS_EISDIR", "ok", "ERR_INVALID_ARG_VALUE"]
      ]
    )
  })

  it("fails the build on a name it lacks (a getter of Node's, a deprecated constant), not at run time", async () => {
    for (const name of ["ReadStream", "F_OK"]) {
      await expect(
        bundled(`named-${name}`, `import { ${name} } from "node:fs"\nconsole.log(${name})\n`)
      ).rejects.toThrow(new RegExp(`No matching export in "facade-free:fs" for import "${name}"`))
      // Read off the namespace, esbuild only warns that it is undefined: the build makes that an error.
      await expect(
        bundled(`namespace-${name}`, `import * as fs from "node:fs"\nconsole.log(fs.${name})\n`)
      ).rejects.toThrow(new RegExp(`Import "${name}" will always be undefined`))
    }
  })
})
