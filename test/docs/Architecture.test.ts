/**
 * docs/architecture.md names the modules a turn, an answer and a resume pass
 * through, and the rooms of the source tree: every path it names must exist,
 * so moving or renaming a module without updating the page fails here, and
 * every folder of src/ must be named, so a new room cannot go undescribed.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { proseLines } from "../support/DocPages.ts"
import { repoRoot } from "../support/Fixtures.ts"

const page = path.join(repoRoot, "docs", "architecture.md")

/** The repository paths a page names in backticks (`src/…`, `test/…`, …), with their lines. */
const namedPaths = (text: string): Array<{ readonly line: number; readonly path: string }> =>
  proseLines(text).flatMap(({ line, text: l }) =>
    [...l.matchAll(/`((?:src|test|bench|scripts|examples)\/[\w./-]*)`/g)].map((m) => ({ line, path: m[1]! }))
  )

/** The named paths that do not exist under `root`, as `line: path`. */
const missing = (root: string, text: string): Array<string> =>
  namedPaths(text)
    .filter((p) => !fs.existsSync(path.join(root, p.path)))
    .map((p) => `docs/architecture.md:${p.line}: ${p.path}`)

const dirsUnder = (dir: string): Array<string> =>
  fs
    .readdirSync(path.join(repoRoot, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => [`${dir}/${e.name}`, ...dirsUnder(`${dir}/${e.name}`)])

describe("docs/architecture.md", () => {
  const text = fs.readFileSync(page, "utf8")

  it("names only modules and folders that exist", () => {
    expect(namedPaths(text).length).toBeGreaterThan(80)
    expect(missing(repoRoot, text)).toStrictEqual([])
  })

  it("reports a module that moved: a page naming a path that is gone fails", () => {
    const moved = `${text}\n- \`src/programs/TurnLoopMoved.ts\`\n`
    expect(missing(repoRoot, moved)).toStrictEqual([
      `docs/architecture.md:${moved.split("\n").length - 1}: src/programs/TurnLoopMoved.ts`
    ])
  })

  it("names every folder of src/", () => {
    const named = new Set(namedPaths(text).map((p) => p.path.replace(/\/$/, "")))
    expect(dirsUnder("src").filter((d) => !named.has(d))).toStrictEqual([])
  })

  it("walks the three flows: a turn, an answer from anywhere, a resume", () => {
    const headings = proseLines(text)
      .map((l) => l.text)
      .filter((l) => l.startsWith("## "))
    expect(headings).toStrictEqual(["## The rooms", "## A turn", "## An answer from anywhere", "## A resume"])
  })
})
