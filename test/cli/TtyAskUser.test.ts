// RFD 083's ask_user at a real terminal (tmux): the model's select question
// is shown under the "Assistant" label with its context and options,
// answered with the arrow keys, recorded with source assistant, and the model
// gets the typed JSON body.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Tmux from "../support/Tmux.ts"
import { b64, makeProject, recorded, removeProjects, startParley, writeScript } from "../support/TtyProject.ts"

afterEach(() => {
  Tmux.killAll()
  removeProjects()
})

const ARGS = {
  question: "Which way?",
  context: "Two ways are open.",
  answer_type: "select",
  options: ["backup", "overwrite", "abort"]
}

describe.skipIf(!Tmux.available)(
  `ask_user at a real terminal (tmux)${Tmux.skipReason !== undefined ? ` — skipped: ${Tmux.skipReason}` : ""}`,
  () => {
    it("a select answered at the prompt: labelled Assistant, options shown, the model gets {answer_type, answer}", async () => {
      const p = makeProject("parley-ask-user-")
      const script = writeScript(p, [
        { message: "Let me ask.", tool_calls: [{ id: "call_1", name: "ask_user", arguments: ARGS }] },
        { message: "Done." }
      ])
      const s = startParley(p, ["query", "Decide", "--model", "scripted", "--script", script])
      await s.waitFor(/Assistant asks:\nTwo ways are open\.\n\? Which way\? › *\n❯ backup *\n  overwrite *\n  abort/)
      s.sendKeys("Down")
      s.sendKeys("Enter")
      expect(await s.waitForExit()).toBe(0)
      expect(s.pane()).toContain("Done.")
      const events = recorded(p.storage)
      expect(
        events.filter((e) => String(e["type"]).startsWith("inquiry_") || e["type"] === "tool_call_response")
      ).toStrictEqual([
        {
          type: "inquiry_request",
          id: "call_1.answer.1",
          source: { source: "assistant" },
          question: {
            text: "Which way?",
            answer_type: { type: "select", options: [{ value: "backup" }, { value: "overwrite" }, { value: "abort" }] },
            context: "Two ways are open.",
            exclusive: true,
            persistence: "none"
          }
        },
        { type: "inquiry_response", outcome: "answered", id: "call_1.answer.1", answer: "overwrite" },
        {
          type: "tool_call_response",
          id: "call_1",
          content: b64(`{"answer_type":"select","answer":"overwrite"}`),
          is_error: false
        }
      ])
    })

    it("a boolean ask_user question offers y/n only (persistence none: nothing to remember)", async () => {
      const p = makeProject("parley-ask-user-")
      const script = writeScript(p, [
        {
          tool_calls: [{ id: "call_1", name: "ask_user", arguments: { question: "Proceed?", answer_type: "boolean" } }]
        },
        { message: "Done." }
      ])
      const s = startParley(p, ["query", "Decide", "--model", "scripted", "--script", script])
      await s.waitFor(/Assistant asks:\n\? Proceed\? \[y\/n,\?\]/)
      s.sendKeys("y")
      expect(await s.waitForExit()).toBe(0)
      const response = recorded(p.storage).find((e) => e["type"] === "tool_call_response")!
      expect(response["content"]).toBe(b64(`{"answer_type":"boolean","answer":true}`))
    })

    it("RFD 083 `style.hidden`: the status lines show ask_user's question and answer, not a tool call; a visible tool's line stays", async () => {
      const p = makeProject("parley-ask-user-", {
        "visible.sh": `cat > input.json\nprintf '{"type":"success","content":"ok"}\\n'\n`
      })
      fs.writeFileSync(
        path.join(p.storage, "config.toml"),
        `[conversation.tools.visible]\nsource = "local"\ncommand = "sh visible.sh"\ndescription = "Shown."\nparameters = { type = "object", properties = {} }\nrun = "unattended"\n`
      )
      const script = writeScript(p, [
        {
          tool_calls: [
            { id: "call_1", name: "ask_user", arguments: { question: "Proceed?", answer_type: "boolean" } },
            { id: "call_2", name: "visible", arguments: {} }
          ]
        },
        { message: "Done." }
      ])
      const s = startParley(p, ["query", "Decide", "--model", "scripted", "--script", script])
      await s.waitFor(/Assistant asks:\n\? Proceed\? \[y\/n,\?\]/)
      s.sendKeys("y")
      expect(await s.waitForExit()).toBe(0)
      const pane = s.pane()
      expect(pane).toContain("Done.")
      expect(pane).toMatch(/↳ Proceed\? → yes \(you\)/)
      expect(pane).toMatch(/✓ visible/)
      expect(pane).not.toContain("ask_user")
    })
  }
)
