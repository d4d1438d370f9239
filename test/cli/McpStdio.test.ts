// MCP servers (docs/mcp.md) end to end (built binary, no TTY): parley starts the real
// server-everything over stdio, a scripted turn calls get-sum, echo and
// trigger-elicitation-request, and every field of the form is recorded as
// its own inquiry pair. Also: resume after kill -9 mid-form, SIGINT
// mid-form (the server sees cancel), and no server process left behind.
import * as fs from "node:fs"
import * as path from "node:path"
import { withoutRunHeader } from "../support/Cli.ts"
import { afterEach, describe, expect, it } from "@effect/vitest"
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
import {
  ACCEPTED_CONTENT,
  callResults,
  elicitResults,
  FORM,
  formAnswersToml,
  killMarked,
  marked,
  newMark,
  readTrace,
  stdioToml,
  waitGone
} from "../layers/mcp/everything.ts"

const b64 = (s: string) => Buffer.from(s).toString("base64")
const unb64 = (s: unknown) => Buffer.from(String(s), "base64").toString("utf8")

const marks: Array<string> = []
const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
const projects: Array<string> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  for (const m of marks.splice(0)) killMarked(m)
  for (const d of projects.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})

const TOOL = "trigger-elicitation-request"
const SOURCE = { source: "tool", name: TOOL }

/** A project whose config.toml starts server-everything (marked) and answers the form as told. */
const mcpProject = (toml: string): { p: Project; mark: string; trace: string } => {
  const mark = newMark()
  marks.push(mark)
  const p = makeProject()
  projects.push(p.root)
  fs.writeFileSync(path.join(p.storage, "config.toml"), stdioToml("everything", mark) + toml)
  return { p, mark, trace: path.join(p.root, "trace.jsonl") }
}

const withTrace = (p: Project, trace: string, args: ReadonlyArray<string>) => {
  process.env["PARLEY_MCP_TRACE"] = trace
  try {
    return parley(p, args)
  } finally {
    delete process.env["PARLEY_MCP_TRACE"]
  }
}

type Entry = Record<string, unknown>
const strip = (events: ReadonlyArray<Entry>) => events.map(({ timestamp: _, ...rest }) => rest)

/** The inquiry pair of one field (answer as recorded; question text checked elsewhere, so matched loosely). */
const pair = (call: string, field: string, answer: unknown) => [
  {
    type: "inquiry_request",
    id: `${call}.${field}.1`,
    source: SOURCE,
    question: expect.objectContaining({ answer_type: expect.any(Object) })
  },
  { type: "inquiry_response", outcome: "answered", id: `${call}.${field}.1`, answer }
]

const threeCalls = [
  { id: "call_1", name: "get-sum", arguments: { a: 2, b: 3 } },
  { id: "call_2", name: "echo", arguments: { message: "hi" } },
  { id: "call_3", name: TOOL, arguments: {} }
]

describe("MCP over stdio: a scripted turn (no TTY)", () => {
  it("get-sum, echo and the elicitation form: one inquiry pair per field, config answers, one field by the model's side call", async () => {
    const { p, mark, trace } = mcpProject(formAnswersToml({ toAssistant: ["name"] }))
    const script = writeScript(p, "s.json", [
      { message: "Calling three tools.", tool_calls: threeCalls },
      { structured: { answer: "Ada Lovelace" } },
      { message: "Done." }
    ])
    const r = withTrace(p, trace, ["query", "go", "--script", script])
    expect(withoutRunHeader(r.stderr)).toBe("")
    expect(r.stdout).toBe("Calling three tools.\nDone.\n")
    expect(r.code).toBe(0)

    const events = strip(persisted(p))
    expect(events.slice(0, 6)).toStrictEqual([
      { type: "turn_start" },
      { type: "chat_request", content: "go" },
      { type: "chat_response", message: "Calling three tools." },
      { type: "tool_call_request", id: "call_1", name: "get-sum", arguments: { a: 2, b: 3 } },
      { type: "tool_call_request", id: "call_2", name: "echo", arguments: { message: b64("hi") } },
      { type: "tool_call_request", id: "call_3", name: TOOL, arguments: {} }
    ])
    expect(events.at(-1)).toStrictEqual({ type: "chat_response", message: "Done." })
    const of = (call: string) =>
      events.slice(6, -1).filter((e) => e["id"] === call || String(e["id"]).startsWith(`${call}.`))
    expect(of("call_1")).toStrictEqual([
      { type: "tool_call_response", id: "call_1", content: b64("The sum of 2 and 3 is 5."), is_error: false }
    ])
    expect(of("call_2")).toStrictEqual([
      { type: "tool_call_response", id: "call_2", content: b64("Echo: hi"), is_error: false }
    ])
    const form = of("call_3")
    expect(form).toStrictEqual([
      ...pair("call_3", "elicitation", true),
      ...FORM.flatMap(([field, answer]) => pair("call_3", field, answer)),
      { type: "tool_call_response", id: "call_3", content: expect.any(String), is_error: false }
    ])
    expect(events.length).toBe(6 + 1 + 1 + form.length + 1)
    expect(form[0]).toStrictEqual({
      type: "inquiry_request",
      id: "call_3.elicitation.1",
      source: SOURCE,
      question: {
        text: 'MCP server "everything" asks: Please provide inputs for the following fields:\nFill in its form (13 fields)? No declines it.',
        answer_type: { type: "boolean" },
        default: true
      }
    })
    expect(form[2]).toStrictEqual({
      type: "inquiry_request",
      id: "call_3.name.1",
      source: SOURCE,
      question: { text: "String: Your full, legal name", answer_type: { type: "text" } }
    })
    // The tool's reply reports the accepted values.
    const reply = unb64(form.at(-1)!["content"])
    expect(reply).toContain(
      "✅ User provided the requested information!\nUser inputs:\n- Name: Ada Lovelace\n- Agreed to terms: true\n- Email: ada@example.com\n- Homepage: https://ada.dev\n- Birthdate: 1815-12-10\n- Favorite Integer: 7\n- Favorite Number: 3.5\n"
    )
    expect(JSON.parse(reply.slice(reply.indexOf("Raw result: ") + "Raw result: ".length))).toStrictEqual({
      action: "accept",
      content: ACCEPTED_CONTENT
    })
    expect(elicitResults(readTrace(trace))).toStrictEqual([{ action: "accept", content: ACCEPTED_CONTENT }])
    expect(await waitGone(mark)).toStrictEqual([])
  })

  it("a configured answer a form field rejects: Cancelled{invalid_static_answer} on the second asking, the call ends at once (docs/decisions.md#static-answer-rejected)", async () => {
    const { p, mark, trace } = mcpProject(formAnswersToml({ except: ["email"] }) + `email = { answer = "nope" }\n`)
    const script = writeScript(p, "s.json", [
      { message: "Calling it.", tool_calls: [{ id: "call_3", name: TOOL, arguments: {} }] },
      { message: "Done." }
    ])
    const r = withTrace(p, trace, ["query", "go", "--script", script])
    expect(r.code).toBe(0)
    const emails = strip(persisted(p)).filter((e) => String(e["id"]).startsWith("call_3.email."))
    expect(emails.map((e) => [e["type"], e["id"], e["answer"] ?? e["reason"]])).toStrictEqual([
      ["inquiry_request", "call_3.email.1", undefined],
      ["inquiry_response", "call_3.email.1", "nope"],
      ["inquiry_request", "call_3.email.2", undefined],
      ["inquiry_response", "call_3.email.2", "invalid_static_answer"]
    ])
    const response = strip(persisted(p)).find((e) => e["type"] === "tool_call_response")!
    expect(response["is_error"]).toBe(true)
    expect(unb64(response["content"])).toBe(
      `${TOOL}: the configured conversation.tools.${TOOL}.questions.email.answer value does not match the question's answer_type (the tool rejected it and asked again: "nope" is not an email address). Update the configuration; do not retry.`
    )
    // The server's elicitation is answered cancel when the call is abandoned.
    await waitFor("the elicitation result in the trace", () => elicitResults(readTrace(trace)).length === 1)
    expect(elicitResults(readTrace(trace))).toStrictEqual([{ action: "cancel" }])
    expect(await waitGone(mark)).toStrictEqual([])
  })

  it("kill -9 mid-form: the watchdog stops the server; --continue-turn calls again and gives back the recorded answers without asking", async () => {
    const { p, mark, trace } = mcpProject(formAnswersToml({ toAssistant: ["name"] }))
    const script = writeScript(p, "s1.json", [
      { message: "Calling.", tool_calls: [{ id: "call_1", name: TOOL, arguments: {} }] },
      { delay_ms: 60_000, structured: { answer: "never" } }
    ])
    const child = spawnParley(p, ["query", "go", "--script", script])
    children.push(child)
    await waitFor("the name question", () => persisted(p).some((e) => e["id"] === "call_1.name.1"))
    expect(marked(mark).length).toBe(2) // the watchdog and the server
    child.kill("SIGKILL")
    await exited(child)
    // The server was waiting for our answer (server-everything then ignores EOF): the watchdog ends it.
    expect(await waitGone(mark, 5000)).toStrictEqual([])

    const resume = writeScript(p, "s2.json", [{ structured: { answer: "Ada Lovelace" } }, { message: "Resumed." }])
    const r = withTrace(p, trace, ["query", "--continue-turn", "--script", resume])
    expect(withoutRunHeader(r.stderr)).toBe("")
    expect(r.stdout).toBe("Resumed.\n")
    expect(r.code).toBe(0)
    const events = strip(persisted(p))
    // One pair per question in the whole turn: the form question is not asked again, the open one is closed under its id.
    expect(events.filter((e) => e["type"] === "inquiry_request").map((e) => e["id"])).toStrictEqual([
      "call_1.elicitation.1",
      ...FORM.map(([field]) => `call_1.${field}.1`)
    ])
    expect(events.find((e) => e["type"] === "inquiry_response" && e["id"] === "call_1.name.1")).toStrictEqual({
      type: "inquiry_response",
      outcome: "answered",
      id: "call_1.name.1",
      answer: "Ada Lovelace"
    })
    expect(elicitResults(readTrace(trace))).toStrictEqual([{ action: "accept", content: ACCEPTED_CONTENT }])
    expect(events.at(-1)).toStrictEqual({ type: "chat_response", message: "Resumed." })
    expect(await waitGone(mark)).toStrictEqual([])
  })

  it("SIGINT mid-form: the open question is Cancelled{user}, the server sees cancel, exit 130, nothing left running", async () => {
    const { p, mark, trace } = mcpProject(formAnswersToml({ toAssistant: ["name"] }))
    const script = writeScript(p, "s1.json", [
      { message: "Calling.", tool_calls: [{ id: "call_1", name: TOOL, arguments: {} }] },
      { delay_ms: 60_000, structured: { answer: "never" } }
    ])
    process.env["PARLEY_MCP_TRACE"] = trace
    const child = spawnParley(p, ["query", "go", "--script", script])
    delete process.env["PARLEY_MCP_TRACE"]
    children.push(child)
    await waitFor("the name question", () => persisted(p).some((e) => e["id"] === "call_1.name.1"))
    child.kill("SIGINT")
    expect(await exited(child)).toBe(130)
    const events = strip(persisted(p))
    expect(events.slice(-2)).toStrictEqual([
      {
        type: "inquiry_request",
        id: "call_1.name.1",
        source: SOURCE,
        question: { text: "String: Your full, legal name", answer_type: { type: "text" } }
      },
      { type: "inquiry_response", outcome: "cancelled", id: "call_1.name.1", reason: "user" }
    ])
    const t = readTrace(trace)
    expect(elicitResults(t)).toStrictEqual([{ action: "cancel" }])
    expect(callResults(t)).toStrictEqual([
      '⚠️ User cancelled the elicitation dialog.\n\nRaw result: {\n  "action": "cancel"\n}'
    ])
    expect(await waitGone(mark)).toStrictEqual([])
  })

  it("a server that cannot start: one clear line on stderr, the turn runs without its tools", () => {
    const mark = newMark()
    marks.push(mark)
    const p = makeProject()
    projects.push(p.root)
    fs.writeFileSync(
      path.join(p.storage, "config.toml"),
      `[mcp.servers.gone]\ncommand = "parley-no-such-server"\nenv = { PARLEY_MCP_TEST = "${mark}" }\n`
    )
    const script = writeScript(p, "s.json", [
      { message: "Trying.", tool_calls: [{ id: "call_1", name: "echo", arguments: { message: "x" } }] },
      { message: "It is not there." }
    ])
    const r = parley(p, ["query", "go", "--script", script])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("Trying.\nIt is not there.\n")
    expect(withoutRunHeader(r.stderr)).toBe(
      'parley: MCP server "gone" (parley-no-such-server) could not be started: Connection closed; it said:\ncannot start "parley-no-such-server": spawn parley-no-such-server ENOENT\nIts tools are unavailable in this run; check [mcp.servers.gone] in config.toml.\n'
    )
    expect(unb64(strip(persisted(p)).find((e) => e["type"] === "tool_call_response")!["content"])).toMatch(
      /^Tool 'echo' is not available\./
    )
  })
})

describe("docs/decisions.md#mcp-forms-are-the-persons: a form is the person's — with nobody there the detached policy applies, never the model", () => {
  it("detached = defer: the form question is recorded unanswered, the run ends waiting for input (exit 3); the server gets cancel", async () => {
    const { p, mark, trace } = mcpProject(
      `\n[conversation.inquiry]\ndetached = "defer"\n\n[conversation.tools."${TOOL}"]\nrun = "unattended"\n`
    )
    const script = writeScript(p, "s.json", [
      { message: "Asking.", tool_calls: [{ id: "call_1", name: TOOL, arguments: {} }] },
      { message: "never" }
    ])
    const r = withTrace(p, trace, ["query", "go", "--script", script])
    expect(r.code).toBe(3)
    const events = strip(persisted(p)).filter(
      (e) => String(e["type"]).startsWith("inquiry_") || e["type"] === "tool_call_response"
    )
    expect(events).toStrictEqual([
      {
        type: "inquiry_request",
        id: "call_1.elicitation.1",
        source: SOURCE,
        question: expect.objectContaining({ exclusive: true })
      }
    ])
    expect(JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout)[0].incomplete).toStrictEqual({
      state: "waiting-for-input",
      tool: TOOL
    })
    expect(await waitGone(mark)).toStrictEqual([])
  })

  it('detached = assistant (the default): Cancelled{no_prompt_backend}, no side call; forms = "assistant" lets the model fill it in', async () => {
    const { p, trace } = mcpProject(`\n[conversation.tools."${TOOL}"]\nrun = "unattended"\n`)
    // Had the form gone to the model, the structured step would be consumed and "Done." would be a provider error.
    const script = writeScript(p, "s.json", [
      { message: "Asking.", tool_calls: [{ id: "call_1", name: TOOL, arguments: {} }] },
      { message: "Done." }
    ])
    const r = withTrace(p, trace, ["query", "go", "--script", script])
    expect(r.code).toBe(0)
    expect(strip(persisted(p)).filter((e) => e["type"] === "inquiry_response")).toStrictEqual([
      { type: "inquiry_response", outcome: "cancelled", id: "call_1.elicitation.1", reason: "no_prompt_backend" }
    ])
    expect(elicitResults(readTrace(trace))).toStrictEqual([{ action: "cancel" }])
  })
})
