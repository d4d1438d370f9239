/**
 * The public surface is an explicit list of entry points (docs/library.md#public-modules):
 * package.json `exports` names each module a consumer may import, with no
 * wildcard that would make every internal module public. Every consumer path
 * the docs use (JSDoc examples, README, docs/) is on the list, every entry is a
 * library module that ships, and the internals stay off it. A module is
 * internal when its header JSDoc says `@internal` (the one home of that
 * decision: the file store's machinery, the MCP and provider plumbing, the
 * coordinator's parts, text helpers that public modules re-export), or when
 * it is reached through `parley` / `parley/ai` (the generated namespaces and
 * the ai bridge's parts, whose docs the namespace hovers show).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { markdownPages } from "../support/DocPages.ts"
import { repoRoot } from "../support/Fixtures.ts"

const walk = (dir: string): Array<string> =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]))

type Target = string | { readonly types: string; readonly default: string }
const exportsMap = (
  JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { exports: Record<string, Target> }
).exports

/** The library's modules (the CLI is bundled into dist/parley.mjs, not a library module). */
const libraryModules = walk(path.join(repoRoot, "src"))
  .map((f) => path.relative(path.join(repoRoot, "src"), f).split(path.sep).join("/"))
  .filter((f) => f.endsWith(".ts") && f !== "bin.ts" && !f.startsWith("cli/"))
  .map((f) => f.slice(0, -".ts".length))

/** The source module an entry point's `default` target was compiled from. */
const sourceOf = (target: Target): string | undefined => {
  const file = typeof target === "string" ? target : target.default
  return file.startsWith("./dist/lib/") && file.endsWith(".js")
    ? file.slice("./dist/lib/".length, -".js".length)
    : undefined
}

/** Whether a module's header JSDoc marks it `@internal`. */
const isInternal = (module: string): boolean =>
  /@internal\b/.test(
    /^\s*\/\*\*([\s\S]*?)\*\//.exec(fs.readFileSync(path.join(repoRoot, "src", `${module}.ts`), "utf8"))?.[1] ?? ""
  )

/** Modules a consumer reaches through `parley` and `parley/ai` only (their headers are the namespaces' hover docs). */
const reachedThroughRoot = ["ai/Inquiry", "ai/ProviderBridge", "ai/ToolkitExecutor", "Namespaces", "ai/Namespaces"]

describe("package.json exports", () => {
  it("is an explicit list: no wildcard, each entry a library module with its own .d.ts", () => {
    expect(Object.keys(exportsMap).filter((k) => k.includes("*"))).toStrictEqual([])
    for (const [key, target] of Object.entries(exportsMap)) {
      if (key === "./package.json") continue
      const source = sourceOf(target)
      expect([key, source !== undefined && libraryModules.includes(source)]).toStrictEqual([key, true])
      expect([key, typeof target === "object" && target.types === `./dist/lib/${source}.d.ts`]).toStrictEqual([
        key,
        true
      ])
      // The subpath is the module's path, so a consumer path reads like the source tree.
      if (key !== "." && key !== "./ai" && key !== "./ai/testing") expect(key).toBe(`./${source}`)
    }
  })

  it("lists every consumer path the JSDoc examples, README and docs/ use", () => {
    const documents = [
      // An internal module's own examples are for parley's maintainers (they compile all the same: test/docs/Examples.test.ts).
      ...libraryModules.filter((m) => !isInternal(m)).map((m) => path.join(repoRoot, "src", `${m}.ts`)),
      ...markdownPages()
    ]
    const used = new Set<string>()
    for (const file of documents) {
      for (const m of fs.readFileSync(file, "utf8").matchAll(/(?:from\s+|import\s*\(\s*)"(parley(?:\/[\w/.-]+)?)"/g)) {
        used.add(m[1] === "parley" ? "." : `./${m[1]!.slice("parley/".length)}`)
      }
    }
    expect(used.size).toBeGreaterThan(80)
    expect([...used].filter((u) => exportsMap[u] === undefined).sort()).toStrictEqual([])
  })

  it("exports every library module but the internals: those marked @internal and those reached through parley and parley/ai", () => {
    const exported = [...new Set(Object.values(exportsMap).map(sourceOf))].filter((m) => m !== undefined).sort()
    const internal = libraryModules.filter(isInternal)
    expect(internal.length).toBeGreaterThan(40)
    for (const m of reachedThroughRoot)
      expect([m, libraryModules.includes(m), isInternal(m)]).toStrictEqual([m, true, false])
    expect(exported).toStrictEqual(
      libraryModules.filter((m) => !isInternal(m) && !reachedThroughRoot.includes(m)).sort()
    )
    // docs/library.md's counts, as written.
    const readme = fs.readFileSync(path.join(repoRoot, "docs", "library.md"), "utf8").replace(/\s+/g, " ")
    expect(readme).toContain(
      `…: ${exported.length} modules). The other ${internal.length + reachedThroughRoot.length} are`
    )
    expect(readme).toContain(`internal: ${internal.length} say \`@internal\``)
  })

  it("has @since tags (changesets keep the CHANGELOG): each entry point's module doc, and each export of parley and parley/ai", () => {
    for (const target of Object.values(exportsMap)) {
      const source = sourceOf(target)
      if (source === undefined) continue
      const header = /^\s*\/\*\*([\s\S]*?)\*\//.exec(
        fs.readFileSync(path.join(repoRoot, "src", `${source}.ts`), "utf8")
      )
      expect([source, /@since \d+\.\d+\.\d+/.test(header?.[1] ?? "")]).toStrictEqual([source, true])
    }
    for (const index of ["src/index.ts", "src/ai/index.ts"]) {
      const lines = fs.readFileSync(path.join(repoRoot, index), "utf8").split("\n")
      const untagged = lines.flatMap((line, i) => {
        if (!line.startsWith("export ")) return []
        let j = i - 1
        while (j >= 0 && lines[j]!.trim() === "") j--
        if (!lines[j]!.trim().endsWith("*/")) return [line]
        let k = j
        while (k >= 0 && !lines[k]!.includes("/**")) k--
        return lines.slice(k, j + 1).some((l) => /@since \d+\.\d+\.\d+/.test(l)) ? [] : [line]
      })
      expect([index, untagged]).toStrictEqual([index, []])
    }
    expect(fs.existsSync(path.join(repoRoot, ".changeset", "config.json"))).toBe(true)
    expect(fs.readFileSync(path.join(repoRoot, "CHANGELOG.md"), "utf8")).toMatch(/^# parley\n[\s\S]*\n## 0\.1\.0\n/)
  })
})
