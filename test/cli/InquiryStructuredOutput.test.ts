/**
 * RFD 034's start-up check from outside (the built binary): an inquiry model
 * known not to give structured replies stops `parley query` before the turn
 * with one line naming the model and what to do; nothing is written and no
 * model is called. `structured_output = true` under the model's provider
 * table says it does.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { runParley, withoutRunHeader } from "../support/Cli.ts"
import { makeProject, type Project, writeScript } from "../support/Project.ts"

const run = (p: Project, script: string) =>
  runParley(["--storage", p.storage, "query", "hi", "--model", "scripted", "--script", script], {
    cwd: p.root,
    // A key, so the only thing wrong is the model's ability; a base URL nothing listens on, so a call would fail loudly.
    env: {
      PARLEY_STORAGE: undefined,
      PARLEY_SCRIPT: undefined,
      ANTHROPIC_API_KEY: "k",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:9"
    }
  })

const configured = (p: Project, extra = ""): void =>
  fs.appendFileSync(
    path.join(p.storage, "config.toml"),
    `\n[conversation.inquiry.assistant]\nmodel = "anthropic/claude-3-5-haiku"\n${extra}`
  )

describe("RFD 034: the inquiry model supports structured output", () => {
  it("RFD 034 start-up check: an inquiry model known not to give structured replies is one line before the turn, naming the model and what to do", () => {
    const p = makeProject()
    configured(p)
    const script = writeScript(p, "s.json", [{ message: "never sent" }])
    const out = run(p, script)
    expect(out.code).toBe(1)
    const file = path.join(p.storage, "config.toml")
    expect(out.stderr).toBe(
      `parley: conversation.inquiry.assistant.model in ${file} is anthropic/claude-3-5-haiku, which does not give structured (JSON Schema) replies, and an inquiry side call needs one. ` +
        "To go on: set conversation.inquiry.assistant.model to a model that does (e.g. anthropic/claude-haiku-4-5 or openai/gpt-5-mini), " +
        "or, if this one does, set providers.anthropic.models.claude-3-5-haiku.structured_output = true, " +
        "or keep the questions for a person: run it at a terminal, or pass --detached-policy defer (or wait, deny).\n"
    )
    expect(out.stdout).toBe("")
    // Before the turn: no conversation was started.
    const conversations = path.join(p.storage, "conversations")
    expect(
      fs.existsSync(conversations) ? fs.readdirSync(conversations).filter((n) => /^\d/.test(n)) : []
    ).toStrictEqual([])
  })

  it("RFD 034 start-up check: `structured_output = true` for the model lets the run go on", () => {
    const p = makeProject()
    configured(p, `\n[providers.anthropic.models."claude-3-5-haiku"]\nstructured_output = true\n`)
    const script = writeScript(p, "s.json", [{ message: "Hello." }])
    const out = run(p, script)
    expect([out.code, withoutRunHeader(out.stderr), out.stdout]).toStrictEqual([0, "", "Hello.\n"])
  })
})
