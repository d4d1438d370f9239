// `npm run docs` builds the API reference with warnings as errors (typedoc.config.mjs): an export whose
// docs name an unlisted type or link to nothing fails here, not on the day somebody next builds it.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { repoRoot, tempDir } from "../support/Fixtures.ts"

describe("the API reference (npm run docs)", () => {
  it("builds from the JSDoc of every public module without a warning", () => {
    const out = tempDir("parley-api-")
    try {
      const typedoc = path.join(repoRoot, "node_modules", "typedoc", "bin", "typedoc")
      const r = spawnSync(process.execPath, [typedoc, "--out", out], {
        cwd: repoRoot,
        encoding: "utf8",
        timeout: 170_000
      })
      expect([r.status, r.stdout.includes("[warning]") ? r.stdout : ""]).toStrictEqual([0, ""])
      expect(fs.existsSync(path.join(out, "index.html"))).toBe(true)
    } finally {
      fs.rmSync(out, { recursive: true, force: true })
    }
  }, 180_000)
})
