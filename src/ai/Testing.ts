/**
 * `parley/ai/testing`: a scripted effect/ai `LanguageModel` for tests
 * (docs/library.md#a-scripted-model-for-your-tests) — the one parley's own tests run the bridges on.
 * effect/ai ships no test model; this one is built with
 * `LanguageModel.make`. Each request, streamed or not, takes the next step
 * of the script: the parts it answers with (encoded, as a provider sends
 * them), or the `AiError` it fails with. Every request is kept for
 * assertions, its prompt in encoded (plain JSON) form. A request past the
 * end of the script fails with an `AiError` saying so.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import { LanguageModel } from "effect/ai"
 * import { providerLayer } from "parley/ai"
 * import * as Testing from "parley/ai/testing"
 *
 * const seen: Array<Testing.SeenRequest> = []
 * const model = Testing.scriptedModel([
 *   // A streamed turn: a tool call, then (next request) the reply.
 *   [{ type: "tool-call", id: "call_1", name: "deploy", params: { env: "staging" } }, Testing.finish("tool-calls")],
 *   [{ type: "text-delta", id: "t", delta: "Deployed." }, Testing.finish("stop")],
 *   // generateText takes whole parts.
 *   [{ type: "text", text: "Hello." }, Testing.finish("stop")]
 * ], seen)
 *
 * // As parley's Provider (the turn loop, the LLM inquiry backend):
 * const provider = providerLayer().pipe(Layer.provide(model))
 * // Or straight through effect/ai:
 * const hello = LanguageModel.generateText({ prompt: "Hi" }).pipe(Effect.provide(model))
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { AiError, LanguageModel, Prompt, type Response } from "effect/ai"

/** One request the model received: how it was called, the prompt (encoded), the tools offered, and the raw options. */
export interface SeenRequest {
  readonly method: "generateText" | "streamText"
  readonly prompt: Prompt.PromptEncoded
  readonly tools: ReadonlyArray<string>
  readonly toolChoice: unknown
  readonly responseFormat: "text" | "json"
  readonly options: LanguageModel.ProviderOptions
}

/** The usage every scripted `finish` reports: 10 input tokens (2 from cache), 5 output. */
export const usage = { inputTokens: { total: 10, cacheRead: 2 }, outputTokens: { total: 5 } }

/** A `finish` part with `reason` and {@link usage} (effect/ai's bridge needs one to end a reply). */
export const finish = (
  reason: Response.FinishPartEncoded["reason"]
): Response.StreamPartEncoded & Response.PartEncoded => ({ type: "finish", reason, usage })

/** One step: the parts a request gets (stream parts for `streamText`, whole parts for `generateText`), or the error it fails with. */
export type Step = ReadonlyArray<Response.StreamPartEncoded | Response.PartEncoded> | AiError.AiError

const encodePrompt = Schema.encodeSync(Prompt.Prompt)

/**
 * The scripted `LanguageModel`: each request takes the next of `steps`
 * (the array is consumed) and is pushed onto `seen`.
 */
export const scriptedModel = (
  steps: Array<Step>,
  seen: Array<SeenRequest> = []
): Layer.Layer<LanguageModel.LanguageModel> => {
  const next = (method: SeenRequest["method"], options: LanguageModel.ProviderOptions): Step => {
    seen.push({
      method,
      prompt: encodePrompt(options.prompt),
      tools: options.tools.map((t) => t.name),
      toolChoice: options.toolChoice,
      responseFormat: options.responseFormat.type,
      options
    })
    return (
      steps.shift() ??
      AiError.make({
        module: "Test",
        method,
        reason: new AiError.UnknownError({ description: "the script has no step left" })
      })
    )
  }
  return Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) => {
        const step = next("generateText", options)
        return Array.isArray(step)
          ? Effect.succeed(step as Array<Response.PartEncoded>)
          : Effect.fail(step as AiError.AiError)
      },
      streamText: (options) => {
        const step = next("streamText", options)
        return Array.isArray(step)
          ? Stream.fromIterable(step as Array<Response.StreamPartEncoded>)
          : Stream.fail(step as AiError.AiError)
      }
    })
  )
}
