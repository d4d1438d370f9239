/**
 * A scripted effect/ai `LanguageModel` for the bridge tests (effect/ai ships
 * no test model; this one is built with `LanguageModel.make`): each request,
 * streamed or not, takes the next step, and every request's provider options
 * are kept for assertions, with the prompt in its encoded (plain JSON) form.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { AiError, LanguageModel, Prompt, type Response } from "effect/ai"

export interface SeenRequest {
  readonly method: "generateText" | "streamText"
  readonly prompt: Prompt.PromptEncoded
  readonly tools: ReadonlyArray<string>
  readonly toolChoice: unknown
  readonly responseFormat: "text" | "json"
  readonly options: LanguageModel.ProviderOptions
}

export const usage = { inputTokens: { total: 10, cacheRead: 2 }, outputTokens: { total: 5 } }
export const finish = (reason: Response.FinishPartEncoded["reason"]): Response.StreamPartEncoded => ({ type: "finish", reason, usage })

/** One step: the parts a request gets, or the error it fails with. */
export type Step = ReadonlyArray<Response.StreamPartEncoded | Response.PartEncoded> | AiError.AiError

const encodePrompt = Schema.encodeSync(Prompt.Prompt)

export const scriptedModel = (steps: Array<Step>, seen: Array<SeenRequest>): Layer.Layer<LanguageModel.LanguageModel> => {
  const next = (method: SeenRequest["method"], options: LanguageModel.ProviderOptions): Step => {
    seen.push({
      method,
      prompt: encodePrompt(options.prompt),
      tools: options.tools.map((t) => t.name),
      toolChoice: options.toolChoice,
      responseFormat: options.responseFormat.type,
      options
    })
    return steps.shift() ?? AiError.make({ module: "Test", method, reason: new AiError.UnknownError({ description: "the script has no step left" }) })
  }
  return Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) => {
        const step = next("generateText", options)
        return Array.isArray(step) ? Effect.succeed(step as Array<Response.PartEncoded>) : Effect.fail(step as AiError.AiError)
      },
      streamText: (options) => {
        const step = next("streamText", options)
        return Array.isArray(step) ? Stream.fromIterable(step as Array<Response.StreamPartEncoded>) : Stream.fail(step as AiError.AiError)
      }
    })
  )
}
