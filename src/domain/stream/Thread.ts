/**
 * What a provider is given for one request (RFD 005 `Thread`), and the single
 * place where it gets its events: {@link intoParts} (JP's
 * `Thread::into_parts`: the compaction overlay, then the provider-visibility
 * filter), and {@link providerView}, which sanitizes first — JP's order,
 * sanitize → project → filter (RFD 064; docs/models.md#long-conversations-compactions-and-context-windows-rfd-064).
 *
 * @example
 * ```ts
 * import { intoParts } from "parley/domain/stream/Thread"
 * import { sanitize } from "parley/domain/stream/Sanitize"
 * import type { ChatRequest, ChatResponse, ConfigDelta, InquiryRequest, InquiryResponse, StreamEntry, ToolCallRequest, ToolCallResponse, TurnStart } from "parley"
 * declare const entries: ReadonlyArray<StreamEntry>
 * const { systemParts, events } = intoParts({ systemPrompt: "Be brief.", events: sanitize(entries) })
 * ```
 *
 * @since 0.1.0
 */
import type { ChatRequest } from "../event/ChatRequest.ts"
import type { ChatResponse } from "../event/ChatResponse.ts"
import type { StreamEntry } from "../event/ConversationEvent.ts"
import type { ToolCallRequest } from "../event/ToolCallRequest.ts"
import type { ToolCallResponse } from "../event/ToolCallResponse.ts"
import { projectVisible } from "./Projection.ts"
import { sanitize } from "./Sanitize.ts"

/** The only event kinds a provider ever sees (RFD 005's allowlist). */
export type ProviderEvent = ChatRequest | ChatResponse | ToolCallRequest | ToolCallResponse

/** A provider request's context: system prompt, rendered sections, and the stream. */
export interface Thread {
  readonly systemPrompt?: string
  readonly sections?: ReadonlyArray<string>
  readonly events: ReadonlyArray<StreamEntry>
}

/** A thread decomposed for a provider. */
export interface ThreadParts {
  readonly systemParts: ReadonlyArray<string>
  readonly events: ReadonlyArray<ProviderEvent>
}

/**
 * Decomposes a thread: system parts are the system prompt (when present and
 * not empty) followed by each section; events are the stream with its
 * compactions applied (`Projection.project`), then only the provider-visible
 * ones (`isProviderVisible`, an allowlist), in order. Turn markers, inquiry
 * events, config deltas, compactions and unknown entries never come out, so
 * a tool call request is followed by its response even when inquiry events
 * were recorded between them.
 *
 * It does not sanitize: callers run `sanitize` first (on the complete turns,
 * or on the whole stream once an incomplete turn has been merged back), so
 * that every tool call has its response — or call {@link providerView}.
 *
 * @example
 * ```ts
 * import { intoParts } from "parley/domain/stream/Thread"
 * import type { ChatRequest, ChatResponse, ConfigDelta, InquiryRequest, InquiryResponse, StreamEntry, ToolCallRequest, ToolCallResponse, TurnStart } from "parley"
 * declare const turnStart: TurnStart, request: ChatRequest, inquiry: InquiryRequest, answer: InquiryResponse
 * intoParts({ events: [turnStart, request, inquiry, answer] }).events // [request]
 * ```
 */
export const intoParts = (thread: Thread): ThreadParts => {
  const systemParts: Array<string> = []
  if (thread.systemPrompt !== undefined && thread.systemPrompt.length > 0) systemParts.push(thread.systemPrompt)
  if (thread.sections !== undefined) systemParts.push(...thread.sections)
  return { systemParts, events: projectVisible(thread.events) }
}

/**
 * What a provider is shown of a stored stream: `sanitize`, then
 * {@link intoParts} (the compactions applied, the provider-visible events
 * kept). A main request, a size estimate and `conversation compact
 * --dry-run` all go through here.
 *
 * @example
 * ```ts
 * import { providerView } from "parley/domain/stream/Thread"
 * import type { StreamEntry } from "parley"
 * declare const entries: ReadonlyArray<StreamEntry>
 * const { systemParts, events } = providerView(entries, { systemPrompt: "Be brief." })
 * ```
 */
export const providerView = (entries: ReadonlyArray<StreamEntry>, thread: Omit<Thread, "events"> = {}): ThreadParts =>
  intoParts({ ...thread, events: sanitize(entries) })
