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
 * import * as Provider from "parley/services/Provider"
 * import type { ProviderEvent } from "parley/domain/stream/Thread"
 * declare const events: ReadonlyArray<ProviderEvent> // from Thread.intoParts
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
import * as Duration from "effect/Duration"
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

/** One request to a model: the model, the provider view of the conversation (system parts and `Thread.intoParts` events), the tools, and optionally a structured-output schema. */
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

/**
 * Why the model stopped. `max_tokens` (Anthropic `max_tokens`, OpenAI
 * `length`) means the reply is cut short; `refusal` (Anthropic `refusal`,
 * OpenAI `content_filter`) that the model declined. See `replyWarning`.
 */
export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "refusal" | "other"

/** Token counts of one reply (0 when the provider does not say). */
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
 * - `Usage`: token counts, once, just before `Finish`.
 * - `Finish`: the reply is complete — the provider sent its end marker
 *   (Anthropic `message_stop`; OpenAI a `finish_reason` and/or `[DONE]`). The
 *   live providers end every successful stream with exactly one `Finish`; a
 *   stream that closes without the end marker fails with a `reply`
 *   `ProviderError` instead, so a reply that was cut off is never taken for
 *   a complete one (issue 11).
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

/**
 * Constructors and matchers of {@link ProviderDelta} (`ProviderDelta.TextDelta({ text })`, `ProviderDelta.$match`).
 *
 * @example
 * ```ts
 * import { ProviderDelta } from "parley"
 * const deltas = [ProviderDelta.TextDelta({ text: "Hi" }), ProviderDelta.Finish({ reason: "end_turn" })]
 * ```
 */
export const ProviderDelta = Data.taggedEnum<ProviderDelta>()

/**
 * What kind of failure a `ProviderError` is:
 * - `config`: nothing was sent — unknown model, missing key, unreadable or
 *   exhausted script; the message alone says what to set or fix;
 * - `http`: the provider answered with an error status (`status`);
 * - `connection`: no response arrived (refused, reset, timed out);
 * - `reply`: a response that broke off or broke the protocol — a stream
 *   closed before the provider's end marker, malformed server-sent events, an
 *   error event mid-reply, invalid tool arguments.
 */
/** The kinds of {@link ProviderError} (see the list above). */
export const ProviderFailure = Schema.Literals(["config", "http", "connection", "reply"])
export type ProviderFailure = typeof ProviderFailure.Type

const attemptsText = (n: number) => `${n} attempt${n === 1 ? "" : "s"}`

/**
 * A model call failed. `retryable` marks transient failures (429, 408, 409,
 * 5xx, connection errors); `attempts` counts the HTTP attempts made, retries
 * included; `retryAfterMs` is the wait the provider asked for (`Retry-After`).
 *
 * The message is one line in a fixed format (issue 11):
 * - `config`: `<detail>` (it already names the setting to fix);
 * - `http`: `<provider>: HTTP <status> after <n> attempt(s): <detail>[. <hint>]`;
 * - `connection`: `<provider>: no response after <n> attempt(s): <detail>[. <hint>]`;
 * - `reply`: `<provider>: <detail>[. <hint>]`.
 *
 * @example
 * ```ts
 * import { ProviderError } from "parley/services/Provider"
 * new ProviderError({ provider: "anthropic", failure: "http", status: 500, detail: "Overloaded", retryable: true, attempts: 4 })
 *   .message // "anthropic: HTTP 500 after 4 attempts: Overloaded"
 * ```
 */
export class ProviderError extends Schema.TaggedError<ProviderError>()("ProviderError", {
  provider: Schema.String,
  failure: ProviderFailure,
  status: Schema.optionalKey(Schema.Number),
  /** What went wrong, in the provider's words when it said something (HTML pages summarised). */
  detail: Schema.String,
  /** What to do about it (e.g. which key variable to check). */
  hint: Schema.optionalKey(Schema.String),
  retryable: Schema.Boolean,
  attempts: Schema.Number,
  retryAfterMs: Schema.optionalKey(Schema.Number)
}) {
  override get message(): string {
    const text = this.hint === undefined
      ? this.detail
      : `${this.detail}${/[.!?]$/.test(this.detail) ? "" : "."} ${this.hint}`
    switch (this.failure) {
      case "http":
        return `${this.provider}: HTTP ${this.status ?? "error"} after ${attemptsText(this.attempts)}: ${text}`
      case "connection":
        return `${this.provider}: no response after ${attemptsText(this.attempts)}: ${text}`
      case "reply":
        return `${this.provider}: ${text}`
      case "config":
        return text
    }
  }
}

/** The fields of an error, to rebuild it with some changed (`new ProviderError({ ...fieldsOf(e), attempts })`). */
export const fieldsOf = (e: ProviderError): ConstructorParameters<typeof ProviderError>[0] => ({
  provider: e.provider,
  failure: e.failure,
  detail: e.detail,
  retryable: e.retryable,
  attempts: e.attempts,
  ...(e.status === undefined ? {} : { status: e.status }),
  ...(e.hint === undefined ? {} : { hint: e.hint }),
  ...(e.retryAfterMs === undefined ? {} : { retryAfterMs: e.retryAfterMs })
})

/** HTTP statuses worth retrying; `undefined` is a connection-level failure. */
export const isRetryableStatus = (status: number | undefined): boolean =>
  status === undefined || status === 408 || status === 409 || status === 429 || status >= 500

/**
 * A language model, as a service: `stream(request)` yields {@link ProviderDelta}s
 * that `collect` folds into the events to record. Live: `ProviderLive.layer`
 * (Anthropic, OpenAI-compatible, scripted); any effect/ai `LanguageModel`:
 * `providerLayer` from `parley/ai`; tests: `ScriptedProvider`.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import * as Stream from "effect/Stream"
 * import { Provider, ProviderDelta } from "parley"
 *
 * // A model that always says "Hi".
 * const hi = Layer.succeed(Provider, Provider.of({
 *   stream: () => Stream.fromIterable([ProviderDelta.TextDelta({ text: "Hi" }), ProviderDelta.Finish({ reason: "end_turn" })])
 * }))
 * ```
 */
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
  /**
   * The longest wait a provider may ask for (`Retry-After`) that is honoured
   * (default 30 s); when it asks for longer, retrying now is pointless, so the
   * retries stop and the error says how long it asked for.
   */
  readonly maxServerDelay?: Duration.Input
}

/** The live providers' retries: 3 retries from 200 ms, honouring a `Retry-After` of up to 30 s. */
export const defaultRetryPolicy: RetryPolicy = { times: 3, baseDelay: "200 millis", maxServerDelay: "30 seconds" }

const DEFAULT_MAX_SERVER_DELAY_MS = 30_000

/**
 * The retry schedule: exponential from `baseDelay`, except that a wait the
 * provider asked for (`retryAfterMs` on the failed attempt's error) replaces
 * the computed delay — as the SDKs do when their own retries are on.
 */
export const retrySchedule = (policy: RetryPolicy): Schedule.Schedule<Duration.Duration, ProviderError> =>
  Schedule.exponential(policy.baseDelay).pipe(
    Schedule.modifyDelay((meta: Schedule.Metadata<Duration.Duration, ProviderError>) =>
      Effect.succeed(meta.input.retryAfterMs ?? meta.duration)
    )
  )

const seconds = (ms: number) => `${Math.ceil(ms / 1000)} s`

/**
 * Runs `attempt` and retries it while it fails with a retryable
 * `ProviderError` (under `retrySchedule`), stamping the final error with the
 * number of attempts made.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { ProviderError, withRetries } from "parley/services/Provider"
 * const error = new ProviderError({ provider: "openai", failure: "http", status: 503, detail: "busy", retryable: true, attempts: 1 })
 * withRetries(Effect.fail(error), { times: 3, baseDelay: "1 millis" }) // fails with attempts: 4
 * ```
 */
export const withRetries = <A, R>(
  attempt: Effect.Effect<A, ProviderError, R>,
  policy: RetryPolicy
): Effect.Effect<A, ProviderError, R> =>
  Effect.suspend(() => {
    const maxServerDelay = policy.maxServerDelay === undefined
      ? DEFAULT_MAX_SERVER_DELAY_MS
      : Duration.toMillis(policy.maxServerDelay)
    const tooLong = (e: ProviderError) => e.retryAfterMs !== undefined && e.retryAfterMs > maxServerDelay
    let attempts = 0
    const counted = Effect.suspend(() => {
      attempts++
      return attempt
    }).pipe(Effect.mapError((e) => new ProviderError({ ...fieldsOf(e), attempts })))
    return counted.pipe(
      Effect.retry({
        schedule: retrySchedule(policy),
        times: policy.times,
        while: (e: ProviderError) => e.retryable && !tooLong(e)
      }),
      Effect.mapError((e) =>
        e.retryable && tooLong(e) && e.hint === undefined
          ? new ProviderError({
            ...fieldsOf(e),
            hint: `The provider asks to wait ${seconds(e.retryAfterMs!)} before retrying (parley waits at most ${
              seconds(maxServerDelay)
            }); try again later.`
          })
          : e
      )
    )
  })

// --- Collecting a reply ---------------------------------------------------------

/** A reply: the events to persist, in the order the model produced them. */
export interface Reply {
  /**
   * Never empty for a finished reply: a reply that finished with nothing in
   * it is one empty message, so that recording it completes the turn.
   */
  readonly events: ReadonlyArray<ChatResponse | ToolCallRequest>
  readonly usage: Usage | undefined
  /** Set by the `Finish` delta; `undefined` when the stream did not finish (interrupted). */
  readonly stopReason: StopReason | undefined
}

/**
 * Folds deltas into events: each reasoning block → `ChatResponse` reasoning
 * (with its signature metadata), each text block → `ChatResponse` message,
 * each tool call → `ToolCallRequest`, structured data → `ChatResponse` data.
 * A reply that finished (`Finish`) with none of these is one empty
 * `ChatResponse` message: the model did answer, with nothing, and the turn is
 * complete (issue 11: it used to be left `pending-llm-response`).
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
    if (this.stopReason !== undefined && this.events.length === 0) this.events.push(ChatResponse.message(this.now(), ""))
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
 * import * as Effect from "effect/Effect"
 * import { collect, Provider, type ProviderRequest } from "parley/services/Provider"
 * declare const request: ProviderRequest
 * const reply = Effect.flatMap(Effect.service(Provider), (provider) => collect(provider.stream(request))) // Effect<Reply, ProviderError, Provider>
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

/**
 * The warning a CLI prints on stderr (after `parley: `) about a finished
 * reply that is stored but not whole: it hit the output token limit, or the
 * model refused. `undefined` for a normal finish.
 *
 * @example
 * ```ts
 * import { replyWarning } from "parley/services/Provider"
 * replyWarning("anthropic/claude-sonnet-4-5", "max_tokens")
 * // "warning: anthropic/claude-sonnet-4-5 stopped at its output token limit; the reply is cut short (saved as it is)."
 * ```
 */
export const replyWarning = (model: string, reason: StopReason | undefined): string | undefined => {
  switch (reason) {
    case "max_tokens":
      return `warning: ${model} stopped at its output token limit; the reply is cut short (saved as it is).`
    case "refusal":
      return `warning: ${model} refused to answer or was stopped by a content filter (saved as it is).`
    default:
      return undefined
  }
}
