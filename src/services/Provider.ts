/**
 * A language model: streams a reply to a provider view of the conversation.
 *
 * Requests carry only what `Thread.intoParts` yields (system parts and the
 * provider-visible events), so inquiry events and turn markers can never
 * reach a model (RFD 005). Replies stream as typed deltas so a turn loop can
 * print text as it arrives. This module is the contract only
 * (docs/decisions.md#services-are-contracts): the deltas and their fold into the events to persist (`collect`,
 * `ReplyBuilder`) are the domain's (`parley/domain/model/Reply`), the retry
 * policy is the live layers' (`parley/layers/provider/Retry`).
 * `request.model` is the full `provider/model` string: one `Provider` can
 * serve a turn on one provider and an inquiry side call on another.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Provider from "parley/services/Provider"
 * import { collect } from "parley/domain/model/Reply"
 * import type { ProviderEvent } from "parley/domain/stream/Thread"
 * declare const events: ReadonlyArray<ProviderEvent> // from Thread.intoParts
 * const program = Effect.gen(function*() {
 *   const provider = yield* Provider.Provider
 *   const reply = yield* collect(provider.stream({
 *     model: "scripted", systemParts: [], events, tools: []
 *   }))
 *   reply.events // ChatResponse | ToolCallRequest, ready to append
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"
import { MissingPackage } from "../domain/package/MissingPackage.ts"
import type * as Stream from "effect/Stream"
import { ProviderDelta, type StopReason, type Usage } from "../domain/model/Reply.ts"
import type { ProviderEvent } from "../domain/stream/Thread.ts"
import type { ToolDefinition } from "../domain/tool/ToolDefinition.ts"

/** What a provider streams (the reply vocabulary lives in the domain: `parley/domain/model/Reply`). */
export { ProviderDelta, type StopReason, type Usage }

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
  /**
   * Prompt caching (RFD 034 `CachePolicy`): `off` marks nothing cacheable,
   * `long` asks for the provider's long cache (Anthropic: one hour);
   * default `short`. Providers without explicit caching ignore it.
   */
  readonly cache?: "off" | "short" | "long"
}

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
/** A setting a provider needs and was not given: its API key, or the scripted model's script. */
export const ProviderMissing = Schema.Literals(["api_key", "script"])
export type ProviderMissing = typeof ProviderMissing.Type

/** The kinds of {@link ProviderError} (see the list above). */
export const ProviderFailure = Schema.Literals(["config", "http", "connection", "reply"])
export type ProviderFailure = typeof ProviderFailure.Type

const attemptsText = (n: number) => `${n} attempt${n === 1 ? "" : "s"}`

/**
 * A model call failed. `retryable` marks transient failures (429, 408, 409,
 * 5xx, connection errors); `attempts` counts the HTTP attempts made, retries
 * included; `retryAfterMs` is the wait the provider asked for (`Retry-After`).
 *
 * The message is one line in a fixed format (docs/models.md):
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
  retryAfterMs: Schema.optionalKey(Schema.Number),
  /**
   * What is missing before anything can be sent (failure `config`): the
   * provider's API key (`api_key`), the scripted model's script (`script`),
   * or the provider's SDK, an optional package that is not installed
   * (docs/decisions.md#optional-peer-dependencies). The edge says how to
   * supply it (`cli/ErrorLine`).
   */
  missing: Schema.optionalKey(Schema.Union([ProviderMissing, MissingPackage]))
}) {
  // biome-ignore lint/suspicious/useGetterReturn: the switch is exhaustive over `failure` (the compiler checks it)
  override get message(): string {
    const text =
      this.hint === undefined ? this.detail : `${this.detail}${/[.!?]$/.test(this.detail) ? "" : "."} ${this.hint}`
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
  ...(e.missing === undefined ? {} : { missing: e.missing }),
  ...(e.retryAfterMs === undefined ? {} : { retryAfterMs: e.retryAfterMs })
})

/**
 * A language model, as a service: `stream(request)` yields {@link ProviderDelta}s
 * that `Reply.collect` folds into the events to record. Live: `ProviderLive.layer`
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
export class Provider extends Context.Service<
  Provider,
  {
    /** Streams one reply. Interrupting the stream aborts the underlying request. */
    stream(request: ProviderRequest): Stream.Stream<ProviderDelta, ProviderError>
  }
>()("parley/Provider") {}

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
