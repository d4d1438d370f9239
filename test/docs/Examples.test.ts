/**
 * Every `@example` in the library's JSDoc compiles (docs/library.md): the
 * blocks are what an IDE shows next to each export, so a block that does not
 * typecheck teaches the wrong API.
 *
 * Each ```ts block under an `@example` tag in src/ (the CLI aside: it is not
 * part of the library) is written to its own module in a temp directory;
 * `parley`, `parley/ai` and `parley/<path>` map to the sources through
 * tsconfig `paths` (a relative import, which a consumer could not write, is
 * reported; it would resolve from the source file's folder). One `tsc --noEmit` run checks them all, with the repository's
 * strict settings (unused locals allowed: an example may show a value it does
 * not use). Blocks may declare their inputs with `declare const x: T`.
 * The ```ts blocks of README.md and of every page under docs/ are held to the
 * same rule.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { targets } from "../../scripts/namespaces.ts"
import { markdownPages } from "../support/DocPages.ts"
import { repoRoot } from "../support/Fixtures.ts"

interface Block {
  readonly file: string
  readonly line: number
  readonly code: string
}

const walk = (dir: string): Array<string> =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith(".ts") ? [path.join(dir, e.name)] : []
    )

/** The ```ts blocks that follow an `@example` tag inside JSDoc comments. */
const examplesIn = (file: string, text: string): Array<Block> => {
  const blocks: Array<Block> = []
  const lines = text.split("\n")
  let inExample = false
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/^\s*\* ?/, "")
    if (/^@example\b/.test(line)) inExample = true
    else if (/^@\w/.test(line) || /\*\//.test(lines[i]!)) inExample = false
    if (!inExample || !/^```(ts|typescript)\b/.test(line)) continue
    const start = i + 1
    const body: Array<string> = []
    for (i = start; i < lines.length && !/^```\s*$/.test(lines[i]!.replace(/^\s*\* ?/, "")); i++) {
      body.push(lines[i]!.replace(/^\s*\* ?/, ""))
    }
    blocks.push({ file, line: start + 1, code: body.join("\n") })
  }
  return blocks
}

/**
 * The ```ts blocks of a Markdown page (README.md, docs/*.md): what a reader
 * copies first, so they compile as written (inputs declared with
 * `declare const`), like the JSDoc examples. A block indented under a list
 * item counts too, its indentation removed.
 */
const markdownBlocks = (file: string, text: string): Array<Block> => {
  const lines = text.split("\n")
  const blocks: Array<Block> = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(ts|typescript)\b/.exec(lines[i]!)
    if (open === null) continue
    const indent = open[1]!.length
    const first = i + 1
    const body: Array<string> = []
    for (i = first; i < lines.length && !/^\s*```\s*$/.test(lines[i]!); i++) body.push(lines[i]!.slice(indent))
    blocks.push({ file, line: first + 1, code: body.join("\n") })
  }
  return blocks
}

/** A block as a module of its own, its relative imports made absolute. */
const moduleOf = (block: Block): string => {
  const dir = path.dirname(block.file)
  const code = block.code.replace(
    /(from\s+|import\s*\(\s*)(["'])(\.{1,2}\/[^"']+)\2/g,
    (_m, pre: string, q: string, spec: string) => `${pre}${q}${path.resolve(dir, spec)}${q}`
  )
  return `${code}\nexport {}\n`
}

describe("@example blocks", () => {
  it("every @example block in src/, and every ts block of README and docs/, typechecks against the package's sources", () => {
    const src = path.join(repoRoot, "src")
    // The generated namespaces copy their modules' docs: each block is checked once, where it was written.
    const generated = new Set(targets.map((t) => path.join(repoRoot, t.file)))
    const files = walk(src).filter(
      (f) => !f.startsWith(path.join(src, "cli") + path.sep) && f !== path.join(src, "bin.ts") && !generated.has(f)
    )
    const fromPages = markdownPages().flatMap((f) => markdownBlocks(f, fs.readFileSync(f, "utf8")))
    const blocks = [...files.flatMap((f) => examplesIn(f, fs.readFileSync(f, "utf8"))), ...fromPages]
    // Inside node_modules/ so that `effect` and `@types/node` resolve as they do for the sources.
    const dir = fs.mkdtempSync(path.join(repoRoot, "node_modules", ".parley-examples-"))
    const names = blocks.map((b, n) => {
      const name = `ex${String(n).padStart(3, "0")}_${path.relative(repoRoot, b.file).replace(/[/.]/g, "_")}_${b.line}.ts`
      fs.writeFileSync(path.join(dir, name), moduleOf(b))
      return name
    })
    const base = JSON.parse(fs.readFileSync(path.join(repoRoot, "tsconfig.json"), "utf8")) as {
      compilerOptions: Record<string, unknown>
    }
    fs.writeFileSync(
      path.join(dir, "tsconfig.json"),
      JSON.stringify(
        {
          compilerOptions: {
            ...base.compilerOptions,
            noUnusedLocals: false,
            noUnusedParameters: false,
            paths: {
              parley: [path.join(src, "index.ts")],
              "parley/ai": [path.join(src, "ai", "index.ts")],
              "parley/ai/testing": [path.join(src, "ai", "Testing.ts")],
              "parley/*": [path.join(src, "*.ts")]
            }
          },
          files: names
        },
        null,
        2
      )
    )
    const tsc = spawnSync(
      process.execPath,
      [path.join(repoRoot, "node_modules", "typescript", "bin", "tsc"), "-p", dir],
      {
        cwd: dir,
        encoding: "utf8",
        maxBuffer: 64 * 1024 * 1024
      }
    )
    // Name each failing block by its source file and line.
    const byName = new Map(names.map((n, i) => [n, blocks[i]!]))
    const report = (tsc.stdout + tsc.stderr)
      .split("\n")
      .filter((l) => l.length > 0)
      .map((l) => {
        const m = /^(ex\d+_[^(]+)\((\d+),\d+\): (.*)$/.exec(l)
        const b = m === null ? undefined : byName.get(m[1]!)
        return b === undefined ? l : `${path.relative(repoRoot, b.file)}:${b.line + Number(m![2]) - 1}: ${m![3]}`
      })
    console.log(`@example blocks: ${blocks.length} in ${new Set(blocks.map((b) => b.file)).size} files`)
    fs.rmSync(dir, { recursive: true, force: true })
    expect(blocks.length).toBeGreaterThan(90)
    // docs/library.md: the coordinator, the run-event stream, tracing, providerLayer, executorFromToolkit, a toolkit beside the live tools.
    expect(fromPages.filter((b) => b.file.endsWith(`docs${path.sep}library.md`)).length).toBe(6)
    expect(fromPages.length).toBeGreaterThanOrEqual(6)
    expect(report).toStrictEqual([])
    expect(tsc.status).toBe(0)
    // A consumer sees these in hover: they import as a consumer does ("parley/…"), not by a path inside the repository.
    const relative = blocks
      .filter((b) => /(from\s+|import\s*\(\s*)["']\.{1,2}\//.test(b.code))
      .map((b) => `${path.relative(repoRoot, b.file)}:${b.line}`)
    expect(relative).toStrictEqual([])
  }, 400_000)
})
