// JP's result review answered from anywhere (docs/tools.md#reviewing-a-result-from-anywhere), through the
// built binary and `parley serve`: with nobody at the run's terminal and the policy `wait`, a `result =
// "ask"` review is an approval `<call>.__result__.1` listed by `conversation answer ID`, `inbox` and
// `GET /api/questions` with the result, answered `skip` from the CLI; under `defer` the turn waits, the
// review is answered on disk with an edit, and `--continue-turn` delivers it without running the tool again.
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
} from "../support/Project.ts"
import * as Serve from "../support/Serve.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
const groups: Array<number> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  for (const g of groups.splice(0)) killGroup(g)
})

/** A string as JP's files store it in an event's content and metadata (base64). */
const stored = (text: string) => Buffer.from(text, "utf8").toString("base64")

const project = () => {
  const p = makeProject()
  fs.appendFileSync(
    path.join(p.storage, "config.toml"),
    DEFERRABLE.replace('run = "unattended"', 'run = "unattended"\nresult = "ask"')
  )
  addDeferrable(p.root)
  return p
}

const steps = [
  { message: "Working.", tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "prod", mode: "slow" } }] },
  { message: "Done." }
]

const responseOf = (p: ReturnType<typeof project>) => persisted(p).find((e) => e.type === "tool_call_response")

describe("JP result review from anywhere, through the binary", () => {
  it("JP result = ask from anywhere: a wait run's review is listed by conversation answer, inbox and GET /api/questions, and answered skip from the CLI", async () => {
    const p = project()
    const server = await Serve.start(p)
    children.push(server.child)
    const script = writeScript(p, "s.json", steps)
    const r = parley(p, ["query", "--detach", "--new", "go", "--script", script, "--detached-policy", "wait"])
    expect(r.code, r.stderr).toBe(0)
    const id = r.stdout.trim()
    groups.push(Number(/\(pid (\d+)\)/.exec(r.stderr)![1]))
    let open: Array<Record<string, unknown>> = []
    for (let i = 0; i < 200 && open.length === 0; i++) {
      open = (await server.json("/api/questions")).body as Array<Record<string, unknown>>
      if (open.length === 0) await new Promise((res) => setTimeout(res, 100))
    }
    expect(open).toMatchObject([
      { inquiry_id: "a1.__result__.1", kind: "approval", arguments: { result: 'prod: "done"', is_error: false } }
    ])
    const listed = parley(p, ["conversation", "answer", id])
    expect(listed.stdout + listed.stderr).toContain(
      'a1.__result__.1  deferrable: Deliver deferrable result to assistant? [deliver, skip or {"edit": {"result": "…"}}]'
    )
    const inbox = parley(p, ["inbox"])
    expect(inbox.stdout).toContain("a1.__result__.1")
    const misfit = parley(p, ["conversation", "answer", id, "a1.__result__.1", "always"])
    expect(misfit.code).not.toBe(0)
    const answered = parley(p, ["conversation", "answer", id, "a1.__result__.1", "skip"])
    expect(answered.code, answered.stderr).toBe(0)
    await waitFor(
      "the turn to end",
      () => persisted(p).at(-1)?.type === "chat_response" && responseOf(p) !== undefined,
      30_000
    )
    expect(responseOf(p)).toMatchObject({
      content: stored("Result delivery skipped by user."),
      metadata: { parley_result_review: stored("skipped") }
    })
    expect(await server.stop()).toBe(143)
  }, 120_000)

  it("JP result = ask under defer: the turn waits on the review; answered on disk with an edit, --continue-turn delivers it without running the tool again", async () => {
    const p = project()
    const script = writeScript(p, "s.json", steps)
    const first = parley(p, ["query", "--new", "go", "--script", script, "--detached-policy", "defer"])
    const id = /(\d{11})/.exec(first.stdout + first.stderr)?.[1] ?? ""
    expect(first.stdout + first.stderr).toContain("a1.__result__.1")
    expect(effectsOf(p, "prod")).toBe(`"done"\n`)
    const answered = parley(p, [
      "conversation",
      "answer",
      id,
      "a1.__result__.1",
      "--json",
      '{"edit": {"result": "prod: checked"}}'
    ])
    expect(answered.code, answered.stderr).toBe(0)
    const resumed = parley(p, [
      "query",
      "--continue-turn",
      "--id",
      id,
      "--script",
      writeScript(p, "r.json", [{ message: "Done." }])
    ])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(responseOf(p)).toMatchObject({
      content: stored("prod: checked"),
      metadata: { parley_result_review: stored("edited") }
    })
    // The tool ran once: the resumed turn reviewed the recorded result.
    expect(effectsOf(p, "prod")).toBe(`"done"\n`)
  }, 120_000)
})
