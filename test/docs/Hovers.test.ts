/**
 * Module docs show on namespace hovers (docs/library.md#public-modules). `export * as Events from
 * "./Events.ts"` re-exports a module as a namespace, but TypeScript's hover
 * on it shows no documentation at all (the alias resolves to the source
 * file, which has no JSDoc of its own). parley's namespaces are generated
 * (scripts/namespaces.ts) as a documented `const` merged with a `declare
 * namespace` of the module's types; this probe is what an editor does: the
 * TypeScript language service on a consumer file importing every namespace
 * export of `parley` and `parley/ai` (resolved to the sources through
 * `paths`, like the @example check), a hover on each, then a type access for
 * every type each module exports and explicit generics.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import ts from "typescript"
import * as Parley from "../../src/index.ts"
import * as ParleyAi from "../../src/ai/index.ts"
import { repoRoot } from "../support/Fixtures.ts"
import { genericUses, hoverProbe, namespacesOf } from "../support/Hover.ts"

describe("namespace hovers", () => {
  it("every namespace export of parley and parley/ai shows its module's doc on hover, and keeps its types", () => {
    const root = namespacesOf(Parley)
    const ai = namespacesOf(ParleyAi)
    expect(root.length).toBeGreaterThan(40)
    expect(ai).toStrictEqual(["Inquiry"])
    const base = JSON.parse(fs.readFileSync(path.join(repoRoot, "tsconfig.json"), "utf8")) as {
      compilerOptions: Record<string, unknown>
    }
    // Inside node_modules/ so that `effect` and `@types/node` resolve as they do for the sources.
    const dir = fs.mkdtempSync(path.join(repoRoot, "node_modules", ".parley-hovers-"))
    try {
      const src = path.join(repoRoot, "src")
      const { options } = ts.convertCompilerOptionsFromJson(
        {
          ...base.compilerOptions,
          noUnusedLocals: false,
          paths: {
            parley: [path.join(src, "index.ts")],
            "parley/ai": [path.join(src, "ai", "index.ts")]
          }
        },
        dir
      )
      const report = hoverProbe({
        dir,
        options,
        namespaces: [
          ["parley", root],
          ["parley/ai", ai]
        ],
        extra: genericUses
      })
      const undocumented = Object.entries(report.docs)
        .filter(([, doc]) => doc === "")
        .map(([name]) => name)
      expect(undocumented).toStrictEqual([])
      // The doc is the module's own header: `Events` opens with what src/domain/event/Events.ts says first.
      const header = /^\s*\/\*\*\s*\n\s*\* (.*)/.exec(
        fs.readFileSync(path.join(src, "domain", "event", "Events.ts"), "utf8")
      )![1]!
      expect(report.docs["Events"]!.startsWith(header)).toBe(true)
      expect(report.typeAccesses).toBeGreaterThan(100)
      expect(report.errors).toStrictEqual([])
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 300_000)

  it("no module is re-exported with `export * as` (its hover would show nothing)", () => {
    const walk = (d: string): Array<string> =>
      fs
        .readdirSync(d, { withFileTypes: true })
        .flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]))
    const found = walk(path.join(repoRoot, "src"))
      .filter((f) => f.endsWith(".ts"))
      .flatMap((f) =>
        fs
          .readFileSync(f, "utf8")
          .split("\n")
          .filter((l) => /^export \* as /.test(l))
          .map((l) => `${path.relative(repoRoot, f)}: ${l}`)
      )
    expect(found).toStrictEqual([])
  })
})
