/**
 * `ask_user` from outside (RFD 083, docs/questions-and-approvals.md): the built binary, a fake
 * OpenAI server recording every request, and no terminal. The model's own
 * question is never answered by the model: with nobody to ask it is
 * `Cancelled{no_prompt_backend}` and no structured side call is made.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { binary } from "../support/Cli.ts"
import * as FakeLlmServer from "../support/FakeLlmServer.ts"
import { addDeferrable, DEFERRABLE, makeProject, parley, persisted, writeScript } from "../support/Project.ts"

const b64 = (s: string) => Buffer.from(s).toString("base64")
const SELECT_ARGS = {
  question: "Which way?",
  context: "Two ways are open.",
  answer_type: "select",
  options: ["backup", "overwrite"]
}
const RECORDED_QUESTION = {
  text: "Which way?",
  answer_type: { type: "select", options: [{ value: "backup" }, { value: "overwrite" }] },
  context: "Two ways are open.",
  exclusive: true,
  persistence: "none"
}
const NO_TERMINAL =
  "ask_user cannot run because no interactive terminal is available. Do not retry this tool call in this turn; continue without user input or explain what information is missing."

describe("ask_user without a terminal", () => {
  it.live(
    "detached = assistant: Cancelled{no_prompt_backend}, a tool error, and no structured side call reaches the provider",
    () =>
      Effect.gen(function* () {
        const fake = yield* FakeLlmServer.make
        const p = makeProject()
        fs.appendFileSync(path.join(p.storage, "config.toml"), `\n[conversation.inquiry]\ndetached = "assistant"\n`)
        fake.enqueueOpenAi(
          {
            toolCalls: [{ id: "call_1", name: "ask_user", arguments: JSON.stringify(SELECT_ARGS) }],
            finishReason: "tool_calls"
          },
          { content: "I will go on without it." }
        )
        const code = yield* Effect.callback<number | null>((resume) => {
          const child = spawn(
            process.execPath,
            [binary, "--storage", p.storage, "query", "--model", "openai/gpt-test", "go"],
            {
              cwd: p.root,
              env: { ...process.env, OPENAI_API_KEY: "k", OPENAI_BASE_URL: `${fake.url}/v1`, PARLEY_STORAGE: "" },
              stdio: ["ignore", "pipe", "pipe"]
            }
          )
          child.on("close", (c) => resume(Effect.succeed(c)))
        })
        expect(code).toBe(0)
        // The main request and the follow-up; neither asks for structured output.
        expect(fake.requests.length).toBe(2)
        for (const request of fake.requests) expect(request.body.response_format).toBeUndefined()
        const offered = (
          fake.requests[0]!.body.tools as Array<{ function: { name: string; description: string } }>
        ).map((t) => t.function.name)
        expect(offered).toContain("ask_user")
        const events = persisted(p).filter((e) => e.type.startsWith("inquiry_") || e.type === "tool_call_response")
        expect(events.map(({ timestamp: _, ...rest }) => rest)).toStrictEqual([
          {
            type: "inquiry_request",
            id: "call_1.answer.1",
            source: { source: "assistant" },
            question: RECORDED_QUESTION
          },
          { type: "inquiry_response", outcome: "cancelled", id: "call_1.answer.1", reason: "no_prompt_backend" },
          { type: "tool_call_response", id: "call_1", content: b64(NO_TERMINAL), is_error: true }
        ])
        // The model reads the tool error in the follow-up.
        expect(JSON.stringify(fake.requests[1]!.body.messages)).toContain(
          "cannot run because no interactive terminal is available"
        )
      })
  )

  it('a static answer that does not fit (a boolean question answered "maybe"): invalid_static_answer, the config key named', () => {
    const p = makeProject()
    fs.appendFileSync(
      path.join(p.storage, "config.toml"),
      `\n[conversation.tools.ask_user.questions.answer]\nanswer = "maybe"\n`
    )
    const script = writeScript(p, "script.json", [
      { tool_calls: [{ id: "call_1", name: "ask_user", arguments: { question: "Proceed?", answer_type: "boolean" } }] },
      { message: "Stopped." }
    ])
    const run = parley(p, ["query", "go", "--model", "scripted", "--script", script])
    expect(run.code).toBe(0)
    const events = persisted(p).filter((e) => e.type === "inquiry_response" || e.type === "tool_call_response")
    expect(events.map(({ timestamp: _, ...rest }) => rest)).toStrictEqual([
      { type: "inquiry_response", outcome: "cancelled", id: "call_1.answer.1", reason: "invalid_static_answer" },
      {
        type: "tool_call_response",
        id: "call_1",
        content: b64(
          'ask_user: the configured conversation.tools.ask_user.questions.answer.answer value does not match the question\'s answer_type ("maybe" is not a yes/no answer). Update the configuration; do not retry.'
        ),
        is_error: true
      }
    ])
  })

  it("a static answer that fits is used: the model gets the typed JSON body", () => {
    const p = makeProject()
    fs.appendFileSync(
      path.join(p.storage, "config.toml"),
      `\n[conversation.tools.ask_user.questions.answer]\nanswer = "overwrite"\n`
    )
    const script = writeScript(p, "script.json", [
      { tool_calls: [{ id: "call_1", name: "ask_user", arguments: SELECT_ARGS }] },
      { message: "Ok." }
    ])
    expect(parley(p, ["query", "go", "--model", "scripted", "--script", script]).code).toBe(0)
    const response = persisted(p).find((e) => e.type === "tool_call_response")!
    expect(Buffer.from(String(response["content"]), "base64").toString()).toBe(
      `{"answer_type":"select","answer":"overwrite"}`
    )
  })
})

describe("RFD 034 from outside: a question's own target table", () => {
  it.live(
    'target = { model.id = "openai/small" }: the side call goes to that model; an unknown key in the table is warned about',
    () =>
      Effect.gen(function* () {
        const fake = yield* FakeLlmServer.make
        const p = makeProject()
        addDeferrable(p.root)
        fs.appendFileSync(
          path.join(p.storage, "config.toml"),
          `${DEFERRABLE}
[conversation.inquiry.assistant]
system_prompt = "Answer tool questions briefly."

[conversation.tools.deferrable.questions.confirm.target]
model.id = "openai/small"
temperature = 0
`
        )
        fake.enqueueOpenAi(
          {
            toolCalls: [{ id: "call_1", name: "deferrable", arguments: JSON.stringify({ name: "x" }) }],
            finishReason: "tool_calls"
          },
          { content: JSON.stringify({ answer: true }) },
          { content: "Deployed." }
        )
        const result = yield* Effect.callback<{ code: number | null; stderr: string }>((resume) => {
          const child = spawn(
            process.execPath,
            [binary, "--storage", p.storage, "query", "--model", "openai/gpt-main", "deploy x"],
            {
              cwd: p.root,
              env: { ...process.env, OPENAI_API_KEY: "k", OPENAI_BASE_URL: `${fake.url}/v1`, PARLEY_STORAGE: "" },
              stdio: ["ignore", "pipe", "pipe"]
            }
          )
          let stderr = ""
          child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()))
          child.on("close", (code) => resume(Effect.succeed({ code, stderr })))
        })
        expect(result.code).toBe(0)
        expect(result.stderr).toContain(
          "conversation.tools.deferrable.questions.confirm.target.temperature: parley does not read this key of an assistant config; it is ignored"
        )
        expect(fake.requests.map((r) => r.body.model)).toStrictEqual(["gpt-main", "small", "gpt-main"])
        expect(fake.requests[1]!.body.response_format).toBeDefined()
        expect(fake.requests[1]!.body.messages[0]).toStrictEqual({
          role: "system",
          content: "Answer tool questions briefly."
        })
        const answered = persisted(p).find((e) => e.type === "inquiry_response")!
        expect(answered["answer"]).toBe(true)
      })
  )

  it("a bad value in the table stops the run with a config error naming the key", () => {
    const p = makeProject()
    fs.appendFileSync(
      path.join(p.storage, "config.toml"),
      `\n[conversation.tools.write_note.questions.overwrite.target]\nrequest.max_response_bytes = -1\n`
    )
    const run = parley(p, [
      "query",
      "go",
      "--model",
      "scripted",
      "--script",
      writeScript(p, "s.json", [{ message: "Hi." }])
    ])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("conversation.tools.write_note.questions.overwrite.target.request.max_response_bytes")
  })
})
