/**
 * A fake of the Anthropic Messages and OpenAI Chat Completions HTTP APIs on
 * 127.0.0.1 (random port), so the real SDKs run offline in tests.
 *
 *   POST /v1/messages           Anthropic Messages, streaming SSE (text, thinking, redacted thinking, tool_use)
 *   POST /v1/chat/completions   OpenAI chat completions, streaming chunks (content, reasoning, tool calls)
 *
 * Each endpoint answers from its own queue of replies (`enqueueAnthropic`,
 * `enqueueOpenAi`); an empty queue answers 400. A reply can also be an HTTP
 * error status (with the provider's JSON error, or any raw body such as an
 * HTML gateway page, and extra headers such as `Retry-After`), a connection
 * reset, or a raw event-stream body (`{ sse }`, e.g. malformed JSON). A
 * success can stream slowly (`delayMs` between events, `headersDelayMs`
 * before the first byte), drop the connection after some events
 * (`breakAfterEvents`), or close it cleanly before the end marker
 * (`endAfterEvents`: a reply cut off mid-stream); an OpenAI reply can leave
 * out its `finish_reason` chunk or its `[DONE]` line.
 * Every request is recorded with its parsed body and how its response ended
 * (`finished` or `aborted` — the client closed the socket first).
 *
 * @example
 * ```ts
 * const fake = yield* FakeLlmServer.make
 * fake.enqueueAnthropic({ blocks: [{ type: "text", text: "Hello" }] })
 * // baseUrl: fake.url (Anthropic) or `${fake.url}/v1` (OpenAI)
 * ```
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

export type AnthropicBlock =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "thinking"; readonly thinking: string; readonly signature: string }
  | { readonly type: "redacted_thinking"; readonly data: string }
  | {
      readonly type: "tool_use"
      readonly id: string
      readonly name: string
      readonly input: unknown
      /** The input's JSON text as sent, instead of `JSON.stringify(input)` (for input too deep to stringify here). */
      readonly inputJson?: string
    }

interface StreamKnobs {
  /** Characters per text/JSON delta (default 4). */
  readonly chunkSize?: number
  /** Milliseconds between SSE events (default 0). */
  readonly delayMs?: number
  /** Destroy the socket after this many SSE events (a mid-stream connection reset). */
  readonly breakAfterEvents?: number
  /** End the response cleanly after this many SSE events (a stream cut off before its end marker). */
  readonly endAfterEvents?: number
  /** Milliseconds before the response headers are sent (a slow first byte). */
  readonly headersDelayMs?: number
}

export interface AnthropicReply extends StreamKnobs {
  readonly blocks: ReadonlyArray<AnthropicBlock>
  readonly stopReason?: string
  readonly usage?: {
    readonly input: number
    readonly output: number
    readonly cacheRead?: number
    readonly cacheWrite?: number
  }
}

export interface OpenAiReply extends StreamKnobs {
  readonly reasoning?: string
  readonly content?: string
  readonly toolCalls?: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: string }>
  readonly finishReason?: string
  readonly usage?: { readonly prompt: number; readonly completion: number; readonly cached?: number }
  /** Send no chunk with a `finish_reason`. */
  readonly omitFinish?: boolean
  /** Send no `data: [DONE]` line. */
  readonly omitDone?: boolean
}

/**
 * An HTTP error — the provider's JSON error with `message`, or `body` sent
 * as it is (`contentType` default text/html) — or a connection reset before
 * any response.
 */
export type FailureReply =
  | {
      readonly status: number
      readonly message?: string
      readonly body?: string
      readonly contentType?: string
      readonly headers?: Readonly<Record<string, string>>
    }
  | { readonly reset: true }

/** A 200 event stream with exactly this body (malformed events, odd framing). */
export interface RawSseReply {
  readonly sse: string
}

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingMessage["headers"]
  readonly body: any
  /** How the response ended: sent completely, or the client closed the connection first. */
  readonly ended: Promise<"finished" | "aborted" | "reset">
  /** Number of SSE events written before the end. */
  eventsSent: number
  /** `Date.now()` when the request arrived (to check the wait between retries). */
  readonly receivedAt: number
}

export interface FakeLlmServer {
  /** `http://127.0.0.1:<port>`: the Anthropic base URL; OpenAI's is `${url}/v1`. */
  readonly url: string
  readonly requests: ReadonlyArray<RecordedRequest>
  enqueueAnthropic(...replies: ReadonlyArray<AnthropicReply | FailureReply | RawSseReply>): void
  enqueueOpenAi(...replies: ReadonlyArray<OpenAiReply | FailureReply | RawSseReply>): void
  /** Connections currently open on the server. */
  openConnections(): number
}

const chunk = (text: string, size: number): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

const anthropicEvents = (reply: AnthropicReply, model: string): Array<[string, unknown]> => {
  const size = reply.chunkSize ?? 4
  const usage = reply.usage ?? { input: 10, output: 5 }
  const events: Array<[string, unknown]> = []
  events.push([
    "message_start",
    {
      type: "message_start",
      message: {
        id: "msg_fake",
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: usage.input,
          output_tokens: 1,
          cache_read_input_tokens: usage.cacheRead ?? 0,
          cache_creation_input_tokens: usage.cacheWrite ?? 0
        }
      }
    }
  ])
  reply.blocks.forEach((block, index) => {
    const delta = (d: unknown) => events.push(["content_block_delta", { type: "content_block_delta", index, delta: d }])
    switch (block.type) {
      case "text":
        events.push([
          "content_block_start",
          { type: "content_block_start", index, content_block: { type: "text", text: "" } }
        ])
        for (const text of chunk(block.text, size)) delta({ type: "text_delta", text })
        break
      case "thinking":
        events.push([
          "content_block_start",
          {
            type: "content_block_start",
            index,
            content_block: { type: "thinking", thinking: "", signature: "" }
          }
        ])
        for (const thinking of chunk(block.thinking, size)) delta({ type: "thinking_delta", thinking })
        delta({ type: "signature_delta", signature: block.signature })
        break
      case "redacted_thinking":
        events.push([
          "content_block_start",
          {
            type: "content_block_start",
            index,
            content_block: { type: "redacted_thinking", data: block.data }
          }
        ])
        break
      case "tool_use":
        events.push([
          "content_block_start",
          {
            type: "content_block_start",
            index,
            content_block: { type: "tool_use", id: block.id, name: block.name, input: {} }
          }
        ])
        for (const partial_json of chunk(block.inputJson ?? JSON.stringify(block.input), size)) {
          delta({ type: "input_json_delta", partial_json })
        }
        break
    }
    events.push(["content_block_stop", { type: "content_block_stop", index }])
  })
  const stop = reply.stopReason ?? (reply.blocks.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn")
  events.push([
    "message_delta",
    {
      type: "message_delta",
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: usage.output }
    }
  ])
  events.push(["message_stop", { type: "message_stop" }])
  return events
}

const openAiEvents = (reply: OpenAiReply, model: string, includeUsage: boolean): Array<[string | null, unknown]> => {
  const size = reply.chunkSize ?? 4
  const base = { id: "chatcmpl-fake", object: "chat.completion.chunk", created: 1_700_000_000, model }
  const choice = (delta: unknown, finish_reason: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason, logprobs: null }]
  })
  const events: Array<[string | null, unknown]> = [[null, choice({ role: "assistant", content: "" })]]
  for (const text of chunk(reply.reasoning ?? "", size)) events.push([null, choice({ reasoning_content: text })])
  for (const text of chunk(reply.content ?? "", size)) events.push([null, choice({ content: text })])
  ;(reply.toolCalls ?? []).forEach((call, index) => {
    events.push([
      null,
      choice({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] })
    ])
    for (const args of chunk(call.arguments, size)) {
      events.push([null, choice({ tool_calls: [{ index, function: { arguments: args } }] })])
    }
  })
  const finish = reply.finishReason ?? ((reply.toolCalls ?? []).length > 0 ? "tool_calls" : "stop")
  if (reply.omitFinish !== true) events.push([null, choice({}, finish)])
  if (includeUsage) {
    const usage = reply.usage ?? { prompt: 10, completion: 5 }
    events.push([
      null,
      {
        ...base,
        choices: [],
        usage: {
          prompt_tokens: usage.prompt,
          completion_tokens: usage.completion,
          total_tokens: usage.prompt + usage.completion,
          prompt_tokens_details: { cached_tokens: usage.cached ?? 0 }
        }
      }
    ])
  }
  if (reply.omitDone !== true) events.push([null, "[DONE]"])
  return events
}

const isFailure = (reply: unknown): reply is FailureReply =>
  typeof reply === "object" && reply !== null && ("status" in reply || "reset" in reply)

const isRawSse = (reply: unknown): reply is RawSseReply => typeof reply === "object" && reply !== null && "sse" in reply

/** Starts the fake; the server (and every connection) closes with the scope. */
export const make: Effect.Effect<FakeLlmServer, never, Scope.Scope> = Effect.suspend(() => {
  const requests: Array<RecordedRequest> = []
  const anthropicQueue: Array<AnthropicReply | FailureReply | RawSseReply> = []
  const openAiQueue: Array<OpenAiReply | FailureReply | RawSseReply> = []
  const timers = new Set<NodeJS.Timeout>()
  let connections = 0

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" })
    res.end(JSON.stringify(body))
  }

  const stream = (
    req: IncomingMessage,
    res: ServerResponse,
    record: RecordedRequest,
    knobs: StreamKnobs,
    events: ReadonlyArray<[string | null, unknown]>
  ) => {
    let i = 0
    const next = () => {
      if (res.destroyed) return
      if (knobs.breakAfterEvents !== undefined && i >= knobs.breakAfterEvents) {
        req.socket.destroy()
        return
      }
      if (i >= events.length || (knobs.endAfterEvents !== undefined && i >= knobs.endAfterEvents)) {
        res.end()
        return
      }
      const [event, data] = events[i++]!
      const payload = typeof data === "string" ? data : JSON.stringify(data)
      res.write(event === null ? `data: ${payload}\n\n` : `event: ${event}\ndata: ${payload}\n\n`)
      record.eventsSent = i
      schedule()
    }
    const schedule = () => {
      if ((knobs.delayMs ?? 0) === 0) return setImmediate(next)
      const t = setTimeout(() => {
        timers.delete(t)
        next()
      }, knobs.delayMs)
      timers.add(t)
    }
    const start = () => {
      if (res.destroyed) return
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
      next()
    }
    if ((knobs.headersDelayMs ?? 0) === 0) return start()
    const t = setTimeout(() => {
      timers.delete(t)
      start()
    }, knobs.headersDelayMs)
    timers.add(t)
  }

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    let body: any
    try {
      body = raw.length > 0 ? JSON.parse(raw) : undefined
    } catch {
      body = raw
    }
    let settle!: (how: "finished" | "aborted" | "reset") => void
    const ended = new Promise<"finished" | "aborted" | "reset">((resolve) => (settle = resolve))
    const record: RecordedRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: req.headers,
      body,
      ended,
      eventsSent: 0,
      receivedAt: Date.now()
    }
    requests.push(record)
    res.on("close", () => settle(res.writableFinished ? "finished" : "aborted"))

    const isAnthropic = req.method === "POST" && req.url === "/v1/messages"
    const isOpenAi = req.method === "POST" && req.url === "/v1/chat/completions"
    if (!isAnthropic && !isOpenAi) return json(res, 404, { error: { message: `no fake for ${req.method} ${req.url}` } })

    // @anthropic-ai/sdk 1.x sends `Authorization: Bearer`; 0.x sent x-api-key. Accept both.
    if (!String(req.headers.authorization ?? "").startsWith("Bearer ") && req.headers["x-api-key"] === undefined) {
      return json(res, 401, { type: "error", error: { type: "authentication_error", message: "missing credentials" } })
    }
    const reply = (isAnthropic ? anthropicQueue : openAiQueue).shift()
    const fail = (status: number, message: string, headers: Readonly<Record<string, string>> = {}) => {
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value)
      return isAnthropic
        ? json(res, status, {
            type: "error",
            error: { type: status === 429 ? "rate_limit_error" : "api_error", message }
          })
        : json(res, status, {
            error: { message, type: status === 429 ? "rate_limit_exceeded" : "server_error", code: null }
          })
    }
    if (reply === undefined) return fail(400, "fake: no reply queued")
    if (isFailure(reply)) {
      if ("reset" in reply) {
        settle("reset")
        req.socket.destroy()
        return
      }
      if (reply.body !== undefined) {
        res.writeHead(reply.status, { "content-type": reply.contentType ?? "text/html", ...reply.headers })
        return res.end(reply.body)
      }
      return fail(reply.status, reply.message ?? `fake status ${reply.status}`, reply.headers)
    }
    if (isRawSse(reply)) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
      return res.end(reply.sse)
    }
    if (body?.stream !== true) return fail(400, "fake: only streaming requests are served")
    if (isAnthropic) {
      const r = reply as AnthropicReply
      return stream(req, res, record, r, anthropicEvents(r, body.model))
    }
    const r = reply as OpenAiReply
    return stream(req, res, record, r, openAiEvents(r, body.model, body.stream_options?.include_usage === true))
  }

  return Effect.acquireRelease(
    Effect.callback<Server>((resume) => {
      const server = createServer((req, res) => {
        let raw = ""
        req.setEncoding("utf8")
        req.on("data", (c) => (raw += c))
        req.on("end", () => handle(req, res, raw))
      })
      server.on("connection", (socket) => {
        connections++
        socket.on("close", () => connections--)
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.callback<void>((resume) => {
        for (const t of timers) clearTimeout(t)
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(
    Effect.map(
      (server): FakeLlmServer => ({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        requests,
        enqueueAnthropic: (...replies) => void anthropicQueue.push(...replies),
        enqueueOpenAi: (...replies) => void openAiQueue.push(...replies),
        openConnections: () => connections
      })
    )
  )
})
