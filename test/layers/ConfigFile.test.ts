import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as ConfigFile from "../../src/layers/ConfigFile.ts"
import { Config, ConfigError } from "../../src/services/Config.ts"

const created: Array<string> = []
afterAll(() => {
  for (const dir of created) fs.rmSync(dir, { recursive: true, force: true })
})

const storage = (toml?: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-config-"))
  created.push(dir)
  if (toml !== undefined) fs.writeFileSync(path.join(dir, "config.toml"), toml)
  return dir
}

const loadError = (dir: string) =>
  Config.use(() => Effect.void).pipe(Effect.provide(ConfigFile.layer(dir)), Effect.flip)

const CONTRACT_EXAMPLE = `
[assistant]
model = "anthropic/claude-sonnet-4-5"
system_prompt = "You are a helpful assistant."

[providers.openai]
base_url = "http://127.0.0.1:11434/v1"     # optional

[conversation.inquiry.assistant]            # optional model for inquiry side calls
model = "openai/gpt-5-mini"

[conversation.tools.write_note]
source = "local"                            # "local" | "builtin"
command = "python3 tools/write_note.py"
description = "Write a note to a file."
parameters = { type = "object", properties = { path = { type = "string" } }, required = ["path"] }
run = "unattended"                          # "ask" | "unattended" | "skip"

[conversation.tools.write_note.questions.overwrite]
target = "user"                             # "user" | "assistant"
answer = true                               # optional static answer
`

describe("ConfigFile", () => {
  it.effect("a missing config.toml is an empty config", () =>
    Effect.gen(function* () {
      const dir = storage()
      const config = yield* Config.use((c) => Effect.succeed(c)).pipe(Effect.provide(ConfigFile.layer(dir)))
      expect(config.data).toStrictEqual({})
      expect(config.file).toBe(path.join(dir, "config.toml"))
    })
  )

  it.effect("parses the contract's example", () =>
    Effect.gen(function* () {
      const dir = storage(CONTRACT_EXAMPLE)
      const { data } = yield* Config.use((c) => Effect.succeed(c)).pipe(Effect.provide(ConfigFile.layer(dir)))
      expect(data).toStrictEqual({
        assistant: { model: "anthropic/claude-sonnet-4-5", system_prompt: "You are a helpful assistant." },
        providers: { openai: { base_url: "http://127.0.0.1:11434/v1" } },
        conversation: {
          inquiry: { assistant: { model: "openai/gpt-5-mini" } },
          tools: {
            write_note: {
              source: "local",
              command: "python3 tools/write_note.py",
              description: "Write a note to a file.",
              parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
              run: "unattended",
              questions: { overwrite: { target: "user", answer: true } }
            }
          }
        }
      })
    })
  )

  it.effect("a bad value names the file and the key path", () =>
    Effect.gen(function* () {
      const dir = storage(`[conversation.tools.write_note]\ncommand = "x"\nrun = "sometimes"\n`)
      const error = yield* loadError(dir)
      expect(error).toBeInstanceOf(ConfigError)
      expect(error.message).toBe(
        `${path.join(dir, "config.toml")}: conversation.tools.write_note.run: expected "ask" | "edit" | "unattended" | "skip", got "sometimes"`
      )
    })
  )

  it.effect("several problems give one line each", () =>
    Effect.gen(function* () {
      const dir = storage(
        `[assistant]\nmodel = 3\n[conversation.tools.n]\nsource = "local"\ninquiry_source = "assistant"\n`
      )
      const file = path.join(dir, "config.toml")
      const error = yield* loadError(dir)
      expect(error.message.split("\n")).toStrictEqual([
        `${file}: assistant.model: expected a model name such as "anthropic/claude-sonnet-4-5", got 3`,
        `${file}: conversation.tools.n.inquiry_source: the inquiry source cannot be configured: it is decided by the tool kind (local tools always ask as tool{name})`,
        `${file}: conversation.tools.n.command: missing (required for source = "local")`
      ])
    })
  )

  it.effect("a TOML syntax error names the file, line and column", () =>
    Effect.gen(function* () {
      const dir = storage(`[assistant]\nmodel = "a"\nsystem_prompt = "unterminated\n`)
      const error = yield* loadError(dir)
      expect(error.problems).toStrictEqual([{ line: 3, column: 30, message: expect.stringMatching(/^invalid TOML: /) }])
      expect(error.message).toMatch(
        new RegExp(`^${path.join(dir, "config.toml").replace(/[.]/g, "\\.")}:3:30: invalid TOML: `)
      )
    })
  )

  it.effect("a duplicate key is a syntax error too", () =>
    Effect.gen(function* () {
      const dir = storage(`a = 1\na = 2\n`)
      const error = yield* loadError(dir)
      expect(error.problems[0]!.line).toBe(2)
    })
  )

  it.effect("an unreadable config names the file", () =>
    Effect.gen(function* () {
      const dir = storage()
      fs.mkdirSync(path.join(dir, "config.toml"))
      const error = yield* loadError(dir)
      expect(error.message).toMatch(
        new RegExp(`^${path.join(dir, "config.toml").replace(/[.]/g, "\\.")}: cannot read: .*EISDIR`)
      )
    })
  )

  it.effect("the literal layer validates like the file", () =>
    Effect.gen(function* () {
      const error = yield* Config.use(() => Effect.void).pipe(
        Effect.provide(Config.layerLiteral({ conversation: { tools: { t: { command: "x", run: "never" } } } })),
        Effect.flip
      )
      expect(error.message).toBe(
        `config.toml: conversation.tools.t.run: expected "ask" | "edit" | "unattended" | "skip", got "never"`
      )
    })
  )
})
