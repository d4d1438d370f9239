// All of a turn's questions at once (docs/serve.md#all-of-a-turns-questions-at-once,
// docs/questions-and-approvals.md): `POST /api/conversations/:id/answers` and
// `conversation answer ID --all` check every value first and record all or none —
// into a waiting turn on disk, and to a running turn in one step, racing a
// single answer for the same question.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import {
  exited,
  hostSockets,
  parley,
  persisted,
  type Project,
  spawnParley,
  waitFor,
  waitingProject,
  writeScript
} from "../../support/Project.ts"
import * as Serve from "../../support/Serve.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
})

const call = (id: string, name: string, mode: string) => ({ id, name: "deferrable", arguments: { name, mode } })

/** A turn deferred on disk with two open questions: `a1.confirm.1` (yes/no) and `c1.color.1` (red/green). */
const deferredTwo = (p: Project) => {
  const script = writeScript(p, "s.json", [
    { message: "Working.", tool_calls: [call("a1", "prod", "ask"), call("c1", "paint", "pick")] }
  ])
  expect(parley(p, ["query", "--new", "go", "--script", script, "--detached-policy", "defer"]).code).toBe(3)
  return JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout)[0].id as string
}

const responses = (p: Project) =>
  persisted(p)
    .filter((e) => e.type === "inquiry_response")
    .map((e) => [e["id"], e["answer"]])

describe("answers given together: all or none", () => {
  it("POST …/answers into a waiting turn on disk: one misfit records nothing and is named (422); all fit are recorded; again is a 409 naming each", async () => {
    const p = waitingProject()
    const id = deferredTwo(p)
    const server = await Serve.start(p)
    children.push(server.child)
    const target = `/api/conversations/${id}/answers`

    expect(await server.post(target, { answers: { "a1.confirm.1": true, "c1.color.1": "blue" } })).toStrictEqual({
      status: 422,
      body: {
        error: "AnswersDoNotFit",
        message: expect.stringContaining("c1.color.1"),
        answers: [
          {
            inquiry_id: "c1.color.1",
            reason: '"blue" is not one of the options (red, green)',
            expected: "one of: red, green"
          }
        ]
      }
    })
    expect(responses(p)).toStrictEqual([])
    expect(await server.post(target, { answers: { "zz.nope.1": true } })).toMatchObject({
      status: 404,
      body: { error: "QuestionNotOpen", inquiry_id: "zz.nope.1" }
    })

    expect(await server.post(target, { answers: { "a1.confirm.1": true, "c1.color.1": "green" } })).toStrictEqual({
      status: 200,
      body: { outcome: "recorded", answered: ["a1.confirm.1", "c1.color.1"] }
    })
    expect(responses(p)).toStrictEqual([
      ["a1.confirm.1", true],
      ["c1.color.1", "green"]
    ])
    const again = await server.post(target, { answers: { "a1.confirm.1": false, "c1.color.1": "red" } })
    expect(again).toMatchObject({ status: 409, body: { error: "AnswersTaken" } })
    expect((again.body as { answers: Array<{ inquiry_id: string }> }).answers.map((a) => a.inquiry_id)).toStrictEqual([
      "a1.confirm.1",
      "c1.color.1"
    ])
    expect(responses(p)).toHaveLength(2)
    expect(await server.stop()).toBe(143)
  })

  it("a running turn takes a batch in one step: racing a single answer, exactly one wins, and a lost batch records nothing", async () => {
    const p = waitingProject()
    const server = await Serve.start(p)
    children.push(server.child)
    const script = writeScript(p, "s.json", [
      { message: "Working.", tool_calls: [call("a1", "prod", "ask"), call("c1", "paint", "pick")] },
      { message: "All done." }
    ])
    const child = spawnParley(p, ["query", "--new", "go", "--script", script])
    children.push(child)
    await waitFor("both questions", () => persisted(p).filter((e) => e.type === "inquiry_request").length === 2)
    await waitFor("the host's socket", () => hostSockets(p).length === 1)
    const id = hostSockets(p)[0]!.replace(".sock", "")
    for (let i = 0; (await server.json("/api/questions")).body.length < 2; i++) {
      if (i === 300) throw new Error("the questions were never listed")
      await new Promise((r) => setTimeout(r, 100))
    }

    const misfit = await server.post(`/api/conversations/${id}/answers`, {
      answers: { "a1.confirm.1": "perhaps", "c1.color.1": "green" }
    })
    expect(misfit).toMatchObject({ status: 422, body: { answers: [{ inquiry_id: "a1.confirm.1" }] } })
    expect((await server.json("/api/questions")).body).toHaveLength(2)

    const events = await Serve.sse(`${server.base}/api/conversations/${id}/events`, server.auth)
    const [batch, single] = await Promise.all([
      server.post(`/api/conversations/${id}/answers`, { answers: { "a1.confirm.1": true, "c1.color.1": "green" } }),
      server.post(`/api/conversations/${id}/questions/a1.confirm.1`, { answer: false })
    ])
    expect([batch.status, single.status].sort()).toStrictEqual([200, 409])
    if (batch.status === 200) {
      expect(batch.body).toStrictEqual({ outcome: "delivered", answered: ["a1.confirm.1", "c1.color.1"] })
      expect(single.body).toMatchObject({ error: "QuestionAlreadyAnswered", inquiry_id: "a1.confirm.1" })
    } else {
      expect(batch.body).toMatchObject({ error: "AnswersTaken", answers: [{ inquiry_id: "a1.confirm.1" }] })
      // Nothing of the lost batch was taken: its other question is still open.
      const open = (await server.json("/api/questions")).body as Array<{ id: string }>
      expect(open.map((q) => q.id)).toStrictEqual(["c1.color.1"])
      expect(await server.post(`/api/conversations/${id}/questions/c1.color.1`, { answer: "red" })).toMatchObject({
        status: 200
      })
    }
    // Whichever won, the run's events say every answer came through the API (a batch carries `via` as one answer does).
    const closings: Array<Record<string, unknown>> = []
    for (let f = await events.next(); f !== undefined && closings.length < 2; f = await events.next()) {
      const e = JSON.parse(f.data) as Record<string, unknown>
      if (e["_tag"] === "QuestionClosed") closings.push(e)
    }
    events.close()
    expect(closings.map((e) => [e["inquiry_id"], e["answered_by"], e["via"]]).sort()).toStrictEqual([
      ["a1.confirm.1", "other", "api"],
      ["c1.color.1", "other", "api"]
    ])
    expect(await exited(child)).toBe(0)
    const closed = persisted(p).filter((e) => e.type === "inquiry_response")
    expect(closed.map((e) => e["id"]).sort()).toStrictEqual(["a1.confirm.1", "c1.color.1"])
    expect(await server.stop()).toBe(143)
  })

  it("a run whose socket directory is not private is not answered past: 503 RunLost, nothing recorded; private again, the run takes the answer", async () => {
    const p = waitingProject()
    const server = await Serve.start(p)
    children.push(server.child)
    const script = writeScript(p, "s.json", [
      { message: "Working.", tool_calls: [call("a1", "prod", "ask")] },
      { message: "All done." }
    ])
    const child = spawnParley(p, ["query", "--new", "go", "--script", script])
    children.push(child)
    await waitFor("the question", () => persisted(p).some((e) => e.type === "inquiry_request"))
    await waitFor("the host's socket", () => hostSockets(p).length === 1)
    const id = hostSockets(p)[0]!.replace(".sock", "")
    const target = `/api/conversations/${id}/questions/a1.confirm.1`
    const run = path.join(p.storage, "run")
    // Another user could have put a socket here: the server neither talks to it nor takes it for "no run".
    fs.chmodSync(run, 0o777)
    try {
      expect(await server.post(target, { answer: true })).toMatchObject({ status: 503, body: { error: "RunLost" } })
    } finally {
      fs.chmodSync(run, 0o700)
    }
    expect(responses(p)).toStrictEqual([])
    expect(await server.post(target, { answer: true })).toMatchObject({ status: 200, body: { outcome: "delivered" } })
    expect(await exited(child)).toBe(0)
    expect(responses(p)).toStrictEqual([["a1.confirm.1", true]])
    expect(await server.stop()).toBe(143)
  })

  it("conversation answer ID --all without a terminal reads one line per question from stdin; a misfit records nothing (exit 2)", () => {
    const p = waitingProject()
    const id = deferredTwo(p)
    // One line per open question, in the order they are listed (the two tools ran in parallel).
    const order = (
      JSON.parse(parley(p, ["conversation", "answer", id, "--format", "json"]).stdout) as Array<{ id: string }>
    ).map((q) => q.id)
    const lines = (given: Record<string, string>) => order.map((q) => `${given[q]}\n`).join("")
    const wrong = parley(
      p,
      ["conversation", "answer", id, "--all"],
      lines({ "a1.confirm.1": "yes", "c1.color.1": "blue" })
    )
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toContain("c1.color.1")
    expect(wrong.stderr).toContain("Nothing was recorded.")
    expect(responses(p)).toStrictEqual([])
    const short = parley(p, ["conversation", "answer", id, "--all"], "yes\n")
    expect(short.code).toBe(2)
    expect(responses(p)).toStrictEqual([])
    const right = parley(
      p,
      ["conversation", "answer", id, "--all", "--format", "json"],
      lines({ "a1.confirm.1": "yes", "c1.color.1": "green" })
    )
    expect(right.code).toBe(0)
    expect(JSON.parse(right.stdout)).toStrictEqual({ outcome: "recorded", answered: order })
    expect(Object.fromEntries(responses(p))).toStrictEqual({ "a1.confirm.1": true, "c1.color.1": "green" })
  })
})
