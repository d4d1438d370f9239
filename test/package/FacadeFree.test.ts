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
