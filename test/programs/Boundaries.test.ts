// The programs ask for services and never choose an implementation (issue 14
// item 5): no file under src/programs imports a layer or the CLI.
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { repoRoot } from "../support/Fixtures.ts"

const filesUnder = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]))

/** Every module specifier a file imports or re-exports (static and dynamic). */
const specifiers = (source: string): Array<string> =>
  [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g)].map((m) => m[1]!)

describe("src/programs", () => {
  it("imports no layer and nothing from the CLI", () => {
    const programs = path.join(repoRoot, "src", "programs")
    const files = filesUnder(programs).filter((f) => f.endsWith(".ts"))
    expect(files.length).toBeGreaterThan(4)
    const offending = files.flatMap((file) =>
      specifiers(fs.readFileSync(file, "utf8"))
        .filter((s) => s.startsWith("."))
        .map((s) => path.relative(path.join(repoRoot, "src"), path.resolve(path.dirname(file), s)))
        .filter((target) => target.startsWith("layers") || target.startsWith("cli") || target === "bin.ts")
        .map((target) => `${path.relative(repoRoot, file)} imports ${target}`)
    )
    expect(offending).toStrictEqual([])
  })
})
