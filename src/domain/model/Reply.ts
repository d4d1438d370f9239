/**
 * A model's reply (docs/decisions.md#reply-end-marker; docs/decisions.md#services-are-contracts: the reply vocabulary and its
 * fold live in the domain, the `Provider` service is only the contract that
 * streams it).
 *
 * A provider streams {@link ProviderDelta}s; {@link ReplyBuilder} folds them
 * into the events to record — reasoning, text, tool calls, structured data —
 * in the order the model produced them, and {@link replyWarning} says when a
 * finished reply is stored but not whole. Nothing here does I/O: the clock
 * that stamps the events is passed in.
 *
 * @example
 * ```ts
 * import * as Reply from "parley/domain/model/Reply"
 * import * as Timestamp from "parley/domain/event/Timestamp"
 *
 * const at = Timestamp.make("2026-03-01 10:00:00")
 * const reply = Reply.fold([
 *   Reply.ProviderDelta.TextDelta({ text: "Hel" }),
 *   Reply.ProviderDelta.TextDelta({ text: "lo" }),
 *   Reply.ProviderDelta.Finish({ reason: "end_turn" })
 * ], () => at)
 * // reply.events: [ChatResponse.message(at, "Hello")], reply.stopReason: "end_turn"
 * ```
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { ChatResponse } from "../event/ChatResponse.ts"
import type { EventMetadata } from "../event/EventMetadata.ts"
import * as Timestamp from "../event/Timestamp.ts"
import { ToolCallRequest } from "../event/ToolCallRequest.ts"
import * as DeepArguments from "../tool/DeepArguments.ts"

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
 *   a complete one (docs/decisions.md#reply-end-marker).
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
 * complete (docs/decisions.md#reply-end-marker: it used to be left `pending-llm-response`).
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
            // Arguments too deep to record or send back become a marker (docs/decisions.md#deep-tool-arguments).
            arguments: DeepArguments.bounded(delta.arguments),
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
    if (this.stopReason !== undefined && this.events.length === 0)
      this.events.push(ChatResponse.message(this.now(), ""))
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
 * The reply that `deltas` make, stamped by `now`: {@link ReplyBuilder} run
 * over a finite sequence (what `collect` does for a stream).
 *
 * @example
 * ```ts
 * import * as Reply from "parley/domain/model/Reply"
 * import * as Timestamp from "parley/domain/event/Timestamp"
 * const empty = Reply.fold([Reply.ProviderDelta.Finish({ reason: "end_turn" })], () => Timestamp.make("2026-03-01 10:00:00"))
 * empty.events.length // 1: one empty message, so recording it completes the turn
 * ```
 */
export const fold = (deltas: Iterable<ProviderDelta>, now: () => Timestamp.Timestamp = Timestamp.now): Reply => {
  const builder = new ReplyBuilder(now)
  for (const delta of deltas) builder.add(delta)
  return builder.finish()
}

/**
 * Runs a reply stream to the end and returns its events.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { collect } from "parley/domain/model/Reply"
 * import { Provider, type ProviderRequest } from "parley/services/Provider"
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
 * import { replyWarning } from "parley/domain/model/Reply"
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
