/**
 * Casts (`x as T`, `<T>x`) in src/ only go down: each one is a place the
 * compiler is told instead of shown. The limits are today's counts; lower
 * them when a cast goes (a Schema decode, a type guard, a correct type),
 * never raise them. `as const` is not a cast. Every `as unknown as` that
 * stays says why in a comment on the lines just above it.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import ts from "typescript"
import { repoRoot } from "../support/Fixtures.ts"

const MAX_CASTS = 130
const MAX_DOUBLE_CASTS = 0
/** `as unknown as` without a comment saying why: none. */
const MAX_UNEXPLAINED_DOUBLE_CASTS = 0

const sources = (dir: string): Array<string> =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith(".ts") ? [path.join(dir, e.name)] : []
    )

interface Cast {
  readonly at: string
  readonly double: boolean
  readonly explained: boolean
}

/** The casts of `text` (a file named `file`): where, whether `as unknown as`, whether a comment just above says why. */
const castsOf = (file: string, text: string): Array<Cast> => {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const lines = text.split("\n")
  const out: Array<Cast> = []
  const visit = (node: ts.Node): void => {
    if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) {
      const isConst = ts.isTypeReferenceNode(node.type) && node.type.typeName.getText(source) === "const"
      if (!isConst) {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line
        const double =
          ts.isAsExpression(node) &&
          ts.isAsExpression(node.expression) &&
          node.expression.type.kind === ts.SyntaxKind.UnknownKeyword
        const above = lines.slice(Math.max(0, line - 3), line + 1)
        out.push({
          at: `${path.relative(repoRoot, file)}:${line + 1}`,
          double,
          explained: above.some((l) => /\/\/|\/\*|^\s*\*/.test(l))
        })
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return out
}

describe("casts in src/", () => {
  const all = sources(path.join(repoRoot, "src")).flatMap((f) => castsOf(f, fs.readFileSync(f, "utf8")))

  it(`are at most ${MAX_CASTS}, of them at most ${MAX_DOUBLE_CASTS} \`as unknown as\``, () => {
    expect(all.length).toBeLessThanOrEqual(MAX_CASTS)
    expect(all.filter((c) => c.double).length).toBeLessThanOrEqual(MAX_DOUBLE_CASTS)
  })

  it("an `as unknown as` says why in a comment just above it", () => {
    expect(all.filter((c) => c.double && !c.explained).length).toBeLessThanOrEqual(MAX_UNEXPLAINED_DOUBLE_CASTS)
  })

  it("counts what a cast is: `as T` and `<T>x`, not `as const`, and `as unknown as` once as double", () => {
    const text = ["const a = x as string", "const b = [1] as const", "// why", "const c = y as unknown as number"].join(
      "\n"
    )
    const found = castsOf(path.join(repoRoot, "src", "Example.ts"), text)
    expect(found.map((c) => [c.at, c.double])).toStrictEqual([
      ["src/Example.ts:1", false],
      ["src/Example.ts:4", true],
      ["src/Example.ts:4", false]
    ])
    expect(found[1]!.explained).toBe(true)
  })
})
