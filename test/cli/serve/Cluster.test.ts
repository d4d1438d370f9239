/**
 * `parley serve --cluster` (docs/cluster.md) against a throwaway PostgreSQL: three
 * runners as child processes; 30 conversations, each a turn whose tool asks
 * one question (`detached = "wait"`), created and answered through random
 * runners; one runner `kill -9`'d mid-way. Every conversation completes,
 * `check` is ok for all, no answer is recorded twice, no tool acted twice,
 * and no process is left.
 */
import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as RunnerChannel from "../../../src/layers/cluster/RunnerChannel.ts"
import { runParley } from "../../support/Cli.ts"
import * as Cluster from "../../support/Cluster.ts"
import { tempDir } from "../../support/Fixtures.ts"
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

const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(Math.random() * xs.length)]!

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

/** The processes whose working directory is `dir` (tools a runner started there). */
const processesIn = (dir: string): Array<string> =>
  fs
    .readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return fs.readlinkSync(`/proc/${p}/cwd`) === dir
      } catch {
        return false
      }
    })

describe.skipIf(pgSkip !== undefined)("parley serve --cluster", () => {
  it("needs $PARLEY_TOKEN and a PostgreSQL storage (usage errors, exit 2)", () => {
    const dir = tempDir("parley-cluster-usage-")
    const noToken = runParley(["--storage", freshDatabase(pg!), "serve", "--cluster", "--port", "0"], {
      cwd: dir,
      env: { PARLEY_TOKEN: "" },
      timeoutMs: 30_000
    })
    expect(noToken.code).toBe(2)
    expect(noToken.stderr).toContain("serve --cluster needs $PARLEY_TOKEN")
    const directory = runParley(["--storage", dir, "serve", "--cluster", "--port", "0"], {
      cwd: dir,
      env: { PARLEY_TOKEN: Cluster.TOKEN },
      timeoutMs: 30_000
    })
    expect(directory.code).toBe(2)
    expect(directory.stderr).toContain("serve --cluster needs a PostgreSQL storage")
    fs.rmSync(dir, { recursive: true, force: true })
  }, 60_000)

  it("30 conversations over 3 runners, one killed with -9 mid-way: all complete, each answer recorded once", async () => {
    const cluster = await Cluster.project(freshDatabase(pg!))
    clusters.push(cluster)
    // One after the other: the first creates the cluster's tables.
    const first = await cluster.runner()
    const lines = first.output().split("\n")
    // The page URL carries the web token, never $PARLEY_TOKEN (docs/security.md "Cluster runner port").
    expect(lines[0]).toBe(`http://127.0.0.1:${first.port}/?token=${RunnerChannel.webTokenOf(Cluster.TOKEN)}`)
    expect(lines[1]).toBe(`runner 127.0.0.1:${first.port + 10000} (cluster of 1 runner)`)
    await cluster.runner()
    const third = await cluster.runner()
    expect(third.output().split("\n")[1]).toMatch(/ \(cluster of 3 runners\)$/)
    // Shards spread over the three before conversations start.
    await until(
      "60 shards over 3 runners",
      async () => {
        const info = (await first.json("/api/cluster")).body
        const shards = info.runners.map((r: { shards: number }) => r.shards)
        return shards.length === 3 &&
          shards.every((n: number) => n > 0) &&
          shards.reduce((a: number, b: number) => a + b, 0) === 60
          ? true
          : undefined
      },
      30_000
    )

    const names = Array.from({ length: 30 }, (_, i) => `c${i}`)
    const ids = new Map<string, string>()
    for (let i = 0; i < names.length; i += 6) {
      await Promise.all(
        names.slice(i, i + 6).map(async (name) => {
          const r = await pick(cluster.runners).post("/api/conversations", { message: `deploy ${name}` })
          expect(r.status, `${JSON.stringify(r.body)}\n${cluster.runners.map((x) => x.output()).join("\n---\n")}`).toBe(
            200
          )
          ids.set(name, r.body.conversation_id)
        })
      )
    }
    const questions = await until(
      "30 open questions",
      async () => {
        const r = await pick(cluster.runners).json("/api/questions")
        return r.body.length === 30 ? (r.body as Array<{ id: string; conversation_id: string }>) : undefined
      },
      60_000
    )
    const running = (await first.json("/api/cluster")).body.runners.map(
      (r: { conversations: number }) => r.conversations
    )
    expect(running.reduce((a: number, b: number) => a + b, 0)).toBe(30)

    const answer = (runners: ReadonlyArray<Cluster.Runner>, q: { id: string; conversation_id: string }) =>
      pick(runners).post(`/api/conversations/${q.conversation_id}/questions/${q.id}`, { answer: true }, 60_000)
    const seen = new Map<string, unknown>()
    const complete = (id: string) =>
      pick(cluster.runners.filter((r) => r.child.exitCode === null && r.child.signalCode === null))
        .json(`/api/conversations/${id}`)
        .then((r) => {
          seen.set(id, r.body)
          return r.body.at(-1)?.type === "chat_response" && String(r.body.at(-1).message).startsWith("Done:")
            ? true
            : undefined
        })
    const completeAll = (qs: ReadonlyArray<{ conversation_id: string }>, ms: number) =>
      Promise.all(qs.map((q) => until(`${q.conversation_id} complete`, () => complete(q.conversation_id), ms))).catch(
        (e) => {
          const stuck = qs.filter(
            (q) => !String(JSON.stringify((seen.get(q.conversation_id) as Array<unknown>)?.at(-1))).includes("Done:")
          )
          throw new Error(
            `${e}\n${stuck.map((q) => `${q.conversation_id}: ${JSON.stringify(seen.get(q.conversation_id))}`).join("\n")}\n${cluster.runners.map((r) => r.output()).join("\n---\n")}`
          )
        }
      )

    // The first half answered and complete before the kill: no tool is between its end and its record then.
    const [before, after] = [questions.slice(0, 15), questions.slice(15)]
    for (const q of before)
      expect((await answer(cluster.runners, q)).body).toStrictEqual({ id: q.id, outcome: "delivered" })
    await completeAll(before, 30_000)

    // The victim is the runner that runs the most of the 15 waiting turns (at least 5), so the kill always matters:
    // a runner picked by position ran none of them once (2/3 to the power 15 of the time). Counted once the
    // finished turns have left the count (a turn's row goes after its last event is written).
    const held = await until(
      "15 turns running",
      async () => {
        const runners = (await first.json("/api/cluster")).body.runners as Array<{
          address: string
          conversations: number
        }>
        return runners.reduce((n, r) => n + r.conversations, 0) === 15 ? runners : undefined
      },
      30_000
    )
    const [victim, owned] = cluster.runners
      .map((r) => [r, held.find((h) => h.address === `127.0.0.1:${r.port + 10000}`)?.conversations ?? 0] as const)
      .reduce((a, b) => (b[1] > a[1] ? b : a))
    expect(owned).toBeGreaterThanOrEqual(5)
    const killedAt = Date.now()
    await cluster.kill(victim)
    const survivors = cluster.runners.filter((r) => r !== victim)
    const answered = await Promise.all(after.map((q) => answer(survivors, q)))
    for (const [i, r] of answered.entries())
      expect(r.body, JSON.stringify(r.body)).toStrictEqual({ id: after[i]!.id, outcome: "delivered" })
    await completeAll(after, 60_000)
    console.log(
      `[cluster] kill -9 of a runner with ${owned} waiting turns: every answer delivered and every turn complete ${Date.now() - killedAt} ms later`
    )

    // Each question answered once in the log, each tool acted once, the conversations check out.
    for (const [name, id] of ids) {
      const entries = (await survivors[0]!.json(`/api/conversations/${id}`)).body as Array<{
        type: string
        id?: string
      }>
      const responses = entries.filter((e) => e.type === "inquiry_response").map((e) => e.id)
      expect(responses, name).toStrictEqual([`call_${name}.confirm.1`])
      expect(cluster.effects(name), name).toBe(1)
    }
    const check = runParley(["--storage", cluster.url, "conversation", "check", "--format", "json"], {
      cwd: cluster.root,
      timeoutMs: 60_000
    })
    expect(check.code, check.stderr).toBe(0)
    const rows = JSON.parse(check.stdout) as Array<{ ok: boolean; roundtrip: string }>
    expect(rows.length).toBe(30)
    expect(rows.every((r) => r.ok && r.roundtrip === "identical")).toBe(true)
    expect((await survivors[0]!.json("/api/questions")).body).toStrictEqual([])

    await cluster.stop()
    clusters.splice(clusters.indexOf(cluster), 1)
    for (const r of cluster.runners) expect(r.child.exitCode !== null || r.child.signalCode !== null).toBe(true)
    expect(processesIn(cluster.root)).toStrictEqual([])
  }, 240_000)

  it("any runner streams any turn's live events and shows its page; a hung tool's turn moves when its runner dies", async () => {
    const cluster = await Cluster.project(freshDatabase(pg!))
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
    const auth = { authorization: `Bearer ${Cluster.TOKEN}` }
    // A conversation whose turn runs on b, created through a (the reply names the runner's pid).
    const onB = async (message: (i: number) => string): Promise<string> => {
      for (let i = 0; i < 30; i++) {
        const r = await a.post("/api/conversations", { message: message(i) })
        expect(r.status, JSON.stringify(r.body)).toBe(200)
        if (r.body.pid === b.pid) return r.body.conversation_id
      }
      throw new Error("no conversation landed on the second runner")
    }

    const id = await onB((i) => `deploy w${i}`)
    const q = await until(
      "its question open",
      async () =>
        ((await a.json("/api/questions")).body as Array<{ id: string; conversation_id: string }>).find(
          (x) => x.conversation_id === id
        ),
      30_000
    )
    // Live from a, which does not run it: replayed, then what happens next.
    const stream = await Cluster.sse(a.base, `/api/conversations/${id}/events`)
    expect(stream.status).toBe(200)
    await until(
      "the open question replayed",
      async () => stream.events.some((e) => e._tag === "QuestionOpened") || undefined,
      10_000
    )
    const list = await fetch(`${a.base}/`, { headers: auth })
    expect(list.status).toBe(200)
    const listed = await list.text()
    expect(listed).toContain(`<a href="/conversations/${id}">`)
    // The list says the runner's turn waits on its question, in the page's one wording for that state.
    expect(listed).toMatch(
      new RegExp(
        `data-id="${id}"><td class="title">.*?</td><td class="state"><span class="state-badge st-waiting">waiting for you \\(1\\)</span></td>`
      )
    )
    const page = await fetch(`${a.base}/conversations/${id}`, { headers: auth })
    expect(page.status).toBe(200)
    expect(await page.text()).toContain(`<script src="/app.js"`)
    expect((await a.post(`/api/conversations/${id}/questions/${q.id}`, { answer: true })).body).toStrictEqual({
      id: q.id,
      outcome: "delivered"
    })
    await stream.done
    const tags = stream.events.map((e) => e._tag)
    expect(tags.slice(tags.indexOf("QuestionClosed"))).toEqual(
      expect.arrayContaining(["QuestionClosed", "ToolFinished", "Stopped"])
    )
    expect(tags.at(-1)).toBe("Stopped")
    // The turn is over (its runner lets go of it just after its last event): nothing to stream, from either runner.
    for (const r of [a, b])
      await until(
        "204 once the turn is over",
        async () =>
          (await fetch(`${r.base}/api/conversations/${id}/events`, { headers: auth })).status === 204 || undefined,
        10_000
      )

    // A tool that hangs on b; b dies; a resumes the turn (RFD 023: the tool without a response runs again).
    const hung = await onB((i) => `hang h${i}`)
    const watch = await Cluster.sse(a.base, `/api/conversations/${hung}/events`)
    await until(
      "the hung tool started",
      async () => watch.events.some((e) => e._tag === "ToolStarted") || undefined,
      30_000
    )
    const killedAt = Date.now()
    if (process.env["PARLEY_CLUSTER_DEBUG"] !== undefined) console.error(`test: ${killedAt} kill`)
    await cluster.kill(b)
    await watch.done // the relay ends with b
    await until(
      "the hung turn running on a",
      async () =>
        (await a.json("/api/conversations")).body.find((r: { id: string }) => r.id === hung)?.running?.pid === a.pid ||
        undefined,
      30_000
    )
    const moved = Date.now() - killedAt
    const again = await Cluster.sse(a.base, `/api/conversations/${hung}/events`)
    await until(
      "its tool running again on a",
      async () => again.events.some((e) => e._tag === "ToolStarted") || undefined,
      10_000
    )
    console.log(
      `[cluster] kill -9 of the runner of a hung tool: its turn resumed on the other runner ${moved} ms later`
    )
    expect(moved).toBeLessThan(15_000)
    expect((await a.post(`/api/conversations/${hung}/stop`, {})).status).toBe(200)
    await again.done

    await cluster.stop()
    clusters.splice(clusters.indexOf(cluster), 1)
    expect(processesIn(cluster.root)).toStrictEqual([])
  }, 180_000)
})
