/**
 * RFD 083 `style.hidden` from outside: an `ask_user` call is recorded like
 * any call, but `conversation print` (Markdown) and the HTML page show its
 * question and answer, not a tool call; a visible tool of the same turn is
 * shown as before. (The status lines: test/cli/TtyAskUser.test.ts.)
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { conversationIdOf, makeProject, parley, persisted, writeScript } from "../support/Project.ts"

/** A turn where the model asks (answered from config) and runs a visible tool, then replies. */
const askedAndCounted = () => {
  const p = makeProject()
  fs.appendFileSync(
    path.join(p.storage, "config.toml"),
    `\n[conversation.tools.ask_user.questions.answer]\nanswer = "overwrite"\n`
  )
  const script = writeScript(p, "script.json", [
    {
      tool_calls: [
        {
          id: "call_ask",
          name: "ask_user",
          arguments: { question: "Which way?", answer_type: "select", options: ["backup", "overwrite"] }
        },
        { id: "call_count", name: "counter", arguments: { name: "visible" } }
      ]
    },
    { message: "Overwriting, then." }
  ])
  expect(parley(p, ["query", "go", "--model", "scripted", "--script", script]).code).toBe(0)
  // The record keeps the hidden call and its result as any other.
  const recorded = persisted(p)
  expect(recorded.filter((e) => e.type === "tool_call_request").map((e) => e["name"])).toStrictEqual([
    "ask_user",
    "counter"
  ])
  expect(recorded.filter((e) => e.type === "tool_call_response").length).toBe(2)
  return { p, id: conversationIdOf(p) }
}

describe("RFD 083: ask_user's style.hidden", () => {
  it("RFD 083 `style.hidden`: conversation print shows ask_user's question and answer, not a tool call", () => {
    const { p, id } = askedAndCounted()
    const printed = parley(p, ["conversation", "print", id])
    expect(printed.code).toBe(0)
    expect(printed.stdout).not.toContain("ask_user")
    expect(printed.stdout).toContain("Which way?")
    expect(printed.stdout).toContain('Answer: "overwrite"')
    expect(printed.stdout).toMatch(/### Tool call `counter` \(`call_count`\)/)
    expect(printed.stdout).toMatch(/### Tool result `counter` \(`call_count`\)/)
    expect(printed.stdout).toContain("Overwriting, then.")
  })

  it("RFD 083 `style.hidden`: the HTML page shows ask_user's question and answer, not a tool call", () => {
    const { p, id } = askedAndCounted()
    const printed = parley(p, ["conversation", "print", id, "--format", "html"])
    expect(printed.code).toBe(0)
    const html = printed.stdout
    expect(html).not.toContain(">ask_user<")
    expect(html).not.toContain('data-call-id="call_ask"')
    expect(html).toContain('data-call-id="call_count"')
    expect(html).toContain('<code class="tool-name">counter</code>')
    // The question, with its answer, stands on its own where the call was: before the visible call.
    const question = html.indexOf("Which way?")
    expect(question).toBeGreaterThan(0)
    expect(html.lastIndexOf('<div class="loose">', question)).toBeGreaterThan(0)
    expect(question).toBeLessThan(html.indexOf('data-call-id="call_count"'))
    expect(html.slice(question)).toContain("overwrite")
  })
})
