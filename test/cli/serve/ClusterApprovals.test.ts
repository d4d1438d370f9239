// Approvals in a cluster (docs/questions-and-approvals.md#approvals, docs/cluster.md): `parley serve --cluster`
// runners on a throwaway PostgreSQL, a local tool with `run = "ask"` whose only question is its approval (it
// writes `<name>.effects` when it runs). Under `wait`, `defer` and `deny` no call starts without a yes: `wait`
// lists the approval (`kind: "approval"`, the call's `arguments`) and takes its answer from a runner that does
// not own the turn; `defer` ends the turn waiting with the approval listed, answered and continued through the
// API it runs once; `deny` skips it with a response that says a person's approval was needed.
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Cluster from "../../support/Cluster.ts"
import { freshDatabase, type PgServer, pgSkip, startPg } from "../../support/Pg.ts"
import { DEFERRABLE } from "../../support/Project.ts"

let pg: PgServer | undefined
const clusters: Array<Cluster.Cluster> = []
beforeAll(async () => {
  if (pgSkip === undefined) pg = await startPg()
}, 60_000)
afterAll(async () => {
  await Promise.all(clusters.map((c) => c.stop()))
  pg?.stop()
}, 60_000)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `check` every 200 ms until it returns a value, for at most `ms`. */
const until = async <A>(what: string, check: () => Promise<A | undefined>, ms: number): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const got = await check().catch(() => undefined)
    if (got !== undefined) return got
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await sleep(200)
  }
}

/** The deferrable tool needing a person's yes, questions under `policy`. */
const asking = (policy: string) => `${DEFERRABLE.replace('run = "unattended"', 'run = "ask"')}
[conversation.inquiry]
detached = "${policy}"
`

const NAMES = ["a", "b", "c"]

type Row = Record<string, unknown> & { id: string; conversation_id: string }

const start = async (policy: string, runners: number) => {
  const cluster = await Cluster.project(freshDatabase(pg!), {}, undefined, undefined, asking(policy))
  clusters.push(cluster)
  for (let i = 0; i < runners; i++) await cluster.runner()
  return cluster
}

/** Starts one turn per name (`act <name>`: the tool's one call, no question of its own); ids and owner pids. */
const startTurns = async (cluster: Cluster.Cluster) => {
  const turns = new Map<string, { id: string; pid: number }>()
  for (const [i, name] of NAMES.entries()) {
    const r = await cluster.runners[i % cluster.runners.length]!.post("/api/conversations", { message: `act ${name}` })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    turns.set(name, { id: r.body.conversation_id, pid: r.body.pid })
  }
  return turns
}

const lastReply = async (r: Cluster.Runner, id: string): Promise<string | undefined> => {
  const last = (await r.json(`/api/conversations/${id}`)).body.at(-1)
  return last?.type === "chat_response" ? String(last.message) : undefined
}

const approvalRow = (name: string, id: string, running: boolean) => ({
  id: `call_${name}.__permission__.1`,
  inquiry_id: `call_${name}.__permission__.1`,
  kind: "approval",
  conversation_id: id,
  tool: "deferrable",
  arguments: { name, mode: "slow", seconds: 0 },
  tool_call_id: `call_${name}`,
  question: "Run local deferrable tool?",
  answer_type: "boolean",
  options: null,
  default: null,
  since: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
  running
})

describe.skipIf(pgSkip !== undefined)("parley serve --cluster: approvals", () => {
  it("wait: listed as approvals, nothing runs unanswered; answers posted to a runner that does not own the turn", async () => {
    const cluster = await start("wait", 2)
    const [a, b] = cluster.runners as [Cluster.Runner, Cluster.Runner]
    await until(
      "shards over both runners",
      async () => {
        const shards = (await a.json("/api/cluster")).body.runners.map((r: { shards: number }) => r.shards)
        return shards.length === 2 && shards.every((n: number) => n > 0) ? true : undefined
      },
      30_000
    )
    const turns = await startTurns(cluster)
    const open = await until(
      "three open approvals",
      async () => {
        const rows = (await b.json("/api/questions")).body as Array<Row>
        return rows.length === NAMES.length ? rows : undefined
      },
      60_000
    )
    expect([...open].sort((x, y) => x.id.localeCompare(y.id))).toStrictEqual(
      NAMES.map((n) => approvalRow(n, turns.get(n)!.id, true))
    )
    // Waiting is not running: a moment later still no tool has acted.
    await sleep(1500)
    for (const n of NAMES) expect(cluster.effects(n), n).toBe(0)
    const answers = { a: "yes", b: "no", c: "always" } as const
    for (const n of NAMES) {
      const { id, pid } = turns.get(n)!
      const other = cluster.runners.find((r) => r.pid !== pid)!
      const q = `call_${n}.__permission__.1`
      const r = await other.post(`/api/conversations/${id}/questions/${q}`, { answer: answers[n as "a"] })
      expect(r.body, JSON.stringify(r.body)).toStrictEqual({ id: q, outcome: "delivered" })
    }
    for (const n of NAMES)
      await until(`${n} complete`, async () => (await lastReply(a, turns.get(n)!.id))?.startsWith("Done:"), 60_000)
    expect(NAMES.map((n) => cluster.effects(n))).toStrictEqual([1, 0, 1])
    expect(await lastReply(a, turns.get("b")!.id)).toBe("Done: Tool skipped by user.")
    expect((await a.json("/api/questions")).body).toStrictEqual([])
  }, 240_000)

  it("defer: the turn ends waiting with the approval listed; answered and continued through the API, it runs once", async () => {
    const cluster = await start("defer", 1)
    const [r] = cluster.runners as [Cluster.Runner]
    const turns = await startTurns(cluster)
    const open = await until(
      "three approvals on disk",
      async () => {
        const rows = (await r.json("/api/questions")).body as Array<Row>
        return rows.length === NAMES.length && rows.every((q) => q["running"] === false) ? rows : undefined
      },
      60_000
    )
    expect([...open].sort((x, y) => x.id.localeCompare(y.id))).toStrictEqual(
      NAMES.map((n) => approvalRow(n, turns.get(n)!.id, false))
    )
    for (const n of NAMES) expect(cluster.effects(n), n).toBe(0)
    for (const n of NAMES) {
      const { id } = turns.get(n)!
      const q = `call_${n}.__permission__.1`
      const answered = await r.post(`/api/conversations/${id}/questions/${q}`, { answer: n === "b" ? "no" : "yes" })
      expect(answered.status, JSON.stringify(answered.body)).toBe(200)
      // Answered on disk: nothing runs until the turn is continued.
      expect(cluster.effects(n), n).toBe(0)
      const continued = await r.post(`/api/conversations/${id}/continue`, {})
      expect(continued.status, JSON.stringify(continued.body)).toBe(200)
    }
    for (const n of NAMES)
      await until(`${n} complete`, async () => (await lastReply(r, turns.get(n)!.id))?.startsWith("Done:"), 60_000)
    expect(NAMES.map((n) => cluster.effects(n))).toStrictEqual([1, 0, 1])
    expect((await r.json("/api/questions")).body).toStrictEqual([])
  }, 240_000)

  it("deny: every call is skipped with a response that says a person's approval was needed", async () => {
    const cluster = await start("deny", 1)
    const [r] = cluster.runners as [Cluster.Runner]
    const turns = await startTurns(cluster)
    for (const n of NAMES) {
      const { id } = turns.get(n)!
      await until(`${n} complete`, async () => (await lastReply(r, id))?.startsWith("Done:"), 60_000)
      expect(await lastReply(r, id)).toContain("needs a person's approval to run")
    }
    for (const n of NAMES) expect(cluster.effects(n), n).toBe(0)
    expect((await r.json("/api/questions")).body).toStrictEqual([])
  }, 240_000)
})
