// The acceptance of MCP 2026-07-28 (docs/mcp.md#rounds-2026-07-28), end to end (built binary, no TTY): a real MCP
// 2026-07-28 server (the SDK v2's McpServer over stdio) whose tool answers
// `input_required` with a form. The form's questions are recorded like any
// tool questions and answered by config and by the model; the open round
// (with its requestState) is recorded with the round's first question; the
// retry succeeds. kill -9 after the answers are recorded and before any
// result is → `--continue-turn` retries with the recorded answers and the
// same requestState and asks nothing again.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { withoutRunHeader } from "../support/Cli.ts"
import {
  exited,
  makeProject,
  parley,
  persisted,
  type Project,
  spawnParley,
  waitFor,
  writeScript
} from "../support/Project.ts"
import { killMarked, marked, newMark, waitGone } from "../layers/mcp/everything.ts"

const STATELESS = path.join(import.meta.dirname, "..", "layers", "mcp", "fixtures", "stateless-server.mjs")
const SOURCE = { source: "tool", name: "deploy" }

const marks: Array<string> = []
const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
const projects: Array<string> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  for (const m of marks.splice(0)) killMarked(m)
  for (const d of projects.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})

interface Setup {
  readonly p: Project
  readonly mark: string
  readonly log: string
  readonly hang: string
}

/** A project whose config starts the stateless server; `elicitation` and `env` answered by config, `sure` by the model. */
const setup = (): Setup => {
  const mark = newMark()
  marks.push(mark)
  const p = makeProject()
  projects.push(p.root)
  const log = path.join(p.root, "server.jsonl")
  const hang = path.join(p.root, "hang")
  fs.writeFileSync(
    path.join(p.storage, "config.toml"),
    `[mcp.servers.st]
command = ${JSON.stringify(process.execPath)}
args = [${JSON.stringify(STATELESS)}]
env = { PARLEY_MCP_TEST = ${JSON.stringify(mark)}, STATELESS_LOG = ${JSON.stringify(log)}, STATELESS_HANG = ${JSON.stringify(hang)} }

[conversation.tools.deploy]
run = "unattended"
# The model may fill in this tool's forms (a form is the person's by default: docs/decisions.md#mcp-forms-are-the-persons).
forms = "assistant"

[conversation.tools.deploy.questions]
elicitation = { answer = true }
env = { answer = "staging" }
sure = { target = "assistant" }
`
  )
  return { p, mark, log, hang }
}

const seen = (s: Setup): Array<{ requestState: string | null; inputResponses: unknown }> =>
  fs.existsSync(s.log)
    ? fs
        .readFileSync(s.log, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l))
    : []

type Entry = Record<string, unknown>
const unb64 = (s: unknown) => Buffer.from(String(s), "base64").toString("utf8")
/** Metadata as written (every string leaf base64, JP's rule), read back. */
const decoded = (u: unknown): unknown =>
  typeof u === "string"
    ? unb64(u)
    : Array.isArray(u)
      ? u.map(decoded)
      : typeof u === "object" && u !== null
        ? Object.fromEntries(Object.entries(u).map(([k, v]) => [k, decoded(v)]))
        : u
const strip = (events: ReadonlyArray<Entry>) => events.map(({ timestamp: _, ...rest }) => rest)

const CALL = [{ id: "call_1", name: "deploy", arguments: {} }]
const ANSWERED = { confirm: { action: "accept", content: { env: "staging", sure: true } } }

describe("MCP 2026-07-28 end to end: input_required questions are recorded, and a crash retries with them", () => {
  it("the form's questions are recorded and answered by config and the model; the round goes with the first question; the retry succeeds", async () => {
    const s = setup()
    const script = writeScript(s.p, "s.json", [
      { message: "Deploying.", tool_calls: CALL },
      { structured: { answer: true } },
      { message: "Deployed." }
    ])
    const r = parley(s.p, ["query", "go", "--script", script])
    expect(withoutRunHeader(r.stderr)).toBe("")
    expect(r.stdout).toBe("Deploying.\nDeployed.\n")
    expect(r.code).toBe(0)
    const calls = seen(s)
    expect(calls.map((c) => c.inputResponses)).toStrictEqual([null, ANSWERED])
    const events = strip(persisted(s.p))
    const of = events.filter((e) => String(e["id"]).startsWith("call_1"))
    expect(of.map(({ metadata: _, ...e }) => e)).toStrictEqual([
      { type: "tool_call_request", id: "call_1", name: "deploy", arguments: {} },
      {
        type: "inquiry_request",
        id: "call_1.elicitation.1",
        source: SOURCE,
        question: {
          text: 'MCP server "st" asks: Deploy to production?\nFill in its form (2 fields)? No declines it.',
          answer_type: { type: "boolean" },
          default: true
        }
      },
      { type: "inquiry_response", outcome: "answered", id: "call_1.elicitation.1", answer: true },
      {
        type: "inquiry_request",
        id: "call_1.env.1",
        source: SOURCE,
        question: {
          text: "env",
          answer_type: { type: "select", options: [{ value: "staging" }, { value: "production" }] }
        }
      },
      { type: "inquiry_response", outcome: "answered", id: "call_1.env.1", answer: "staging" },
      {
        type: "inquiry_request",
        id: "call_1.sure.1",
        source: SOURCE,
        question: { text: "sure", answer_type: { type: "boolean" } }
      },
      { type: "inquiry_response", outcome: "answered", id: "call_1.sure.1", answer: true },
      {
        type: "tool_call_response",
        id: "call_1",
        content: Buffer.from("deployed to staging (sure: true)").toString("base64"),
        is_error: false
      }
    ])
    // Only the round's first question carries it: the server, the round, its requests, its state verbatim.
    expect(of.filter((e) => e["metadata"] !== undefined).map((e) => [e["id"], decoded(e["metadata"])])).toStrictEqual([
      [
        "call_1.elicitation.1",
        {
          parley_executor_state: {
            mcp: {
              server: "st",
              round: 1,
              inputRequests: { confirm: expect.objectContaining({ method: "elicitation/create" }) },
              requestState: calls[1]!.requestState
            }
          }
        }
      ]
    ])
    expect(await waitGone(s.mark)).toStrictEqual([])
  })

  it("kill -9 once the answers are recorded, before the result: --continue-turn retries with the recorded answers and the same requestState, and asks nothing", async () => {
    const s = setup()
    fs.writeFileSync(s.hang, "")
    const script = writeScript(s.p, "s1.json", [
      { message: "Deploying.", tool_calls: CALL },
      { structured: { answer: true } }
    ])
    const child = spawnParley(s.p, ["query", "go", "--script", script])
    children.push(child)
    await waitFor("the retry at the server", () => seen(s).length === 2)
    const before = strip(persisted(s.p))
    expect(before.filter((e) => e["type"] === "inquiry_response").map((e) => e["id"])).toStrictEqual([
      "call_1.elicitation.1",
      "call_1.env.1",
      "call_1.sure.1"
    ])
    expect(before.some((e) => e["type"] === "tool_call_response")).toBe(false)
    expect(marked(s.mark).length).toBe(2) // the watchdog and the server
    child.kill("SIGKILL")
    await exited(child)
    expect(await waitGone(s.mark, 5000)).toStrictEqual([])

    fs.rmSync(s.hang)
    const resume = writeScript(s.p, "s2.json", [{ message: "Resumed." }])
    const r = parley(s.p, ["query", "--continue-turn", "--script", resume])
    expect(withoutRunHeader(r.stderr)).toBe("")
    expect(r.stdout).toBe("Resumed.\n")
    expect(r.code).toBe(0)
    const calls = seen(s)
    // The resumed run's only call is the retry: the same answers, the very requestState the server minted.
    expect(calls.map((c) => c.inputResponses)).toStrictEqual([null, ANSWERED, ANSWERED])
    expect(calls[2]!.requestState).toBe(calls[1]!.requestState)
    const after = strip(persisted(s.p))
    expect(after.filter((e) => e["type"] === "inquiry_request").length).toBe(3)
    expect(after.slice(before.length)).toStrictEqual([
      {
        type: "tool_call_response",
        id: "call_1",
        content: Buffer.from("deployed to staging (sure: true)").toString("base64"),
        is_error: false
      },
      { type: "chat_response", message: "Resumed." }
    ])
    expect(await waitGone(s.mark)).toStrictEqual([])
  })
})
