/**
 * Approvals benchmark (docs/questions-and-approvals.md#approvals): 50 detached runs per
 * policy (`wait`, `defer`, `deny`) of a turn whose one call is a local tool with
 * `run = "ask"` (the deferrable tool: it writes `<name>.effects` when it runs, and
 * asks nothing of its own). Counted, each a goal of 0:
 *
 * - calls that ran without a yes (an effect while the approval was open, after a
 *   `no`, or under `defer` / `deny` at all);
 * - `wait`: approvals answered `yes` whose call did not run exactly once;
 * - `defer`: turns that ended without their approval listed by `conversation answer`.
 *
 * `wait` runs take the default policy of `query --detach` (no flag); `defer` and
 * `deny` are given `--detached-policy`.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type Goal, none } from "./Harness.ts"

const repo = path.resolve(import.meta.dirname, "..")
const bin = process.env["PARLEY_BENCH_BIN"] ?? path.join(repo, "dist", "parley.mjs")
const RUNS = 50
/** Runs in flight at once: enough to overlap start-ups, few enough for a 2-core machine. */
const PARALLEL = 5
const POLICIES = ["wait", "defer", "deny"] as const
type Policy = (typeof POLICIES)[number]

const CONFIG = `
[conversation.tools.deferrable]
source = "local"
command = "python3 deferrable.py"
description = "Acts once approved."
parameters = { type = "object", properties = { name = { type = "string" }, mode = { type = "string" }, seconds = { type = "number" } }, required = ["name"] }
run = "ask"
`

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

interface Done {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const parley = (root: string, args: ReadonlyArray<string>): Promise<Done> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, "--storage", path.join(root, ".parley"), ...args],
      { cwd: root, timeout: 60_000, env: { ...process.env, PARLEY_STORAGE: undefined, PARLEY_SCRIPT: undefined } },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    )
  })

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Waits (bounded) for a detached run to end; kills it if it outlives the bound. */
const ended = async (pid: number, ms = 60_000) => {
  const deadline = Date.now() + ms
  while (alive(pid) && Date.now() < deadline) await sleep(50)
  if (!alive(pid)) return
  try {
    process.kill(-pid, "SIGKILL") // a detached run leads its own session and process group
  } catch {
    // gone meanwhile
  }
}

const effects = (root: string, name: string) => {
  const file = path.join(root, `${name}.effects`)
  return fs.existsSync(file)
    ? fs
        .readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l !== "").length
    : 0
}

const listed = async (root: string, id: string): Promise<Array<{ inquiry_id: string; kind: string }>> => {
  const r = await parley(root, ["conversation", "answer", id, "--format", "json"])
  return r.code === 0 ? JSON.parse(r.stdout) : []
}

interface Tally {
  unapproved: number
  wrongYes: number
  unlisted: number
  failed: number
  ms: Array<number>
}

/** One detached run under `policy`; what it counts goes into `t`. */
const one = async (root: string, policy: Policy, i: number, t: Tally) => {
  const name = `${policy}-${i}`
  const script = path.join(root, `${name}.json`)
  const call = { id: "a1", name: "deferrable", arguments: { name, mode: "slow", seconds: 0 } }
  fs.writeFileSync(
    script,
    JSON.stringify({ steps: [{ message: "Working.", tool_calls: [call] }, { message: "Done." }] })
  )
  const t0 = performance.now()
  const flag = policy === "wait" ? [] : ["--detached-policy", policy]
  const r = await parley(root, ["query", "--detach", "--new", `go ${name}`, "--script", script, ...flag])
  const pid = Number(/\(pid (\d+)\)/.exec(r.stderr)?.[1])
  if (r.code !== 0 || !Number.isFinite(pid)) {
    t.failed++
    return
  }
  const id = r.stdout.trim()
  if (policy === "wait") {
    let open: Array<{ inquiry_id: string; kind: string }> = []
    for (const deadline = Date.now() + 60_000; open.length === 0 && Date.now() < deadline; ) {
      open = (await listed(root, id)).filter((q) => q.kind === "approval")
      if (open.length === 0) await sleep(100)
    }
    if (effects(root, name) > 0) t.unapproved++
    if (open.length === 0) {
      t.failed++
      await ended(pid, 0)
      return
    }
    const yes = i % 2 === 0
    await parley(root, ["conversation", "answer", id, open[0]!.inquiry_id, yes ? "yes" : "no"])
    await ended(pid)
    if (!yes && effects(root, name) > 0) t.unapproved++
    if (yes && effects(root, name) !== 1) t.wrongYes++
  } else {
    await ended(pid)
    if (effects(root, name) > 0) t.unapproved++
    if (policy === "defer" && (await listed(root, id)).filter((q) => q.kind === "approval").length !== 1) t.unlisted++
  }
  t.ms.push(performance.now() - t0)
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0

export const run = async (): Promise<ReadonlyArray<Goal>> => {
  const goals: Array<Goal> = []
  for (const policy of POLICIES) {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), `parley-bench-approvals-${policy}-`))
    fs.mkdirSync(path.join(root, ".parley"))
    fs.writeFileSync(path.join(root, ".parley", "config.toml"), CONFIG)
    fs.copyFileSync(path.join(repo, "test", "fixtures", "tools", "deferrable.py"), path.join(root, "deferrable.py"))
    const t: Tally = { unapproved: 0, wrongYes: 0, unlisted: 0, failed: 0, ms: [] }
    const t0 = performance.now()
    let next = 0
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        for (let i = next++; i < RUNS; i = next++) await one(root, policy, i, t)
      })
    )
    const seconds = (performance.now() - t0) / 1000
    const note = `${RUNS} detached runs in ${seconds.toFixed(0)} s (${PARALLEL} at once; each to its end: median ${median(t.ms).toFixed(0)} ms); runs that did not get under way: ${t.failed}`
    goals.push(none(`approvals ${policy}: calls that ran without a yes (${RUNS} detached runs)`, t.unapproved, note))
    if (policy === "wait")
      goals.push(none(`approvals wait: calls answered yes that did not run exactly once`, t.wrongYes))
    if (policy === "defer") goals.push(none(`approvals defer: turns ended without their approval listed`, t.unlisted))
    goals.push(none(`approvals ${policy}: runs that failed to start or to open their approval`, t.failed))
    fs.rmSync(root, { recursive: true, force: true })
  }
  return goals
}
