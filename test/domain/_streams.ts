/**
 * Stream builders for the stream-rule tests: each event gets the next
 * timestamp of a private clock (one second apart), so tests can name exact
 * instants and orders.
 */
import { ChatRequest } from "../../src/domain/event/ChatRequest.ts"
import { ChatResponse } from "../../src/domain/event/ChatResponse.ts"
import type { CompactionRule } from "../../src/domain/event/Compaction.ts"
import { Compaction, ConfigDelta, type StreamEntry, UnknownEntry } from "../../src/domain/event/ConversationEvent.ts"
import { InquiryAnswerType } from "../../src/domain/event/InquiryAnswerType.ts"
import * as InquiryId from "../../src/domain/event/InquiryId.ts"
import { InquiryRequest } from "../../src/domain/event/InquiryRequest.ts"
import { InquiryResponse } from "../../src/domain/event/InquiryResponse.ts"
import { InquirySource } from "../../src/domain/event/InquirySource.ts"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
import { ToolCallRequest } from "../../src/domain/event/ToolCallRequest.ts"
import { ToolCallResponse } from "../../src/domain/event/ToolCallResponse.ts"
import { TurnStart } from "../../src/domain/event/TurnStart.ts"
import type * as Schema from "effect/Schema"

const BASE = 1_772_700_000n * 1_000_000_000n // 2026-03-05 08:40:00 UTC

/** A fresh builder whose clock starts at `start` seconds after the base instant. */
export const streams = (start = 0) => {
  let tick = start
  const next = (): Timestamp.Timestamp => Timestamp.fromEpochNanos(BASE + BigInt(tick++) * 1_000_000_000n)
  return {
    /** The timestamp the next event will get (without consuming it). */
    peek: (): Timestamp.Timestamp => Timestamp.fromEpochNanos(BASE + BigInt(tick) * 1_000_000_000n),
    at: (seconds: number): Timestamp.Timestamp => Timestamp.fromEpochNanos(BASE + BigInt(seconds) * 1_000_000_000n),
    ts: () => new TurnStart({ timestamp: next() }),
    cr: (content: string, schema?: { readonly [k: string]: Schema.Json }) =>
      new ChatRequest({ timestamp: next(), content, ...(schema !== undefined ? { schema } : {}) }),
    msg: (text: string) => ChatResponse.message(next(), text),
    reasoning: (text: string) => ChatResponse.reasoning(next(), text),
    data: (json: Schema.Json) => ChatResponse.structured(next(), json),
    call: (id: string, name = "write_note", args: { readonly [k: string]: Schema.Json } = {}) =>
      new ToolCallRequest({ timestamp: next(), id, name, arguments: args }),
    result: (id: string, content = "ok", is_error = false) =>
      new ToolCallResponse({ timestamp: next(), id, content, is_error }),
    ask: (
      id: string,
      tool = "write_note",
      text = "Overwrite?",
      answerType: InquiryAnswerType = InquiryAnswerType.boolean
    ) =>
      new InquiryRequest({
        timestamp: next(),
        id: InquiryId.make(id),
        source: InquirySource.tool(tool),
        question: { text, answer_type: answerType }
      }),
    askAssistant: (id: string, text = "Which one?") =>
      new InquiryRequest({
        timestamp: next(),
        id: InquiryId.make(id),
        source: InquirySource.assistant,
        question: { text, answer_type: InquiryAnswerType.text }
      }),
    answer: (id: string, answer: Schema.Json = true) => InquiryResponse.answered(next(), InquiryId.make(id), answer),
    cancel: (id: string, reason = "user") => InquiryResponse.cancelled(next(), InquiryId.make(id), reason),
    redact: (id: string) => InquiryResponse.redacted(next(), InquiryId.make(id)),
    delta: (delta: { readonly [k: string]: Schema.Json } = { assistant: { model: "x" } }) =>
      new ConfigDelta({ raw: { type: "config_delta", timestamp: next(), delta } }),
    /** A compaction of turns `from`…`to` (inclusive) with the given policies (none by default). */
    compaction: (from = 0, to = 0, policies: Omit<CompactionRule, "timestamp" | "from_turn" | "to_turn"> = {}) =>
      Compaction.fromRule({ timestamp: next(), from_turn: from, to_turn: to, ...policies }),
    unknown: (kind = "turn_statistics") => new UnknownEntry({ raw: { type: kind, timestamp: next(), foo: "YmFy" } })
  }
}

/** A compact picture of a stream for assertions: `TS`, `CR:hi`, `TC:a`, `TR:a!` (error)… */
export const shape = (entries: ReadonlyArray<StreamEntry>): Array<string> =>
  entries.map((e) => {
    switch (e.type) {
      case "turn_start":
        return "TS"
      case "chat_request":
        return `CR:${e.content}`
      case "chat_response":
        return e.variant === "message" ? `M:${e.message}` : e.variant === "reasoning" ? `R:${e.reasoning}` : "D"
      case "tool_call_request":
        return `TC:${e.id}`
      case "tool_call_response":
        return `TR:${e.id}${e.is_error ? "!" : ""}`
      case "inquiry_request":
        return `IQ:${e.id}`
      case "inquiry_response":
        return `IA:${e.id}`
      case "config_delta":
        return "DELTA"
      case "compaction":
        return "COMPACTION"
      case "unknown":
        return `UNKNOWN:${e.kind}`
    }
  })
