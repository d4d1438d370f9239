// Approvals are questions with a kind (docs/questions-and-approvals.md#approvals): a local tool with
// `run = "ask"` in a run nobody watches at a terminal never starts without a person's yes under
// `wait`, `defer` and `deny` (the tool writes `<name>.effects` when it runs); the approval is listed
// (`kind: "approval"`, the call's arguments), answered with yes/no/always/never, and the decision
// survives `--continue-turn` and a kill -9 while the approved tool runs (each policy on a detached run too). Under `assistant` a plain
// run keeps JP's rule: the call runs.
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
  fs.appendFileSync(path.join(p.storage, "config.toml"), DEFERRABLE.replace('run = "unattended"', 'run = "ask"'))
  addDeferrable(p.root)
  return p
}

/** A call of the deferrable tool that only writes its effect (`slow`, after `seconds`). */
const call = (id: string, name: string, seconds = 0) => ({
  id,
  name: "deferrable",
  arguments: { name, mode: "slow", seconds }
})

/** The recorded response of call `id`, its content decoded (stored base64, as JP does). */
const responseOf = (p: Project, id: string) => {
  const e = persisted(p).find((e) => e.type === "tool_call_response" && e["id"] === id)
  return e === undefined ? undefined : Buffer.from(String(e["content"]), "base64").toString("utf8")
}

const listed = (p: Project, id: string) => {
  const r = parley(p, ["conversation", "answer", id, "--format", "json"])
  expect(r.code).toBe(0)
  return JSON.parse(r.stdout) as Array<Record<string, unknown>>
}

const idOf = (p: Project) =>
  (JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout) as Array<{ id: string }>)[0]!.id

/** Starts `query --detach` under `policy`; the conversation id and the run's pid. */
const detached = (p: Project, script: string, policy: string) => {
  const r = parley(p, ["query", "--detach", "--new", "go", "--script", script, "--detached-policy", policy])
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

describe('run = "ask" with nobody at the prompt', () => {
  it("deny skips the call with a response saying a person's approval was needed; assistant runs it (JP's rule)", () => {
    const p = project()
    const script = writeScript(p, "s.json", [
      { message: "Working.", tool_calls: [call("a1", "deploy")] },
      { message: "Done." }
    ])
    const denied = parley(p, ["query", "--new", "go", "--script", script, "--detached-policy", "deny"])
    expect(denied.code).toBe(0)
    expect(effectsOf(p, "deploy")).toBe("")
    expect(responseOf(p, "a1")).toContain("needs a person's approval to run")
    expect(persisted(p).filter((e) => e.type === "inquiry_request")).toStrictEqual([])

    const q = project()
    const plain = writeScript(q, "s.json", [
      { message: "Working.", tool_calls: [call("a1", "deploy")] },
      { message: "Done." }
    ])
    expect(parley(q, ["query", "--new", "go", "--script", plain, "--detached-policy", "assistant"]).code).toBe(0)
    expect(effectsOf(q, "deploy")).toBe(`"done"\n`)
  })

  it("defer: exit 3 with the approval listed (kind, tool, arguments); answered yes, --continue-turn runs it once", () => {
    const p = project()
    const script = writeScript(p, "s.json", [{ message: "Working.", tool_calls: [call("a1", "deploy")] }])
    const first = parley(p, ["query", "--new", "go", "--script", script, "--detached-policy", "defer"])
    expect(first.code).toBe(3)
    expect(effectsOf(p, "deploy")).toBe("")
    const id = idOf(p)
    // The deferred lines say an approval's words, as `conversation answer` does.
    expect(first.stderr).toContain(
      "a1.__permission__.1  deferrable: Run local deferrable tool? [yes, no, always or never]"
    )
    expect(first.stderr).toContain(`conversation answer ${id} a1.__permission__.1 <yes|no|always|never>`)
    expect(listed(p, id)).toStrictEqual([
      {
        id: "a1.__permission__.1",
        inquiry_id: "a1.__permission__.1",
        kind: "approval",
        tool: "deferrable",
        arguments: { name: "deploy", mode: "slow", seconds: 0 },
        tool_call_id: "a1",
        question: "Run local deferrable tool?",
        answer_type: "boolean",
        options: null,
        default: null
      }
    ])
    const refused = parley(p, ["conversation", "answer", id, "a1.__permission__.1", "maybe"])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain("yes, no, always or never")
    expect(parley(p, ["conversation", "answer", id, "a1.__permission__.1", "yes"]).code).toBe(0)
    expect(effectsOf(p, "deploy")).toBe("")
    const resume = writeScript(p, "r.json", [{ message: "Deployed." }])
    const second = parley(p, ["query", "--continue-turn", "--id", id, "--script", resume, "--detached-policy", "defer"])
    expect(second.code).toBe(0)
    expect(second.stdout).toBe("Deployed.\n")
    expect(effectsOf(p, "deploy")).toBe(`"done"\n`)
    expect(
      persisted(p)
        .filter((e) => e.type === "inquiry_request")
        .map((e) => e["id"])
    ).toStrictEqual(["a1.__permission__.1"])
  })

  it("defer --format json: the report's question row says its kind", () => {
    const p = project()
    const script = writeScript(p, "s.json", [{ message: "Working.", tool_calls: [call("a1", "deploy")] }])
    const r = parley(p, ["query", "--new", "go", "--script", script, "--detached-policy", "defer", "--format", "json"])
    expect(r.code).toBe(3)
    expect((JSON.parse(r.stdout) as { questions: unknown }).questions).toStrictEqual([
      {
        id: "a1.__permission__.1",
        inquiry_id: "a1.__permission__.1",
        kind: "approval",
        tool_call_id: "a1",
        tool: "deferrable",
        question: "Run local deferrable tool?",
        answer_type: "boolean",
        answered_by: null,
        outcome: "open"
      }
    ])
  })

  it("defer: `never` skips the call and the tool's other approval of the turn on --continue-turn", () => {
    const p = project()
    const script = writeScript(p, "s.json", [
      { message: "Working.", tool_calls: [call("a1", "one"), call("a2", "two")] }
    ])
    expect(parley(p, ["query", "--new", "go", "--script", script, "--detached-policy", "defer"]).code).toBe(3)
    const id = idOf(p)
    expect(listed(p, id).map((q) => q["inquiry_id"])).toStrictEqual(["a1.__permission__.1", "a2.__permission__.1"])
    expect(parley(p, ["conversation", "answer", id, "a1.__permission__.1", "never"]).code).toBe(0)
    const resume = writeScript(p, "r.json", [{ message: "Skipped both." }])
    const second = parley(p, ["query", "--continue-turn", "--id", id, "--script", resume, "--detached-policy", "defer"])
    expect(second.code).toBe(0)
    expect([effectsOf(p, "one"), effectsOf(p, "two")]).toStrictEqual(["", ""])
    // The second approval is closed by the remembered answer: every request has its response.
    const responses = persisted(p).filter((e) => e.type === "inquiry_response")
    expect(responses.map((e) => [e["id"], e["answer"]])).toStrictEqual([
      ["a1.__permission__.1", false],
      ["a2.__permission__.1", false]
    ])
  })

  it("wait: the detached run waits (the tool has not run); `conversation answer … yes` runs it once", async () => {
    const p = project()
    const script = writeScript(p, "s.json", [
      { message: "Working.", tool_calls: [call("a1", "deploy")] },
      { message: "Deployed." }
    ])
    const { id, pid } = detached(p, script, "wait")
    await waitFor("the approval to open", () => listed(p, id).length === 1)
    expect(listed(p, id)[0]).toMatchObject({ kind: "approval", arguments: { name: "deploy" } })
    expect(effectsOf(p, "deploy")).toBe("")
    expect(parley(p, ["conversation", "answer", id, "a1.__permission__.1", "yes"]).code).toBe(0)
    await waitFor("the run to end", () => !alive(pid))
    expect(effectsOf(p, "deploy")).toBe(`"done"\n`)
    expect(responseOf(p, "a1")).toBe('deploy: "done"')
  })

  it("defer and deny on a detached run: the run ends and the tool has not run; defer leaves the approval listed", async () => {
    for (const policy of ["defer", "deny"]) {
      const p = project()
      const script = writeScript(p, "s.json", [
        { message: "Working.", tool_calls: [call("a1", "deploy")] },
        { message: "Done." }
      ])
      const { id, pid } = detached(p, script, policy)
      await waitFor(`the ${policy} run to end`, () => !alive(pid), 60_000)
      expect(effectsOf(p, "deploy"), policy).toBe("")
      expect(
        listed(p, id).map((q) => [q["inquiry_id"], q["kind"]]),
        policy
      ).toStrictEqual(policy === "defer" ? [["a1.__permission__.1", "approval"]] : [])
      if (policy === "deny") expect(responseOf(p, "a1")).toContain("needs a person's approval to run")
    }
  })

  it("wait: a yes recorded before kill -9 mid-tool survives; --continue-turn runs the call without asking again", async () => {
    const p = project()
    const script = writeScript(p, "s.json", [{ message: "Working.", tool_calls: [call("a1", "deploy", 2)] }])
    const { id, pid } = detached(p, script, "wait")
    await waitFor("the approval to open", () => listed(p, id).length === 1)
    expect(parley(p, ["conversation", "answer", id, "a1.__permission__.1", "yes"]).code).toBe(0)
    await waitFor("the decision on disk", () =>
      persisted(p).some((e) => e.type === "inquiry_response" && e["id"] === "a1.__permission__.1")
    )
    process.kill(pid, "SIGKILL")
    await waitFor("the run to die", () => !alive(pid))
    expect(effectsOf(p, "deploy")).toBe("")
    const resume = writeScript(p, "r.json", [{ message: "Deployed." }])
    const second = parley(p, ["query", "--continue-turn", "--id", id, "--script", resume, "--detached-policy", "wait"])
    expect(second.code).toBe(0)
    expect(effectsOf(p, "deploy")).toBe(`"done"\n`)
    expect(
      persisted(p)
        .filter((e) => e.type === "inquiry_request")
        .map((e) => e["id"])
    ).toStrictEqual(["a1.__permission__.1"])
  })
})
