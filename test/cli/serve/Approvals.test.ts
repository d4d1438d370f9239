// Approvals through `parley serve` (docs/serve.md, docs/questions-and-approvals.md#approvals): a
// `run = "ask"` tool in a `query --detach --detached-policy wait` run is listed by `GET
// /api/questions` as `kind: "approval"` with the call's `arguments`; the tool has not run; the API
// answers it (`"yes"`), the tool runs once, and the run's events name who answered and through what. A run the
// server starts, under `wait`, `defer` and `deny` from config: no call that needs a yes starts without one.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import {
  addDeferrable,
  DEFERRABLE,
  effectsOf,
  killGroup,
  makeProject,
  parley,
  persisted,
  type Project,
  waitFor,
  writeScript
} from "../../support/Project.ts"
import * as Serve from "../../support/Serve.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
const groups: Array<number> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  for (const g of groups.splice(0)) killGroup(g)
})

const project = (policy?: string): Project => {
  const p = makeProject()
  fs.appendFileSync(
    path.join(p.storage, "config.toml"),
    DEFERRABLE.replace('run = "unattended"', 'run = "ask"') +
      (policy === undefined ? "" : `\n[conversation.inquiry]\ndetached = "${policy}"\n`)
  )
  addDeferrable(p.root)
  return p
}

describe("parley serve: approvals", () => {
  it("GET /api/questions lists an approval with kind, tool and arguments; the API answers it and the tool runs once", async () => {
    const p = project()
    const server = await Serve.start(p)
    children.push(server.child)
    const script = writeScript(p, "s.json", [
      {
        message: "Working.",
        tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "prod", mode: "slow" } }]
      },
      { message: "Done." }
    ])
    const r = parley(p, ["query", "--detach", "--new", "deploy", "--script", script, "--detached-policy", "wait"])
    expect(r.code).toBe(0)
    const id = r.stdout.trim()
    groups.push(Number(/\(pid (\d+)\)/.exec(r.stderr)![1]))
    let open: Array<Record<string, unknown>> = []
    for (let i = 0; i < 200 && open.length === 0; i++) {
      open = (await server.json("/api/questions")).body
      if (open.length === 0) await new Promise((res) => setTimeout(res, 100))
    }
    expect(open).toStrictEqual([
      {
        id: "a1.__permission__.1",
        inquiry_id: "a1.__permission__.1",
        kind: "approval",
        conversation_id: id,
        tool: "deferrable",
        arguments: { name: "prod", mode: "slow" },
        tool_call_id: "a1",
        question: "Run local deferrable tool?",
        answer_type: "boolean",
        options: null,
        default: null,
        since: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
        running: true
      }
    ])
    expect(effectsOf(p, "prod")).toBe("")
    const events = await Serve.sse(`${server.base}/api/conversations/${id}/events`, server.auth)
    const misfit = await server.post(`/api/conversations/${id}/questions/a1.__permission__.1`, { answer: "perhaps" })
    expect(misfit).toMatchObject({
      status: 422,
      body: { error: "AnswerDoesNotFit", expected: "yes, no, always or never" }
    })
    const answered = await server.post(`/api/conversations/${id}/questions/a1.__permission__.1`, { answer: "yes" })
    expect(answered).toMatchObject({ status: 200, body: { outcome: "delivered" } })
    // The run's events say what was asked (the call's arguments) and who answered, through what.
    const seen: Array<Record<string, unknown>> = []
    for (let f = await events.next(); f !== undefined; f = await events.next()) {
      seen.push(JSON.parse(f.data) as Record<string, unknown>)
      if (seen.at(-1)!["_tag"] === "QuestionClosed") break
    }
    events.close()
    expect(seen.find((e) => e["_tag"] === "QuestionOpened")).toMatchObject({
      inquiry_id: "a1.__permission__.1",
      kind: "approval",
      tool: "deferrable",
      arguments: { name: "prod", mode: "slow" }
    })
    expect(seen.at(-1)).toMatchObject({ kind: "approval", by: "other", answered_by: "other", via: "api" })
    await waitFor("the tool to run", () => effectsOf(p, "prod") !== "")
    expect(effectsOf(p, "prod")).toBe(`"done"\n`)
  })
})

describe("parley serve: a run the server starts, under each detached policy", () => {
  /** Starts a server whose script calls the tool once, and one run of it; the conversation id. */
  const started = async (policy: string) => {
    const p = project(policy)
    const script = writeScript(p, "s.json", [
      {
        message: "Working.",
        tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "prod", mode: "slow" } }]
      },
      { message: "Done." }
    ])
    const server = await Serve.start(p, [], { PARLEY_SCRIPT: script, OPENAI_API_KEY: "", OPENAI_BASE_URL: "" })
    children.push(server.child)
    const created = await server.post("/api/conversations", { message: "deploy", model: "scripted" })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    return { p, server, id: created.body.conversation_id as string }
  }
  const questions = async (server: Serve.Server, running: boolean) => {
    for (let i = 0; i < 200; i++) {
      const rows = (await server.json("/api/questions")).body as Array<Record<string, unknown>>
      if (rows.length === 1 && rows[0]!["running"] === running) return rows
      await new Promise((res) => setTimeout(res, 100))
    }
    throw new Error(`no approval listed with running: ${running}`)
  }
  const runEnded = async (server: Serve.Server) => {
    for (let i = 0; i < 200; i++) {
      const rows = (await server.json("/api/conversations")).body as Array<{ running: unknown }>
      if (rows[0]?.running === null) return
      await new Promise((res) => setTimeout(res, 100))
    }
    throw new Error("the run did not end")
  }
  const lastReply = (p: Project) => persisted(p).at(-1)

  it("wait: the approval waits listed as running; the tool has not run until the API's yes", async () => {
    const { p, server, id } = await started("wait")
    expect((await questions(server, true))[0]).toMatchObject({ kind: "approval", conversation_id: id })
    await new Promise((res) => setTimeout(res, 1000))
    expect(effectsOf(p, "prod")).toBe("")
    expect(
      await server.post(`/api/conversations/${id}/questions/a1.__permission__.1`, { answer: "yes" })
    ).toMatchObject({
      status: 200,
      body: { outcome: "delivered" }
    })
    await runEnded(server)
    expect(effectsOf(p, "prod")).toBe(`"done"\n`)
  })

  it("defer: the run ends with the approval on disk; answered and continued through the API, the tool runs once", async () => {
    const { p, server, id } = await started("defer")
    expect((await questions(server, false))[0]).toMatchObject({
      kind: "approval",
      conversation_id: id,
      since: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)
    })
    await runEnded(server)
    expect(effectsOf(p, "prod")).toBe("")
    expect(
      await server.post(`/api/conversations/${id}/questions/a1.__permission__.1`, { answer: "yes" })
    ).toMatchObject({
      status: 200,
      body: { outcome: "recorded" }
    })
    expect(effectsOf(p, "prod")).toBe("")
    // The resumed run's model (a process of its own) reads the script from its first step.
    writeScript(p, "s.json", [{ message: "Done." }])
    expect((await server.post(`/api/conversations/${id}/continue`, {})).status).toBe(200)
    await waitFor("the continued run to finish", () => lastReply(p)?.type === "chat_response")
    await runEnded(server)
    expect(effectsOf(p, "prod")).toBe(`"done"\n`)
  })

  it("deny: the call is skipped with a response that says a person's approval was needed", async () => {
    const { p, server } = await started("deny")
    await waitFor("the run to finish", () => lastReply(p)?.type === "chat_response")
    await runEnded(server)
    expect(effectsOf(p, "prod")).toBe("")
    const response = persisted(p).find((e) => e.type === "tool_call_response")!
    expect(Buffer.from(String(response["content"]), "base64").toString("utf8")).toContain(
      "needs a person's approval to run"
    )
    expect((await server.json("/api/questions")).body).toStrictEqual([])
  })
})
