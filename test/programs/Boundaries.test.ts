// The layers of src (brief "Layout"): the programs ask for services and never
// choose an implementation (docs/architecture.md#the-rooms); services hold contracts over the
// domain only and the domain is on its own (docs/decisions.md#services-are-contracts); no module
// imports itself back through others.
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { repoRoot } from "../support/Fixtures.ts"

const filesUnder = (dir: string): Array<string> =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]))

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

/** The files under src/<part>, and each one's relative imports as paths under src. */
const importsUnder = (part: string): Array<{ file: string; targets: Array<string> }> =>
  filesUnder(path.join(repoRoot, "src", part))
    .filter((f) => f.endsWith(".ts"))
    .map((file) => ({
      file: path.relative(path.join(repoRoot, "src"), file),
      targets: specifiers(fs.readFileSync(file, "utf8"))
        .filter((s) => s.startsWith("."))
        .map((s) => path.relative(path.join(repoRoot, "src"), path.resolve(path.dirname(file), s)))
        // A JSDoc example of a module importing the module itself is not an edge.
        .filter((target) => target !== path.relative(path.join(repoRoot, "src"), file))
    }))

const outside = (part: string, allowed: ReadonlyArray<string>): Array<string> =>
  importsUnder(part).flatMap(({ file, targets }) =>
    targets.filter((t) => !allowed.some((a) => t.startsWith(`${a}/`))).map((t) => `${file} imports ${t}`)
  )

describe("src/services and src/domain", () => {
  it("services import only the domain and other contracts", () => {
    expect(outside("services", ["domain", "services"])).toStrictEqual([])
  })

  it("the domain imports only the domain", () => {
    expect(outside("domain", ["domain"])).toStrictEqual([])
  })
})

describe("src", () => {
  it("has no import cycle", () => {
    const graph = new Map(importsUnder(".").map(({ file, targets }) => [file, targets]))
    const cycles: Array<string> = []
    const state = new Map<string, "open" | "done">()
    const stack: Array<string> = []
    const visit = (file: string): void => {
      state.set(file, "open")
      stack.push(file)
      for (const next of graph.get(file) ?? []) {
        if (state.get(next) === "open") cycles.push([...stack.slice(stack.indexOf(next)), next].join(" -> "))
        else if (!state.has(next)) visit(next)
      }
      stack.pop()
      state.set(file, "done")
    }
    for (const file of graph.keys()) if (!state.has(file)) visit(file)
    expect(graph.size).toBeGreaterThan(50)
    expect(cycles).toStrictEqual([])
  })
})

describe("src/cli", () => {
  // The edge parses flags, chooses layers and renders: the server's and the cluster's SQL, tables and
  // entities are the library's (src/layers/cluster/, docs/architecture.md#the-rooms).
  it("imports no SQL module, holds no SQL text and defines no Entity", () => {
    const files = filesUnder(path.join(repoRoot, "src", "cli")).filter((f) => f.endsWith(".ts"))
    expect(files.length).toBeGreaterThan(20)
    const offending = files.flatMap((file) => {
      const source = fs.readFileSync(file, "utf8")
      const name = path.relative(repoRoot, file)
      return [
        ...specifiers(source)
          .filter((s) => /^@effect\/sql|^effect\/sql\/|^effect\/cluster\/Entity/.test(s))
          .map((s) => `${name} imports ${s}`),
        ...(/\b(SELECT|INSERT INTO|CREATE TABLE|ALTER TABLE|DELETE FROM)\b/.test(source) ? [`${name} holds SQL`] : []),
        ...(/\bEntity\.make\s*\(/.test(source) ? [`${name} defines an Entity`] : [])
      ]
    })
    expect(offending).toStrictEqual([])
  })
})
