// JP's `run = "edit"` with nobody at the run's terminal (docs/tools.md#editing-a-calls-arguments):
// the approval of a detached `wait` run is answered `{"edit": {…}}` from elsewhere (`conversation
// answer`, through the run's socket); the tool runs with the edited arguments, which are recorded with
// the `true` decision; an edit that does not fit is refused and the approval stays open; a yes with
// edited arguments recorded before a kill -9 mid-tool holds on `--continue-turn`: the call runs once,
// with the edited arguments, and is not asked again.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import {
  addDeferrable,
  DEFERRABLE,
  effectsOf,
  makeProject,
  parley,
  persisted,
  type Project,
  waitFor,
  writeScript
} from "../support/Project.ts"

const started: Array<number> = []
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // Gone already.
    }
  }
})

const project = (): Project => {
  const p = makeProject()
  fs.appendFileSync(path.join(p.storage, "config.toml"), DEFERRABLE.replace('run = "unattended"', 'run = "edit"'))
  addDeferrable(p.root)
  return p
}

const listed = (p: Project, id: string) => {
  const r = parley(p, ["conversation", "answer", id, "--format", "json"])
  expect(r.code).toBe(0)
  return JSON.parse(r.stdout) as Array<Record<string, unknown>>
}

/** Starts `query --detach` under `wait` with one call of the deferrable tool (`seconds`: how long it works). */
const detached = (p: Project, seconds: number) => {
  const script = writeScript(p, "s.json", [
    {
      message: "Working.",
      tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "prod", mode: "slow", seconds } }]
    },
    { message: "Deployed." }
  ])
  const r = parley(p, ["query", "--detach", "--new", "go", "--script", script, "--detached-policy", "wait"])
  expect(r.code).toBe(0)
  const pid = Number(/\(pid (\d+)\)/.exec(r.stderr)![1])
  started.push(pid)
  return { id: r.stdout.trim(), pid }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Metadata string leaves as stored: base64 (JP's storage encoding), decoded here. */
const decoded = (args: unknown) =>
  args === undefined
    ? undefined
    : Object.fromEntries(
        Object.entries(args as Record<string, unknown>).map(([k, v]) => [
          k,
          typeof v === "string" ? Buffer.from(v, "base64").toString("utf8") : v
        ])
      )

/** The permission pairs recorded, as [id, answer, edited arguments]. */
const decisions = (p: Project) =>
  persisted(p)
    .filter((e) => e.type === "inquiry_response")
    .map((e) => [
      e["id"],
      e["answer"],
      decoded((e["metadata"] as Record<string, unknown> | undefined)?.["parley_arguments"])
    ])

const EDITED = { name: "staging", mode: "slow", seconds: 0 }

describe('JP run = "edit" answered from elsewhere', () => {
  it('JP run = edit over the socket: a detached wait run\'s approval answered {"edit": {…}} runs the tool with the edited arguments; a misfit is refused and it stays open', async () => {
    const p = project()
    const { id, pid } = detached(p, 0)
    await waitFor("the approval to open", () => listed(p, id).length === 1)
    expect(listed(p, id)[0]).toMatchObject({ kind: "approval", arguments: { name: "prod" } })
    for (const [bad, why] of [
      ['{"edit": [1]}', "the edited arguments are not a JSON object"],
      ['{"edit": ""}', "an empty edit answers nothing: the approval stays open"]
    ] as const) {
      const refused = parley(p, ["conversation", "answer", id, "a1.__permission__.1", bad])
      expect(refused.code, bad).toBe(2)
      expect(refused.stderr, bad).toContain(why)
    }
    expect(listed(p, id).length).toBe(1)
    const answered = parley(p, ["conversation", "answer", id, "a1.__permission__.1", JSON.stringify({ edit: EDITED })])
    expect(answered.code, answered.stderr).toBe(0)
    await waitFor("the run to end", () => !alive(pid))
    expect(effectsOf(p, "prod")).toBe("")
    expect(effectsOf(p, "staging")).toBe(`"done"\n`)
    expect(decisions(p)).toStrictEqual([["a1.__permission__.1", true, EDITED]])
  })

  it("JP run = edit after kill -9 mid-tool: --continue-turn runs the edited call once, without asking again", async () => {
    const p = project()
    const { id, pid } = detached(p, 3)
    await waitFor("the approval to open", () => listed(p, id).length === 1)
    const edit = { ...EDITED, seconds: 3 }
    expect(parley(p, ["conversation", "answer", id, "a1.__permission__.1", JSON.stringify({ edit })]).code).toBe(0)
    await waitFor("the decision on disk", () => decisions(p).length === 1)
    process.kill(pid, "SIGKILL")
    await waitFor("the run to die", () => !alive(pid))
    expect(effectsOf(p, "staging")).toBe("")
    const resume = writeScript(p, "r.json", [{ message: "Deployed." }])
    const second = parley(p, ["query", "--continue-turn", "--id", id, "--script", resume, "--detached-policy", "defer"])
    expect(second.code, second.stderr).toBe(0)
    expect(effectsOf(p, "prod")).toBe("")
    expect(effectsOf(p, "staging")).toBe(`"done"\n`)
    // One request, one decision (with the edited arguments): the resumed call was not asked again.
    expect(
      persisted(p)
        .filter((e) => e.type === "inquiry_request")
        .map((e) => e["id"])
    ).toStrictEqual(["a1.__permission__.1"])
    expect(decisions(p)).toStrictEqual([["a1.__permission__.1", true, edit]])
  })
})
