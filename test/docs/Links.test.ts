/**
 * The README is a door into docs/: it stays short, links every page, and
 * every link in the documentation lands on a file and, with `#anchor`, on a
 * heading of it. Comments in src/ cite decisions as
 * `docs/decisions.md#<anchor>`: each cited page and anchor must exist, so a
 * renamed heading cannot leave a comment pointing at nothing.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { headingAnchors, markdownPages, proseLines } from "../support/DocPages.ts"
import { repoRoot } from "../support/Fixtures.ts"

const rel = (f: string): string => path.relative(repoRoot, f)

/** Every docs/*.md page the README must link (the issue's list, plus the pages the split added). */
const required = [
  "architecture.md",
  "benchmarks.md",
  "cli.md",
  "cluster.md",
  "configuration.md",
  "decisions.md",
  "library.md",
  "limitations.md",
  "mcp.md",
  "postgres.md",
  "questions-and-approvals.md",
  "security.md",
  "serve.md",
  "startup.md"
]

/** Whether `target` (relative to `from`'s folder, maybe with `#anchor`) lands; else why not. */
const broken = (from: string, target: string): string | undefined => {
  const [file, anchor] = target.split("#") as [string, string | undefined]
  const dest = file === "" ? from : path.resolve(path.dirname(from), decodeURI(file))
  if (!fs.existsSync(dest)) return "no such file"
  if (anchor === undefined || !dest.endsWith(".md")) return undefined
  return headingAnchors(fs.readFileSync(dest, "utf8")).has(anchor) ? undefined : `no heading #${anchor}`
}

/** The relative links of a Markdown page, outside code blocks and inline code. */
const linksOf = (file: string): Array<{ readonly line: number; readonly target: string }> =>
  proseLines(fs.readFileSync(file, "utf8")).flatMap(({ line, text }) =>
    [...text.replace(/`[^`]*`/g, "").matchAll(/\]\(([^)\s]+)\)/g)]
      .map((m) => m[1]!)
      .filter((t) => !/^[a-z]+:/i.test(t))
      .map((target) => ({ line, target }))
  )

const walk = (dir: string): Array<string> =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]))

describe("the documentation's links", () => {
  it("keeps the README a door: at most 250 lines, linking every docs/ page; no page over 600 lines", () => {
    const readme = path.join(repoRoot, "README.md")
    const text = fs.readFileSync(readme, "utf8")
    expect(text.split("\n").length).toBeLessThanOrEqual(250)
    const pages = markdownPages()
      .slice(1)
      .map((f) => path.basename(f))
    expect(pages).toEqual(expect.arrayContaining(required))
    const linked = new Set(linksOf(readme).map((l) => l.target.split("#")[0]))
    expect(pages.filter((p) => !linked.has(`docs/${p}`))).toStrictEqual([])
    for (const page of markdownPages()) {
      expect([rel(page), fs.readFileSync(page, "utf8").split("\n").length <= 600]).toStrictEqual([rel(page), true])
    }
  })

  it("lands every relative link of README and docs/ on a file and heading", () => {
    const bad = markdownPages().flatMap((page) =>
      linksOf(page).flatMap(({ line, target }) => {
        const why = broken(page, target)
        return why === undefined ? [] : [`${rel(page)}:${line}: ${target} (${why})`]
      })
    )
    expect(bad).toStrictEqual([])
  })

  it("tells a broken anchor from a good one", () => {
    const decisions = path.join(repoRoot, "docs", "decisions.md")
    expect(broken(decisions, "#detached-policy")).toBeUndefined()
    expect(broken(decisions, "#no-such-decision")).toBe("no heading #no-such-decision")
    expect(broken(decisions, "nowhere.md")).toBe("no such file")
  })

  it("lands every docs/ page and anchor a comment in src/ cites", () => {
    const cited = walk(path.join(repoRoot, "src"))
      .filter((f) => f.endsWith(".ts"))
      .flatMap((f) =>
        fs
          .readFileSync(f, "utf8")
          .split("\n")
          .flatMap((l, i) =>
            [...l.matchAll(/\bdocs\/([\w-]+\.md(?:#[\w-]+)?)/g)].map((m) => ({
              at: `${rel(f)}:${i + 1}`,
              target: m[1]!
            }))
          )
      )
    expect(cited.length).toBeGreaterThan(50)
    const docs = path.join(repoRoot, "docs", "index.md")
    const bad = cited.flatMap(({ at, target }) => {
      const why = broken(docs, target)
      return why === undefined ? [] : [`${at}: docs/${target} (${why})`]
    })
    expect(bad).toStrictEqual([])
  })
})
