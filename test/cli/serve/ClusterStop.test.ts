// A runner stopped by SIGTERM (docs/cluster.md#stopping-a-runner) hands its turns off once none of their
// tools runs, as the sweep does for a turn whose shard moved: a tool stopped after it acted but before its
// result was recorded would act again on the next owner. It waits for them at most a few seconds.
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { runParley } from "../../support/Cli.ts"
import * as Cluster from "../../support/Cluster.ts"
import { pgSkip } from "../../support/Pg.ts"

const clusters = Cluster.perTest()

type Entry = { readonly type: string; readonly content?: string }

/** Polls `check` every 200 ms until it holds, for at most `ms`. */
const until = async (what: string, check: () => Promise<boolean>, ms: number): Promise<void> => {
  const deadline = Date.now() + ms
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

/** The conversation's entries, as a runner's API gives them. */
const entriesOf = async (runner: Cluster.Runner, id: string): Promise<ReadonlyArray<Entry>> =>
  (await runner.json(`/api/conversations/${id}`)).body as ReadonlyArray<Entry>

describe.skipIf(pgSkip !== undefined)("a runner stopped by SIGTERM", () => {
  it("waits for a running tool to finish before it hands the turn off: the tool acts once, the next owner ends the turn", async () => {
    const cluster = await clusters.cluster()
    const runners = [await cluster.runner(), await cluster.runner()]
    await Cluster.settled(runners[0]!, 2)
    const started = await runners[0]!.post("/api/conversations", { message: "gate g1" })
    expect(started.status, JSON.stringify(started.body)).toBe(200)
    const id = String(started.body.conversation_id)
    const owner = runners.find((r) => r.pid === started.body.pid)!
    const other = runners.find((r) => r !== owner)!
    // The tool runs (its call recorded, its process waiting for its gate).
    await until(
      "the tool call",
      async () => (await entriesOf(other, id)).some((e) => e.type === "tool_call_request"),
      30_000
    )
    let exitedAt: number | undefined
    const exited = new Promise<void>((resolve) =>
      owner.child.once("exit", () => {
        exitedAt = Date.now()
        resolve()
      })
    )
    owner.child.kill("SIGTERM")
    // Well within the runner's grace: it is still there, waiting for the tool.
    await new Promise((r) => setTimeout(r, 1500))
    const openedAt = Date.now()
    fs.writeFileSync(path.join(cluster.root, "g1.go"), "")
    await exited
    expect(exitedAt!).toBeGreaterThanOrEqual(openedAt)
    // The next owner resumes the turn after the recorded result: the model's final reply, no second run.
    await until(
      "the turn's end on the other runner",
      async () => (await entriesOf(other, id)).at(-1)?.type === "chat_response",
      60_000
    )
    expect(cluster.effects("g1")).toBe(1)
    const entries = await entriesOf(other, id)
    expect(entries.filter((e) => e.type === "tool_call_response").length).toBe(1)
    const check = runParley(["--storage", cluster.url, "conversation", "check", id], { cwd: cluster.root })
    expect(check.code, check.stderr).toBe(0)
  }, 240_000)
})
