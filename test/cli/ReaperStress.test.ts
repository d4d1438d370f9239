/**
 * A small run of `scripts/reaper-stress.mjs` (docs/tools.md#tool-processes-are-bounded): parley is
 * killed with `kill -9` at random moments 0–500 ms after a tool's spawn, with
 * a busy loop loading a core, and no tool may be alive 1 s after parley died.
 * The full run (500 kills, two busy loops) is in docs/tools.md.
 */
import { spawnSync } from "node:child_process"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { repoRoot } from "../support/Fixtures.ts"

describe("no tool outlives a kill -9 of parley", () => {
  it("8 kills at random moments of a tool's start, a core loaded: no tool alive 1 s later", () => {
    const r = spawnSync(process.execPath, [path.join(repoRoot, "scripts", "reaper-stress.mjs"), "8", "500", "1"], {
      encoding: "utf8",
      timeout: 170_000
    })
    expect(r.stderr).toBe("")
    expect(r.stdout).toMatch(
      /^done: 8 kill -9 at 0\.\.500 ms after the tool's spawn, 1 busy loops: 0 tools alive 1 s after parley died/m
    )
    expect(r.status).toBe(0)
  }, 180_000)
})
