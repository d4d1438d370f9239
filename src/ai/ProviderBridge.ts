/**
 * parley's `Provider` over any `effect/ai` `LanguageModel` (docs/library.md#bridges-to-effectai-parleyai):
 * with {@link providerLayer}, parley's turn loop, its tool coordinator and
 * its LLM inquiry backend run on every `@effect/ai-*` provider.
 *
 * - The request (system parts and the provider-visible events that
 *   `Thread.intoParts` yields) becomes a `Prompt` ({@link toPrompt}); inquiry
 *   events never reach it because they never reach a `ProviderRequest`.
 * - parley's tools become dynamic tools with their JSON Schema
 *   ({@link toToolkit}), sent with `disableToolCallResolution: true` and
 *   `toolCallValidation: "deferred"`: effect/ai runs no handler and drops no
 *   call; each call comes back as a parley `ToolCall` delta and parley's
 *   coordinator resolves it (permission, questions, recording).
 * - A structured request (an inquiry side call, or any `schema`) goes
 *   through `LanguageModel.generateObject` with an Effect Schema imported
 *   from the JSON Schema, so each provider's own structured-output mechanism
 *   applies; the request's tools go with it (toolChoice `none`, never
 *   resolved), since its prompt holds tool calls; the object comes back as a
 *   `Structured` delta.
 * - Every reply ends with `Finish` (or fails): a stream that closes without
 *   effect/ai's `finish` part is a `reply` `ProviderError`, as parley's own
 *   providers treat a missing end marker (docs/decisions.md#reply-end-marker).
 *
 * The model is the `LanguageModel` in context when the layer is built:
 * `request.model` (and so a per-question inquiry model) is not used to pick
 * one; provide another `LanguageModel` (e.g. with `ExecutionPlan`) for that.
 * Retries are the `LanguageModel`'s business; an error is reported after one
 * attempt.
 *
 * @example
 * ```ts
 * import * as Layer from "effect/Layer"
 * import type { LanguageModel } from "effect/ai"
 * import { providerLayer } from "parley/ai"
 *
 * declare const model: Layer.Layer<LanguageModel.LanguageModel>
 * const provider = providerLayer().pipe(Layer.provide(model)) // Layer<Provider>
 * ```
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as JsonSchema from "effect/JsonSchema"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import * as SchemaRepresentation from "effect/SchemaRepresentation"
import * as Stream from "effect/Stream"
import type { AiError, Prompt, Response } from "effect/ai"
import { LanguageModel, Tool, Toolkit } from "effect/ai"
import type { EventMetadata } from "../domain/event/EventMetadata.ts"
import type { ProviderEvent } from "../domain/stream/Thread.ts"
import * as DeepArguments from "../domain/tool/DeepArguments.ts"
import {
  Provider,
  type ProviderDelta,
  ProviderDelta as Delta,
  ProviderError,
  type ProviderRequest,
  type ProviderTool,
  requestedSchema,
  type StopReason
} from "../services/Provider.ts"

/** Options of {@link providerLayer}. */
export interface ProviderLayerOptions {
  /** The provider name in error messages (`openai: HTTP 429 …`); default `effect/ai`. */
  readonly name?: string
}

/**
 * The metadata key under which an effect/ai part's provider metadata is kept
 * on the recorded event (a reasoning signature, say), and handed back as the
 * prompt part's provider options on the next request.
 */
export const metadataKey = "effect_ai"

const optionsOf = (metadata: EventMetadata): { readonly options?: Prompt.ProviderOptions } => {
  const kept = metadata[metadataKey]
  return typeof kept === "object" && kept !== null && !Array.isArray(kept)
    ? { options: kept as Prompt.ProviderOptions }
    : {}
}

const metadataOf = (metadata: Response.ProviderMetadata): EventMetadata =>
  Object.keys(metadata).length === 0 ? {} : { [metadataKey]: metadata as Schema.Json }

type AssistantPart = Prompt.AssistantMessagePartEncoded

/**
 * The prompt for a request (pure): one system message (the system parts
 * joined by a blank line), then the events in order — consecutive assistant
 * events form one assistant message, tool results one tool message. A
 * structured reply is sent back as its JSON text.
 *
 * @example
 * ```ts
 * import { toPrompt } from "parley/ai"
 * import { ChatRequest, Timestamp } from "parley"
 *
 * toPrompt({ systemParts: ["Be brief."], events: [new ChatRequest({ timestamp: Timestamp.now(), content: "Hi" })] })
 * // [{ role: "system", content: "Be brief." }, { role: "user", content: [{ type: "text", text: "Hi" }] }]
 * ```
 */
export const toPrompt = (request: Pick<ProviderRequest, "systemParts" | "events">): Array<Prompt.MessageEncoded> => {
  const messages: Array<Prompt.MessageEncoded> = []
  const system = request.systemParts.filter((p) => p.length > 0)
  if (system.length > 0) messages.push({ role: "system", content: system.join("\n\n") })
  const names = new Map<string, string>()
  let assistant: Array<AssistantPart> | undefined
  let results: Array<Prompt.ToolResultPartEncoded> | undefined
  const flush = () => {
    if (assistant !== undefined && assistant.length > 0) messages.push({ role: "assistant", content: assistant })
    if (results !== undefined && results.length > 0) messages.push({ role: "tool", content: results })
    assistant = undefined
    results = undefined
  }
  for (const event of request.events) {
    if (event.type === "tool_call_response") {
      if (assistant !== undefined) {
        messages.push({ role: "assistant", content: assistant })
        assistant = undefined
      }
      results ??= []
      results.push({
        type: "tool-result",
        id: event.id,
        name: names.get(event.id) ?? "unknown",
        isFailure: event.is_error,
        result: event.content
      })
      continue
    }
    if (event.type === "chat_request") {
      flush()
      messages.push({ role: "user", content: [{ type: "text", text: event.content }] })
      continue
    }
    if (results !== undefined) flush()
    const part = assistantPart(event)
    if (event.type === "tool_call_request") names.set(event.id, event.name)
    if (part !== undefined) {
      assistant ??= []
      assistant.push(part)
    }
  }
  flush()
  return messages
}

const assistantPart = (
  event: Exclude<ProviderEvent, { readonly type: "chat_request" | "tool_call_response" }>
): AssistantPart | undefined => {
  if (event.type === "tool_call_request") {
    return {
      type: "tool-call",
      id: event.id,
      name: event.name,
      params: DeepArguments.bounded(event.arguments),
      ...optionsOf(event.metadata)
    }
  }
  if (event.message !== undefined) return event.message.length === 0 ? undefined : { type: "text", text: event.message }
  if (event.reasoning !== undefined) return { type: "reasoning", text: event.reasoning, ...optionsOf(event.metadata) }
  return { type: "text", text: JSON.stringify(event.data ?? null) }
}

/**
 * parley's tool definitions as an effect/ai toolkit of dynamic tools (their
 * JSON Schema sent as is). The toolkit has no handlers: the bridge never
 * lets effect/ai resolve a call.
 *
 * @example
 * ```ts
 * import { toToolkit } from "parley/ai"
 * const toolkit = toToolkit([{ name: "read_file", description: "Read a file.", parameters: { type: "object", properties: { path: { type: "string" } } } }])
 * Object.keys(toolkit.tools) // ["read_file"]
 * ```
 */
export const toToolkit = (tools: ReadonlyArray<ProviderTool>) =>
  Toolkit.make(
    ...tools.map((t) =>
      Tool.dynamic(t.name, { description: t.description, parameters: t.parameters as JsonSchema.JsonSchema })
    )
  )

const stopReasonOf = (reason: Response.FinishReason): StopReason => {
  switch (reason) {
    case "stop":
      return "end_turn"
    case "length":
      return "max_tokens"
    case "content-filter":
      return "refusal"
    case "tool-calls":
      return "tool_use"
    default:
      return "other"
  }
}

const usageOf = (usage: Response.Usage): ProviderDelta =>
  Delta.Usage({
    usage: {
      inputTokens: usage.inputTokens.total ?? 0,
      outputTokens: usage.outputTokens.total ?? 0,
      cacheReadTokens: usage.inputTokens.cacheRead ?? 0,
      cacheWriteTokens: usage.inputTokens.cacheWrite ?? 0
    }
  })

const isJsonObject = (u: unknown): u is Schema.JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

/** An effect/ai failure as parley's `ProviderError` (one line, retryable as effect/ai says). */
export const fromAiError = (provider: string, error: AiError.AiError): ProviderError => {
  const reason = error.reason
  const status = "http" in reason ? reason.http?.response?.status : undefined
  const retryAfter = error.retryAfter
  return new ProviderError({
    provider,
    failure: status !== undefined ? "http" : reason._tag === "NetworkError" ? "connection" : "reply",
    detail: reason.message,
    retryable: error.isRetryable,
    attempts: 1,
    ...(status === undefined ? {} : { status }),
    ...(retryAfter === undefined ? {} : { retryAfterMs: Duration.toMillis(retryAfter) })
  })
}

const replyError = (provider: string, detail: string) =>
  new ProviderError({ provider, failure: "reply", detail, retryable: false, attempts: 1 })

/** One stream part as parley deltas (most parts carry nothing parley records). */
const deltasOf = <Tools extends Record<string, Tool.Any>>(
  provider: string,
  part: Response.StreamPart<Tools, "deferred">
): Effect.Effect<ReadonlyArray<ProviderDelta>, ProviderError> => {
  switch (part.type) {
    case "text-delta":
      return Effect.succeed(part.delta.length === 0 ? [] : [Delta.TextDelta({ text: part.delta })])
    case "reasoning-delta":
      return Effect.succeed([Delta.ReasoningDelta({ text: part.delta })])
    case "reasoning-end":
      return Effect.succeed([Delta.ReasoningDone({ metadata: metadataOf(part.metadata) })])
    case "tool-params-start":
      return Effect.succeed(part.providerExecuted ? [] : [Delta.ToolCallStart({ id: part.id, name: part.name })])
    case "tool-call":
      if (part.providerExecuted) return Effect.succeed([])
      return isJsonObject(part.params)
        ? Effect.succeed([
            Delta.ToolCall({
              id: part.id,
              name: part.name,
              arguments: part.params,
              metadata: metadataOf(part.metadata)
            })
          ])
        : Effect.fail(
            replyError(
              provider,
              `the model called ${part.name} with arguments that are not a JSON object: ${JSON.stringify(part.params)}`
            )
          )
    case "finish":
      return Effect.succeed([usageOf(part.usage), Delta.Finish({ reason: stopReasonOf(part.reason) })])
    case "error":
      return Effect.fail(
        replyError(
          provider,
          `error mid-reply: ${part.error instanceof Error ? part.error.message : JSON.stringify(part.error)}`
        )
      )
    default:
      return Effect.succeed([])
  }
}

/**
 * A streamed reply: text, reasoning and tool calls as they arrive; fails unless it finishes. `unwrap` of a sync,
 * not `Stream.suspend`, which kept each request (the whole prompt) past its reply (docs/benchmarks.md#coordinator).
 */
const streamed = (model: LanguageModel.LanguageModel, provider: string, request: ProviderRequest) =>
  Stream.unwrap(
    Effect.sync(() => {
      let finished = false
      const prompt = toPrompt(request)
      const toolChoice = request.toolChoice ?? "auto"
      const parts =
        request.tools.length === 0
          ? model.streamText({
              prompt,
              toolChoice: "none",
              disableToolCallResolution: true,
              toolCallValidation: "deferred"
            })
          : model.streamText({
              prompt,
              toolkit: toToolkit(request.tools),
              toolChoice,
              disableToolCallResolution: true,
              toolCallValidation: "deferred"
            })
      return parts.pipe(
        Stream.mapError((e) => fromAiError(provider, e)),
        Stream.mapEffect((part) => deltasOf(provider, part)),
        Stream.flatMap((deltas) => {
          if (deltas.some((d) => d._tag === "Finish")) finished = true
          return Stream.fromIterable(deltas)
        }),
        Stream.concat(
          Stream.unwrap(
            Effect.sync(() =>
              finished
                ? Stream.empty
                : Stream.fail(replyError(provider, "the reply ended before the model finished it (no finish part)"))
            )
          )
        )
      )
    })
  )

/** The Effect Schema of a JSON Schema, for `generateObject` (each provider derives its own wire schema from it). */
const objectSchema = (provider: string, schema: Schema.JsonObject) =>
  Effect.try({
    try: () =>
      // A schema built at run time from the tool's JSON Schema has no static type: what it decodes is the JSON object
      // that schema describes, which is all generateObject is told.
      SchemaRepresentation.fromJsonSchemaDocument(
        JsonSchema.fromSchemaDraft2020_12(schema as JsonSchema.JsonSchema)
      ) as Schema.Codec<Schema.JsonObject, Schema.JsonObject>,
    catch: (e) =>
      new ProviderError({
        provider,
        failure: "config",
        detail: `${provider}: the structured-output schema cannot be expressed for effect/ai: ${e instanceof Error ? e.message : String(e)}`,
        retryable: false,
        attempts: 1
      })
  })

/** A structured reply: the object, then its usage and `Finish`. */
const structured = (
  model: LanguageModel.LanguageModel,
  provider: string,
  request: ProviderRequest,
  schema: Schema.JsonObject
) =>
  Stream.unwrap(
    Effect.gen(function* () {
      const codec = yield* objectSchema(provider, schema)
      const prompt = toPrompt(request)
      // The request's tools go too (toolChoice none), as parley's own providers send them: an inquiry's prompt
      // holds the paused call, and Anthropic and Bedrock reject tool_use/tool_result blocks in a request that
      // defines no tools; the turn's tools also keep the turn's cache prefix.
      const asked: Effect.Effect<
        {
          readonly value: Schema.JsonObject
          readonly usage: Response.Usage
          readonly finishReason: Response.FinishReason
        },
        AiError.AiError
      > =
        request.tools.length === 0
          ? model.generateObject({ prompt, schema: codec, toolChoice: "none" })
          : model.generateObject({
              prompt,
              schema: codec,
              toolkit: toToolkit(request.tools),
              toolChoice: "none",
              disableToolCallResolution: true,
              toolCallValidation: "deferred"
            })
      const response = yield* asked.pipe(Effect.mapError((e) => fromAiError(provider, e)))
      return Stream.fromIterable<ProviderDelta>([
        Delta.Structured({ data: response.value }),
        usageOf(response.usage),
        Delta.Finish({ reason: stopReasonOf(response.finishReason) })
      ])
    })
  )

/**
 * A `Provider` over `model`. Streams plain requests (`streamText`); asks for
 * structured requests with `generateObject`.
 */
export const make = (model: LanguageModel.LanguageModel, options: ProviderLayerOptions = {}): Provider["Service"] => {
  const name = options.name ?? "effect/ai"
  return Provider.of({
    stream: (request) => {
      const schema = requestedSchema(request)
      return schema === undefined ? streamed(model, name, request) : structured(model, name, request, schema)
    }
  })
}

/**
 * parley's `Provider` from the `LanguageModel` in context.
 *
 * @example
 * ```ts
 * import * as Layer from "effect/Layer"
 * import type { LanguageModel } from "effect/ai"
 * import { LlmInquiryBackend } from "parley"
 * import { providerLayer } from "parley/ai"
 *
 * declare const model: Layer.Layer<LanguageModel.LanguageModel>
 * // The turn loop's Provider and the LLM inquiry backend, both on `model`.
 * const provider = providerLayer({ name: "openai" }).pipe(Layer.provide(model))
 * const inquiries = LlmInquiryBackend.layer({ model: "openai/gpt-5-mini" }).pipe(Layer.provide(provider))
 * ```
 */
export const providerLayer = (
  options: ProviderLayerOptions = {}
): Layer.Layer<Provider, never, LanguageModel.LanguageModel> =>
  Layer.effect(
    Provider,
    Effect.gen(function* () {
      return make(yield* LanguageModel.LanguageModel, options)
    })
  )
