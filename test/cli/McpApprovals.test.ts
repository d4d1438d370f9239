// An MCP server's URL request and the review of its filled-in form are approvals when nobody is at
// the run's terminal (docs/mcp.md#approvals-with-nobody-at-the-terminal): under `wait`, `defer`
// and `deny` they go through the question path — listed by `conversation answer` with
// `kind: "approval"`, the tool and what they approve (the URL and the server's message; the form's
// values) — and the server gets an answer only from a person: yes accepts, no declines; `deny`
// stops the call without asking (the server gets cancel). The real server-everything over stdio,
// the built binary, no TTY.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { makeProject, parley, persisted, type Project, waitFor, writeScript } from "../support/Project.ts"
import * as Serve from "../support/Serve.ts"
import {
  ACCEPTED_CONTENT,
  elicitResults,
  formAnswersToml,
  killMarked,
  newMark,
  readTrace,
  stdioToml,
  waitGone
} from "../layers/mcp/everything.ts"

const marks: Array<string> = []
const pids: Array<number> = []
const projects: Array<string> = []
const servers: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
afterEach(() => {
  for (const c of servers.splice(0)) c.kill("SIGKILL")
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // Gone already.
    }
  }
  for (const m of marks.splice(0)) killMarked(m)
  for (const d of projects.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})

const URL_TOOL = "trigger-url-elicitation"
const FORM_TOOL = "trigger-elicitation-request"
const PAGE = { url: "https://auth.example.com/start?x=1", message: "Sign in to continue." }

/** A project whose config.toml starts server-everything (marked); its tools run without a run permission. */
const mcpProject = (toml = ""): { p: Project; mark: string; trace: string } => {
  const mark = newMark()
  marks.push(mark)
  const p = makeProject()
  projects.push(p.root)
  fs.writeFileSync(
    path.join(p.storage, "config.toml"),
    `${stdioToml("everything", mark)}\n[conversation.tools."${URL_TOOL}"]\nrun = "unattended"\n\n[conversation.tools."${FORM_TOOL}"]\nrun = "unattended"\n\n${toml}`
  )
  return { p, mark, trace: path.join(p.root, "trace.jsonl") }
}

/** `parley` with the MCP trace on (a detached run inherits it). */
const traced = (p: Project, trace: string, args: ReadonlyArray<string>) => {
  process.env["PARLEY_MCP_TRACE"] = trace
  try {
    return parley(p, args)
  } finally {
    delete process.env["PARLEY_MCP_TRACE"]
  }
}

/** Starts `query --detach` under `policy`; the conversation id and the run's pid. */
const detached = (p: Project, trace: string, script: string, policy: string) => {
  const r = traced(p, trace, ["query", "--detach", "--new", "go", "--script", script, "--detached-policy", policy])
  expect(r.code, r.stderr).toBe(0)
  const pid = Number(/\(pid (\d+)\)/.exec(r.stderr)![1])
  pids.push(pid)
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

const listed = (p: Project, id: string) => {
  const r = parley(p, ["conversation", "answer", id, "--format", "json"])
  expect(r.code, r.stderr).toBe(0)
  return JSON.parse(r.stdout) as Array<Record<string, unknown>>
}

/** The recorded response of call `id`, its content decoded (stored base64, as JP does). */
const responseOf = (p: Project, id: string) => {
  const e = persisted(p).find((e) => e.type === "tool_call_response" && e["id"] === id)
  return e === undefined ? undefined : Buffer.from(String(e["content"]), "base64").toString("utf8")
}

const b64 = (s: string) => Buffer.from(s).toString("base64")

const inquiries = (p: Project) =>
  persisted(p)
    .filter((e) => String(e.type).startsWith("inquiry_"))
    .map(({ timestamp: _, ...rest }) => rest)

const urlScript = (p: Project) =>
  writeScript(p, "s.json", [
    { message: "Opening.", tool_calls: [{ id: "call_1", name: URL_TOOL, arguments: PAGE }] },
    { message: "Done." }
  ])

describe("MCP URL consent with nobody at the terminal", () => {
  it("wait: listed as an approval (the URL and the message); always is refused; yes accepts and the tool goes on", async () => {
    const { p, mark, trace } = mcpProject()
    const { id, pid } = detached(p, trace, urlScript(p), "wait")
    await waitFor("the approval to open", () => listed(p, id).length === 1, 60_000)
    expect(listed(p, id)[0]).toMatchObject({
      inquiry_id: "call_1.url.1",
      kind: "approval",
      tool: URL_TOOL,
      arguments: PAGE
    })
    const always = parley(p, ["conversation", "answer", id, "call_1.url.1", "always"])
    expect(always.code).not.toBe(0)
    expect(always.stderr).toContain("asked each time")
    expect(parley(p, ["conversation", "answer", id, "call_1.url.1", "yes"]).code).toBe(0)
    await waitFor("the run to end", () => !alive(pid), 60_000)
    expect(responseOf(p, "call_1")).toMatch(/^✅ User completed the URL elicitation flow\./)
    expect(elicitResults(readTrace(trace))).toStrictEqual([{ action: "accept" }])
    expect(inquiries(p)).toStrictEqual([
      {
        type: "inquiry_request",
        id: "call_1.url.1",
        source: { source: "tool", name: URL_TOOL },
        question: expect.objectContaining({ answer_type: { type: "boolean" }, persistence: "none" }),
        // Strings in metadata are stored base64, as JP stores them.
        metadata: { parley_approval: { url: b64(PAGE.url), message: b64(PAGE.message) } }
      },
      { type: "inquiry_response", outcome: "answered", id: "call_1.url.1", answer: true }
    ])
    expect(await waitGone(mark)).toStrictEqual([])
  })

  it("wait: GET /api/questions lists it (kind, tool, the page); the API refuses always and answers yes", async () => {
    const { p, trace } = mcpProject()
    const server = await Serve.start(p)
    servers.push(server.child)
    const { id, pid } = detached(p, trace, urlScript(p), "wait")
    let open: Array<Record<string, unknown>> = []
    for (let i = 0; i < 600 && open.length === 0; i++) {
      open = (await server.json("/api/questions")).body
      if (open.length === 0) await new Promise((res) => setTimeout(res, 100))
    }
    expect(open).toMatchObject([
      { inquiry_id: "call_1.url.1", kind: "approval", conversation_id: id, tool: URL_TOOL, arguments: PAGE }
    ])
    const always = await server.post(`/api/conversations/${id}/questions/call_1.url.1`, { answer: "always" })
    expect(always).toMatchObject({ status: 422, body: { error: "AnswerDoesNotFit", expected: "yes or no" } })
    const yes = await server.post(`/api/conversations/${id}/questions/call_1.url.1`, { answer: "yes" })
    expect(yes).toMatchObject({ status: 200, body: { outcome: "delivered" } })
    await waitFor("the run to end", () => !alive(pid), 60_000)
    expect(responseOf(p, "call_1")).toMatch(/^✅ User completed the URL elicitation flow\./)
  })

  it("wait: no declines (recorded false; the server gets decline)", async () => {
    const { p, trace } = mcpProject()
    const { id, pid } = detached(p, trace, urlScript(p), "wait")
    await waitFor("the approval to open", () => listed(p, id).length === 1, 60_000)
    expect(parley(p, ["conversation", "answer", id, "call_1.url.1", "no"]).code).toBe(0)
    await waitFor("the run to end", () => !alive(pid), 60_000)
    expect(responseOf(p, "call_1")).toMatch(/^❌ User declined to open the URL/)
    expect(elicitResults(readTrace(trace))).toStrictEqual([{ action: "decline" }])
    expect(inquiries(p).at(-1)).toStrictEqual({
      type: "inquiry_response",
      outcome: "answered",
      id: "call_1.url.1",
      answer: false
    })
  })

  it("deny: decided without asking — recorded no_prompt_backend, the call's response says a person's approval was needed", () => {
    const { p, trace } = mcpProject()
    const r = traced(p, trace, ["query", "go", "--script", urlScript(p), "--detached-policy", "deny"])
    expect(r.code, r.stderr).toBe(0)
    expect(responseOf(p, "call_1")).toContain("asked for a person's approval")
    expect(inquiries(p).at(-1)).toStrictEqual({
      type: "inquiry_response",
      outcome: "cancelled",
      id: "call_1.url.1",
      reason: "no_prompt_backend"
    })
    // Nobody chose: the server is told cancel, not decline (MCP: decline is a person's explicit no).
    expect(elicitResults(readTrace(trace))).toStrictEqual([{ action: "cancel" }])
  })

  it("assistant (a script's default): declined unasked, nothing recorded (as before approvals)", () => {
    const { p, trace } = mcpProject()
    const r = traced(p, trace, ["query", "go", "--script", urlScript(p)])
    expect(r.code, r.stderr).toBe(0)
    expect(responseOf(p, "call_1")).toMatch(/^❌ User declined to open the URL/)
    expect(inquiries(p)).toStrictEqual([])
  })

  it("defer: exit 3 with the approval listed; answered yes, --continue-turn calls the tool again and accepts once", () => {
    const { p, trace } = mcpProject()
    const script = urlScript(p)
    const r = traced(p, trace, ["query", "--new", "go", "--script", script, "--detached-policy", "defer"])
    expect(r.code, r.stderr).toBe(3)
    expect(r.stderr).toContain("call_1.url.1")
    // Asked each time: the deferred lines offer yes or no only, never always/never.
    expect(r.stderr).toContain("[yes or no]")
    expect(r.stderr).toMatch(/call_1\.url\.1 <yes\|no>/)
    expect(r.stderr).not.toContain("always")
    const id = (JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout) as Array<{ id: string }>)[0]!
      .id
    expect(listed(p, id).map((q) => [q["inquiry_id"], q["kind"], q["arguments"]])).toStrictEqual([
      ["call_1.url.1", "approval", PAGE]
    ])
    // Asked each time: the listing offers yes or no only.
    const text = parley(p, ["conversation", "answer", id])
    expect(text.stdout).toContain("Sign in to continue. [yes or no]")
    expect(text.stdout).toContain(`${id} call_1.url.1 <yes|no>`)
    expect(parley(p, ["conversation", "answer", id, "call_1.url.1", "yes"]).code).toBe(0)
    const rest = writeScript(p, "rest.json", [{ message: "Done." }])
    const resumed = traced(p, trace, ["query", "--continue-turn", "--id", id, "--script", rest])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(responseOf(p, "call_1")).toMatch(/^✅ User completed the URL elicitation flow\./)
    // The deferred run's server got cancel when that run ended; the resumed call's server, the recorded yes.
    expect(elicitResults(readTrace(trace))).toStrictEqual([{ action: "cancel" }, { action: "accept" }])
    expect(
      inquiries(p)
        .filter((e) => e.type === "inquiry_request")
        .map((e) => e["id"])
    ).toStrictEqual(["call_1.url.1"])
  })
})

describe("MCP form review with nobody at the terminal", () => {
  const formScript = (p: Project) =>
    writeScript(p, "s.json", [
      { message: "Asking.", tool_calls: [{ id: "call_1", name: FORM_TOOL, arguments: {} }] },
      { message: "Done." }
    ])

  it("wait: the filled-in form is an approval whose arguments are its values; yes sends it (accept)", async () => {
    const { p, trace } = mcpProject(formAnswersToml())
    const { id, pid } = detached(p, trace, formScript(p), "wait")
    await waitFor("the review to open", () => listed(p, id).length === 1, 60_000)
    const [review] = listed(p, id)
    expect(review).toMatchObject({
      inquiry_id: "call_1.review.1",
      kind: "approval",
      tool: FORM_TOOL,
      arguments: ACCEPTED_CONTENT
    })
    expect(String(review!["question"])).toMatch(
      /^Send the form for MCP server "everything"\? Yes sends it, no declines it\.\n {2}String: Ada Lovelace\n/
    )
    expect(elicitResults(readTrace(trace))).toStrictEqual([])
    expect(parley(p, ["conversation", "answer", id, "call_1.review.1", "yes"]).code).toBe(0)
    await waitFor("the run to end", () => !alive(pid), 60_000)
    expect(elicitResults(readTrace(trace))).toStrictEqual([{ action: "accept", content: ACCEPTED_CONTENT }])
  })

  it("wait: no declines the form (the server gets decline)", async () => {
    const { p, trace } = mcpProject(formAnswersToml())
    const { id, pid } = detached(p, trace, formScript(p), "wait")
    await waitFor("the review to open", () => listed(p, id).length === 1, 60_000)
    expect(parley(p, ["conversation", "answer", id, "call_1.review.1", "no"]).code).toBe(0)
    await waitFor("the run to end", () => !alive(pid), 60_000)
    expect(elicitResults(readTrace(trace))).toStrictEqual([{ action: "decline" }])
  })
})
