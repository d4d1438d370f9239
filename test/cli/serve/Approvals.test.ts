// Approvals through `parley serve` (docs/serve.md, docs/questions-and-approvals.md#approvals): a
// `run = "ask"` tool in a `query --detach --detached-policy wait` run is listed by `GET
// /api/questions` as `kind: "approval"` with the call's `arguments`; the tool has not run; the API
// answers it (`"yes"`), the tool runs once, and the run's events name who answered and through what.
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

const project = (): Project => {
  const p = makeProject()
  fs.appendFileSync(path.join(p.storage, "config.toml"), DEFERRABLE.replace('run = "unattended"', 'run = "ask"'))
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
        since: expect.any(String),
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
