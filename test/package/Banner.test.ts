// The CLI build's banner (scripts/banner.mjs): a built file gets a `require` only when it names
// one, made on its first call when the file only calls it; the built CLI's files are so.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { build } from "esbuild"
import { repoRoot, tempDir } from "../support/Fixtures.ts"

// @ts-expect-error: a plain .mjs build script, no declarations (scripts/ is not TypeScript)
const { BANNER, trimBanner } = (await import("../../scripts/banner.mjs")) as {
  BANNER: string
  trimBanner: (code: string) => string
}

const dir = tempDir("parley-banner-")
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const SHEBANG = "#!/usr/bin/env node\n"

describe("each built file's banner", () => {
  it("a file that never names require gets none; __require and the like are other names", () => {
    expect(trimBanner(`${BANNER}export const a=1;`)).toBe(`${SHEBANG}export const a=1;`)
    expect(trimBanner(`${BANNER}import{a as __require}from"./c.mjs";__require("x");`)).toBe(
      `${SHEBANG}import{a as __require}from"./c.mjs";__require("x");`
    )
  })

  it("a file that calls require gets one made on its first call, which works", () => {
    const code = trimBanner(
      `${BANNER}var r=(typeof require<"u"?require:0);export const v=function(a){return require.apply(this,arguments)}("node:path").sep;`
    )
    expect(code.startsWith(SHEBANG)).toBe(true)
    expect(code).toContain("__rq??=")
    expect(code).not.toContain("const require = __cr(import.meta.url)")
    const file = path.join(dir, "lazy.mjs")
    fs.writeFileSync(file, `${code}\nconsole.log(v, typeof r)`)
    const run = spawnSync(process.execPath, [file], { encoding: "utf8", timeout: 30_000 })
    expect(run.stderr).toBe("")
    expect(run.stdout).toBe(`${path.sep} function\n`)
  })

  it("a require made on first use answers what esbuild's __require passes on from other chunks", async () => {
    // A bundled `require.resolve(x)` is written `__require.resolve(x)`, minified to a name of a
    // letter or two and imported from the chunk that defines __require: no regex of a file sees it.
    const src = path.join(dir, "src")
    fs.mkdirSync(src, { recursive: true })
    fs.writeFileSync(
      path.join(src, "dep.cjs"),
      `module.exports = [require("node:path").sep, require.resolve("node:fs"), typeof require.cache, require.main]`
    )
    for (const e of ["a", "b"])
      fs.writeFileSync(path.join(src, `${e}.mjs`), `import d from "./dep.cjs"; console.log(JSON.stringify(d))`)
    const out = path.join(dir, "out")
    await build({
      entryPoints: [path.join(src, "a.mjs"), path.join(src, "b.mjs")],
      bundle: true,
      splitting: true,
      minify: true,
      format: "esm",
      platform: "node",
      outdir: out,
      outExtension: { ".js": ".mjs" },
      banner: { js: BANNER },
      logLevel: "silent"
    })
    for (const f of fs.readdirSync(out)) {
      const file = path.join(out, f)
      fs.writeFileSync(file, trimBanner(fs.readFileSync(file, "utf8")))
    }
    const run = spawnSync(process.execPath, [path.join(out, "a.mjs")], { encoding: "utf8", timeout: 30_000 })
    expect(run.stderr).toBe("")
    expect(JSON.parse(run.stdout)).toStrictEqual([path.sep, "node:fs", "object", null])
  })

  it("any other use of require keeps esbuild's banner", () => {
    const code = `${BANNER}export const p=require.resolve("x");`
    expect(trimBanner(code)).toBe(code)
  })

  it("a file without the banner fails the build", () => {
    expect(() => trimBanner("export const a=1;")).toThrow(/banner/)
  })
})

describe("the built CLI", () => {
  it("none of its files makes a require it never uses, and most make none", () => {
    const dist = path.join(repoRoot, "dist")
    const files = fs.readdirSync(dist).filter((f) => f.endsWith(".mjs"))
    const code = (f: string) => fs.readFileSync(path.join(dist, f), "utf8")
    // esbuild's banner stays only where require is used beyond a call.
    const eager = files.filter((f) => code(f).includes(BANNER))
    expect(eager.filter((f) => !/\brequire\s*\.\s*(?!apply\b)/.test(code(f).slice(BANNER.length)))).toStrictEqual([])
    const none = files.filter((f) => !code(f).includes("createRequire"))
    expect(none.length).toBeGreaterThan(files.length / 2)
    // The entry keeps its shebang: npm links `parley` to it.
    expect(fs.readFileSync(path.join(dist, "parley.mjs"), "utf8").startsWith(SHEBANG)).toBe(true)
  })
})
