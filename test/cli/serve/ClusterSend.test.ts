/**
 * Sending to a running turn in `parley serve --cluster` (docs/cli.md#talk-to-a-running-turn) against a
 * throwaway PostgreSQL and two runner processes: a message posted to the runner that does not own the
 * turn and one posted to the owner at the same moment are both queued (200, no 409) in `parley_queue`,
 * and the owner delivers both, each its own turn, in the order of the ids the sends returned; an empty
 * message is a 400 that names the field; the conversation passes `conversation check`. Through the runner that does
 * not own the turn, `next` reaches the model at the running turn's next request (after the tool's result) and `now`
 * stops the turn (the finished tool's result kept) and goes on with the message, as they do locally; a queued message
 * is withdrawn through any runner (`DELETE …/messages/:n`) until the owner delivers it. A message for a turn that still
 * runs on the runner its shard left (a tool going there, so not handed off) is queued too, and that turn takes it.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { runParley } from "../../support/Cli.ts"
import * as Cluster from "../../support/Cluster.ts"
import { freshDatabase, type PgServer, pgSkip, startPg } from "../../support/Pg.ts"

let pg: PgServer | undefined
const clusters: Array<Cluster.Cluster> = []
beforeAll(async () => {
  // Each waiting turn holds a connection, and the first tests' clusters live until the end.
  if (pgSkip === undefined) pg = await startPg({ maxConnections: 300 })
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

type Entry = {
  type: string
  id?: string
  content?: string
  message?: string
  is_error?: boolean
  metadata?: Record<string, { id: number; via: string }>
}

const twoRunners = async () => {
  const cluster = await Cluster.project(freshDatabase(pg!))
  clusters.push(cluster)
  const a = await cluster.runner()
  const b = await cluster.runner()
  await Cluster.settled(a, 2)
  return { cluster, a, b }
}

/** A conversation whose turn runs on `owner`, created through `via` (`<verb> s<i>`); those that landed elsewhere are stopped. */
const ownedBy = async (via: Cluster.Runner, owner: Cluster.Runner, verb: string) => {
  for (let i = 0; i < 30; i++) {
    const r = await via.post("/api/conversations", { message: `${verb} s${i}` })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    if (r.body.pid === owner.pid) return r.body.conversation_id as string
    await via.post(`/api/conversations/${r.body.conversation_id}/stop`, {})
  }
  throw new Error(`no conversation landed on runner ${owner.pid}`)
}

/** The conversation's entries once its turn ended (`running: null`) with a reply last. */
const settled = (a: Cluster.Runner, id: string) =>
  until(
    "the turn to end with a reply",
    async () => {
      const all = (await a.json(`/api/conversations/${id}`)).body as Array<Entry>
      const running = (await a.json("/api/conversations")).body.find((r: { id: string }) => r.id === id)?.running
      return running === null && all.at(-1)?.type === "chat_response" ? all : undefined
    },
    90_000
  )

/**
 * `count` turns on runner a alone, each with its tool running until the test opens its gate (`<root>/g<i>.go`);
 * then b joins and takes about half of the shards: a keeps running those turns while their tools run.
 */
const gatedThenSplit = async (count: number) => {
  // Traced: b says which requests it passed on to a turn running elsewhere.
  const cluster = await Cluster.project(freshDatabase(pg!), { PARLEY_CLUSTER_DEBUG: "1" })
  clusters.push(cluster)
  const a = await cluster.runner()
  await until(
    "a to hold every shard",
    async () => ((await a.json("/api/cluster")).body.runners[0]?.shards === 60 ? true : undefined),
    30_000
  )
  const ids: Array<string> = []
  for (let i = 0; i < count; i++) {
    const r = await a.post("/api/conversations", { message: `gate g${i}` })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect(r.body.pid).toBe(a.pid)
    ids.push(r.body.conversation_id)
  }
  for (const id of ids)
    await until(
      "its tool call",
      async () =>
        ((await a.json(`/api/conversations/${id}`)).body as Array<Entry>).some((e) => e.type === "tool_call_request")
          ? true
          : undefined,
      30_000
    )
  const b = await cluster.runner()
  await Cluster.settled(a, 2)
  return { cluster, a, b, ids }
}

/** Stops `cluster` now, not with the file's others: its turns' connections are the server's to give to the next test. */
const stopNow = async (cluster: Cluster.Cluster) => {
  clusters.splice(clusters.indexOf(cluster), 1)
  await cluster.stop()
}

/** `message` sent `when` to each of `ids` through `via`, all at once. */
const sendAll = (via: Cluster.Runner, ids: ReadonlyArray<string>, message: string, when: "next" | "now") =>
  Promise.all(ids.map((id) => via.post(`/api/conversations/${id}/messages`, { message, when }, 60_000)))

/** `conversation check` of `id` passes. */
const checkOk = (cluster: Cluster.Cluster, id: string) => {
  const check = runParley(["--storage", cluster.url, "conversation", "check", id], {
    cwd: cluster.root,
    timeoutMs: 60_000
  })
  expect(check.code, check.stdout + check.stderr).toBe(0)
}

/** The ids b's trace names after `what` (`Send.elsewhere`, `Stop.elsewhere`). */
const traced = (b: Cluster.Runner, what: string): ReadonlySet<string> =>
  new Set([...b.output().matchAll(new RegExp(`\\d ${what.replace(".", "\\.")} (\\d+)$`, "gm"))].map((m) => m[1]!))

const runningOf = async (a: Cluster.Runner, id: string) =>
  (await a.json("/api/conversations")).body.find((r: { id: string }) => r.id === id)?.running

describe.skipIf(pgSkip !== undefined)("parley serve --cluster: send to a running turn", () => {
  it("from the runner that does not own the turn and from its owner at once: both queued, delivered in id order", async () => {
    const url = freshDatabase(pg!)
    const cluster = await Cluster.project(url)
    clusters.push(cluster)
    const a = await cluster.runner()
    const b = await cluster.runner()
    await Cluster.settled(a, 2)
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
        // The third reply recorded, not only no turn listed as running: once, under a loaded full run, the listing
        // said not running while the last entry was still the tool's response (the reply came after).
        const done = all.filter((e) => e.type === "chat_request").length === 3 && all.at(-1)?.type === "chat_response"
        return done && running === null ? all : undefined
      },
      90_000
    )
    const requests = entries.filter((e) => e.type === "chat_request")
    const byId = fromA.body.queued === 1 ? ["from a", "from b"] : ["from b", "from a"]
    expect(requests.map((e) => e.content)).toStrictEqual([expect.stringMatching(/^deploy s/), ...byId])
    expect(requests.slice(1).map((e) => e.metadata?.["parley_message"]?.id)).toStrictEqual([1, 2])
    expect(entries.at(-1)).toMatchObject({ type: "chat_response" })
    checkOk(cluster, id!)
  }, 240_000)

  it("next, from the runner that does not own the turn: the next request holds it after the tool's result", async () => {
    const { cluster, a, b } = await twoRunners()
    const id = await ownedBy(a, b, "deploy")
    const open = await until(
      "its question open",
      async () =>
        ((await a.json("/api/questions")).body as Array<{ id: string; conversation_id: string }>).find(
          (x) => x.conversation_id === id
        ),
      30_000
    )
    // A message withdrawn through the runner that does not own the turn never reaches it.
    const never = await a.post(`/api/conversations/${id}/messages`, { message: "never mind" })
    expect(never.body).toMatchObject({ conversation_id: id, pid: b.pid, queued: 1 })
    expect(await a.del(`/api/conversations/${id}/messages/1`)).toStrictEqual({
      status: 200,
      body: { conversation_id: id, queued: 1, outcome: "withdrawn" }
    })
    const sent = await a.post(`/api/conversations/${id}/messages`, { message: "use the blue one", when: "next" })
    expect(sent.status, JSON.stringify(sent.body)).toBe(200)
    expect(sent.body).toMatchObject({ conversation_id: id, pid: b.pid, queued: 2 })
    expect((await a.post(`/api/conversations/${id}/questions/${open.id}`, { answer: true })).status).toBe(200)
    const entries = await settled(a, id)
    // What the model was sent: the tool's result, then the message, in the same request.
    const request = cluster.model.seen().find((m) => JSON.stringify(m.at(-1)).includes("use the blue one"))
    expect(request?.at(-2)?.role).toBe("tool")
    expect(request?.at(-1)?.role).toBe("user")
    const types = entries.map((e) => e.type)
    expect(types.filter((t) => t === "turn_start")).toHaveLength(1)
    const at = types.lastIndexOf("chat_request")
    expect(types[at - 1]).toBe("tool_call_response")
    expect(entries[at]).toMatchObject({ content: "use the blue one" })
    expect(entries[at]?.metadata?.["parley_message"]?.id).toBe(2)
    expect(entries.at(-1)).toMatchObject({ type: "chat_response", message: "Noted: use the blue one" })
    expect(entries.filter((e) => e.type === "chat_request").map((e) => e.content)).toStrictEqual([
      expect.stringMatching(/^deploy s/),
      "use the blue one"
    ])
    expect(await b.del(`/api/conversations/${id}/messages/2`)).toMatchObject({
      status: 404,
      body: { error: "MessageNotQueued", state: "delivered" }
    })
    checkOk(cluster, id)
  }, 240_000)

  it("now, from the runner that does not own the turn: stopped (the finished tool's result kept), then on with it", async () => {
    const { cluster, a, b } = await twoRunners()
    const id = await ownedBy(a, b, "pair")
    // The fast call's result is recorded while the other call hangs.
    await until(
      "the fast call's result",
      async () => {
        const all = (await a.json(`/api/conversations/${id}`)).body as Array<Entry>
        return all.some((e) => e.type === "tool_call_response" && e.id?.endsWith("-fast")) ? true : undefined
      },
      60_000
    )
    const started = Date.now()
    const sent = await a.post(
      `/api/conversations/${id}/messages`,
      { message: "stop that and summarise", when: "now" },
      60_000
    )
    expect(sent.status, JSON.stringify(sent.body)).toBe(200)
    expect(sent.body).toMatchObject({ conversation_id: id, queued: 1 })
    const entries = await settled(a, id)
    expect(Date.now() - started).toBeLessThan(60_000)
    const responses = entries.filter((e) => e.type === "tool_call_response")
    expect(responses.find((e) => e.id?.endsWith("-fast"))).toMatchObject({ is_error: false })
    expect(responses.find((e) => e.id !== undefined && !e.id.endsWith("-fast"))).toMatchObject({ is_error: true })
    const requests = entries.filter((e) => e.type === "chat_request")
    expect(requests.map((e) => e.content)).toStrictEqual([expect.stringMatching(/^pair s/), "stop that and summarise"])
    expect(entries.at(-1)).toMatchObject({ type: "chat_response", message: "Noted: stop that and summarise" })
    checkOk(cluster, id)
  }, 240_000)

  it("while the turn runs on the runner its shard left (a tool going there): queued, not 409, and taken at its next request", async () => {
    const { cluster, a, b, ids } = await gatedThenSplit(16)
    const sent = await sendAll(b, ids, "use the blue one", "next")
    for (const s of sent) {
      expect(s.status, JSON.stringify(s.body)).toBe(200)
      expect(s.body).toMatchObject({ pid: a.pid, queued: 1 })
    }
    // At least one went to b, which does not run its turn (all sixteen stayed on a: 1 in 65,536).
    expect(traced(b, "Send.elsewhere").size).toBeGreaterThan(0)
    ids.forEach((_, i) => fs.writeFileSync(path.join(cluster.root, `g${i}.go`), ""))
    for (const [i, id] of ids.entries()) {
      const entries = await settled(a, id)
      const types = entries.map((e) => e.type)
      const at = types.lastIndexOf("chat_request")
      expect(types[at - 1]).toBe("tool_call_response")
      expect(entries.filter((e) => e.type === "chat_request").map((e) => e.content)).toStrictEqual([
        `gate g${i}`,
        "use the blue one"
      ])
      expect(entries.at(-1)).toMatchObject({ type: "chat_response", message: "Noted: use the blue one" })
      checkOk(cluster, id)
    }
    await stopNow(cluster)
  }, 240_000)

  // Sixteen turns a test: each holds one of its runner's 40 store connections while it waits.
  it("a stop reaches a turn running on the runner its shard left: stopped there, and not resumed", async () => {
    const { cluster, a, b, ids } = await gatedThenSplit(16)
    const stopped = await Promise.all(ids.map((id) => b.post(`/api/conversations/${id}/stop`, {}, 60_000)))
    for (const r of stopped) expect(r, JSON.stringify(r.body)).toMatchObject({ status: 200, body: { pid: a.pid } })
    // At least one went to b, which does not run its turn (all sixteen stayed on a: 1 in 65,536).
    expect(traced(b, "Stop.elsewhere").size).toBeGreaterThan(0)
    // Stopped: no turn runs, nothing more recorded; and none is resumed: with its gate open, a resumed turn's tool
    // would finish and leave its effect.
    for (const id of ids)
      await until("the turn to be stopped", async () => ((await runningOf(a, id)) === null ? true : undefined), 30_000)
    ids.forEach((_, i) => fs.writeFileSync(path.join(cluster.root, `g${i}.go`), ""))
    await new Promise((r) => setTimeout(r, 3_000))
    for (const [i, id] of ids.entries()) {
      expect(await runningOf(a, id)).toBe(null)
      const entries = (await a.json(`/api/conversations/${id}`)).body as Array<Entry>
      expect(entries.some((e) => e.type === "chat_response")).toBe(false)
      expect(fs.existsSync(path.join(cluster.root, `g${i}.effects`))).toBe(false)
    }
    checkOk(cluster, ids[0]!)
    await stopNow(cluster)
  }, 240_000)

  it("a now message reaches a turn running on the runner its shard left: stopped there, then on with it here", async () => {
    const { cluster, a, b, ids } = await gatedThenSplit(16)
    const sent = await sendAll(b, ids, "stop that and summarise", "now")
    for (const r of sent)
      expect(r, JSON.stringify(r.body)).toMatchObject({ status: 200, body: { pid: a.pid, queued: 1 } })
    expect(traced(b, "Send.elsewhere").size).toBeGreaterThan(0)
    // The gated call answered as interrupted, then the message, then the model's reply to it.
    for (const [i, id] of ids.entries()) {
      const entries = await settled(a, id)
      const gated = entries.filter((e) => e.type === "tool_call_response")
      expect(gated).toHaveLength(1)
      expect(gated[0]).toMatchObject({ is_error: true, content: expect.stringContaining("Interrupted") })
      expect(entries.filter((e) => e.type === "chat_request").map((e) => e.content)).toStrictEqual([
        `gate g${i}`,
        "stop that and summarise"
      ])
      expect(entries.at(-1)).toMatchObject({ type: "chat_response", message: "Noted: stop that and summarise" })
    }
    checkOk(cluster, ids[0]!)
    await stopNow(cluster)
  }, 240_000)
})
