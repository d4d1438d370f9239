/**
 * Sending to a running turn in `parley serve --cluster` (docs/cli.md#talk-to-a-running-turn) against a
 * throwaway PostgreSQL and two runner processes: a message posted to the runner that does not own the
 * turn and one posted to the owner at the same moment are both queued (200, no 409) in `parley_queue`,
 * and the owner delivers both, each its own turn, in the order of the ids the sends returned; an empty
 * message is a 400 that names the field; the conversation passes `conversation check`.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { runParley } from "../../support/Cli.ts"
import * as Cluster from "../../support/Cluster.ts"
import { freshDatabase, type PgServer, pgSkip, startPg } from "../../support/Pg.ts"

let pg: PgServer | undefined
const clusters: Array<Cluster.Cluster> = []
beforeAll(async () => {
  if (pgSkip === undefined) pg = await startPg()
}, 60_000)
afterAll(async () => {
  await Promise.all(clusters.map((c) => c.stop()))
  pg?.stop()
}, 60_000)

/** Polls `check` every 200 ms until it returns a value, for at most `ms`. */
const until = async <A>(what: string, check: () => Promise<A | undefined>, ms: number): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const got = await check().catch(() => undefined)
    if (got !== undefined) return got
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

type Entry = { type: string; content?: string; metadata?: Record<string, { id: number; via: string }> }

describe.skipIf(pgSkip !== undefined)("parley serve --cluster: send to a running turn", () => {
  it("from the runner that does not own the turn and from its owner at once: both queued, delivered in id order", async () => {
    const url = freshDatabase(pg!)
    const cluster = await Cluster.project(url)
    clusters.push(cluster)
    const a = await cluster.runner()
    const b = await cluster.runner()
    await until(
      "60 shards over 2 runners",
      async () => {
        const shards = (await a.json("/api/cluster")).body.runners.map((r: { shards: number }) => r.shards)
        return shards.length === 2 && shards.every((n: number) => n > 0) && shards[0] + shards[1] === 60
          ? true
          : undefined
      },
      30_000
    )
    // A turn that runs on b (it waits on its tool's question), created through a.
    let id: string | undefined
    for (let i = 0; i < 30 && id === undefined; i++) {
      const r = await a.post("/api/conversations", { message: `deploy s${i}` })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      if (r.body.pid === b.pid) id = r.body.conversation_id
    }
    expect(id).toBeDefined()
    const openQuestions = async () =>
      ((await a.json("/api/questions")).body as Array<{ id: string; conversation_id: string }>).filter(
        (x) => x.conversation_id === id
      )
    await until("its question open", async () => ((await openQuestions()).length > 0 ? true : undefined), 30_000)

    const empty = await a.post(`/api/conversations/${id}/messages`, { message: " " })
    expect(empty.status).toBe(400)
    expect(JSON.stringify(empty.body)).toContain("message")

    const [fromA, fromB] = await Promise.all([
      a.post(`/api/conversations/${id}/messages`, { message: "from a" }),
      b.post(`/api/conversations/${id}/messages`, { message: "from b" })
    ])
    expect(fromA.status, JSON.stringify(fromA.body)).toBe(200)
    expect(fromB.status, JSON.stringify(fromB.body)).toBe(200)
    expect(fromA.body.pid).toBe(b.pid)
    expect([fromA.body.queued, fromB.body.queued].sort()).toStrictEqual([1, 2])

    // Each turn's tool asks again (the fake model calls it after every user message): answered until all three ran.
    const entries = await until(
      "the three turns to complete",
      async () => {
        for (const q of await openQuestions())
          await a.post(`/api/conversations/${id}/questions/${q.id}`, { answer: true })
        const got = await a.json(`/api/conversations/${id}`)
        const all = got.body as Array<Entry>
        const running = (await a.json("/api/conversations")).body.find((r: { id: string }) => r.id === id)?.running
        return all.filter((e) => e.type === "chat_request").length === 3 && running === null ? all : undefined
      },
      90_000
    )
    const requests = entries.filter((e) => e.type === "chat_request")
    const byId = fromA.body.queued === 1 ? ["from a", "from b"] : ["from b", "from a"]
    expect(requests.map((e) => e.content)).toStrictEqual([expect.stringMatching(/^deploy s/), ...byId])
    expect(requests.slice(1).map((e) => e.metadata?.["parley_message"]?.id)).toStrictEqual([1, 2])
    expect(entries.at(-1)).toMatchObject({ type: "chat_response" })
    const check = runParley(["--storage", url, "conversation", "check", id!], { cwd: cluster.root, timeoutMs: 60_000 })
    expect(check.code, check.stdout + check.stderr).toBe(0)
  }, 240_000)
})
