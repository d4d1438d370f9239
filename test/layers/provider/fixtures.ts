/**
 * Conversations and request helpers shared by the provider tests: a stream
 * with reasoning, parallel tool calls and an inquiry pair recorded between a
 * tool call and its result — exactly what must never reach a provider.
 */
import { ChatRequest } from "../../../src/domain/event/ChatRequest.ts"
import { ChatResponse } from "../../../src/domain/event/ChatResponse.ts"
import type { StreamEntry } from "../../../src/domain/event/ConversationEvent.ts"
import * as InquiryId from "../../../src/domain/event/InquiryId.ts"
import { InquiryRequest } from "../../../src/domain/event/InquiryRequest.ts"
import { InquiryAnswered } from "../../../src/domain/event/InquiryResponse.ts"
import { sanitize } from "../../../src/domain/stream/Sanitize.ts"
import { intoParts } from "../../../src/domain/stream/Thread.ts"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"
import { ToolCallRequest } from "../../../src/domain/event/ToolCallRequest.ts"
import { ToolCallResponse } from "../../../src/domain/event/ToolCallResponse.ts"
import { TurnStart } from "../../../src/domain/event/TurnStart.ts"
import type { RetryPolicy } from "../../../src/layers/provider/Retry.ts"
import type { ProviderRequest, ProviderTool } from "../../../src/services/Provider.ts"

let tick = 0
/** Distinct, increasing timestamps. */
export const ts = (): Timestamp.Timestamp =>
  Timestamp.make(`2026-03-05 19:31:${String(10 + (tick++ % 40)).padStart(2, "0")}.5`)

export const fastRetry: RetryPolicy = { times: 3, baseDelay: "1 millis" }

export const writeNote: ProviderTool = {
  name: "write_note",
  description: "Write a note to a file.",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] }
}

export const readNote: ProviderTool = {
  name: "read_note",
  description: "Read a note.",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] }
}

/** Two turns: reasoning + text + two parallel tool calls (one with an inquiry pair), then a follow-up. */
export const conversation = (): Array<StreamEntry> => [
  new TurnStart({ timestamp: ts() }),
  new ChatRequest({ timestamp: ts(), content: "Write notes a.txt and b.txt", author: "jean" }),
  ChatResponse.reasoning(ts(), "I should write both.", { anthropic_thinking_signature: "sig-1" }),
  ChatResponse.message(ts(), "Writing both notes."),
  new ToolCallRequest({ timestamp: ts(), id: "call_1", name: "write_note", arguments: { path: "a.txt" } }),
  new ToolCallRequest({ timestamp: ts(), id: "call_2", name: "write_note", arguments: { path: "b.txt" } }),
  new InquiryRequest({
    timestamp: ts(),
    id: InquiryId.forToolQuestion("call_1", "overwrite", 1),
    source: { source: "tool", name: "write_note" },
    question: { text: "Overwrite a.txt? SECRET-QUESTION", answer_type: { type: "boolean" } }
  }),
  new InquiryAnswered({
    timestamp: ts(),
    id: InquiryId.forToolQuestion("call_1", "overwrite", 1),
    answer: "SECRET-ANSWER"
  }),
  new ToolCallResponse({ timestamp: ts(), id: "call_1", content: "wrote a.txt", is_error: false }),
  new ToolCallResponse({ timestamp: ts(), id: "call_2", content: "disk full", is_error: true }),
  ChatResponse.message(ts(), "Both done."),
  new TurnStart({ timestamp: ts() }),
  new ChatRequest({ timestamp: ts(), content: "Thanks. Now summarize." })
]

/** A provider request built the only way providers get events: sanitize + intoParts. */
export const requestFor = (
  model: string,
  entries: ReadonlyArray<StreamEntry>,
  extra: Partial<ProviderRequest> = {}
): ProviderRequest => {
  const parts = intoParts({
    systemPrompt: "You are a helpful assistant.",
    sections: ["Section one."],
    events: sanitize(entries)
  })
  return { model, systemParts: parts.systemParts, events: parts.events, tools: [writeNote], ...extra }
}

/** Every `cache_control` object anywhere in a JSON body. */
export const countCacheControl = (value: unknown): number => {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + countCacheControl(v), 0)
  if (typeof value !== "object" || value === null) return 0
  let n = 0
  for (const [k, v] of Object.entries(value)) n += k === "cache_control" ? 1 : countCacheControl(v)
  return n
}
