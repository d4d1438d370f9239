// MCP servers (docs/mcp.md) on a real terminal (tmux): server-everything's form asked at the
// prompt. The form question (y fills it in, n declines), a field typed by the
// person, and Ctrl-C at a field — each checked against the recorded events,
// what the server received (PARLEY_MCP_TRACE), and that no server is left.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Tmux from "../support/Tmux.ts"
import { b64, makeProject, recorded, removeProjects, startParley, writeScript } from "../support/TtyProject.ts"
import {
  ACCEPTED_CONTENT,
  callResults,
  elicitResults,
  formAnswersToml,
  killMarked,
  newMark,
  readTrace,
  stdioToml,
  waitGone
} from "../layers/mcp/everything.ts"

const TOOL = "trigger-elicitation-request"
const SOURCE = { source: "tool", name: TOOL }
const FORM_QUESTION = {
  text: 'MCP server "everything" asks: Please provide inputs for the following fields:\nFill in its form (13 fields)? No declines it.',
  answer_type: { type: "boolean" },
  default: true,
  // A form is the person's (docs/decisions.md#mcp-forms-are-the-persons): recorded as exclusive.
  exclusive: true
}
const NAME_QUESTION = { text: "String: Your full, legal name", answer_type: { type: "text" }, exclusive: true }
/** The review after the last field (the whole form is shown before it is sent; docs/mcp.md#form-mode). */
const REVIEW_PROMPT = /\? Send it\? › *\n❯ accept *\n  edit *\n  decline *\n  cancel/

const marks: Array<string> = []
afterEach(() => {
  Tmux.killAll()
  for (const m of marks.splice(0)) killMarked(m)
  removeProjects()
})

/** Every field but `name` answered by config; the form question and `name` go to the person. */
const setUp = () => {
  const mark = newMark()
  marks.push(mark)
  const p = makeProject("parley-mcp-tty-")
  const answers = formAnswersToml({ except: ["name"] }).replace("elicitation = { answer = true }\n", "")
  fs.writeFileSync(
    path.join(p.storage, "config.toml"),
    `${stdioToml("everything", mark)}\n[conversation.tools."${TOOL}"]\nrun = "unattended"\n\n${answers}`
  )
  const script = writeScript(p, [
    { message: "Asking.", tool_calls: [{ id: "call_1", name: TOOL, arguments: {} }] },
    { message: "Done." }
  ])
  const trace = path.join(p.root, "trace.jsonl")
  return {
    p,
    mark,
    trace,
    s: startParley(p, ["query", "Fill it in", "--model", "scripted", "--script", script], { PARLEY_MCP_TRACE: trace })
  }
}

const head = [
  { type: "turn_start" },
  { type: "chat_request", content: "Fill it in" },
  { type: "chat_response", message: "Asking." },
  { type: "tool_call_request", id: "call_1", name: TOOL, arguments: {} },
  { type: "inquiry_request", id: "call_1.elicitation.1", source: SOURCE, question: FORM_QUESTION }
]

if (Tmux.skipReason !== undefined) console.warn(`McpTty.test.ts skipped: ${Tmux.skipReason}`)

describe.skipIf(!Tmux.available)(
  `MCP elicitation at a real terminal (tmux)${Tmux.skipReason !== undefined ? ` — skipped: ${Tmux.skipReason}` : ""}`,
  () => {
    it("y at the form question, a field typed at the prompt: both recorded as answered; the server gets accept", async () => {
      const { p, mark, trace, s } = setUp()
      await s.waitFor(
        /MCP server "everything" asks: Please provide inputs for the following fields:\n\? Fill in its form \(13 fields\)\? No declines it\. \[y\/Y\/n\/N,\?\]/
      )
      s.sendKeys("y")
      await s.waitFor(/\? String: Your full, legal name ›/)
      s.sendText("Ada Lovelace")
      s.sendKeys("Enter")
      await s.waitFor(REVIEW_PROMPT)
      expect(s.pane()).toContain('The form for MCP server "everything":\n  String: Ada Lovelace\n  Boolean: true\n')
      s.sendKeys("Enter")
      expect(await s.waitForExit()).toBe(0)
      expect(s.pane()).toContain("✔ Fill in its form (13 fields)? No declines it. yes\n")
      expect(s.pane()).toContain(
        "✔ String: Your full, legal name … Ada Lovelace\n↳ String: Your full, legal name → Ada Lovelace (you)\n"
      )
      expect(s.pane()).toContain(
        '↳ String with default: Favorite first line of a story (optional: leave empty to skip) → "" (config)\n'
      )
      expect(s.pane()).toContain("✓ trigger-elicitation-request\nDone.")
      const events = recorded(p.storage)
      expect(events.slice(0, 9)).toStrictEqual([
        ...head,
        { type: "inquiry_response", outcome: "answered", id: "call_1.elicitation.1", answer: true },
        { type: "inquiry_request", id: "call_1.name.1", source: SOURCE, question: NAME_QUESTION },
        { type: "inquiry_response", outcome: "answered", id: "call_1.name.1", answer: "Ada Lovelace" },
        {
          type: "inquiry_request",
          id: "call_1.check.1",
          source: SOURCE,
          question: {
            text: "Boolean: Agree to the terms and conditions",
            answer_type: { type: "boolean" },
            exclusive: true
          }
        }
      ])
      expect(events.at(-1)).toStrictEqual({ type: "chat_response", message: "Done." })
      expect(elicitResults(readTrace(trace))).toStrictEqual([{ action: "accept", content: ACCEPTED_CONTENT }])
      expect(await waitGone(mark)).toStrictEqual([])
    })

    it("n at the form question declines it: recorded as answered false, the server gets decline", async () => {
      const { p, mark, trace, s } = setUp()
      await s.waitFor(/\? Fill in its form \(13 fields\)\? No declines it\. \[y\/Y\/n\/N,\?\]/)
      s.sendKeys("n")
      expect(await s.waitForExit()).toBe(0)
      const declined =
        '❌ User declined to provide the requested information.\n\nRaw result: {\n  "action": "decline"\n}'
      expect(recorded(p.storage)).toStrictEqual([
        ...head,
        { type: "inquiry_response", outcome: "answered", id: "call_1.elicitation.1", answer: false },
        { type: "tool_call_response", id: "call_1", content: b64(declined), is_error: false },
        { type: "chat_response", message: "Done." }
      ])
      expect(elicitResults(readTrace(trace))).toStrictEqual([{ action: "decline" }])
      expect(await waitGone(mark)).toStrictEqual([])
    })

    it('Ctrl-C at a field: Cancelled{user}, "Tool input cancelled by user.", the server gets cancel; the turn goes on', async () => {
      const { p, mark, trace, s } = setUp()
      await s.waitFor(/\? Fill in its form \(13 fields\)\? No declines it\. \[y\/Y\/n\/N,\?\]/)
      s.sendKeys("y")
      await s.waitFor(/\? String: Your full, legal name ›/)
      s.sendKeys("C-c")
      expect(await s.waitForExit()).toBe(0)
      expect(s.pane()).toMatch(
        /\? String: Your full, legal name › \(cancelled\)\n↳ String: Your full, legal name → cancelled: user \(you\)\n✓ trigger-elicitation-request\nDone\.\n/
      )
      expect(recorded(p.storage)).toStrictEqual([
        ...head,
        { type: "inquiry_response", outcome: "answered", id: "call_1.elicitation.1", answer: true },
        { type: "inquiry_request", id: "call_1.name.1", source: SOURCE, question: NAME_QUESTION },
        { type: "inquiry_response", outcome: "cancelled", id: "call_1.name.1", reason: "user" },
        { type: "tool_call_response", id: "call_1", content: b64("Tool input cancelled by user."), is_error: false },
        { type: "chat_response", message: "Done." }
      ])
      const t = readTrace(trace)
      expect(elicitResults(t)).toStrictEqual([{ action: "cancel" }])
      // The server's own report of what it got (its result is not recorded: the call already ended).
      expect(callResults(t)).toStrictEqual([
        '⚠️ User cancelled the elicitation dialog.\n\nRaw result: {\n  "action": "cancel"\n}'
      ])
      expect(await waitGone(mark)).toStrictEqual([])
    })
    it("the review: edit one field, accept — the server gets the edited value; the review is recorded", async () => {
      const { p, mark, trace, s } = setUp()
      await s.waitFor(/\? Fill in its form \(13 fields\)\? No declines it\. \[y\/Y\/n\/N,\?\]/)
      s.sendKeys("y")
      await s.waitFor(/\? String: Your full, legal name ›/)
      s.sendText("Ada Lovelace")
      s.sendKeys("Enter")
      await s.waitFor(REVIEW_PROMPT)
      s.sendKeys("Down")
      s.sendKeys("Enter")
      await s.waitFor(/\? Which field do you want to change\? › *\n❯ name *\n  check/)
      s.sendKeys("Enter")
      await s.waitFor(
        /✔ Which field do you want to change\?[^\n]*name[^\n]*\n(?:[^\n]*\n)*\? String: Your full, legal name ›/
      )
      s.sendText("Grace Hopper")
      s.sendKeys("Enter")
      await s.waitFor(/String: Grace Hopper\n(?:[^\n]*\n)*\? Send it\? ›/)
      s.sendKeys("Enter")
      expect(await s.waitForExit()).toBe(0)
      const inquiries = recorded(p.storage)
        .filter((e) => e["type"] === "inquiry_response")
        .map((e) => [e["id"], e["answer"]])
      expect(inquiries.filter(([id]) => /\.(name|review|review_field)\./.test(String(id)))).toStrictEqual([
        ["call_1.name.1", "Ada Lovelace"],
        ["call_1.review.1", "edit"],
        ["call_1.review_field.1", "name"],
        ["call_1.name.2", "Grace Hopper"],
        ["call_1.review.2", "accept"]
      ])
      expect(elicitResults(readTrace(trace))).toStrictEqual([
        { action: "accept", content: { ...ACCEPTED_CONTENT, name: "Grace Hopper" } }
      ])
      expect(await waitGone(mark)).toStrictEqual([])
    })

    it("the review: decline sends decline; nothing the person typed reaches the server", async () => {
      const { mark, trace, s } = setUp()
      await s.waitFor(/\? Fill in its form \(13 fields\)\? No declines it\. \[y\/Y\/n\/N,\?\]/)
      s.sendKeys("y")
      await s.waitFor(/\? String: Your full, legal name ›/)
      s.sendText("Ada Lovelace")
      s.sendKeys("Enter")
      await s.waitFor(REVIEW_PROMPT)
      s.sendKeys("Down", "Down")
      s.sendKeys("Enter")
      expect(await s.waitForExit()).toBe(0)
      expect(elicitResults(readTrace(trace))).toStrictEqual([{ action: "decline" }])
      expect(await waitGone(mark)).toStrictEqual([])
    })
  }
)
