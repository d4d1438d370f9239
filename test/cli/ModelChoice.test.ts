// LLM inquiries (docs/questions-and-approvals.md#which-model-which-prompt-rfd-034): an inquiry side-call model parley cannot call stops a
// run only when a question could go to it, and says which key, what to
// export, and how to keep the questions with a person — never "--model",
// which does not change a side call's model.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { Config } from "../../src/domain/tool/Config.ts"
import * as ModelChoice from "../../src/cli/ModelChoice.ts"
import { tempDir } from "../support/Fixtures.ts"

const FILE = "/p/.parley/config.toml"
const NO_KEYS = { env: {} }

const script = path.join(tempDir("parley-model-choice-"), "script.json")
fs.writeFileSync(script, JSON.stringify({ steps: [{ message: "hi" }] }))

const choose = (config: Config, personReachable: boolean) =>
  Effect.map(
    Effect.result(
      ModelChoice.make({
        flag: "scripted",
        script,
        config,
        configFile: FILE,
        providers: { ...NO_KEYS, scriptPath: script },
        personReachable
      })(undefined)
    ),
    message
  )

afterAll(() => fs.rmSync(path.dirname(script), { recursive: true, force: true }))

function message(r: Result.Result<string, { readonly message: string }>) {
  return Result.isFailure(r) ? r.failure.message : `ok: ${r.success}`
}

const inquiry = (extra: Record<string, unknown> = {}): Config =>
  ({ conversation: { inquiry: { assistant: { model: "anthropic/claude-small" }, ...extra } } }) as Config

describe("ModelChoice: an inquiry model without its key", () => {
  it.effect(
    "nobody at a terminal and detached = assistant (the default): fails, naming the key, the variable, and the ways out",
    () =>
      Effect.gen(function* () {
        expect(yield* choose(inquiry(), false)).toBe(
          `conversation.inquiry.assistant.model in ${FILE} is anthropic/claude-small, and ANTHROPIC_API_KEY is not set; ` +
            `nobody is at a terminal to answer this run's questions and [conversation.inquiry] detached is "assistant". ` +
            `To go on: export ANTHROPIC_API_KEY, set conversation.inquiry.assistant.model to a model you can call, ` +
            `or keep the questions for a person: run it at a terminal, or pass --detached-policy defer (or wait, deny).`
        )
      })
  )

  it.effect(
    "a person at the terminal, or a detached policy other than assistant: the side call cannot happen, the run goes on",
    () =>
      Effect.gen(function* () {
        expect(yield* choose(inquiry(), true)).toBe("ok: scripted")
        expect(yield* choose(inquiry({ detached: "defer" }), false)).toBe("ok: scripted")
      })
  )

  it.effect("a question targeted at the assistant needs it even at a terminal; a static answer does not", () =>
    Effect.gen(function* () {
      const targeted = (q: Record<string, unknown>): Config =>
        ({
          conversation: {
            inquiry: { assistant: { model: "openai/gpt-5-mini" } },
            tools: { fs: { questions: { overwrite: q } } }
          }
        }) as Config
      expect(yield* choose(targeted({ target: "assistant" }), true)).toBe(
        `conversation.inquiry.assistant.model in ${FILE} is openai/gpt-5-mini, and OPENAI_API_KEY is not set (nor providers.openai.base_url); ` +
          `conversation.tools.fs.questions.overwrite.target sends a question to it. ` +
          `To go on: export OPENAI_API_KEY (or set providers.openai.base_url), set conversation.inquiry.assistant.model to a model you can call, ` +
          `or ask a person instead: conversation.tools.fs.questions.overwrite.target = "user".`
      )
      expect(yield* choose(targeted({ target: "assistant", answer: true }), true)).toBe("ok: scripted")
      expect(yield* choose(targeted({ target: "user" }), true)).toBe("ok: scripted")
    })
  )

  it.effect("a question's own target model is checked under its own key", () =>
    Effect.gen(function* () {
      const config = {
        conversation: { tools: { fs: { questions: { overwrite: { target: { model: "anthropic/claude-haiku" } } } } } }
      } as Config
      expect(yield* choose(config, true)).toBe(
        `conversation.tools.fs.questions.overwrite.target.model in ${FILE} is anthropic/claude-haiku, and ANTHROPIC_API_KEY is not set; ` +
          `conversation.tools.fs.questions.overwrite.target sends a question to it. ` +
          `To go on: export ANTHROPIC_API_KEY, set conversation.tools.fs.questions.overwrite.target.model to a model you can call, ` +
          `or ask a person instead: conversation.tools.fs.questions.overwrite.target = "user".`
      )
    })
  )

  it.effect("with the key set, nothing stops the run", () =>
    Effect.gen(function* () {
      const r = yield* Effect.result(
        ModelChoice.make({
          flag: "anthropic/claude-sonnet-4-5",
          script: undefined,
          config: inquiry(),
          configFile: FILE,
          providers: { env: { ANTHROPIC_API_KEY: "k" } }
        })(undefined)
      )
      expect(message(r)).toBe("ok: anthropic/claude-sonnet-4-5")
    })
  )
})
