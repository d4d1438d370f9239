/**
 * The `InquiryBackend` that asks a model (RFD 028, jp-reference §5.5).
 *
 * For each inquiry, on a copy of the conversation taken just in time:
 * 1. append a synthetic `tool_call_response` `Tool paused: <question>`
 *    (`is_error: false`) for the paused call, so the model sees a complete pair;
 * 2. `sanitize` (still-running parallel calls get "Tool call was interrupted.",
 *    orphans go), then apply the conversation's compactions (RFD 064);
 * 2b. when the model's context window is known (`contextWindow`), cut the
 *    oldest events to fit as RFD 034 does (`ContextWindow.fitInquiry`: over
 *    90% of the window after the system parts and tools, cut to 80%, in
 *    steps that keep the prefix stable across the inquiries of a turn);
 * 3. tag the second-to-last provider-visible event `cache_breakpoint: true`
 *    (on the copy only: the prefix up to it matches the main conversation's);
 * 4. append the question as a `ChatRequest` carrying the answer schema
 *    (`InquirySchema.schemaFor`, stable per answer type, no inquiry id) and
 *    the prompt with the inquiry id line;
 * 5. call the provider with the turn's system parts and tool definitions and
 *    `toolChoice: "none"` (same cache prefix as the turn, no tool calls);
 * 6. take the first structured `chat_response`, extract and validate `answer`.
 *
 * The side call's settings merge three layers (RFD 034): the question's
 * own (`request.assistant`, its `target` table), over `inquiry`
 * (`conversation.inquiry.assistant`), over the main assistant (`model`,
 * `systemPrompt`). So the model is the request's `model`, else the merged
 * `model`, else `inquiryModel`, else the turn's `model`; its window is
 * `contextWindow(model)` (none: no limit). `system_prompt` replaces the
 * turn's, `instructions` are added as system sections,
 * `request.max_response_bytes` caps the reply (longer: a backend error) and
 * `request.cache` sets the provider's prompt caching.
 *
 * @example
 * ```ts
 * import * as LlmInquiryBackend from "parley/layers/LlmInquiryBackend"
 * import type { ProviderTool } from "parley/services/Provider"
 * declare const tools: ReadonlyArray<ProviderTool> // the turn's tool definitions
 * const layer = LlmInquiryBackend.layer({ model: "anthropic/claude-sonnet-4-5", systemPrompt: "Be brief.", tools })
 * // Layer<InquiryBackend, never, Provider>
 * ```
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import type * as Schema from "effect/Schema"
import { ChatRequest } from "../domain/event/ChatRequest.ts"
import { ChatResponse } from "../domain/event/ChatResponse.ts"
import type { EventMetadata } from "../domain/event/EventMetadata.ts"
import * as ContextWindow from "../domain/model/ContextWindow.ts"
import * as InquirySchema from "../domain/tool/InquirySchema.ts"
import { project } from "../domain/stream/Projection.ts"
import { sanitize } from "../domain/stream/Sanitize.ts"
import { intoParts, type ProviderEvent } from "../domain/stream/Thread.ts"
import * as Timestamp from "../domain/event/Timestamp.ts"
import { ToolCallRequest } from "../domain/event/ToolCallRequest.ts"
import { ToolCallResponse } from "../domain/event/ToolCallResponse.ts"
import {
  AnswerExtraction,
  InquiryBackend,
  type InquiryBackendRequest,
  InquiryCancelledError,
  type InquiryError,
  InquiryOtherError,
  InquiryProviderError,
  MissingStructuredData
} from "../services/InquiryBackend.ts"
import { collect, type ProviderDelta } from "../domain/model/Reply.ts"
import * as ConfigData from "../domain/tool/Config.ts"
import { Executor } from "../services/Executor.ts"
import { Provider, type ProviderTool } from "../services/Provider.ts"

/** What the LLM inquiry backend needs: the turn's model (or an inquiry model), system prompt, sections and tools. */
export interface LlmInquiryBackendOptions {
  /** The turn's model (`provider/model`). */
  readonly model: string
  /** `conversation.inquiry.assistant.model`: overrides the turn's model for side calls. */
  readonly inquiryModel?: string
  /** `conversation.inquiry.assistant` (RFD 034): the side calls' own settings, over the turn's. */
  readonly inquiry?: ConfigData.InquiryAssistant
  /** The turn's system prompt and sections (the same cache prefix as the turn). */
  readonly systemPrompt?: string
  readonly sections?: ReadonlyArray<string>
  /** The turn's tool definitions; sent with `toolChoice: "none"`. */
  readonly tools?: ReadonlyArray<ProviderTool>
  /** The context window (tokens) of a model, `undefined` when unknown (`ContextWindow.windowOf` over the config). */
  readonly contextWindow?: (model: string) => number | undefined
  /** Clock for the synthetic events (tests). */
  readonly now?: () => Timestamp.Timestamp
}

const withMetadata = (event: ProviderEvent, extra: EventMetadata): ProviderEvent => {
  const metadata = { ...event.metadata, ...extra }
  switch (event.type) {
    case "chat_request":
      return new ChatRequest({ ...event, metadata })
    case "chat_response":
      return new ChatResponse({ ...event, metadata })
    case "tool_call_request":
      return new ToolCallRequest({ ...event, metadata })
    case "tool_call_response":
      return new ToolCallResponse({ ...event, metadata })
  }
}

/**
 * The provider view of an inquiry side call (pure; exported for tests):
 * system parts and events, ending with the question `ChatRequest`.
 */
export const inquiryThread = (
  request: InquiryBackendRequest,
  answerType: InquirySchema.AnswerableType,
  options: Pick<LlmInquiryBackendOptions, "systemPrompt" | "sections" | "tools"> & {
    readonly now: () => Timestamp.Timestamp
    /** The side call's model window (tokens); absent: nothing is cut. */
    readonly window?: number | undefined
  }
): {
  readonly systemParts: ReadonlyArray<string>
  readonly events: ReadonlyArray<ProviderEvent>
  readonly schema: Schema.JsonObject
} => {
  const paused = new ToolCallResponse({
    timestamp: options.now(),
    id: request.toolCallId,
    content: InquirySchema.pausedToolContent(request.question),
    is_error: false
  })
  const system = intoParts({
    ...(options.systemPrompt !== undefined ? { systemPrompt: options.systemPrompt } : {}),
    ...(options.sections !== undefined ? { sections: options.sections } : {}),
    events: []
  }).systemParts
  const projected = project(sanitize([...request.entries, paused]))
  const copy =
    options.window === undefined
      ? projected
      : ContextWindow.fitInquiry(projected, {
          window: options.window,
          overheadChars: ContextWindow.overheadChars(system, options.tools ?? [])
        })
  const parts = { systemParts: system, events: intoParts({ events: copy }).events }
  const events = [...parts.events]
  if (events.length >= 2)
    events[events.length - 2] = withMetadata(events[events.length - 2]!, { cache_breakpoint: true })
  const schema = InquirySchema.schemaFor(answerType)
  events.push(
    new ChatRequest({
      timestamp: options.now(),
      content: InquirySchema.promptFor(request.toolName, request.question.text, request.inquiryId),
      schema
    })
  )
  return { systemParts: parts.systemParts, events, schema }
}

/** Builds the backend over the `Provider` in context. */
/** A reply over `max_response_bytes` (RFD 034): the side call fails instead of growing without bound. */
class TooLong {
  readonly _tag = "TooLong"
  constructor(readonly max: number) {}
}

/** The stream, failing once the text it carries passes `max` bytes. */
const capped = <E, R>(
  stream: Stream.Stream<ProviderDelta, E, R>,
  max: number
): Stream.Stream<ProviderDelta, E | TooLong, R> => {
  let bytes = 0
  return Stream.mapEffect(stream, (delta) => {
    const text =
      delta._tag === "TextDelta" || delta._tag === "ReasoningDelta"
        ? delta.text
        : delta._tag === "Structured"
          ? JSON.stringify(delta.data)
          : ""
    bytes += Buffer.byteLength(text, "utf8")
    return bytes > max ? Effect.fail(new TooLong(max)) : Effect.succeed(delta)
  })
}

/** The cache policy as a provider takes it: a duration is the nearest of short (≤ 5 minutes) and long. */
const cacheOf = (policy: ConfigData.CachePolicy | undefined): "off" | "short" | "long" | undefined => {
  if (policy === undefined) return undefined
  if (typeof policy === "boolean") return policy ? "short" : "off"
  if (policy === "off" || policy === "short" || policy === "long") return policy
  return ConfigData.durationMs(policy as `${number}s`) <= 300_000 ? "short" : "long"
}

const instructionText = (i: ConfigData.Instruction): string =>
  typeof i === "string"
    ? i
    : [
        i.title !== undefined ? `## ${i.title}` : undefined,
        i.description,
        ...(i.items ?? []).map((item) => `- ${item}`)
      ]
        .filter((l): l is string => l !== undefined && l !== "")
        .join("\n")

/** RFD 034's three layers merged for one request: the question's, the inquiry's, the turn's. */
const resolve = (options: LlmInquiryBackendOptions, request: InquiryBackendRequest) => {
  const merged = ConfigData.mergeAssistant(request.assistant, options.inquiry)
  const systemPrompt = merged?.system_prompt ?? options.systemPrompt
  const sections = [...(options.sections ?? []), ...(merged?.instructions ?? []).map(instructionText)]
  return {
    model: request.model ?? merged?.model ?? options.inquiryModel ?? options.model,
    thread: { ...(systemPrompt !== undefined ? { systemPrompt } : {}), sections },
    maxBytes: merged?.request?.max_response_bytes,
    cache: cacheOf(merged?.request?.cache)
  }
}

export const make = (options: LlmInquiryBackendOptions): Effect.Effect<InquiryBackend["Service"], never, Provider> =>
  Effect.gen(function* () {
    const provider = yield* Provider
    const now = options.now ?? Timestamp.now

    const ask = (request: InquiryBackendRequest): Effect.Effect<Schema.Json, InquiryError> =>
      Effect.gen(function* () {
        const answerType = request.question.answer_type
        if (!InquirySchema.isAnswerable(answerType)) {
          return yield* new InquiryOtherError({ detail: "A secret question is never sent to a model." })
        }
        const settings = resolve(options, request)
        const thread = inquiryThread(request, answerType, {
          ...options,
          ...settings.thread,
          now,
          window: options.contextWindow?.(settings.model)
        })
        const stream = provider.stream({
          model: settings.model,
          systemParts: thread.systemParts,
          events: thread.events,
          tools: options.tools ?? [],
          toolChoice: "none",
          schema: thread.schema,
          ...(settings.cache !== undefined ? { cache: settings.cache } : {})
        })
        const reply = yield* collect(settings.maxBytes === undefined ? stream : capped(stream, settings.maxBytes), {
          now
        }).pipe(
          // The side call is a model request of its own, under its inquiry's span (a consumer's tracer: docs/library.md#programs).
          Effect.withSpan("LlmInquiryBackend.modelRequest", {
            attributes: {
              "parley.model": settings.model,
              "parley.inquiry_id": request.inquiryId,
              "parley.tool_call_id": request.toolCallId
            }
          }),
          Effect.mapError(
            (e): InquiryError =>
              e instanceof TooLong
                ? new InquiryOtherError({
                    detail: `The reply was longer than request.max_response_bytes (${e.max} bytes)`
                  })
                : new InquiryProviderError({
                    provider: e.provider,
                    detail: e.message,
                    attempts: e.attempts,
                    ...(e.status === undefined ? {} : { status: e.status })
                  })
          )
        )
        const structured = reply.events.find(
          (e): e is ChatResponse => e.type === "chat_response" && e.variant === "structured"
        )
        if (structured === undefined) return yield* new MissingStructuredData()
        const answer = InquirySchema.extractAnswer(structured.data ?? null, answerType)
        if (Result.isFailure(answer)) return yield* new AnswerExtraction({ reason: answer.failure })
        return answer.success
      })

    return InquiryBackend.of({
      // The call runs in its own fiber so that a provider call cut off by an
      // interruption becomes `InquiryCancelledError`; interrupting the caller
      // interrupts that fiber (and aborts the HTTP request) with it.
      inquire: (request) =>
        Effect.gen(function* () {
          const fiber = yield* Effect.forkChild(ask(request))
          const exit = yield* Fiber.await(fiber)
          if (Exit.isSuccess(exit)) return exit.value
          if (Cause.hasInterruptsOnly(exit.cause)) return yield* new InquiryCancelledError()
          return yield* exit
        })
    })
  })

/** The LLM inquiry backend as a layer over `Provider`. */
export const layer = (options: LlmInquiryBackendOptions): Layer.Layer<InquiryBackend, never, Provider> =>
  Layer.effect(InquiryBackend, make(options))

/**
 * The backend of a run whose model is chosen once it has started (`model`
 * is awaited at the first question): the config's inquiry settings, system
 * prompt and context windows, and the run's tools (`Executor`).
 */
export const layerOnChosen = (
  config: ConfigData.Config,
  model: Effect.Effect<string>
): Layer.Layer<InquiryBackend, never, Provider | Executor> =>
  Layer.effect(
    InquiryBackend,
    Effect.gen(function* () {
      const provider = yield* Provider
      const executor = yield* Executor
      const inquiry = config.conversation?.inquiry?.assistant
      const backend = yield* Effect.cached(
        Effect.flatMap(model, (chosen) =>
          make({
            model: chosen,
            ...(inquiry !== undefined ? { inquiry } : {}),
            ...(config.assistant?.system_prompt !== undefined ? { systemPrompt: config.assistant.system_prompt } : {}),
            tools: executor.definitions,
            contextWindow: (m) => ContextWindow.windowOf(m, config)
          }).pipe(Effect.provideService(Provider, provider))
        )
      )
      return InquiryBackend.of({ inquire: (request) => Effect.flatMap(backend, (b) => b.inquire(request)) })
    })
  )
