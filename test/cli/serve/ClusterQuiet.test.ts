// parley serve --cluster (docs/cluster.md#stopping-a-runner): a runner says the cluster library's warnings
// in one line each on stderr, in parley's words (not Effect's multi-line block with its annotations, which
// went to stdout after the URL), and stopped with
// SIGTERM it says at most one line on stderr: the warnings its own stop causes are not shown.
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as RunnerLog from "../../../src/cli/serve/cluster/RunnerLog.ts"
import * as Cluster from "../../support/Cluster.ts"
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
    const [one, ...rest] = runners
    one!.child.kill("SIGTERM")
    expect(await exited(one!.child)).toBe(143)
    await sleep(2000)
    // The rest at once (a cluster stopped as a whole): each sees the other go as it goes.
    for (const r of rest) r.child.kill("SIGTERM")
    for (const r of rest) expect(await exited(r.child), r.output()).toBe(143)
    for (const r of runners) {
      expect(lines(stderr.get(r)!).length, stderr.get(r)).toBeLessThanOrEqual(1)
      // stdout holds its two lines, nothing more.
      expect(lines(r.output()).length, r.output()).toBeLessThanOrEqual(3)
      expect(r.output()).not.toMatch(/WARN|module|fiber/)
    }
  }, 180_000)
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
})
