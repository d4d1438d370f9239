/**
 * The Anthropic Messages provider (`anthropic/<model>`), on `@anthropic-ai/sdk`.
 *
 * - System parts go in the separate `system` field, one text block each.
 * - Consecutive events of one role share a message: an assistant reply's
 *   thinking, text and `tool_use` blocks form one assistant message, and the
 *   results of parallel calls form one user message of `tool_result` blocks.
 * - Reasoning carrying `anthropic_thinking_signature` is sent back as a
 *   `thinking` block (`anthropic_redacted_thinking` as `redacted_thinking`);
 *   reasoning without a signature (another provider's) cannot be verified by
 *   Anthropic and is left out.
 * - Cache control: at most 4 breakpoints per request (RFD 005), spent in this
 *   order: the last message, events tagged `cache_breakpoint: true` (the
 *   inquiry backend tags the second-to-last visible event), the last system
 *   part, the last tool, then earlier system parts (latest first).
 * - Structured output uses Anthropic's native JSON output
 *   (`output_config.format = {type: "json_schema", schema}`): the reply is a
 *   text block holding the JSON, decoded into a `Structured` delta. A forced
 *   tool was rejected because it conflicts with `tool_choice: none` (inquiry
 *   calls keep the turn's tools for the cache prefix) and with extended thinking.
 * - The SDK is imported lazily when the layer is built (CLI cold start), its
 *   own retries are off (`maxRetries: 0`: retries are an Effect `Schedule`)
 *   and so is its logging (it would print malformed events to the terminal).
 * - A reply is whole only with `message_stop`; the stop reason (`max_tokens`
 *   included) ends the stream as a `Finish` delta (docs/decisions.md#reply-end-marker).
 *
 * @example
 * ```ts
 * import * as AnthropicProvider from "parley/layers/provider/Anthropic"
 * const layer = AnthropicProvider.layer({ apiKey: process.env.ANTHROPIC_API_KEY!, baseUrl: "http://127.0.0.1:8080" })
 * ```
 *
 * @since 0.1.0
 */
import type Anthropic from "@anthropic-ai/sdk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { EventMetadata } from "../../domain/event/EventMetadata.ts"
import * as DeepArguments from "../../domain/tool/DeepArguments.ts"
import {
  parseModel,
  Provider,
  type ProviderDelta,
  ProviderDelta as Delta,
  type ProviderError,
  type ProviderEvent,
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
import * as JsonText from "../../domain/storage/JsonText.ts"

/** The Anthropic provider's key, base URL and retries. */
export interface AnthropicOptions {
  readonly apiKey: string
  /** `http://host:port` (no `/v1`); default: the SDK's (api.anthropic.com). */
  readonly baseUrl?: string
  readonly retry?: RetryPolicy
  /** `max_tokens` when the request does not say (default 8192). */
  readonly maxTokens?: number
  /** Enables extended thinking with this token budget (must be < max tokens). */
  readonly thinkingBudget?: number
}

/** Anthropic's limit on cache-control points per request. */
export const MAX_CACHE_POINTS = 4
const EPHEMERAL = { type: "ephemeral" } as const
/** RFD 034 `cache = "long"`: Anthropic's one-hour cache. */
const EPHEMERAL_LONG = { type: "ephemeral", ttl: "1h" } as const

type Block = Anthropic.ContentBlockParam
type Message = { role: "user" | "assistant"; content: Array<Block> }

const blocksOf = (event: ProviderEvent): Array<Block> => {
  switch (event.type) {
    case "chat_request":
      return event.content.length > 0 ? [{ type: "text", text: event.content }] : []
    case "chat_response": {
      if (event.message !== undefined) return event.message.length > 0 ? [{ type: "text", text: event.message }] : []
      if (event.reasoning !== undefined) {
        const redacted = event.metadata["anthropic_redacted_thinking"]
        if (typeof redacted === "string") return [{ type: "redacted_thinking", data: redacted }]
        const signature = event.metadata["anthropic_thinking_signature"]
        return typeof signature === "string" ? [{ type: "thinking", thinking: event.reasoning, signature }] : []
      }
      return [{ type: "text", text: JSON.stringify(event.data ?? null) }]
    }
    case "tool_call_request":
      // A recorded call too deep to send (an older or edited file) goes as the marker (docs/decisions.md#deep-tool-arguments).
      return [{ type: "tool_use", id: event.id, name: event.name, input: DeepArguments.bounded(event.arguments) }]
    case "tool_call_response":
      return [{ type: "tool_result", tool_use_id: event.id, content: event.content, is_error: event.is_error }]
  }
}

const roleOf = (event: ProviderEvent): "user" | "assistant" =>
  event.type === "chat_request" || event.type === "tool_call_response" ? "user" : "assistant"

/** Thinking blocks cannot carry cache control. */
const cacheable = (block: Block): boolean => block.type !== "thinking" && block.type !== "redacted_thinking"

/**
 * The exact Messages API body for a request (pure; exported for tests).
 *
 * @example
 * ```ts
 * import { toMessagesParams } from "parley/layers/provider/Anthropic"
 * import type { ProviderRequest } from "parley/services/Provider"
 * declare const request: ProviderRequest
 * toMessagesParams(request, "claude-sonnet-4-5", { maxTokens: 1024 }).messages
 * ```
 */
export const toMessagesParams = (
  request: ProviderRequest,
  model: string,
  options: { readonly maxTokens?: number; readonly thinkingBudget?: number } = {}
): Anthropic.MessageCreateParamsStreaming => {
  const messages: Array<Message> = []
  // Where each event's blocks ended up, for `cache_breakpoint` tags.
  const lastBlockOf: Array<{ message: number; block: number } | undefined> = []
  for (const event of request.events) {
    const blocks = blocksOf(event)
    if (blocks.length === 0) {
      lastBlockOf.push(undefined)
      continue
    }
    const role = roleOf(event)
    let current = messages.at(-1)
    if (current === undefined || current.role !== role) {
      current = { role, content: [] }
      messages.push(current)
    }
    current.content.push(...blocks)
    lastBlockOf.push({ message: messages.length - 1, block: current.content.length - 1 })
  }

  const system: Array<Anthropic.TextBlockParam> = request.systemParts
    .filter((text) => text.length > 0)
    .map((text) => ({ type: "text", text }))
  const tools: Array<Anthropic.ToolUnion> = request.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.parameters as Anthropic.Tool.InputSchema
  }))

  // Cache points: a shared budget of 4 across messages, system parts and tools.
  let budget = request.cache === "off" ? 0 : MAX_CACHE_POINTS
  const control = request.cache === "long" ? EPHEMERAL_LONG : EPHEMERAL
  const mark = (block: { cache_control?: Anthropic.CacheControlEphemeral | null } | undefined): void => {
    if (budget === 0 || block === undefined || block.cache_control) return
    block.cache_control = control
    budget--
  }
  const lastMessage = messages.at(-1)
  const lastMessageBlock = lastMessage === undefined ? undefined : [...lastMessage.content].reverse().find(cacheable)
  mark(lastMessageBlock as { cache_control?: Anthropic.CacheControlEphemeral | null } | undefined)
  for (let i = request.events.length - 1; i >= 0; i--) {
    const at = lastBlockOf[i]
    if (request.events[i]!.metadata["cache_breakpoint"] !== true || at === undefined) continue
    const block = messages[at.message]!.content[at.block]!
    if (cacheable(block)) mark(block as { cache_control?: Anthropic.CacheControlEphemeral | null })
  }
  mark(system.at(-1))
  mark(tools.at(-1) as { cache_control?: Anthropic.CacheControlEphemeral | null } | undefined)
  for (let i = system.length - 2; i >= 0; i--) mark(system[i])

  const schema = requestedSchema(request)
  const maxTokens = request.maxTokens ?? options.maxTokens ?? 8192
  return {
    model,
    max_tokens: maxTokens,
    stream: true,
    messages: messages as Array<Anthropic.MessageParam>,
    ...(system.length > 0 ? { system } : {}),
    ...(tools.length > 0 ? { tools } : {}),
    ...(tools.length > 0 && request.toolChoice === "none" ? { tool_choice: { type: "none" } } : {}),
    ...(schema !== undefined ? { output_config: { format: { type: "json_schema", schema } } } : {}),
    ...(options.thinkingBudget !== undefined
      ? { thinking: { type: "enabled", budget_tokens: options.thinkingBudget } }
      : {})
  }
}

const stopReason = (reason: string | null | undefined): StopReason | undefined => {
  switch (reason) {
    case undefined:
    case null:
      return undefined
    case "end_turn":
    case "tool_use":
    case "max_tokens":
    case "stop_sequence":
    case "refusal":
      return reason
    default:
      return "other"
  }
}

/**
 * Converts Messages SSE events into deltas (one instance per request). The
 * reply is whole only once `message_stop` arrives; a stream that closes
 * before it fails as cut off (docs/decisions.md#reply-end-marker).
 */
export class EventConverter implements Converter<Anthropic.RawMessageStreamEvent> {
  private readonly blocks = new Map<
    number,
    { kind: string; id: string; name: string; json: string; signature: string; data: string }
  >()
  private structuredText = ""
  private inputTokens = 0
  private outputTokens = 0
  private cacheRead = 0
  private cacheWrite = 0
  private stop: StopReason | undefined = undefined
  /** `message_stop` arrived: the reply is whole. */
  private stopped = false
  private badArguments: { readonly name: string; readonly raw: string } | undefined = undefined

  constructor(private readonly structured: boolean) {}

  push(event: Anthropic.RawMessageStreamEvent): ReadonlyArray<ProviderDelta> | ProviderError {
    switch (event.type) {
      case "message_start": {
        const u = event.message.usage
        this.inputTokens = u.input_tokens ?? 0
        this.outputTokens = u.output_tokens ?? 0
        this.cacheRead = u.cache_read_input_tokens ?? 0
        this.cacheWrite = u.cache_creation_input_tokens ?? 0
        return []
      }
      case "content_block_start": {
        const b = event.content_block
        const state = { kind: b.type, id: "", name: "", json: "", signature: "", data: "" }
        this.blocks.set(event.index, state)
        if (b.type === "tool_use") {
          state.id = b.id
          state.name = b.name
          return [Delta.ToolCallStart({ id: b.id, name: b.name })]
        }
        if (b.type === "redacted_thinking") state.data = b.data
        if (b.type === "thinking") {
          state.signature = b.signature ?? ""
          return b.thinking.length > 0 ? [Delta.ReasoningDelta({ text: b.thinking })] : []
        }
        if (b.type === "text" && b.text.length > 0) return this.text(b.text)
        return []
      }
      case "content_block_delta": {
        const state = this.blocks.get(event.index)
        const d = event.delta
        switch (d.type) {
          case "text_delta":
            return this.text(d.text)
          case "thinking_delta":
            return [Delta.ReasoningDelta({ text: d.thinking })]
          case "signature_delta":
            if (state) state.signature += d.signature
            return []
          case "input_json_delta":
            if (state) state.json += d.partial_json
            return []
          default:
            return []
        }
      }
      case "content_block_stop": {
        const state = this.blocks.get(event.index)
        if (state === undefined) return []
        if (state.kind === "thinking") {
          const metadata: EventMetadata =
            state.signature.length > 0 ? { anthropic_thinking_signature: state.signature } : {}
          return [Delta.ReasoningDone({ metadata })]
        }
        if (state.kind === "redacted_thinking") {
          return [Delta.ReasoningDone({ metadata: { anthropic_redacted_thinking: state.data } })]
        }
        if (state.kind === "tool_use") {
          const args = parseArguments(state.json)
          if (args === undefined) {
            // Reported at the end, when the stop reason says whether the token limit cut the JSON.
            this.badArguments ??= { name: state.name, raw: state.json }
            return []
          }
          return [Delta.ToolCall({ id: state.id, name: state.name, arguments: args, metadata: {} })]
        }
        return []
      }
      case "message_delta": {
        this.stop = stopReason(event.delta.stop_reason) ?? this.stop
        const u = event.usage
        this.outputTokens = u.output_tokens ?? this.outputTokens
        if (typeof u.input_tokens === "number") this.inputTokens = u.input_tokens
        if (typeof u.cache_read_input_tokens === "number") this.cacheRead = u.cache_read_input_tokens
        if (typeof u.cache_creation_input_tokens === "number") this.cacheWrite = u.cache_creation_input_tokens
        return []
      }
      case "message_stop":
        this.stopped = true
        return []
      default:
        return []
    }
  }

  end(): ReadonlyArray<ProviderDelta> | ProviderError {
    if (!this.stopped) return cutOff("anthropic", "message_stop")
    if (this.badArguments !== undefined) {
      return invalidArguments("anthropic", this.badArguments.name, this.badArguments.raw, this.stop)
    }
    const out: Array<ProviderDelta> = []
    if (this.structured && this.structuredText.length > 0) {
      try {
        out.push(Delta.Structured({ data: JsonText.parse(this.structuredText) }))
      } catch {
        // Not JSON after all: surface it as text so the caller sees what the model said.
        out.push(Delta.TextDelta({ text: this.structuredText }))
      }
    }
    out.push(
      Delta.Usage({
        usage: {
          inputTokens: this.inputTokens,
          outputTokens: this.outputTokens,
          cacheReadTokens: this.cacheRead,
          cacheWriteTokens: this.cacheWrite
        }
      })
    )
    // A message_stop after no stop_reason is still a finished reply.
    out.push(Delta.Finish({ reason: this.stop ?? "end_turn" }))
    return out
  }

  private text(text: string): ReadonlyArray<ProviderDelta> {
    // Structured replies are JSON text: buffer it and emit one Structured delta at the end.
    if (this.structured) {
      this.structuredText += text
      return []
    }
    return [Delta.TextDelta({ text })]
  }
}

/**
 * Builds the provider, loading the SDK on first use of the layer.
 */
export const make = (options: AnthropicOptions): Effect.Effect<Provider["Service"], ProviderError> =>
  Effect.gen(function* () {
    const sdkModule = yield* Effect.tryPromise({
      try: () => import("@anthropic-ai/sdk"),
      catch: loadError("anthropic", "@anthropic-ai/sdk")
    })
    const AnthropicSdk = sdkModule.default
    const client = new AnthropicSdk({
      apiKey: options.apiKey,
      maxRetries: 0,
      ...quietSdk,
      ...(options.baseUrl !== undefined ? { baseURL: options.baseUrl } : {})
    })
    const policy = options.retry ?? defaultRetryPolicy
    return Provider.of({
      stream: (request) => {
        const { name } = parseModel(request.model)
        const params = toMessagesParams(request, name.length > 0 ? name : request.model, options)
        return sdkStream({
          provider: "anthropic",
          keyVariable: "ANTHROPIC_API_KEY",
          policy,
          open: (signal) => client.messages.create(params, { signal }),
          converter: () => new EventConverter(params.output_config !== undefined)
        })
      }
    })
  })

/** The Anthropic provider as a layer. */
export const layer = (options: AnthropicOptions): Layer.Layer<Provider, ProviderError> =>
  Layer.effect(Provider, make(options))
