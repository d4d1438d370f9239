/**
 * A language model: streams a reply to a provider view of the conversation.
 *
 * Requests carry only what `Thread.intoParts` yields (system parts and the
 * provider-visible events), so inquiry events and turn markers can never
 * reach a model (RFD 005). Replies stream as typed deltas so a turn loop can
 * print text as it arrives; `collect` folds them into the events to persist.
 * `request.model` is the full `provider/model` string: one `Provider` can
 * serve a turn on one provider and an inquiry side call on another.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Provider from "./Provider.ts"
 * const program = Effect.gen(function*() {
 *   const provider = yield* Provider.Provider
 *   const reply = yield* Provider.collect(provider.stream({
 *     model: "scripted", systemParts: [], events, tools: []
 *   }))
 *   reply.events // ChatResponse | ToolCallRequest, ready to append
 * })
 * ```
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { ChatResponse } from "../domain/event/ChatResponse.ts"
import type { EventMetadata } from "../domain/event/EventMetadata.ts"
import type { ProviderEvent } from "../domain/stream/Thread.ts"
import * as Timestamp from "../domain/event/Timestamp.ts"
import { ToolCallRequest } from "../domain/event/ToolCallRequest.ts"
import type { ToolDefinition } from "../domain/tool/ToolDefinition.ts"

/** The events a provider may see: only what `Thread.intoParts` yields. */
export type { ProviderEvent }

/** A tool the model may call; `parameters` is a JSON Schema object. */
export type ProviderTool = ToolDefinition

export interface ProviderRequest {
  /** `anthropic/<model>`, `openai/<model>` or `scripted`. */
  readonly model: string
  readonly systemParts: ReadonlyArray<string>
  readonly events: ReadonlyArray<ProviderEvent>
  readonly tools: ReadonlyArray<ProviderTool>
  /** `none` keeps the tool definitions (cache prefix) but forbids calls: inquiry side calls. */
  readonly toolChoice?: "auto" | "none"
  /** Structured output. Defaults to the `schema` of a trailing `ChatRequest`. */
  readonly schema?: Schema.JsonObject
  readonly maxTokens?: number
}

/** Why the model stopped. */
export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "refusal" | "other"

export interface Usage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadTokens: number
  readonly cacheWriteTokens: number
}

/**
 * One piece of a streamed reply.
 * - `TextDelta` / `ReasoningDelta`: text as it arrives; consecutive deltas of
 *   one kind form one block.
 * - `ReasoningDone`: closes a reasoning block with its provider metadata
 *   (`anthropic_thinking_signature`, `anthropic_redacted_thinking`).
 * - `ToolCallStart`: a call began (arguments still streaming); `ToolCall`: complete.
 * - `Structured`: the decoded JSON of a structured-output reply.
 */
export type ProviderDelta = Data.TaggedEnum<{
  TextDelta: { readonly text: string }
  ReasoningDelta: { readonly text: string }
  ReasoningDone: { readonly metadata: EventMetadata }
  ToolCallStart: { readonly id: string; readonly name: string }
  ToolCall: {
    readonly id: string
    readonly name: string
    readonly arguments: Schema.JsonObject
    readonly metadata: EventMetadata
  }
  Structured: { readonly data: Schema.Json }
  Usage: { readonly usage: Usage }
  Finish: { readonly reason: StopReason }
}>

export const ProviderDelta = Data.taggedEnum<ProviderDelta>()

/**
 * A model call failed. `retryable` marks transient failures (429, 408, 409,
 * 5xx, connection errors); `attempts` counts the HTTP attempts made,
 * retries included.
 */
export class ProviderError extends Schema.TaggedError<ProviderError>()("ProviderError", {
  provider: Schema.String,
  status: Schema.optionalKey(Schema.Number),
  message: Schema.String,
  retryable: Schema.Boolean,
  attempts: Schema.Number
}) {}

/** HTTP statuses worth retrying; `undefined` is a connection-level failure. */
export const isRetryableStatus = (status: number | undefined): boolean =>
  status === undefined || status === 408 || status === 409 || status === 429 || status >= 500

export class Provider extends Context.Service<Provider, {
  /** Streams one reply. Interrupting the stream aborts the underlying request. */
  stream(request: ProviderRequest): Stream.Stream<ProviderDelta, ProviderError>
}>()("parley/Provider") {}

/** The schema a request asks for: its own, or that of a trailing `ChatRequest`. */
export const requestedSchema = (request: ProviderRequest): Schema.JsonObject | undefined => {
  if (request.schema !== undefined) return request.schema
  const last = request.events.at(-1)
  return last?.type === "chat_request" ? last.schema : undefined
}

/** The `provider/` prefix and model name of a model string (`scripted` has no name). */
export const parseModel = (model: string): { readonly provider: string; readonly name: string } => {
  const slash = model.indexOf("/")
  return slash < 0 ? { provider: model, name: "" } : { provider: model.slice(0, slash), name: model.slice(slash + 1) }
}

// --- Retries ------------------------------------------------------------------

/** Bounded exponential backoff for transient failures. */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  readonly times: number
  /** First delay; each retry doubles it. */
  readonly baseDelay: Duration.Input
}

export const defaultRetryPolicy: RetryPolicy = { times: 3, baseDelay: "200 millis" }

/**
 * Runs `attempt` and retries it while it fails with a retryable
 * `ProviderError`, stamping the final error with the number of attempts made.
 *
 * @example
 * ```ts
 * withRetries(Effect.fail(error), { times: 3, baseDelay: "1 millis" }) // fails with attempts: 4
 * ```
 */
export const withRetries = <A, R>(
  attempt: Effect.Effect<A, ProviderError, R>,
  policy: RetryPolicy
): Effect.Effect<A, ProviderError, R> =>
  Effect.suspend(() => {
    let attempts = 0
    const counted = Effect.suspend(() => {
      attempts++
      return attempt
    }).pipe(Effect.mapError((e) => new ProviderError({ ...errorFields(e), attempts })))
    return counted.pipe(
      Effect.retry({
        schedule: Schedule.exponential(policy.baseDelay),
        times: policy.times,
        while: (e: ProviderError) => e.retryable
      })
    )
  })

const errorFields = (e: ProviderError) => ({
  provider: e.provider,
  message: e.message,
  retryable: e.retryable,
  ...(e.status === undefined ? {} : { status: e.status })
})

// --- Collecting a reply ---------------------------------------------------------

/** A finished reply: the events to persist, in the order the model produced them. */
export interface Reply {
  readonly events: ReadonlyArray<ChatResponse | ToolCallRequest>
  readonly usage: Usage | undefined
  readonly stopReason: StopReason | undefined
}

/**
 * Folds deltas into events: each reasoning block → `ChatResponse` reasoning
 * (with its signature metadata), each text block → `ChatResponse` message,
 * each tool call → `ToolCallRequest`, structured data → `ChatResponse` data.
 */
export class ReplyBuilder {
  private readonly events: Array<ChatResponse | ToolCallRequest> = []
  private text = ""
  private reasoning: string | undefined = undefined
  usage: Usage | undefined = undefined
  stopReason: StopReason | undefined = undefined

  constructor(private readonly now: () => Timestamp.Timestamp = Timestamp.now) {}

  add(delta: ProviderDelta): void {
    switch (delta._tag) {
      case "TextDelta":
        this.flushReasoning({})
        this.text += delta.text
        return
      case "ReasoningDelta":
        this.flushText()
        this.reasoning = (this.reasoning ?? "") + delta.text
        return
      case "ReasoningDone":
        this.flushText()
        this.flushReasoning(delta.metadata, true)
        return
      case "ToolCallStart":
        return
      case "ToolCall":
        this.flushAll()
        this.events.push(
          new ToolCallRequest({
            timestamp: this.now(),
            id: delta.id,
            name: delta.name,
            arguments: delta.arguments,
            metadata: delta.metadata
          })
        )
        return
      case "Structured":
        this.flushAll()
        this.events.push(ChatResponse.structured(this.now(), delta.data))
        return
      case "Usage":
        this.usage = delta.usage
        return
      case "Finish":
        this.stopReason = delta.reason
        return
    }
  }

  finish(): Reply {
    this.flushAll()
    return { events: [...this.events], usage: this.usage, stopReason: this.stopReason }
  }

  private flushAll() {
    this.flushReasoning({})
    this.flushText()
  }

  private flushText() {
    if (this.text.length > 0) this.events.push(ChatResponse.message(this.now(), this.text))
    this.text = ""
  }

  private flushReasoning(metadata: EventMetadata, force = false) {
    if (this.reasoning !== undefined || force) {
      this.events.push(ChatResponse.reasoning(this.now(), this.reasoning ?? "", metadata))
    }
    this.reasoning = undefined
  }
}

/**
 * Runs a reply stream to the end and returns its events.
 *
 * @example
 * ```ts
 * const reply = yield* collect(provider.stream(request))
 * ```
 */
export const collect = <E, R>(
  stream: Stream.Stream<ProviderDelta, E, R>,
  options: { readonly now?: () => Timestamp.Timestamp } = {}
): Effect.Effect<Reply, E, R> =>
  Effect.suspend(() => {
    const builder = new ReplyBuilder(options.now)
    return Stream.runForEach(stream, (delta) => Effect.sync(() => builder.add(delta))).pipe(
      Effect.map(() => builder.finish())
    )
  })
