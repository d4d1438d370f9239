// The detached policy (docs/decisions.md#detached-policy): with nobody to ask, a person's question follows the
// `detached` policy; `defer` records it unanswered, lets the other calls
// finish and exits 3; `conversation answer` records the answer into the
// waiting turn and `query --continue-turn` hands it to the tool.
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import {
  addDeferrable,
  DEFERRABLE,
  makeProject,
  parley,
  persisted,
  type Project,
  writeScript
} from "../support/Project.ts"

const TOOL = DEFERRABLE

const project = (inquiry: string): Project => {
  const p = makeProject()
  fs.appendFileSync(path.join(p.storage, "config.toml"), `${TOOL}\n[conversation.inquiry]\n${inquiry}\n`)
  addDeferrable(p.root)
  return p
}

const effects = (p: Project, name: string): Array<string> => {
  const file = path.join(p.root, `${name}.effects`)
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim().split("\n") : []
}

const call = (id: string, name: string, mode: string, extra: Record<string, unknown> = {}) => ({
  id,
  name: "deferrable",
  arguments: { name, mode, ...extra }
})

const ls = (p: Project) =>
  JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout) as Array<{ id: string; incomplete: unknown }>

/** The first run: one call asks, one writes slowly; deferred. */
const deferredRun = (
  p: Project,
  calls = [call("ask_1", "prod", "ask"), call("slow_1", "slow", "slow", { seconds: 0.4 })]
) => {
  const script = writeScript(p, "first.json", [{ message: "Working.", tool_calls: calls }])
  return parley(p, ["query", "--new", "deploy", "--script", script])
}

describe('detached = "defer" (no TTY)', () => {
  it("a turn with a question and a slow tool: exit 3, the slow result kept; answer; resume without asking again", () => {
    const p = project(`detached = "defer"`)
    const first = deferredRun(p)
    expect(first.code).toBe(3)
    expect(first.stdout).toBe("Working.\n")
    const id = ls(p)[0]!.id
    expect(first.stderr).toContain(
      `is waiting for input; nobody could be asked:\n  ask_1.confirm.1  deferrable: Deploy prod? [yes or no]\n`
    )
    // The answer command repeats the run's --script: the resume command it prints needs it.
    expect(first.stderr).toMatch(
      new RegExp(`conversation answer ${id} ask_1.confirm.1 <yes\\|no> --script \\S+ --storage`)
    )
    // The slow tool finished and is recorded; the question is recorded without a response.
    const events = persisted(p)
    expect(events.filter((e) => e.type === "tool_call_response").map((e) => e["id"])).toStrictEqual(["slow_1"])
    expect(events.filter((e) => e.type === "inquiry_request").map((e) => e["id"])).toStrictEqual(["ask_1.confirm.1"])
    expect(events.filter((e) => e.type === "inquiry_response")).toStrictEqual([])
    expect(effects(p, "slow")).toStrictEqual([`"done"`])
    expect(effects(p, "prod")).toStrictEqual([])
    expect(ls(p)[0]!.incomplete).toStrictEqual({ state: "waiting-for-input", tool: "deferrable" })

    const listed = parley(p, ["conversation", "answer", id, "--format", "json"])
    expect(listed.code).toBe(0)
    expect(JSON.parse(listed.stdout)).toStrictEqual([
      {
        id: "ask_1.confirm.1",
        inquiry_id: "ask_1.confirm.1",
        kind: "question",
        tool: "deferrable",
        arguments: { name: "prod", mode: "ask" },
        tool_call_id: "ask_1",
        question: "Deploy prod?",
        answer_type: "boolean",
        options: null,
        default: null
      }
    ])
    const answered = parley(p, ["conversation", "answer", id, "ask_1.confirm.1", "yes"])
    expect(answered.code).toBe(0)
    expect(answered.stderr).toContain("Recorded the answer to ask_1.confirm.1. No question left open")
    expect(persisted(p).filter((e) => e.type === "inquiry_response")).toMatchObject([
      { id: "ask_1.confirm.1", outcome: "answered", answer: true }
    ])

    const resume = writeScript(p, "second.json", [{ message: "Deployed." }])
    const second = parley(p, ["query", "--continue-turn", "--id", id, "--script", resume])
    expect(second.stderr).not.toContain("waiting for input")
    expect(second.code).toBe(0)
    expect(second.stdout).toBe("Deployed.\n")
    const after = persisted(p)
    expect(after.filter((e) => e.type === "inquiry_request").map((e) => e["id"])).toStrictEqual(["ask_1.confirm.1"])
    expect(after.filter((e) => e.type === "tool_call_response").map((e) => e["id"])).toStrictEqual(["slow_1", "ask_1"])
    expect(effects(p, "prod")).toStrictEqual(["true"])
    expect(effects(p, "slow")).toStrictEqual([`"done"`])
    expect(ls(p)[0]!.incomplete).toBe(null)
  })

  it('--format json reports `deferred` with the open questions (outcome "open")', () => {
    const p = project(`detached = "defer"`)
    const script = writeScript(p, "first.json", [
      { message: "Working.", tool_calls: [call("pick_1", "paint", "pick")] }
    ])
    const r = parley(p, ["query", "--new", "paint", "--script", script, "--format", "json"])
    expect(r.code).toBe(3)
    const doc = JSON.parse(r.stdout)
    expect(doc.outcome).toBe("deferred")
    expect(doc.incomplete).toStrictEqual({ state: "waiting-for-input", tool: "deferrable" })
    expect(doc.questions).toStrictEqual([
      {
        id: "pick_1.color.1",
        inquiry_id: "pick_1.color.1",
        kind: "question",
        tool_call_id: "pick_1",
        tool: "deferrable",
        question: "Which color?",
        answer_type: "select",
        answered_by: null,
        outcome: "open",
        options: ["red", "green"]
      }
    ])
    expect(doc.tool_calls).toStrictEqual([
      { id: "pick_1", name: "deferrable", arguments: { name: "paint", mode: "pick" }, outcome: "unfinished" }
    ])
  })

  it("answers that do not fit exit 2 and write nothing; a second answer is refused naming the first", () => {
    const p = project(`detached = "defer"`)
    const script = writeScript(p, "first.json", [
      { message: "Working.", tool_calls: [call("ask_1", "prod", "ask"), call("pick_1", "paint", "pick")] }
    ])
    expect(parley(p, ["query", "--new", "go", "--script", script]).code).toBe(3)
    const id = ls(p)[0]!.id
    const before = fs.readFileSync(
      path.join(
        p.storage,
        "conversations",
        fs.readdirSync(path.join(p.storage, "conversations")).find((n) => n.startsWith(id))!,
        "events.json"
      ),
      "utf8"
    )
    const wrongType = parley(p, ["conversation", "answer", id, "ask_1.confirm.1", "maybe"])
    expect(wrongType.code).toBe(2)
    expect(wrongType.stderr).toBe(
      `parley: That answer does not fit question ask_1.confirm.1: "maybe" is not yes or no; expected yes or no. Nothing was recorded.\n`
    )
    const notAnOption = parley(p, ["conversation", "answer", id, "pick_1.color.1", "blue"])
    expect(notAnOption.code).toBe(2)
    expect(notAnOption.stderr).toContain(`"blue" is not one of the options (red, green); expected one of: red, green.`)
    const notJson = parley(p, ["conversation", "answer", id, "pick_1.color.1", "--json", "red"])
    expect(notJson.code).toBe(2)
    expect(persisted(p).filter((e) => e.type === "inquiry_response")).toStrictEqual([])
    expect(
      fs.readFileSync(
        path.join(
          p.storage,
          "conversations",
          fs.readdirSync(path.join(p.storage, "conversations")).find((n) => n.startsWith(id))!,
          "events.json"
        ),
        "utf8"
      )
    ).toBe(before)

    const unknown = parley(p, ["conversation", "answer", id, "nope.q.1", "yes"])
    expect(unknown.code).toBe(1)
    // The open questions are named in the order they were asked (the two tools ran in parallel).
    const asked = persisted(p)
      .filter((e) => e.type === "inquiry_request")
      .map((e) => e["id"])
    expect([...asked].sort()).toStrictEqual(["ask_1.confirm.1", "pick_1.color.1"])
    expect(unknown.stderr).toBe(`parley: No open question has the id nope.q.1 (open: ${asked.join(", ")}).\n`)

    expect(parley(p, ["conversation", "answer", id, "pick_1.color.1", "--json", `"green"`]).code).toBe(0)
    const again = parley(p, ["conversation", "answer", id, "pick_1.color.1", "red"])
    expect(again.code).toBe(1)
    expect(again.stderr).toBe(`parley: Question pick_1.color.1 was already answered (by an earlier answer: "green").\n`)
    expect(persisted(p).filter((e) => e.type === "inquiry_response")).toMatchObject([
      { id: "pick_1.color.1", answer: "green" }
    ])
  })

  it("a secret is never taken from argv and never recorded: the command says to resume in a terminal", () => {
    const p = project(`detached = "defer"`)
    const script = writeScript(p, "first.json", [{ message: "Working.", tool_calls: [call("sec_1", "api", "secret")] }])
    expect(parley(p, ["query", "--new", "go", "--script", script]).code).toBe(3)
    const id = ls(p)[0]!.id
    const r = parley(p, ["conversation", "answer", id, "sec_1.token.1", "hunter2"])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("asks for a secret, which is never recorded")
    expect(r.stderr).toContain(`query --continue-turn --id ${id}`)
    const all = fs
      .readdirSync(p.storage, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => fs.readFileSync(path.join(d.parentPath, d.name), "utf8"))
      .join("\n")
    expect(all).not.toContain("hunter2")
  })
})

describe("the other policies, no TTY", () => {
  it("deny: the question is cancelled (no_prompt_backend) and the turn goes on", () => {
    const p = project(`detached = "deny"`)
    const script = writeScript(p, "first.json", [
      { message: "Working.", tool_calls: [call("ask_1", "prod", "ask")] },
      { message: "Could not." }
    ])
    const r = parley(p, ["query", "--new", "deploy", "--script", script])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("Working.\nCould not.\n")
    expect(persisted(p).filter((e) => e.type === "inquiry_response")).toMatchObject([
      { id: "ask_1.confirm.1", outcome: "cancelled", reason: "no_prompt_backend" }
    ])
    expect(effects(p, "prod")).toStrictEqual([])
  })

  it("assistant (the default, JP's rule): the model answers through its side call", () => {
    const p = project(``)
    const script = writeScript(p, "first.json", [
      { message: "Working.", tool_calls: [call("ask_1", "prod", "ask")] },
      { structured: { answer: false } },
      { message: "Held back." }
    ])
    const r = parley(p, ["query", "--new", "deploy", "--script", script])
    expect(r.code).toBe(0)
    expect(persisted(p).filter((e) => e.type === "inquiry_response")).toMatchObject([
      { id: "ask_1.confirm.1", outcome: "answered", answer: false }
    ])
    expect(effects(p, "prod")).toStrictEqual(["false"])
  })

  it("--detached-policy overrides the config for one run", () => {
    const q = project(`detached = "assistant"`)
    const script = writeScript(q, "first.json", [{ message: "Working.", tool_calls: [call("ask_1", "prod", "ask")] }])
    const deferred = parley(q, ["query", "--new", "deploy", "--script", script, "--detached-policy", "defer"])
    expect(deferred.code).toBe(3)
    const bad = parley(q, ["query", "--new", "deploy", "--script", script, "--detached-policy", "later"])
    expect(bad.code).toBe(2)
  })
})
