import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import * as Effect from "effect/Effect"
import { ChatResponse } from "../../../src/domain/event/ChatResponse.ts"
import * as ProviderLive from "../../../src/layers/provider/ProviderLive.ts"
import { collect } from "../../../src/domain/model/Reply.ts"
import * as FakeLlmServer from "../../support/FakeLlmServer.ts"
import { conversation, fastRetry, requestFor, ts } from "./fixtures.ts"

const ROOT = resolve(import.meta.dirname, "../../..")

const tempDir = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "parley-provider-live-"))),
  (d) => Effect.promise(() => rm(d, { recursive: true, force: true }))
)

const writeScript = (dir: string, name: string, script: unknown) =>
  Effect.promise(async () => {
    const path = join(dir, name)
    await writeFile(path, JSON.stringify(script))
    return path
  })

const when = ts()
const now = () => when

describe("ProviderLive (model string → provider)", () => {
  it("checkModel accepts anthropic/<m>, openai/<m>, scripted and names the fix otherwise", () => {
    assert.isUndefined(ProviderLive.checkModel("anthropic/claude-sonnet-4-5"))
    assert.isUndefined(ProviderLive.checkModel("openai/meta-llama/Llama-3-8B"))
    assert.isUndefined(ProviderLive.checkModel("scripted"))
    assert.strictEqual(
      ProviderLive.checkModel("gpt-5")?.message,
      'Unknown model "gpt-5": use anthropic/<model>, openai/<model> or scripted.'
    )
    assert.strictEqual(
      ProviderLive.checkModel("scripted/x")?.message,
      'Unknown model "scripted/x": use anthropic/<model>, openai/<model> or scripted.'
    )
    assert.strictEqual(
      ProviderLive.checkModel("openai/")?.message,
      'Model "openai/" names no model: write openai/<model>.'
    )
  })

  it.live("scripted reads --script, else $PARLEY_SCRIPT; neither is an error that says what to do", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const flag = yield* writeScript(dir, "flag.json", { steps: [{ message: "from flag" }] })
      const env = yield* writeScript(dir, "env.json", { steps: [{ message: "from env" }] })
      const request = requestFor("scripted", conversation())

      const viaFlag = yield* ProviderLive.make({ scriptPath: flag, env: { PARLEY_SCRIPT: env } })
      assert.deepStrictEqual((yield* collect(viaFlag.stream(request), { now })).events, [
        ChatResponse.message(when, "from flag")
      ])
      const viaEnv = yield* ProviderLive.make({ env: { PARLEY_SCRIPT: env } })
      assert.deepStrictEqual((yield* collect(viaEnv.stream(request), { now })).events, [
        ChatResponse.message(when, "from env")
      ])

      const none = yield* ProviderLive.make({ env: {} })
      const error = yield* Effect.flip(collect(none.stream(request)))
      // What is missing, as data: the CLI says which flag gives it (cli/ErrorLine).
      assert.deepStrictEqual([error.provider, error.failure, error.missing], ["scripted", "config", "script"])
    })
  )

  it.live(
    "one provider routes anthropic/… and openai/… requests (e.g. an inquiry on another model) by model string",
    () =>
      Effect.gen(function* () {
        const fake = yield* FakeLlmServer.make
        fake.enqueueAnthropic({ blocks: [{ type: "text", text: "from claude" }] })
        fake.enqueueOpenAi({ content: "from gpt" })
        const provider = yield* ProviderLive.make({
          retry: fastRetry,
          env: {
            ANTHROPIC_API_KEY: "a-key",
            ANTHROPIC_BASE_URL: fake.url,
            OPENAI_API_KEY: "o-key",
            OPENAI_BASE_URL: `${fake.url}/v1`
          }
        })
        const a = yield* collect(provider.stream(requestFor("anthropic/claude-x", conversation())), { now })
        const o = yield* collect(provider.stream(requestFor("openai/gpt-y", conversation())), { now })
        assert.deepStrictEqual(a.events, [ChatResponse.message(when, "from claude")])
        assert.deepStrictEqual(o.events, [ChatResponse.message(when, "from gpt")])
        assert.deepStrictEqual(
          fake.requests.map((r) => [r.path, r.body.model, r.headers.authorization]),
          [
            ["/v1/messages", "claude-x", "Bearer a-key"],
            ["/v1/chat/completions", "gpt-y", "Bearer o-key"]
          ]
        )
      })
  )

  it.live("explicit options (config base_url) win over the environment; a local OpenAI server needs no key", () =>
    Effect.gen(function* () {
      const fake = yield* FakeLlmServer.make
      fake.enqueueOpenAi({ content: "local" })
      const provider = yield* ProviderLive.make({
        retry: fastRetry,
        openai: { baseUrl: `${fake.url}/v1` },
        env: { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }
      })
      const reply = yield* collect(provider.stream(requestFor("openai/llama3", conversation())), { now })
      assert.deepStrictEqual(reply.events, [ChatResponse.message(when, "local")])
      assert.strictEqual(fake.requests[0]!.headers.authorization, "Bearer none")
    })
  )

  it.live("missing API keys and unknown models are provider errors that say what is missing, as data", () =>
    Effect.gen(function* () {
      const provider = yield* ProviderLive.make({ env: {} })
      const anthropic = yield* Effect.flip(collect(provider.stream(requestFor("anthropic/claude-x", conversation()))))
      assert.deepStrictEqual([anthropic.provider, anthropic.missing], ["anthropic", "api_key"])
      assert.strictEqual(anthropic.message, "ANTHROPIC_API_KEY is not set.")
      const openai = yield* Effect.flip(collect(provider.stream(requestFor("openai/gpt", conversation()))))
      assert.deepStrictEqual([openai.provider, openai.missing], ["openai", "api_key"])
      assert.match(openai.message, /^OPENAI_API_KEY is not set\./)
      // checkReady says the same, from the same constructor.
      const ready = yield* Effect.flip(ProviderLive.checkReady("anthropic/claude-x", { env: {} }))
      assert.deepStrictEqual(
        [ready.provider, ready.missing, ready.message],
        ["anthropic", "api_key", anthropic.message]
      )
      const unknown = yield* Effect.flip(collect(provider.stream(requestFor("gemini/pro", conversation()))))
      assert.strictEqual(
        unknown.message,
        'Unknown model "gemini/pro": use anthropic/<model>, openai/<model> or scripted.'
      )
    })
  )
})

describe("ProviderLive loads the SDKs lazily", () => {
  // A module-resolution hook records every import of an SDK package in a child process.
  const HOOKS = `import { appendFileSync } from "node:fs"
export async function resolve(specifier, context, next) {
  if (/^(openai|@anthropic-ai\\/sdk)(\\/|$)/.test(specifier)) appendFileSync(process.env.PROBE_FILE, specifier + "\\n")
  return next(specifier, context)
}`
  const REGISTER = `import { register } from "node:module"
register("./hooks.mjs", import.meta.url)`
  const SCRIPT = (
    root: string
  ) => `import * as Effect from ${JSON.stringify(join(root, "node_modules/effect/dist/Effect.js"))}
import * as ProviderLive from ${JSON.stringify(join(root, "src/layers/provider/ProviderLive.ts"))}
import { collect } from ${JSON.stringify(join(root, "src/domain/model/Reply.ts"))}
import { ChatRequest } from ${JSON.stringify(join(root, "src/domain/event/ChatRequest.ts"))}
import * as Timestamp from ${JSON.stringify(join(root, "src/domain/event/Timestamp.ts"))}
const request = (model) => ({ model, systemParts: [], tools: [], events: [new ChatRequest({ timestamp: Timestamp.now(), content: "hi" })] })
const program = Effect.gen(function*() {
  const provider = yield* ProviderLive.make({
    scriptPath: process.env.SCRIPT_FILE,
    retry: { times: 0, baseDelay: "1 millis" },
    env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: "http://127.0.0.1:9" }
  })
  const reply = yield* collect(provider.stream(request("scripted")))
  console.log(reply.events[0].message)
  if (process.argv[2] === "anthropic") yield* Effect.ignore(collect(provider.stream(request("anthropic/claude-x"))))
})
Effect.runPromise(program)
`
  const run = (dir: string, mode: string) =>
    Effect.callback<{ stdout: string; probe: string }>((resume) => {
      const probe = join(dir, `probe-${mode}.txt`)
      execFile(
        process.execPath,
        ["--import", "tsx", "--import", join(dir, "register.mjs"), join(dir, "script.mts"), mode],
        { cwd: ROOT, timeout: 20_000, env: { ...process.env, PROBE_FILE: probe, SCRIPT_FILE: join(dir, "s.json") } },
        (error, stdout) => {
          if (error) return resume(Effect.die(error))
          readFile(probe, "utf8")
            .catch(() => "")
            .then((text) => resume(Effect.succeed({ stdout, probe: text })))
        }
      )
    })

  it.live(
    "a scripted run never imports an SDK; an anthropic request imports only the Anthropic SDK",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        yield* Effect.promise(() => writeFile(join(dir, "hooks.mjs"), HOOKS))
        yield* Effect.promise(() => writeFile(join(dir, "register.mjs"), REGISTER))
        yield* Effect.promise(() => writeFile(join(dir, "script.mts"), SCRIPT(ROOT)))
        yield* writeScript(dir, "s.json", { steps: [{ message: "scripted ok" }] })

        const scripted = yield* run(dir, "scripted")
        assert.strictEqual(scripted.stdout.trim(), "scripted ok")
        assert.strictEqual(scripted.probe, "")

        const anthropic = yield* run(dir, "anthropic")
        assert.strictEqual(anthropic.stdout.trim(), "scripted ok")
        assert.include(anthropic.probe, "@anthropic-ai/sdk")
        assert.notMatch(anthropic.probe, /^openai/m)
      }),
    60_000
  )
})
