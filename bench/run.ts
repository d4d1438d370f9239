/**
 * `npm run bench`: every performance goal of the issues, as ratios against a
 * floor measured in the same run. Exits non-zero if a goal is missed.
 *
 * Each suite runs in a child process of its own (this file again, told by
 * {@link GOALS_FILE} where to leave its goals): one process that imported
 * every suite, and carried the heap and the JIT state of the suites before,
 * measured the first suite's decode at twice what the same suite measures
 * alone (issue 50). The parent builds once, prints the heading, bounds each
 * child ({@link timeoutMinutes}) and writes the table of the whole run.
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type Goal, passes, report, type SuiteGoals, table } from "./Harness.ts"

type Suite = () => Promise<ReadonlyArray<Goal>>

/** Each suite's module, imported only by the child that runs it. */
const suites: Record<string, () => Promise<Suite>> = {
  storage: () => import("./storage.ts").then((m) => m.run),
  listing: () => import("./listing.ts").then((m) => m.run),
  inbox: () => import("./inbox.ts").then((m) => m.run),
  notify: () => import("./notify.ts").then((m) => m.run),
  coordinator: () => import("./coordinator.ts").then((m) => m.run),
  projection: () => import("./projection.ts").then((m) => m.run),
  cli: () => import("./cli.ts").then((m) => m.run),
  attach: () => import("./attach.ts").then((m) => m.run),
  whole: () => import("./whole.ts").then((m) => m.run),
  serve: () => import("./serve.ts").then((m) => m.run),
  page: () => import("./page.ts").then((m) => m.run),
  approvals: () => import("./approvals.ts").then((m) => m.run),
  ask: () => import("./ask.ts").then((m) => m.run),
  pg: () => import("./pg.ts").then((m) => m.run),
  cluster: () => import("./cluster.ts").then((m) => () => m.run())
}

/** Set in a child: the file its suite's goals are written to, as JSON. */
const GOALS_FILE = "PARLEY_BENCH_GOALS_FILE"

/**
 * How long a suite may run before it is stopped (`$BENCH_SUITE_MINUTES`
 * overrides): the slowest default suite (approvals) took 16 min at load
 * average 18–30, the cluster takes minutes of three runners.
 */
const timeoutMinutes = (suite: string): number => {
  const set = Number(process.env["BENCH_SUITE_MINUTES"])
  return Number.isFinite(set) && set > 0 ? set : suite === "cluster" ? 60 : 30
}

// JSON has no NaN or Infinity (a p99 of nothing, a ratio to a zero floor): they travel as strings, marked.
const encode = (_: string, v: unknown) => (typeof v === "number" && !Number.isFinite(v) ? { nonFinite: String(v) } : v)
const decode = (_: string, v: unknown) =>
  typeof v === "object" && v !== null && "nonFinite" in v && typeof v.nonFinite === "string" ? Number(v.nonFinite) : v

/** In a child: runs the one suite, prints its report, leaves its goals in `file`. */
const child = async (file: string, name: string): Promise<void> => {
  // Not for the processes the suite starts.
  delete process.env[GOALS_FILE]
  const load = suites[name]
  if (load === undefined) throw new Error(`no suite ${name}`)
  // The whole-process timer's scratch directory (its RSS hook) goes with the suite, whichever suite used it.
  const goals = await (await load())().finally(async () => (await import("./Process.ts")).cleanup())
  fs.writeFileSync(file, JSON.stringify(goals, encode))
  process.exitCode = report(goals) ? 0 : 1
}

/** Builds what is measured from the sources being measured: the CLI bundle, and the library for the coordinator. */
const build = (only: string | undefined) => {
  const cli = ["cli", "notify", "whole", "attach", "serve", "page", "approvals", "ask", "pg", "cluster"]
  const targets = [
    ...(only === undefined || cli.includes(only) ? ["cli"] : []),
    ...(only === undefined || only === "coordinator" ? ["lib"] : [])
  ]
  if (targets.length === 0) return
  const built = spawnSync(process.execPath, ["scripts/build.mjs", ...targets], {
    cwd: path.resolve(import.meta.dirname, ".."),
    stdio: "inherit"
  })
  if (built.status !== 0) throw new Error(`building ${targets.join(" and ")} failed`)
}

/** The goals of one suite, run as a child process in its own process group (stopped whole if it overruns). */
const runChild = (name: string, args: ReadonlyArray<string>, dir: string): Promise<SuiteGoals> =>
  new Promise((resolve) => {
    const file = path.join(dir, `${name}.json`)
    const minutes = timeoutMinutes(name)
    const proc = spawn(process.execPath, [...process.execArgv, import.meta.filename, name, ...args], {
      stdio: "inherit",
      detached: true,
      env: { ...process.env, [GOALS_FILE]: file }
    })
    const stopGroup = (signal: NodeJS.Signals) => {
      try {
        if (proc.pid !== undefined) process.kill(-proc.pid, signal)
      } catch {
        // The group is gone already.
      }
    }
    let overran = false
    const timer = setTimeout(() => {
      overran = true
      console.error(`\n# ${name}: still running after ${minutes} min (BENCH_SUITE_MINUTES); stopping it`)
      stopGroup("SIGTERM")
      setTimeout(() => stopGroup("SIGKILL"), 5_000).unref()
    }, minutes * 60_000)
    // Interrupting the run stops the suite's whole group (its servers and hosts), not only the parent.
    const interrupted = (signal: NodeJS.Signals) => {
      stopGroup("SIGTERM")
      fs.rmSync(dir, { recursive: true, force: true })
      process.exit(signal === "SIGINT" ? 130 : 143)
    }
    process.once("SIGINT", interrupted)
    process.once("SIGTERM", interrupted)
    const done = (failure: string | undefined) => {
      clearTimeout(timer)
      process.off("SIGINT", interrupted)
      process.off("SIGTERM", interrupted)
      // Whatever the suite left running in its group goes with it.
      stopGroup("SIGKILL")
      if (failure !== undefined) return resolve({ suite: name, goals: [], failure })
      try {
        resolve({ suite: name, goals: JSON.parse(fs.readFileSync(file, "utf8"), decode) })
      } catch {
        resolve({ suite: name, goals: [], failure: "ended without its goals" })
      }
    }
    proc.once("error", (e) => done(`did not start: ${e.message}`))
    proc.once("exit", (code, signal) =>
      done(
        overran
          ? `stopped after ${minutes} min`
          : code !== 0 && code !== 1
            ? `ended with ${signal ?? `exit code ${code}`}`
            : undefined
      )
    )
  })

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

/** The parent: builds, runs each suite asked for in a child, reports, writes `$BENCH_TABLE`. */
const parent = async (only: string | undefined, args: ReadonlyArray<string>): Promise<void> => {
  if (only !== undefined && !(only in suites)) {
    console.error(`no suite ${only}; the suites: ${Object.keys(suites).join(" ")}`)
    process.exitCode = 2
    return
  }
  build(only)
  // Whole-process ratios against `node -e 0` shrink on a busy machine (the floor waits for a CPU as long as the
  // subject does): say how busy it was, and when, on what, so a figure can be put beside its machine.
  /** `$BENCH_TABLE`: a file to write the run's goals to, as the Markdown table docs/benchmarks.md quotes. */
  const tableFile = process.env["BENCH_TABLE"]
  const started = new Date()
  const startLoad = load()
  console.log(
    `${started.toISOString()}  Node ${process.versions.node}  ${os.cpus().length} × ${os.cpus()[0]?.model ?? "CPU"}  load average ${startLoad}`
  )
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-goals-"))
  const ran: Array<SuiteGoals> = []
  try {
    for (const name of Object.keys(suites)) {
      if (only !== undefined && only !== name) continue
      // Minutes of 3 runners and 900 conversations on one PostgreSQL: only when asked for (`npm run bench -- cluster`).
      if (only === undefined && name === "cluster") {
        console.log("\n# cluster: not in the default run; npm run bench -- cluster")
        continue
      }
      console.log(`\n# ${name}`)
      const result = await runChild(name, only === undefined ? [] : args, dir)
      if (result.failure !== undefined) console.log(`FAIL  the ${name} suite ${result.failure}`)
      ran.push(result)
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
  const endLoad = load()
  console.log(`\nload average at the end: ${endLoad}`)
  if (tableFile !== undefined) {
    const minutes = Math.round((Date.now() - started.getTime()) / 60_000)
    const heading =
      `\`${only === undefined ? "npm run bench" : `npm run bench -- ${[only, ...args].join(" ")}`}\` ` +
      `at ${commit()}, started ${started.toISOString().slice(0, 16).replace("T", " ")} UTC, ${minutes} min, each suite in a process of its own; ` +
      `Node ${process.versions.node}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "CPU"}, ${os.platform()} ${os.release()}; ` +
      `load average ${startLoad} at the start, ${endLoad} at the end.`
    fs.writeFileSync(tableFile, table(heading, ran))
    console.log(`the table: ${tableFile}`)
  }
  const ok = ran.every((r) => r.failure === undefined && r.goals.every(passes))
  process.exitCode = ok ? 0 : 1
}

const goalsFile = process.env[GOALS_FILE]
const [only, ...args] = process.argv.slice(2)
if (goalsFile !== undefined) await child(goalsFile, only ?? "")
else await parent(only, args)
