/**
 * `npm run bench`: every performance goal of the issues, as ratios against a
 * floor measured in the same run. Exits non-zero if a goal is missed.
 */
import { spawnSync } from "node:child_process"
import * as os from "node:os"
import * as path from "node:path"
import * as fs from "node:fs"
import { report, table } from "./Harness.ts"
import * as approvals from "./approvals.ts"
import * as ask from "./ask.ts"
import * as attach from "./attach.ts"
import * as cli from "./cli.ts"
import * as cluster from "./cluster.ts"
import * as coordinator from "./coordinator.ts"
import * as inbox from "./inbox.ts"
import * as listing from "./listing.ts"
import * as notify from "./notify.ts"
import * as page from "./page.ts"
import * as pg from "./pg.ts"
import * as projection from "./projection.ts"
import * as serve from "./serve.ts"
import * as storage from "./storage.ts"
import * as whole from "./whole.ts"

const suites: Record<string, () => Promise<ReadonlyArray<import("./Harness.ts").Goal>>> = {
  storage: storage.run,
  listing: listing.run,
  inbox: inbox.run,
  notify: notify.run,
  coordinator: coordinator.run,
  projection: projection.run,
  cli: cli.run,
  attach: attach.run,
  whole: whole.run,
  serve: serve.run,
  page: page.run,
  approvals: approvals.run,
  ask: ask.run,
  pg: pg.run,
  cluster: () => cluster.run()
}

const only = process.argv[2]
// The whole-process cases time the CLI bundle, the coordinator the library as
// shipped: build what is measured from the sources being measured.
const targets = [
  ...(only === undefined ||
  only === "cli" ||
  only === "notify" ||
  only === "whole" ||
  only === "attach" ||
  only === "serve" ||
  only === "page" ||
  only === "approvals" ||
  only === "ask" ||
  only === "pg" ||
  only === "cluster"
    ? ["cli"]
    : []),
  ...(only === undefined || only === "coordinator" ? ["lib"] : [])
]
if (targets.length > 0) {
  const built = spawnSync(process.execPath, ["scripts/build.mjs", ...targets], {
    cwd: path.resolve(import.meta.dirname, ".."),
    stdio: "inherit"
  })
  if (built.status !== 0) throw new Error(`building ${targets.join(" and ")} failed`)
}
// Whole-process ratios against `node -e 0` shrink on a busy machine (the floor waits for a CPU as long as the
// subject does): say how busy it was, and when, on what, so a figure can be put beside its machine.
/** `$BENCH_TABLE`: a file to write the run's goals to, as the Markdown table docs/benchmarks.md quotes. */
const tableFile = process.env["BENCH_TABLE"]
const commit = () => {
  const git = (args: ReadonlyArray<string>) =>
    spawnSync("git", args, { cwd: path.resolve(import.meta.dirname, ".."), encoding: "utf8" })
  const head = git(["rev-parse", "--short", "HEAD"]).stdout.trim()
  const dirty = git(["status", "--porcelain", "--untracked-files=no"]).stdout.trim() !== ""
  return head === "" ? "no git" : `${head}${dirty ? " with uncommitted changes" : ""}`
}
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")
const started = new Date()
const startLoad = load()
console.log(
  `${started.toISOString()}  Node ${process.versions.node}  ${os.cpus().length} × ${os.cpus()[0]?.model ?? "CPU"}  load average ${load()}`
)
let ok = true
const ran: Array<{ suite: string; goals: ReadonlyArray<import("./Harness.ts").Goal> }> = []
for (const [name, run] of Object.entries(suites)) {
  if (only !== undefined && only !== name) continue
  // Minutes of 3 runners and 600 conversations on one PostgreSQL: only when asked for (`npm run bench -- cluster`).
  if (only === undefined && name === "cluster") {
    console.log("\n# cluster: not in the default run; npm run bench -- cluster")
    continue
  }
  console.log(`\n# ${name}`)
  const goals = await run()
  ran.push({ suite: name, goals })
  ok = report(goals) && ok
}
const endLoad = load()
console.log(`\nload average at the end: ${endLoad}`)
if (tableFile !== undefined) {
  const minutes = Math.round((Date.now() - started.getTime()) / 60_000)
  const heading =
    `\`${only === undefined ? "npm run bench" : `npm run bench -- ${process.argv.slice(2).join(" ")}`}\` ` +
    `at ${commit()}, started ${started.toISOString().slice(0, 16).replace("T", " ")} UTC, ${minutes} min; ` +
    `Node ${process.versions.node}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "CPU"}, ${os.platform()} ${os.release()}; ` +
    `load average ${startLoad} at the start, ${endLoad} at the end.`
  fs.writeFileSync(tableFile, table(heading, ran))
  console.log(`the table: ${tableFile}`)
}
process.exitCode = ok ? 0 : 1
