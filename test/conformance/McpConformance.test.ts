// MCP conformance (docs/mcp.md#mcp-conformance-suite): the official MCP conformance suite's client scenarios against
// parley (`npm run mcp:conformance`: scripts/mcp-conformance/run.mjs), for
// 2025-11-25 and 2026-07-28, with a committed expected-failures baseline in
// which every entry says why. The run fails on anything outside the
// baseline; this test also fails on a baseline entry that now passes, so the
// baseline cannot quietly outlive a fix. The suite needs Node >= 22: on an
// older Node only the baseline's own shape is checked (CI runs Node 24).
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { repoRoot, tempDir } from "../support/Fixtures.ts"

const DIR = path.join(repoRoot, "scripts", "mcp-conformance")
const REVISIONS = ["2025-11-25", "2026-07-28"]
type Baseline = Record<string, Record<string, string>>
const baseline = JSON.parse(fs.readFileSync(path.join(DIR, "baseline.json"), "utf8")) as Baseline
const nodeMajor = Number(process.versions.node.split(".")[0])

interface Summary {
  readonly exit: number | null
  readonly scenarios: Record<string, Record<string, "SUCCESS" | "FAILURE" | "WARNING" | "SKIPPED">>
}

/** Baseline entries that now pass, and entries naming a scenario that did not run, for one revision. */
const staleEntries = (entries: Record<string, string>, summary: Summary): Array<string> =>
  Object.keys(entries).flatMap((entry) => {
    const colon = entry.indexOf(":")
    const scenario = colon < 0 ? entry : entry.slice(0, colon)
    const checks = summary.scenarios[scenario]
    if (checks === undefined) return [`${entry} (the scenario did not run)`]
    const failing = (status: string | undefined) => status === "FAILURE" || status === "WARNING"
    if (colon < 0) return Object.values(checks).some(failing) ? [] : [`${entry} (every check passes)`]
    // A baselined check that is absent or skipped is not a pass (the suite tolerates it the same way).
    return checks[entry.slice(colon + 1)] === "SUCCESS" ? [`${entry} (passes)`] : []
  })

describe("MCP conformance baseline (scripts/mcp-conformance/baseline.json)", () => {
  it("covers exactly the two revisions, and every entry names a scenario (or scenario:check) and says why", () => {
    expect(Object.keys(baseline)).toStrictEqual(REVISIONS)
    for (const [revision, entries] of Object.entries(baseline)) {
      for (const [entry, why] of Object.entries(entries)) {
        expect(entry, `${revision}: ${entry}`).toMatch(/^[a-z0-9][a-z0-9/_-]*(:[a-z0-9$_-]+)?$/i)
        expect(why.trim().length, `${revision}: ${entry} needs a reason`).toBeGreaterThan(30)
      }
    }
  })

  it("the stale check: an entry whose check now passes, or whose scenario passes whole, or did not run, is reported", () => {
    const summary: Summary = {
      exit: 0,
      scenarios: { a: { x: "SUCCESS", y: "FAILURE" }, b: { z: "SUCCESS" }, c: { w: "SKIPPED" } }
    }
    expect(staleEntries({ "a:x": "", "a:y": "", b: "", "c:w": "", a: "", gone: "" }, summary)).toStrictEqual([
      "a:x (passes)",
      "b (every check passes)",
      "gone (the scenario did not run)"
    ])
  })
})

// The whole run takes a minute or two of a busy machine, so it runs on its own (.ci/run, after the suite,
// with PARLEY_CONFORMANCE=1), not side by side with every other test file.
const skip =
  nodeMajor < 22
    ? `the suite needs Node >= 22, this is ${process.version}`
    : process.env["PARLEY_CONFORMANCE"] !== "1"
      ? "set PARLEY_CONFORMANCE=1 (.ci/run does)"
      : undefined
describe.skipIf(skip !== undefined)(`npm run mcp:conformance${skip !== undefined ? ` — skipped: ${skip}` : ""}`, () => {
  it("both revisions: nothing fails outside the baseline, and no baseline entry passes", () => {
    const out = tempDir("parley-conformance-")
    const run = spawnSync(process.execPath, [path.join(DIR, "run.mjs"), "--out", out], {
      cwd: repoRoot,
      encoding: "utf8",
      timeout: 1_500_000
    })
    const summary = JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8")) as Record<string, Summary>
    const stale = REVISIONS.flatMap((r) => staleEntries(baseline[r] ?? {}, summary[r]!).map((e) => `${r} ${e}`))
    expect(stale, "remove these entries from baseline.json").toStrictEqual([])
    expect(run.status, run.stdout + run.stderr).toBe(0)
    // The scenarios every revision requires ran (a broken client would make them vanish, not fail).
    for (const r of REVISIONS)
      expect(Object.keys(summary[r]!.scenarios)).toEqual(
        expect.arrayContaining(["tools_call", "auth/metadata-default"])
      )
    expect(Object.keys(summary["2026-07-28"]!.scenarios)).toEqual(
      expect.arrayContaining(["sep-2322-client-request-state", "request-metadata"])
    )
    fs.rmSync(out, { recursive: true, force: true })
  }, 1_600_000)
})
