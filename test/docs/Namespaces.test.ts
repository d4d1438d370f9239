/**
 * The generated namespaces (src/Namespaces.ts, src/ai/Namespaces.ts; issue
 * 29) are what scripts/namespaces.ts writes from the modules as they are now:
 * a module that gains or loses an export, or changes its header doc, fails
 * here until `npm run namespaces` is run again.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { generate } from "../../scripts/namespaces.ts"
import { repoRoot } from "../support/Fixtures.ts"

describe("the generated namespaces", () => {
  it("are up to date (else run `npm run namespaces`)", () => {
    const generated = generate()
    expect([...generated.keys()].sort()).toStrictEqual(["src/Namespaces.ts", "src/ai/Namespaces.ts"])
    for (const [file, text] of generated) {
      const committed = fs.readFileSync(path.join(repoRoot, file), "utf8")
      expect([file, committed === text]).toStrictEqual([file, true])
    }
  }, 120_000)
})
