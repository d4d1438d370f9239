// Notifications in a cluster (docs/questions-and-approvals.md#notifications): the runner that owns a turn
// produces its events, so with three runners and none failing each event reaches the webhook once, with
// one delivery id; a turn handed off to another runner (its runner stopped) is not told as ended there.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Cluster from "../../support/Cluster.ts"
import { pgSkip } from "../../support/Pg.ts"
import { waitFor } from "../../support/Project.ts"
import { bodies, type Receiver, startReceiver } from "../../support/Receiver.ts"

const clusters = Cluster.perTest()
const receivers: Array<Receiver> = []
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close()
})

/** A cluster project whose `[notify]` webhook is a receiver of the test's, both stopped after it. */
const notified = async (): Promise<{ receiver: Receiver; cluster: Cluster.Cluster }> => {
  const receiver = await startReceiver()
  receivers.push(receiver)
  const cluster = await clusters.cluster()
  fs.appendFileSync(
    path.join(cluster.root, ".parley", "config.toml"),
    `\n[notify]\nwebhook = { url = "${receiver.url}", secret = "s3cret" }\n`
  )
  return { receiver, cluster }
}

describe.skipIf(pgSkip !== undefined)("[notify] in a cluster", () => {
  it("three runners deliver each event of a turn once, with one delivery id", async () => {
    const { receiver, cluster } = await notified()
    const runners = [await cluster.runner(), await cluster.runner(), await cluster.runner()]
    // None failing means no shard moves either: once the split has held a second, a turn started stays where it
    // starts (a handoff tells the turn's questions again from the runner it goes to: the next test).
    await Cluster.settled(runners[0]!, 3)
    const started = await runners[1]!.post("/api/conversations", { message: "deploy c1" })
    expect(started.status, JSON.stringify(started.body)).toBe(200)
    const id = String(started.body.conversation_id)
    await waitFor("the question told", () => bodies(receiver).some((b) => b["event"] === "question_opened"), 60_000)
    const opened = bodies(receiver).find((b) => b["event"] === "question_opened")!
    const answered = await runners[2]!.post(`/api/conversations/${id}/questions/${String(opened["inquiry_id"])}`, {
      answer: true
    })
    expect(answered.status).toBe(200)
    await waitFor("the run's end told", () => bodies(receiver).some((b) => b["event"] === "run_ended"), 60_000)
    // Time for a duplicate from another runner to arrive, were there one.
    await new Promise((r) => setTimeout(r, 3000))
    const got = bodies(receiver)
    expect(got.map((b) => b["event"])).toStrictEqual(["question_opened", "question_closed", "run_ended"])
    expect(got.every((b) => b["conversation_id"] === id)).toBe(true)
    expect(new Set(receiver.received.map((x) => x.headers["x-parley-delivery"])).size).toBe(3)
    expect(got[1]).toMatchObject({ answered_by: expect.any(String), via: expect.any(String), answer: true })
  }, 240_000)
  it("a turn handed off when its runner stops is not told ended: its question is told again by the next owner", async () => {
    const { receiver, cluster } = await notified()
    const runners = [await cluster.runner(), await cluster.runner()]
    await Cluster.settled(runners[0]!, 2)
    const started = await runners[0]!.post("/api/conversations", { message: "deploy h1" })
    expect(started.status, JSON.stringify(started.body)).toBe(200)
    const id = String(started.body.conversation_id)
    const owner = runners.find((r) => r.pid === started.body.pid)!
    const other = runners.find((r) => r !== owner)!
    await waitFor("the question told", () => bodies(receiver).some((b) => b["event"] === "question_opened"), 60_000)
    // SIGTERM: the owner hands its turns off (frozen, then interrupted) and exits; the other resumes the turn.
    const exited = new Promise((resolve) => owner.child.once("exit", resolve))
    owner.child.kill("SIGTERM")
    await exited
    await waitFor(
      "the question told again by the next owner",
      () => bodies(receiver).filter((b) => b["event"] === "question_opened").length >= 2,
      60_000
    )
    const asked = bodies(receiver).filter((b) => b["event"] === "question_opened")
    const inquiry = String(asked.at(-1)!["inquiry_id"])
    const answered = await other.post(`/api/conversations/${id}/questions/${inquiry}`, { answer: true }, 60_000)
    expect(answered.status, JSON.stringify(answered.body)).toBe(200)
    await waitFor("the run's end told", () => bodies(receiver).some((b) => b["event"] === "run_ended"), 60_000)
    await new Promise((r) => setTimeout(r, 2000))
    const got = bodies(receiver)
    expect(got.map((b) => b["event"])).toStrictEqual([
      "question_opened",
      "question_opened",
      "question_closed",
      "run_ended"
    ])
    expect(got[2]).toMatchObject({ outcome: "answered", answer: true })
    expect(got.every((b) => b["conversation_id"] === id)).toBe(true)
  }, 240_000)
})
