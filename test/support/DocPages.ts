/**
 * The documentation a person reads — README.md and every page under docs/ —
 * and how its links and anchors resolve, for the tests that keep it true
 * (test/docs/).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { repoRoot } from "./Fixtures.ts"

/** README.md and every docs/*.md page, absolute paths, README first. */
export const markdownPages = (): Array<string> => [
  path.join(repoRoot, "README.md"),
  ...fs
    .readdirSync(path.join(repoRoot, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => path.join(repoRoot, "docs", f))
]

/** A page's lines outside fenced code blocks, with their 1-based numbers. */
export const proseLines = (text: string): Array<{ readonly line: number; readonly text: string }> => {
  const out: Array<{ line: number; text: string }> = []
  let fenced = false
  text.split("\n").forEach((l, i) => {
    if (/^\s*```/.test(l)) fenced = !fenced
    else if (!fenced) out.push({ line: i + 1, text: l })
  })
  return out
}

/**
 * The anchor GitHub gives a heading: lower case, punctuation dropped but `-`
 * and `_`, each space a `-`; a repeated slug gets `-1`, `-2`, ….
 */
export const headingAnchors = (text: string): Set<string> => {
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  for (const { text: l } of proseLines(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(l)
    if (m === null) continue
    const base = m[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-")
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    anchors.add(n === 0 ? base : `${base}-${n}`)
  }
  return anchors
}
