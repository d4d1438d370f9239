/**
 * The OpenAI Chat Completions provider (`openai/<model>`), on the `openai` SDK.
 * Chat Completions is what OpenAI-compatible servers (Ollama, llama.cpp,
 * vLLM) implement, so `baseUrl` (`http://host:port/v1`) points it at any of them.
 *
 * - System parts become one leading `system` message (joined by a blank line;
 *   several servers reject more than one system message).
 * - Consecutive assistant events form one assistant message (`content` +
 *   `tool_calls`); each tool result is a `tool` message.
 * - Reasoning is not sent back (Chat Completions has no input field for it);
 *   streamed `reasoning_content` / `reasoning` deltas (vLLM, llama.cpp,
 *   Ollama, DeepSeek) are read as reasoning.
 * - Structured output: `response_format: {type: "json_schema", strict: true}`
 *   with the schema rewritten for strict mode (`toStrictSchema`).
 * - The SDK is imported lazily; its own retries (`maxRetries: 0`) and logging
 *   are off.
 * - A reply is whole with a `finish_reason` and/or `[DONE]`; `length` is the
 *   `max_tokens` stop reason (docs/decisions.md#reply-end-marker).
 *
 * @example
 * ```ts
 * import * as OpenAiProvider from "parley/layers/provider/OpenAi"
 * const layer = OpenAiProvider.layer({ apiKey: "sk-…", baseUrl: "http://127.0.0.1:11434/v1" })
 * ```
 *
 * @since 0.1.0
 */
import type OpenAI from "openai"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import {
  parseModel,
  Provider,
  type ProviderDelta,
  ProviderDelta as Delta,
  type ProviderError,
  type ProviderRequest,
  requestedSchema,
  type StopReason
} from "../../services/Provider.ts"
import { defaultRetryPolicy, type RetryPolicy } from "./Retry.ts"
import {
  type Converter,
  cutOff,
  invalidArguments,
  loadError,
  parseArguments,
  quietSdk,
  sdkStream
} from "./Transport.ts"
import * as DeepArguments from "../../domain/tool/DeepArguments.ts"
import * as JsonText from "../../domain/storage/JsonText.ts"

/** The OpenAI provider's key, base URL (`http://host:port/v1` for compatible servers) and retries. */
export interface OpenAiOptions {
  readonly apiKey: string
  /** Including `/v1`; default: the SDK's (api.openai.com/v1). */
  readonly baseUrl?: string
  readonly retry?: RetryPolicy
}

type JsonSchema = { [key: string]: unknown }

const isObject = (u: unknown): u is JsonSchema => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Rewrites a JSON Schema for OpenAI strict structured output:
 * `const: v` → `enum: [v]`; every object with `properties` gets
 * `additionalProperties: false` and lists all its keys in `required`, a key
 * that was optional becoming nullable (`anyOf: [S, {type: "null"}]`);
 * `oneOf` → `anyOf`. Schemas already in that form come back unchanged.
 *
 * @example
 * ```ts
 * import { toStrictSchema } from "parley/layers/provider/OpenAi"
 * toStrictSchema({ type: "object", properties: { a: { const: 1 } } })
 * // { type: "object", properties: { a: { enum: [1] } }, required: ["a"], additionalProperties: false }
 * ```
 */
export const toStrictSchema = (schema: Schema.JsonObject): Schema.JsonObject => rewrite(schema) as Schema.JsonObject

const rewrite = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(rewrite)
  if (!isObject(node)) return node
  const out: JsonSchema = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === "const") out["enum"] = [value]
    else if (key === "oneOf") out["anyOf"] = rewrite(value)
    else if (key === "properties" && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewrite(v)]))
    } else if (key === "$defs" || key === "definitions") {
      out[key] = isObject(value) ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewrite(v)])) : value
    } else if (key === "items" || key === "anyOf" || key === "allOf" || key === "not" || key === "prefixItems") {
      out[key] = rewrite(value)
    } else out[key] = value
  }
  if (isObject(out["properties"])) {
    const properties = out["properties"]
    const keys = Object.keys(properties)
    const required = new Set(Array.isArray(node["required"]) ? node["required"] : [])
    for (const k of keys) {
      if (!required.has(k)) properties[k] = { anyOf: [properties[k], { type: "null" }] }
    }
    out["required"] = keys
    out["additionalProperties"] = false
  }
  return out
}

type Message = OpenAI.ChatCompletionMessageParam

/**
 * The exact Chat Completions body for a request (pure; exported for tests).
 *
 * @example
 * ```ts
 * import { toChatParams } from "parley/layers/provider/OpenAi"
 * import type { ProviderRequest } from "parley/services/Provider"
 * declare const request: ProviderRequest
 * toChatParams(request, "gpt-5-mini").messages
 * ```
 */
export const toChatParams = (request: ProviderRequest, model: string): OpenAI.ChatCompletionCreateParamsStreaming => {
  const messages: Array<Message> = []
  const system = request.systemParts.filter((p) => p.length > 0)
  if (system.length > 0) messages.push({ role: "system", content: system.join("\n\n") })

  // The assistant message being built from consecutive assistant events.
  let assistant: { text: Array<string>; calls: Array<OpenAI.ChatCompletionMessageFunctionToolCall> } | undefined
  const flush = () => {
    if (assistant === undefined) return
    const { calls, text } = assistant
    assistant = undefined
    if (text.length === 0 && calls.length === 0) return
    messages.push({
      role: "assistant",
      ...(text.length > 0 ? { content: text.join("\n\n") } : {}),
      ...(calls.length > 0 ? { tool_calls: calls } : {})
    })
  }
  const open = () => (assistant ??= { text: [], calls: [] })

  for (const event of request.events) {
    switch (event.type) {
      case "chat_request":
        flush()
        messages.push({ role: "user", content: event.content })
        break
      case "chat_response":
        if (event.message !== undefined) {
          if (event.message.length > 0) open().text.push(event.message)
        } else if (event.reasoning === undefined) {
          open().text.push(JSON.stringify(event.data ?? null))
        }
        break
      case "tool_call_request":
        open().calls.push({
          id: event.id,
          type: "function",
          function: { name: event.name, arguments: JSON.stringify(DeepArguments.bounded(event.arguments)) }
        })
        break
      case "tool_call_response":
        flush()
        messages.push({ role: "tool", tool_call_id: event.id, content: event.content })
        break
    }
  }
  flush()

  const schema = requestedSchema(request)
  const tools: Array<OpenAI.ChatCompletionFunctionTool> = request.tools.map((tool) => ({
    type: "function",
    function: {
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters as OpenAI.FunctionParameters
    }
  }))
  return {
    model,
    messages,
    stream: true,
    stream_options: { include_usage: true },
    ...(tools.length > 0 ? { tools } : {}),
    ...(tools.length > 0 && request.toolChoice === "none" ? { tool_choice: "none" } : {}),
    ...(schema !== undefined
      ? {
          response_format: {
            type: "json_schema",
            json_schema: { name: "response", schema: toStrictSchema(schema) as JsonSchema, strict: true }
          }
        }
      : {}),
    ...(request.maxTokens !== undefined ? { max_completion_tokens: request.maxTokens } : {})
  }
}

const stopReason = (reason: string | null | undefined): StopReason | undefined => {
  switch (reason) {
    case undefined:
    case null:
      return undefined
    case "stop":
      return "end_turn"
    case "tool_calls":
    case "function_call":
      return "tool_use"
    case "length":
      return "max_tokens"
    case "content_filter":
      return "refusal"
    default:
      return "other"
  }
}

/**
 * Converts streamed completion chunks into deltas (one instance per request).
 * The reply is whole once a chunk carries a `finish_reason` or the stream
 * sent `[DONE]` (`sawDone`; the SDK consumes that line, `watchingFetch`
 * reports it); a stream that closes with neither fails as cut off (docs/decisions.md#reply-end-marker).
 */
export class ChunkConverter implements Converter<OpenAI.ChatCompletionChunk> {
  private readonly calls = new Map<number, { id: string; name: string; args: string; started: boolean }>()
  private structuredText = ""
  private usage: OpenAI.CompletionUsage | undefined = undefined
  private stop: StopReason | undefined = undefined
  private callCount = 0

  constructor(
    private readonly structured: boolean,
    private readonly sawDone: () => boolean = () => false
  ) {}

  push(chunk: OpenAI.ChatCompletionChunk): ReadonlyArray<ProviderDelta> {
    if (chunk.usage) this.usage = chunk.usage
    const choice = chunk.choices?.[0]
    if (choice === undefined) return []
    const out: Array<ProviderDelta> = []
    // Some compatible servers send a final choice with no delta.
    const delta = (choice.delta ?? {}) as OpenAI.ChatCompletionChunk.Choice.Delta & {
      reasoning_content?: string | null
      reasoning?: string | null
    }
    const reasoning = delta.reasoning_content ?? delta.reasoning
    if (typeof reasoning === "string" && reasoning.length > 0) out.push(Delta.ReasoningDelta({ text: reasoning }))
    if (typeof delta.content === "string" && delta.content.length > 0) {
      if (this.structured) this.structuredText += delta.content
      else out.push(Delta.TextDelta({ text: delta.content }))
    }
    if (typeof delta.refusal === "string" && delta.refusal.length > 0)
      out.push(Delta.TextDelta({ text: delta.refusal }))
    for (const call of delta.tool_calls ?? []) {
      let state = this.calls.get(call.index)
      if (state === undefined) {
        state = { id: "", name: "", args: "", started: false }
        this.calls.set(call.index, state)
      }
      if (call.id) state.id = call.id
      // The name arrives once (OpenAI); some servers repeat it in every delta.
      if (call.function?.name && state.name.length === 0) state.name = call.function.name
      if (call.function?.arguments) state.args += call.function.arguments
      if (!state.started && state.name.length > 0) {
        state.started = true
        // Some compatible servers send no id; give the call a stable one.
        if (state.id.length === 0) state.id = `call_${chunk.id}_${call.index}`
        out.push(Delta.ToolCallStart({ id: state.id, name: state.name }))
      }
    }
    this.stop = stopReason(choice.finish_reason) ?? this.stop
    return out
  }

  end(): ReadonlyArray<ProviderDelta> | ProviderError {
    if (this.stop === undefined && !this.sawDone()) return cutOff("openai", "a finish_reason or [DONE]")
    const out: Array<ProviderDelta> = []
    for (const index of [...this.calls.keys()].sort((a, b) => a - b)) {
      const state = this.calls.get(index)!
      const args = parseArguments(state.args)
      if (args === undefined) return invalidArguments("openai", state.name, state.args, this.stop)
      const id = state.id.length > 0 ? state.id : `call_${++this.callCount}`
      out.push(Delta.ToolCall({ id, name: state.name, arguments: args, metadata: {} }))
    }
    if (this.structured && this.structuredText.length > 0) {
      try {
        out.push(Delta.Structured({ data: JsonText.parse(this.structuredText) }))
      } catch {
        out.push(Delta.TextDelta({ text: this.structuredText }))
      }
    }
    if (this.usage) {
      out.push(
        Delta.Usage({
          usage: {
            inputTokens: this.usage.prompt_tokens ?? 0,
            outputTokens: this.usage.completion_tokens ?? 0,
            cacheReadTokens: this.usage.prompt_tokens_details?.cached_tokens ?? 0,
            cacheWriteTokens: 0
          }
        })
      )
    }
    // `[DONE]` without a finish_reason (some compatible servers): a normal finish.
    out.push(Delta.Finish({ reason: this.stop ?? (this.calls.size > 0 ? "tool_use" : "end_turn") }))
    return out
  }
}

/** `[DONE]` markers of watched responses, keyed by the SDK stream reading each one. */
const doneMarkers = new WeakMap<object, { done: boolean }>()
const responseMarkers = new WeakMap<Response, { done: boolean }>()

/** A `[DONE]` line (`data: [DONE]`, optional space and trailing blanks). */
const DONE_LINE = /^data: ?\[DONE\]\s*$/

/**
 * A `fetch` that passes event-stream bodies through unchanged while watching
 * them for the `data: [DONE]` line, which the SDK consumes without a trace:
 * that line is one of the two end markers of a Chat Completions stream.
 *
 * @example
 * ```ts
 * import OpenAI from "openai"
 * import { watchingFetch } from "parley/layers/provider/OpenAi"
 * const client = new OpenAI({ apiKey: "sk-…", fetch: watchingFetch(fetch) })
 * ```
 */
export const watchingFetch = (base: typeof fetch) => async (input: string | URL | Request, init?: RequestInit) => {
  const response = await base(input, init)
  const type = response.headers.get("content-type") ?? ""
  if (response.body === null || !type.includes("text/event-stream")) return response
  const marker = { done: false }
  const decoder = new TextDecoder()
  let partial = ""
  const scan = (text: string) => {
    const lines = (partial + text).split(/\r\n|\r|\n/)
    // A long partial line cannot be `[DONE]`: keep only its start.
    partial = (lines.pop() ?? "").slice(0, 64)
    if (lines.some((line) => DONE_LINE.test(line))) marker.done = true
  }
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        scan(decoder.decode(chunk, { stream: true }))
        controller.enqueue(chunk)
      },
      flush() {
        scan(`${decoder.decode()}\n`)
      }
    })
  )
  const watched = new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers
  })
  responseMarkers.set(watched, marker)
  return watched
}

/** Builds the provider, loading the SDK when the layer is built. */
export const make = (options: OpenAiOptions): Effect.Effect<Provider["Service"], ProviderError> =>
  Effect.gen(function* () {
    const sdkModule = yield* Effect.tryPromise({ try: () => import("openai"), catch: loadError("openai", "openai") })
    const OpenAISdk = sdkModule.default
    const client = new OpenAISdk({
      apiKey: options.apiKey,
      maxRetries: 0,
      ...quietSdk,
      fetch: watchingFetch(globalThis.fetch),
      ...(options.baseUrl !== undefined ? { baseURL: options.baseUrl } : {})
    })
    const policy = options.retry ?? defaultRetryPolicy
    return Provider.of({
      stream: (request) => {
        const { name } = parseModel(request.model)
        const params = toChatParams(request, name.length > 0 ? name : request.model)
        return sdkStream({
          provider: "openai",
          keyVariable: "OPENAI_API_KEY",
          policy,
          open: async (signal) => {
            const { data, response } = await client.chat.completions.create(params, { signal }).withResponse()
            const marker = responseMarkers.get(response)
            if (marker !== undefined) doneMarkers.set(data, marker)
            return data
          },
          converter: (events) =>
            new ChunkConverter(params.response_format !== undefined, () => doneMarkers.get(events)?.done === true)
        })
      }
    })
  })

/** The OpenAI provider as a layer. */
export const layer = (options: OpenAiOptions): Layer.Layer<Provider, ProviderError> =>
  Layer.effect(Provider, make(options))
