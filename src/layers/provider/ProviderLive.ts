/**
 * The live `Provider`: routes each request by its model string —
 * `anthropic/<model>`, `openai/<model>` or `scripted` — to that provider,
 * built on first use (so the SDKs load only when a model is called, and a
 * turn on one provider can run inquiry side calls on another).
 *
 * Settings: explicit options (config `providers.<name>.base_url`, `--script`)
 * win over the environment (`ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`,
 * `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `PARLEY_SCRIPT`).
 *
 * @example
 * ```ts
 * import * as ProviderLive from "parley/layers/provider/ProviderLive"
 * const layer = ProviderLive.layer({ scriptPath: "demo-script.json" })
 * // provider.stream({ model: "scripted", ... }) / { model: "anthropic/claude-sonnet-4-5", ... }
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { parseModel, Provider, ProviderError } from "../../services/Provider.ts"
import type { RetryPolicy } from "./Retry.ts"
import * as AnthropicProvider from "./Anthropic.ts"
import * as OpenAiProvider from "./OpenAi.ts"
import * as Scripted from "./Scripted.ts"

/** What the live providers need: keys and base URLs per provider, the scripted model's script, the retry policy, and the environment to read keys from. */
export interface ProviderLiveOptions {
  readonly anthropic?: {
    readonly baseUrl?: string
    readonly apiKey?: string
    readonly maxTokens?: number
    readonly thinkingBudget?: number
  }
  readonly openai?: { readonly baseUrl?: string; readonly apiKey?: string }
  /** `--script FILE` for the scripted model. */
  readonly scriptPath?: string
  readonly retry?: RetryPolicy
  /** Defaults to `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>
}

const KNOWN = "use anthropic/<model>, openai/<model> or scripted"

const configError = (provider: string, detail: string) =>
  new ProviderError({ provider, failure: "config", detail, retryable: false, attempts: 1 })

/**
 * Checks a model string without building anything (for early CLI errors).
 *
 * @example
 * ```ts
 * import { checkModel } from "parley/layers/provider/ProviderLive"
 * checkModel("gpt-5") // ProviderError: Unknown model "gpt-5": use anthropic/<model>, …
 * checkModel("scripted") // undefined
 * ```
 */
export const checkModel = (model: string): ProviderError | undefined => {
  const { name, provider } = parseModel(model)
  if (provider === "scripted")
    return name === "" ? undefined : configError(provider, `Unknown model "${model}": ${KNOWN}.`)
  if (provider !== "anthropic" && provider !== "openai")
    return configError(provider, `Unknown model "${model}": ${KNOWN}.`)
  if (name === "") return configError(provider, `Model "${model}" names no model: write ${provider}/<model>.`)
  return undefined
}

const nonEmpty = (s: string | undefined): string | undefined => (s === undefined || s === "" ? undefined : s)

/** The environment variable that holds `provider`'s API key. */
const KEY_VARIABLE = { anthropic: "ANTHROPIC_API_KEY", openai: "OPENAI_API_KEY" } as const

/** `provider`'s API key is not set: the error says so as data (`missing: "api_key"`); the edge says what to do. */
const noKey = (provider: "anthropic" | "openai") =>
  new ProviderError({
    provider,
    failure: "config",
    missing: "api_key",
    detail: `${KEY_VARIABLE[provider]} is not set.`,
    retryable: false,
    attempts: 1
  })

/** The scripted model has no script: the error says so as data (`missing: "script"`); the edge says how to give one. */
const noScript = () =>
  new ProviderError({
    provider: "scripted",
    failure: "config",
    missing: "script",
    detail: "The scripted model needs a script (PARLEY_SCRIPT).",
    retryable: false,
    attempts: 1
  })

/** The settings each provider is built from: explicit options win over the environment. */
const settings = (options: ProviderLiveOptions) => {
  const env = options.env ?? process.env
  const openaiBaseUrl = nonEmpty(options.openai?.baseUrl) ?? nonEmpty(env["OPENAI_BASE_URL"])
  return {
    anthropicKey: nonEmpty(options.anthropic?.apiKey) ?? nonEmpty(env["ANTHROPIC_API_KEY"]),
    anthropicBaseUrl: nonEmpty(options.anthropic?.baseUrl) ?? nonEmpty(env["ANTHROPIC_BASE_URL"]),
    // Local compatible servers (Ollama, llama.cpp) need no key; the SDK insists on one.
    openaiKey:
      nonEmpty(options.openai?.apiKey) ??
      nonEmpty(env["OPENAI_API_KEY"]) ??
      (openaiBaseUrl !== undefined ? "none" : undefined),
    openaiBaseUrl,
    scriptPath: nonEmpty(options.scriptPath) ?? nonEmpty(env["PARLEY_SCRIPT"])
  }
}

/**
 * Checks, before anything is written, that `model` can be called: a known
 * model, its API key (or a base URL for OpenAI-compatible servers), and for
 * `scripted` a readable, valid script.
 *
 * @example
 * ```ts
 * import * as ProviderLive from "parley/layers/provider/ProviderLive"
 * const ready = ProviderLive.checkReady("anthropic/claude-sonnet-4-5", { env: {} }) // fails: ProviderError{missing: "api_key"}
 * ```
 */
export const checkReady = (model: string, options: ProviderLiveOptions = {}): Effect.Effect<void, ProviderError> =>
  Effect.suspend(() => {
    const problem = checkModel(model)
    if (problem !== undefined) return Effect.fail(problem)
    const given = settings(options)
    switch (parseModel(model).provider) {
      case "anthropic":
        return given.anthropicKey !== undefined ? Effect.void : Effect.fail(noKey("anthropic"))
      case "openai":
        return given.openaiKey !== undefined ? Effect.void : Effect.fail(noKey("openai"))
      default:
        return given.scriptPath === undefined
          ? Effect.fail(noScript())
          : Effect.asVoid(Scripted.loadScript(given.scriptPath))
    }
  })

/** Builds the routing provider; sub-providers are built (and cached) on first use. */
export const make = (options: ProviderLiveOptions = {}): Effect.Effect<Provider["Service"]> =>
  Effect.gen(function* () {
    // Read as each provider is first built, as the environment is then.
    const given = () => settings(options)
    const retry = options.retry !== undefined ? { retry: options.retry } : {}

    const anthropic = yield* Effect.cached(
      Effect.suspend(() => {
        const { anthropicBaseUrl: baseUrl, anthropicKey: apiKey } = given()
        if (apiKey === undefined) return Effect.fail(noKey("anthropic"))
        return AnthropicProvider.make({
          apiKey,
          ...retry,
          ...(baseUrl !== undefined ? { baseUrl } : {}),
          ...(options.anthropic?.maxTokens !== undefined ? { maxTokens: options.anthropic.maxTokens } : {}),
          ...(options.anthropic?.thinkingBudget !== undefined
            ? { thinkingBudget: options.anthropic.thinkingBudget }
            : {})
        })
      })
    )

    const openai = yield* Effect.cached(
      Effect.suspend(() => {
        const { openaiBaseUrl: baseUrl, openaiKey: apiKey } = given()
        if (apiKey === undefined) return Effect.fail(noKey("openai"))
        return OpenAiProvider.make({ apiKey, ...retry, ...(baseUrl !== undefined ? { baseUrl } : {}) })
      })
    )

    const scripted = yield* Effect.cached(
      Effect.suspend(() => {
        const path = given().scriptPath
        return path === undefined ? Effect.fail(noScript()) : Effect.flatMap(Scripted.loadScript(path), Scripted.make)
      })
    )

    const select = (model: string): Effect.Effect<Provider["Service"], ProviderError> => {
      const problem = checkModel(model)
      if (problem !== undefined) return Effect.fail(problem)
      switch (parseModel(model).provider) {
        case "anthropic":
          return anthropic
        case "openai":
          return openai
        default:
          return scripted
      }
    }

    return Provider.of({
      stream: (request) => Stream.unwrap(Effect.map(select(request.model), (provider) => provider.stream(request)))
    })
  })

/** The live provider router as a layer. */
export const layer = (options: ProviderLiveOptions = {}): Layer.Layer<Provider> => Layer.effect(Provider, make(options))
