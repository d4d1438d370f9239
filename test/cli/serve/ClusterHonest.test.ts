// parley serve --cluster (docs/cluster.md#stopping-a-runner): a runner says the cluster library's warnings
// in one line each on stderr, in parley's words (not Effect's multi-line block with its annotations, which
// went to stdout after the URL), and stopped with
// SIGTERM it says at most one line on stderr: the warnings its own stop causes are not shown. With the
// scripted model each conversation's turn follows the script from its first step (a runner's turns shared one
// position), and a turn that fails says so in its runner's log and, within a second, in its row's `last_error`
// (the API, the page, `ls`).
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import { PersistenceError } from "effect/cluster/ClusterError"
import * as RunnerLog from "../../../src/layers/cluster/RunnerLog.ts"
import * as Cluster from "../../support/Cluster.ts"
import { runParley } from "../../support/Cli.ts"
import { exited } from "../../support/Project.ts"
import { freshDatabase, type PgServer, pgSkip, psql, startPg } from "../../support/Pg.ts"

let pg: PgServer | undefined
const clusters: Array<Cluster.Cluster> = []
beforeAll(async () => {
  if (pgSkip === undefined) pg = await startPg()
}, 60_000)
afterAll(async () => {
  await Promise.all(clusters.map((c) => c.stop()))
  pg?.stop()
}, 60_000)

const lines = (text: string) => text.split("\n").filter((l) => l !== "")
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe.skipIf(pgSkip !== undefined)("a cluster runner's stderr", () => {
  it("a warning of the cluster library is one line in parley's words", async () => {
    const url = freshDatabase(pg!)
    const cluster = await Cluster.project(url)
    clusters.push(cluster)
    const runner = await cluster.runner()
    let stderr = ""
    runner.child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()))
    // Every runner marked unhealthy in the table: the library warns (and marks its own runner healthy again).
    const deadline = Date.now() + 30_000
    while (!stderr.includes("No healthy runners available") && Date.now() < deadline) {
      psql(url, "UPDATE cluster_runners SET healthy = false")
      await sleep(200)
    }
    await sleep(500)
    expect(lines(stderr).length, runner.output()).toBeGreaterThan(0)
    // Nothing else on stdout after its two lines (Effect's logger wrote its block there).
    for (const l of lines(runner.output()).slice(2))
      expect(l).toBe("parley serve --cluster: warning: No healthy runners available")
  }, 120_000)

  it("SIGTERM: at most one line, whether one runner stops of two or both at once", async () => {
    const cluster = await Cluster.project(freshDatabase(pg!))
    clusters.push(cluster)
    const runners = [await cluster.runner(), await cluster.runner(), await cluster.runner()]
    // A conversation waits on its question on each: stopping has turns to hand off.
    for (const r of runners) expect((await r.post("/api/conversations", { message: "deploy c1" })).status).toBe(200)
    const stderr = new Map<Cluster.Runner, string>(runners.map((r) => [r, ""]))
    for (const r of runners) r.child.stderr!.on("data", (d: Buffer) => stderr.set(r, stderr.get(r)! + d.toString()))
    // Long enough for the runners' health and shard loops to have run.
    await sleep(3000)
    // What a runner says from its SIGTERM on: before it, a starved machine may legitimately warn (a shard-lock
    // refresh that timed out is said once), which is not what this test is about.
    const fromStop = new Map<Cluster.Runner, number>()
    const stop = (r: Cluster.Runner) => {
      fromStop.set(r, stderr.get(r)!.length)
      r.child.kill("SIGTERM")
    }
    const [one, ...rest] = runners
    stop(one!)
    expect(await exited(one!.child)).toBe(143)
    await sleep(2000)
    // The rest at once (a cluster stopped as a whole): each sees the other go as it goes.
    for (const r of rest) stop(r)
    for (const r of rest) expect(await exited(r.child), r.output()).toBe(143)
    for (const r of runners) {
      const said = stderr.get(r)!.slice(fromStop.get(r))
      expect(lines(said).length, stderr.get(r)).toBeLessThanOrEqual(1)
      // stdout holds its two lines, nothing more.
      expect(lines(r.output()).length, r.output()).toBeLessThanOrEqual(3)
      expect(r.output()).not.toMatch(/WARN|module|fiber/)
    }
  }, 180_000)
})

const until = async <A>(what: string, check: () => Promise<A | undefined>, ms: number): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const got = await check().catch(() => undefined)
    if (got !== undefined) return got
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await sleep(200)
  }
}

describe.skipIf(pgSkip !== undefined)("the scripted model in a cluster", () => {
  it("10 conversations over 2 runners each follow the script from its first step; a failed turn is said in the log, the API, the page and ls within 1 s", async () => {
    const dir = fs.mkdtempSync(path.join(process.env["TMPDIR"] ?? "/tmp", "parley-script-"))
    const script = path.join(dir, "s.json")
    const steps = (name: string) => [
      {
        message: "Deploying.",
        tool_calls: [{ id: "d1", name: "deferrable", arguments: { name, mode: "slow", seconds: 0.1 } }]
      },
      { message: "Deploy finished." }
    ]
    // One tool name for all: each conversation's turn must run it once.
    fs.writeFileSync(script, JSON.stringify({ steps: steps("shared") }))
    const cluster = await Cluster.project(freshDatabase(pg!), { PARLEY_SCRIPT: script })
    clusters.push(cluster)
    const runners = [await cluster.runner(), await cluster.runner()]
    const ids: Array<string> = []
    for (let i = 0; i < 10; i++) {
      const r = await runners[i % 2]!.post("/api/conversations", { message: `deploy ${i}`, model: "scripted" })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      ids.push(r.body.conversation_id)
    }
    for (const id of ids)
      await until(
        `${id} to finish`,
        async () => {
          const r = await runners[0]!.json(`/api/conversations/${id}`)
          return r.body.at(-1)?.type === "chat_response" && r.body.at(-1).message === "Deploy finished."
            ? true
            : undefined
        },
        60_000
      )
    expect(cluster.effects("shared")).toBe(10)
    // A model call that fails: the runner that ran the turn says so on stderr, naming the conversation, and
    // within a second its row says it (`last_error`) in the API, on the page and in `ls`.
    fs.writeFileSync(script, JSON.stringify({ steps: [{ error: "the model is down" }] }))
    const failed = await runners[1]!.post("/api/conversations", { message: "deploy again", model: "scripted" })
    await until(
      "the failure in a runner's log",
      async () => (runners.some((r) => r.output().includes("the turn failed")) ? true : undefined),
      20_000
    )
    const said = runners.map((r) => r.output()).join("")
    expect(said).toMatch(/^parley serve --cluster: jp-c\d+: the turn failed: .*the model is down/m)
    const id = (failed.body?.conversation_id as string | undefined) ?? /jp-c(\d+): the turn failed/.exec(said)![1]!
    expect(said).toContain(`jp-c${id}`)
    const logged = Date.now()
    const rows = await until(
      "last_error in GET /api/conversations",
      async () => {
        const r = await runners[0]!.json("/api/conversations")
        const row = r.body.find((row: any) => row.id === id)
        return row !== undefined && row.last_error !== null ? r.body : undefined
      },
      5_000
    )
    expect(Date.now() - logged).toBeLessThan(1000)
    const row = rows.find((r: any) => r.id === id)
    expect(row.last_error.message).toBe("the model is down")
    expect(Number.isNaN(Date.parse(row.last_error.at))).toBe(false)
    // 0 turns end without a word: every other conversation finished and has no error; none is left
    // incomplete without a run or an error.
    for (const r of rows) {
      if (r.id !== id) expect(r.last_error, r.id).toBeNull()
      expect(r.incomplete === null || r.running !== null || r.last_error !== null, JSON.stringify(r)).toBe(true)
    }
    expect(rows.filter((r: any) => ids.includes(r.id) && r.incomplete === null).length).toBe(10)
    const page = await fetch(`${runners[1]!.base}/`, { headers: { authorization: `Bearer ${Cluster.TOKEN}` } })
    expect(await page.text()).toContain("failed: the model is down")
    const one = await fetch(`${runners[0]!.base}/conversations/${id}`, {
      headers: { authorization: `Bearer ${Cluster.TOKEN}` }
    })
    expect(await one.text()).toContain("The last run failed: the model is down")
    const ls = runParley(["--storage", cluster.url, "conversation", "ls"], { cwd: cluster.root })
    expect(ls.code, ls.stderr).toBe(0)
    expect(ls.stdout.split("\n").find((l) => l.startsWith(id))).toContain("[failed: the model is down]")
    fs.rmSync(dir, { recursive: true, force: true })
  }, 240_000)
})

describe("RunnerLog.line (what a runner's logger prints)", () => {
  it("a warning its own stop causes is not said while it stops, and is said otherwise; a cause's first line follows", () => {
    const healthy = ["No healthy runners available"]
    expect(RunnerLog.line(healthy, "Warn", undefined, true)).toBeUndefined()
    expect(RunnerLog.line(healthy, "Warn", undefined, false)).toBe(
      "parley serve --cluster: warning: No healthy runners available"
    )
    expect(
      RunnerLog.line(["Could not read messages from storage"], "Warn", Cause.fail(new Error("connection lost")), true)
    ).toBe("parley serve --cluster: warning: Could not read messages from storage: Error: connection lost")
    expect(RunnerLog.line(["Shard lock storage is unhealthy"], "Error", undefined, false)).toBe(
      "parley serve --cluster: error: Shard lock storage is unhealthy"
    )
    expect(RunnerLog.line(["Listening"], "Info", undefined, false)).toBeUndefined()
  })

  it("a PersistenceError says its own cause; a stop's shard-lock warnings are one line, each once per 30 s otherwise", () => {
    const timedOut = Cause.fail(
      new PersistenceError({ cause: new Cause.TimeoutError("Operation timed out after '2s'") })
    )
    const release = ["Could not release shards, retrying"]
    expect(RunnerLog.line(release, "Warn", timedOut, false)).toBe(
      "parley serve --cluster: warning: Could not release shards, retrying: TimeoutError: Operation timed out after '2s'"
    )
    // Stopping: one line for every shard's warning and the lock storage's error, saying what failed and what follows.
    const stop: RunnerLog.Said = { at: new Map(), stop: false }
    const shown = [
      ...Array.from({ length: 20 }, () => RunnerLog.collapsed(stop, 0, release, "Warn", timedOut, true)),
      RunnerLog.collapsed(stop, 0, ["Shard lock storage is unhealthy"], "Error", timedOut, true)
    ].filter((l) => l !== undefined)
    expect(shown).toEqual([
      "parley serve --cluster: warning: stopping: releasing its shards failed (TimeoutError: Operation timed out after '2s'): the other runners take over any it holds once its PostgreSQL session ends, at its exit at the latest"
    ])
    // Running: each shard-lock warning at most once per 30 s, whatever the number of shards; others as they come.
    const running: RunnerLog.Said = { at: new Map(), stop: false }
    const at = (ms: number) => RunnerLog.collapsed(running, ms, release, "Warn", timedOut, false)
    expect([at(0), at(10), at(29_000), at(30_001)].map((l) => l !== undefined)).toEqual([true, false, false, true])
    const unhealthy = (ms: number) =>
      RunnerLog.collapsed(running, ms, ["Shard lock storage is unhealthy"], "Error", timedOut, false)
    expect(unhealthy(30_002)).toBe(
      "parley serve --cluster: error: Shard lock storage is unhealthy: TimeoutError: Operation timed out after '2s'"
    )
    expect(unhealthy(36_000)).toBeUndefined()
    expect(
      RunnerLog.collapsed(running, 36_000, ["Could not read messages from storage"], "Warn", timedOut, false)
    ).toBe(
      "parley serve --cluster: warning: Could not read messages from storage: TimeoutError: Operation timed out after '2s'"
    )
  })
})
