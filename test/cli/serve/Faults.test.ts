// parley serve (docs/serve.md), fault injection: a detached run killed with SIGKILL while the
// server streams its events to two clients. The streams end (no Stopped:
// none was sent), the server keeps serving, the dead run is not "running"
// (its socket file is left, nobody answers on it), and its open question is
// answered into the turn on disk, as for any run that is gone.
import { afterEach, describe, expect, it } from "@effect/vitest"
import { effectsOf, hostSockets, killGroup, parley, waitingProject, writeScript } from "../../support/Project.ts"
import * as Serve from "../../support/Serve.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
const groups: Array<number> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  for (const g of groups.splice(0)) killGroup(g)
})

describe("parley serve: a run killed under it", () => {
  it("kill -9 of a detached run while two SSE clients follow it: their streams end, the server goes on, the question goes into the turn on disk", async () => {
    const p = waitingProject()
    const server = await Serve.start(p)
    children.push(server.child)
    const script = writeScript(p, "s.json", [
      { message: "Working.", tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "prod", mode: "ask" } }] },
      { message: "Done." }
    ])
    const r = parley(p, ["query", "--detach", "--new", "deploy", "--script", script])
    expect(r.code).toBe(0)
    const id = r.stdout.trim()
    const pid = Number(/\(pid (\d+)\)/.exec(r.stderr)![1])
    groups.push(pid)
    for (let i = 0; i < 200 && (await server.json("/api/questions")).body.length === 0; i++)
      await new Promise((res) => setTimeout(res, 100))
    const clients = await Promise.all(
      [0, 1].map(() => Serve.sse(`${server.base}/api/conversations/${id}/events`, server.auth))
    )
    for (const c of clients) {
      for (let f = await c.next(); JSON.parse(f!.data)._tag !== "QuestionOpened"; f = await c.next())
        expect(f).toBeDefined()
    }

    process.kill(pid, "SIGKILL")
    for (const c of clients) expect(await c.next(10_000)).toBeUndefined()
    expect(hostSockets(p)).toStrictEqual([`${id}.sock`]) // the killed host's file, nobody answering on it
    const rows = (await server.json("/api/conversations")).body
    expect(rows.map((row: { id: string; running: unknown }) => [row.id, row.running])).toStrictEqual([[id, null]])
    // Its question is the waiting turn's on disk now: listed as not running.
    expect((await server.json("/api/questions")).body).toMatchObject([
      { id: "a1.confirm.1", conversation_id: id, running: false }
    ])
    expect(await server.json(`/api/conversations/${id}/events`)).toStrictEqual({ status: 204, body: undefined })
    expect(await server.post(`/api/conversations/${id}/stop`, {})).toMatchObject({
      status: 404,
      body: { error: "NotRunning" }
    })
    expect(await server.post(`/api/conversations/${id}/questions/a1.confirm.1`, { answer: true })).toStrictEqual({
      status: 200,
      body: { id: "a1.confirm.1", outcome: "recorded" }
    })
    expect(await server.post(`/api/conversations/${id}/questions/a1.confirm.1`, { answer: false })).toMatchObject({
      status: 409,
      body: { error: "QuestionAlreadyAnswered" }
    })
    expect(effectsOf(p, "prod")).toBe("") // recorded, not run: the turn is continued later
    expect(await server.stop()).toBe(143)
  })
})
