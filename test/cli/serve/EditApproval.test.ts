// JP's `run = "edit"` over `parley serve`'s HTTP API (docs/tools.md#editing-a-calls-arguments):
// the approval of a detached `wait` run is answered `{"answer": {"edit": {…}}}`; a non-object edit is
// refused (422, the approval stays open); the tool runs once with the edited arguments, the run's
// events say who answered through what, and the decision is recorded as `true` with the arguments.
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

describe('parley serve: JP run = "edit"', () => {
  it('JP run = edit over the API: {"answer": {"edit": {…}}} runs the call with the edited arguments, recorded with the true decision', async () => {
    const p = makeProject()
    fs.appendFileSync(path.join(p.storage, "config.toml"), DEFERRABLE.replace('run = "unattended"', 'run = "edit"'))
    addDeferrable(p.root)
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
    expect(open).toMatchObject([{ inquiry_id: "a1.__permission__.1", kind: "approval", arguments: { name: "prod" } }])
    const events = await Serve.sse(`${server.base}/api/conversations/${id}/events`, server.auth)
    const url = `/api/conversations/${id}/questions/a1.__permission__.1`
    expect(await server.post(url, { answer: { edit: ["staging"] } })).toMatchObject({
      status: 422,
      body: { error: "AnswerDoesNotFit", reason: "the edited arguments are not a JSON object" }
    })
    const edited = { name: "staging", mode: "slow" }
    expect(await server.post(url, { answer: { edit: edited } })).toMatchObject({
      status: 200,
      body: { outcome: "delivered" }
    })
    const seen: Array<Record<string, unknown>> = []
    for (let f = await events.next(); f !== undefined; f = await events.next()) {
      seen.push(JSON.parse(f.data) as Record<string, unknown>)
      if (seen.at(-1)!["_tag"] === "ToolStarted") break
    }
    events.close()
    expect(seen.find((e) => e["_tag"] === "QuestionClosed")).toMatchObject({
      kind: "approval",
      by: "other",
      via: "api"
    })
    // The call starts with the edited arguments.
    expect(seen.at(-1)).toMatchObject({ _tag: "ToolStarted", call: { id: "a1", arguments: edited } })
    await waitFor("the tool to run", () => effectsOf(p, "staging") !== "")
    expect(effectsOf(p, "staging")).toBe(`"done"\n`)
    expect(effectsOf(p, "prod")).toBe("")
    const decision = persisted(p).find((e) => e.type === "inquiry_response")!
    expect(decision).toMatchObject({ id: "a1.__permission__.1", answer: true })
    const stored = (decision["metadata"] as { parley_arguments: Record<string, string> }).parley_arguments
    expect(Buffer.from(stored["name"]!, "base64").toString("utf8")).toBe("staging")
  })
})
