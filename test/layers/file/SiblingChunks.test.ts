// The built parley resolves its chunks' imports of one another itself
// (src/layers/file/SiblingChunks.ts): only `./NAME.mjs` from a module of the
// entry's own directory; everything else reaches Node's resolver as before.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as nodeModule from "node:module"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { sibling } from "../../../src/layers/file/SiblingChunks.ts"
import { binary, bundle } from "../../support/Cli.ts"
import { repoRoot, tempDir } from "../../support/Fixtures.ts"

const dir = tempDir("parley-sibling-chunks-")
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("which imports the hook answers", () => {
  const at = "file:///opt/parley/dist/"
  const entry = `${at}parley.mjs`

  it("a sibling .mjs of a module in the entry's directory: that directory's file", () => {
    expect(sibling("./chunk-AB12.mjs", entry, at)).toBe(`${at}chunk-AB12.mjs`)
    expect(sibling("./reading-chunk-X.mjs", `${at}parley-reading.mjs`, at)).toBe(`${at}reading-chunk-X.mjs`)
  })

  it("anything else goes to Node's resolver", () => {
    // Another directory, below or beside, a parent directory, a package, a built-in, a URL, another kind of file.
    expect(sibling("./sub/chunk.mjs", entry, at)).toBeUndefined()
    expect(sibling("../chunk.mjs", entry, at)).toBeUndefined()
    expect(sibling("./chunk.mjs", `${at}lib/x.mjs`, at)).toBeUndefined()
    expect(sibling("./chunk.mjs", "file:///opt/parley/distx/a.mjs", at)).toBeUndefined()
    expect(sibling("./chunk.mjs", "file:///elsewhere/a.mjs", at)).toBeUndefined()
    expect(sibling("effect/Effect", entry, at)).toBeUndefined()
    expect(sibling("node:fs", entry, at)).toBeUndefined()
    expect(sibling("file:///opt/parley/dist/chunk.mjs", entry, at)).toBeUndefined()
    expect(sibling("./chunk.js", entry, at)).toBeUndefined()
    expect(sibling("./chunk.json", entry, at)).toBeUndefined()
    // The main script (no parent) and a module with no URL.
    expect(sibling("./chunk.mjs", undefined, at)).toBeUndefined()
  })
})

/** The modules `entry` imports statically, and theirs: `import"./X.mjs"` and `from"./X.mjs"` in the built code. */
const staticGraph = (entry: string): ReadonlySet<string> => {
  const seen = new Set<string>()
  const visit = (url: string) => {
    if (seen.has(url)) return
    seen.add(url)
    for (const m of fs.readFileSync(new URL(url), "utf8").matchAll(/(?:\bimport|\bfrom)\s*"(\.\/[^"/]+\.mjs)"/g))
      visit(new URL(m[1]!, url).href)
  }
  visit(entry)
  return seen
}

// Absent before Node 22.15 / 23.5, though @types/node declares it.
const hasHooks = typeof nodeModule.registerHooks === "function"

describe("the built parley", () => {
  // A hook registered before parley's runs after it: it sees only what parley's hook passes on.
  const preload = path.join(dir, "resolved.mjs")
  fs.writeFileSync(
    preload,
    `import { registerHooks } from "node:module"
import * as fs from "node:fs"
registerHooks({
  resolve(specifier, context, next) {
    fs.appendFileSync(process.env.PARLEY_RESOLVED, JSON.stringify([specifier, context.parentURL ?? null]) + "\\n")
    return next(specifier, context)
  }
})
`
  )
  const storage = path.join(dir, ".parley")
  const small = "17758406187-missing-date-in-version-string"
  fs.cpSync(
    path.join(repoRoot, "test", "fixtures", "corpus", "jp", "conversations", small),
    path.join(storage, "conversations", small),
    { recursive: true }
  )

  it.runIf(hasHooks)(
    "a command of the command tree resolves none of its chunks' imports of one another through Node's resolver, and runs as before",
    () => {
      const resolved = path.join(dir, "resolved.jsonl")
      // Through the link npm installs: Node resolves the main script's link, so the chunks are the bundle's own.
      // `conversation check` runs the command tree (dist/parley-main.mjs and its chunks: dozens, imported as it runs).
      const r = spawnSync(
        process.execPath,
        ["--import", preload, binary, "--storage", storage, "conversation", "check"],
        {
          encoding: "utf8",
          env: { ...process.env, PARLEY_RESOLVED: resolved },
          timeout: 60_000
        }
      )
      expect(r.status, r.stderr).toBe(0)
      expect(r.stdout).toContain("ok        17758406187")
      const rows = fs
        .readFileSync(resolved, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as [string, string | null])
      // The entry imports nothing statically (scripts/build.mjs, ENTRY_EXTERNALS): every file of the build it
      // and its chunks import is parley's hook's, none reaches Node's resolver.
      const entry = pathToFileURL(fs.realpathSync(bundle)).href
      expect(staticGraph(entry)).toStrictEqual(new Set([entry]))
      expect(rows.filter(([specifier, parent]) => /^\.\/[^/]+\.mjs$/.test(specifier) && parent !== null)).toStrictEqual(
        []
      )
      // Built-ins still reach Node's resolver.
      expect(rows.some(([specifier]) => specifier.startsWith("node:"))).toBe(true)
    }
  )
})
