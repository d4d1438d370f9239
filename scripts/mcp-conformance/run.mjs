// `npm run mcp:conformance` (issue 28): the official MCP conformance suite's
// client scenarios, at the wire of each protocol revision parley speaks
// (`--requirements 2025-11-25` and `--requirements 2026-07-28`: exactly what
// conforming to that revision requires, stateful initialize for 2025 and
// stateless for 2026), against parley's client (client.ts, bundled here).
//
// Known failures are in baseline.json, each with why ({ "<revision>":
// { "<scenario>" | "<scenario>:<check-id>": "why" } }); the suite gets them
// as its expected-failures file, so it exits non-zero on a failure outside
// the baseline and also on a baseline entry that now passes (stale). This
// script exits 0 only when both revisions do. It writes the checks of every
// scenario to <out>/summary.json for test/conformance/McpConformance.test.ts.
//
//   node scripts/mcp-conformance/run.mjs [--out DIR] [--revision 2025-11-25|2026-07-28]…
//
// Needs Node >= 22 (the suite's own requirement) and nothing from the
// network: the suite starts its test servers on localhost.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.resolve(here, "..", "..")
const REVISIONS = ["2025-11-25", "2026-07-28"]
/** A whole revision may take this long. */
const REVISION_TIMEOUT_MS = 600_000
/** One scenario may take this long: the suite runs them side by side, which is slow on a small busy machine. */
const SCENARIO_TIMEOUT_MS = 120_000

const args = process.argv.slice(2)
const option = (name) => {
  const at = args.indexOf(name)
  return at < 0 ? undefined : args[at + 1]
}
const revisions = args.flatMap((a, i) => (args[i - 1] === "--revision" ? [a] : []))
const out = path.resolve(option("--out") ?? fs.mkdtempSync(path.join(os.tmpdir(), "parley-conformance-")))

if (Number(process.versions.node.split(".")[0]) < 22) {
  console.error(`mcp:conformance: the MCP conformance suite needs Node >= 22; this is ${process.version}`)
  process.exit(2)
}
for (const r of revisions) {
  if (!REVISIONS.includes(r)) {
    console.error(`mcp:conformance: unknown --revision ${r} (known: ${REVISIONS.join(", ")})`)
    process.exit(2)
  }
}

const baseline = JSON.parse(fs.readFileSync(path.join(here, "baseline.json"), "utf8"))
for (const [revision, entries] of Object.entries(baseline)) {
  for (const [entry, why] of Object.entries(entries)) {
    if (typeof why !== "string" || why.trim() === "") {
      console.error(`mcp:conformance: baseline.json ${revision} "${entry}" says no why`)
      process.exit(2)
    }
  }
}

// The client, bundled once: a scenario starts it many times, and a bundle starts in a fraction of tsx's time.
fs.mkdirSync(out, { recursive: true })
const client = path.join(out, "client.mjs")
await build({
  entryPoints: [path.join(here, "client.ts")],
  outfile: client,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
  logLevel: "warning",
  banner: { js: "import { createRequire as __cr } from 'node:module';const require = __cr(import.meta.url);" }
})

const suite = path.join(repo, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")

/** Runs one revision; resolves with the suite's exit code (null: it timed out and was killed). */
const runRevision = (revision) =>
  new Promise((resolve) => {
    const expected = path.join(out, `expected-failures-${revision}.yml`)
    const entries = Object.keys(baseline[revision] ?? {})
    fs.writeFileSync(expected, `client:\n${entries.map((e) => `  - ${JSON.stringify(e)}\n`).join("")}`)
    const child = spawn(
      process.execPath,
      [
        suite,
        "client",
        "--command",
        `${JSON.stringify(process.execPath)} ${JSON.stringify(client)}`,
        "--requirements",
        revision,
        "--expected-failures",
        expected,
        "--timeout",
        String(SCENARIO_TIMEOUT_MS),
        "-o",
        path.join(out, revision)
      ],
      { cwd: out, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } }
    )
    let log = ""
    child.stdout.on("data", (d) => (log += d))
    child.stderr.on("data", (d) => (log += d))
    const timer = setTimeout(() => child.kill("SIGKILL"), REVISION_TIMEOUT_MS)
    child.on("exit", (code) => {
      clearTimeout(timer)
      fs.writeFileSync(path.join(out, `${revision}.log`), log)
      const summary = log.slice(log.indexOf("=== SUITE SUMMARY ==="))
      console.log(`== MCP conformance, client, ${revision}\n${summary.replace(/\u001b\[[0-9;]*m/g, "").trim()}\n`)
      resolve(code)
    })
  })

const severity = { FAILURE: 3, WARNING: 2, SKIPPED: 1, SUCCESS: 0, INFO: -1 }
/** Every scenario's checks, each id with its most severe status (ids repeat within a run). */
const collect = (dir) => {
  const scenarios = {}
  const walk = (d) =>
    fs
      .readdirSync(d, { withFileTypes: true })
      .flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]))
  for (const file of fs.existsSync(dir) ? walk(dir).filter((f) => f.endsWith("checks.json")) : []) {
    const name = path.relative(dir, path.dirname(file)).replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, "")
    const checks = {}
    for (const c of JSON.parse(fs.readFileSync(file, "utf8"))) {
      if (c.status === "INFO") continue
      if (checks[c.id] === undefined || severity[c.status] > severity[checks[c.id]]) checks[c.id] = c.status
    }
    scenarios[name] = checks
  }
  return scenarios
}

/**
 * Baseline entries that pass now (or name a scenario that did not run): the
 * suite flags stale entries too, this says which and why they were listed.
 */
const stale = (entries, scenarios) =>
  Object.entries(entries).flatMap(([entry, why]) => {
    const colon = entry.indexOf(":")
    const checks = scenarios[colon < 0 ? entry : entry.slice(0, colon)]
    if (checks === undefined) return [`${entry}: the scenario did not run`]
    const failing = (status) => status === "FAILURE" || status === "WARNING"
    if (colon < 0)
      return Object.values(checks).some(failing) ? [] : [`${entry}: every check passes now (listed because: ${why})`]
    return checks[entry.slice(colon + 1)] === "SUCCESS" ? [`${entry}: passes now (listed because: ${why})`] : []
  })

/**
 * What a failed revision's failing checks said, and the end of the client's
 * stderr in that scenario: the output directory is often a test's temporary
 * one, gone by the time somebody reads the log.
 */
const explain = (dir) => {
  const walk = (d) =>
    fs
      .readdirSync(d, { withFileTypes: true })
      .flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]))
  for (const file of fs.existsSync(dir) ? walk(dir).filter((f) => f.endsWith("checks.json")) : []) {
    const failed = JSON.parse(fs.readFileSync(file, "utf8")).filter((c) => c.status === "FAILURE")
    if (failed.length === 0) continue
    console.log(`-- ${path.relative(dir, path.dirname(file))}`)
    for (const c of failed) console.log(`   FAILURE ${c.id}: ${c.description ?? ""} ${c.errorMessage ?? ""}`.trimEnd())
    const stderr = path.join(path.dirname(file), "stderr.txt")
    if (fs.existsSync(stderr)) {
      const tail = fs.readFileSync(stderr, "utf8").trim().split("\n").slice(-15)
      if (tail.join("") !== "")
        console.log(`   client stderr (last lines):\n${tail.map((l) => `     ${l}`).join("\n")}`)
    }
  }
}
const summary = {}
let ok = true
for (const revision of revisions.length > 0 ? revisions : REVISIONS) {
  const code = await runRevision(revision)
  const scenarios = collect(path.join(out, revision))
  const passing = stale(baseline[revision] ?? {}, scenarios)
  for (const line of passing) console.log(`mcp:conformance: ${revision}: remove from baseline.json: ${line}`)
  if (code !== 0) explain(path.join(out, revision))
  summary[revision] = { exit: code, stale: passing, scenarios }
  if (code !== 0 || passing.length > 0) ok = false
}
fs.writeFileSync(path.join(out, "summary.json"), JSON.stringify(summary, null, 2) + "\n")
console.log(
  ok
    ? `mcp:conformance: nothing outside the baseline failed (results in ${out})`
    : `mcp:conformance: FAILED — see the summaries above and ${out}`
)
process.exit(ok ? 0 : 1)
