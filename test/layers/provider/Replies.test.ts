/**
 * The live providers' replies (docs/models.md#replies-and-errors): every reply is judged. The same acceptance cases run
 * against the real Anthropic and OpenAI SDKs talking to the fake servers:
 * an empty reply finishes (and collects to one empty message), a stream cut
 * before the end marker fails, a token-limit stop is kept and reported,
 * HTTP errors name the provider, status and attempts (401 names the key
 * variable, HTML pages are summarised), `Retry-After` is waited for, and
 * malformed events fail without the SDK writing to the console.
 */
import { afterEach, assert, describe, it, vi } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { ChatResponse } from "../../../src/domain/event/ChatResponse.ts"
import * as AnthropicProvider from "../../../src/layers/provider/Anthropic.ts"
import * as OpenAiProvider from "../../../src/layers/provider/OpenAi.ts"
import { collect, type ProviderDelta, replyWarning } from "../../../src/domain/model/Reply.ts"
import type { RetryPolicy } from "../../../src/layers/provider/Retry.ts"
import type { Provider, ProviderError } from "../../../src/services/Provider.ts"
import * as FakeLlmServer from "../../support/FakeLlmServer.ts"
import { conversation, fastRetry, requestFor, ts } from "./fixtures.ts"

type Reply =
  | FakeLlmServer.AnthropicReply
  | FakeLlmServer.OpenAiReply
  | FakeLlmServer.FailureReply
  | FakeLlmServer.RawSseReply

/** What differs between the two providers in these cases. */
interface Case {
  readonly provider: "anthropic" | "openai"
  readonly model: string
  readonly keyVariable: string
  readonly make: (
    fake: FakeLlmServer.FakeLlmServer,
    retry: RetryPolicy
  ) => Effect.Effect<Provider["Service"], ProviderError>
  readonly enqueue: (fake: FakeLlmServer.FakeLlmServer, ...replies: ReadonlyArray<Reply>) => void
  readonly text: (text: string) => Reply
  readonly empty: Reply
  readonly tokenLimit: (text: string) => Reply
  /** "Hello world" cut after its first text delta, the connection closed cleanly. */
  readonly cut: Reply
  /** The end marker the cut-off error names. */
  readonly marker: string
  /** A 200 event stream whose second event is not JSON. */
  readonly malformed: string
}

const anthropicStart = `event: message_start\ndata: ${JSON.stringify({
  type: "message_start",
  message: {
    id: "m",
    type: "message",
    role: "assistant",
    model: "x",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 }
  }
})}\n\n`

const cases: ReadonlyArray<Case> = [
  {
    provider: "anthropic",
    model: "anthropic/claude-test",
    keyVariable: "ANTHROPIC_API_KEY",
    make: (fake, retry) => AnthropicProvider.make({ apiKey: "test-key", baseUrl: fake.url, retry }),
    enqueue: (fake, ...replies) => fake.enqueueAnthropic(...(replies as Array<FakeLlmServer.AnthropicReply>)),
    text: (text) => ({ blocks: [{ type: "text", text }] }),
    empty: { blocks: [] },
    tokenLimit: (text) => ({ blocks: [{ type: "text", text }], stopReason: "max_tokens" }),
    // message_start, content_block_start, "Hell"
    cut: { blocks: [{ type: "text", text: "Hello world" }], endAfterEvents: 3 },
    marker: "message_stop",
    malformed: `${anthropicStart}event: content_block_start\ndata: {not json\n\n`
  },
  {
    provider: "openai",
    model: "openai/gpt-test",
    keyVariable: "OPENAI_API_KEY",
    make: (fake, retry) => OpenAiProvider.make({ apiKey: "test-key", baseUrl: `${fake.url}/v1`, retry }),
    enqueue: (fake, ...replies) => fake.enqueueOpenAi(...(replies as Array<FakeLlmServer.OpenAiReply>)),
    text: (content) => ({ content }),
    empty: { content: "" },
    tokenLimit: (content) => ({ content, finishReason: "length" }),
    // the role chunk, "Hell"
    cut: { content: "Hello world", endAfterEvents: 2 },
    marker: "a finish_reason or [DONE]",
    malformed: "data: {not json\n\n"
  }
]

const textOf = (deltas: ReadonlyArray<ProviderDelta>) =>
  deltas.flatMap((d) => (d._tag === "TextDelta" ? [d.text] : [])).join("")

const errorFields = (e: ProviderError) => ({
  message: e.message,
  failure: e.failure,
  status: e.status,
  retryable: e.retryable,
  attempts: e.attempts
})

afterEach(() => {
  vi.restoreAllMocks()
})

describe.each(cases)("$provider replies are judged (real SDK against the fake server)", (c) => {
  const setup = (retry: RetryPolicy = fastRetry) =>
    Effect.gen(function* () {
      const fake = yield* FakeLlmServer.make
      const provider = yield* c.make(fake, retry)
      const stream = () => provider.stream(requestFor(c.model, conversation()))
      return { fake, stream }
    })

  it.live("an empty reply finishes normally and collects to one empty message (the turn completes)", () =>
    Effect.gen(function* () {
      const { fake, stream } = yield* setup()
      c.enqueue(fake, c.empty)
      const deltas = yield* Stream.runCollect(stream())
      assert.deepStrictEqual(
        deltas.map((d) => d._tag),
        ["Usage", "Finish"]
      )
      assert.deepStrictEqual(deltas.at(-1), { _tag: "Finish", reason: "end_turn" } as never)
      const when = ts()
      const reply = yield* collect(Stream.fromIterable(deltas), { now: () => when })
      assert.deepStrictEqual(reply.events, [ChatResponse.message(when, "")])
      assert.strictEqual(reply.stopReason, "end_turn")
      assert.isUndefined(replyWarning(c.model, reply.stopReason))
    })
  )

  it.live("a stream closed before the end marker fails as cut off, after the text that did arrive", () =>
    Effect.gen(function* () {
      const { fake, stream } = yield* setup()
      c.enqueue(fake, c.cut)
      const seen: Array<ProviderDelta> = []
      const error = yield* Effect.flip(Stream.runForEach(stream(), (d) => Effect.sync(() => void seen.push(d))))
      assert.strictEqual(textOf(seen), "Hell")
      assert.isFalse(seen.some((d) => d._tag === "Finish"))
      assert.deepStrictEqual(errorFields(error), {
        message: `${c.provider}: the reply was cut off: the stream ended before ${c.marker}.`,
        failure: "reply",
        status: undefined,
        retryable: false,
        attempts: 1
      })
      assert.strictEqual(fake.requests.length, 1, "a cut-off reply is not retried (its text is on screen)")
    })
  )

  it.live("a token-limit stop is kept, reported as max_tokens, and has a warning line", () =>
    Effect.gen(function* () {
      const { fake, stream } = yield* setup()
      c.enqueue(fake, c.tokenLimit("Hello wor"))
      const when = ts()
      const reply = yield* collect(stream(), { now: () => when })
      assert.deepStrictEqual(reply.events, [ChatResponse.message(when, "Hello wor")])
      assert.strictEqual(reply.stopReason, "max_tokens")
      assert.strictEqual(
        replyWarning(c.model, reply.stopReason),
        `warning: ${c.model} stopped at its output token limit; the reply is cut short (saved as it is).`
      )
    })
  )

  it.live("HTTP 500 four times: the error names the provider, the status and the 4 attempts", () =>
    Effect.gen(function* () {
      const { fake, stream } = yield* setup()
      c.enqueue(
        fake,
        ...Array.from({ length: 4 }, () => ({ status: 500, message: "fake 500 error" })),
        c.text("unused")
      )
      const error = yield* Effect.flip(collect(stream()))
      assert.deepStrictEqual(errorFields(error), {
        message: `${c.provider}: HTTP 500 after 4 attempts: fake 500 error`,
        failure: "http",
        status: 500,
        retryable: true,
        attempts: 4
      })
      assert.strictEqual(fake.requests.length, 4)
    })
  )

  it.live("HTTP 429 with Retry-After: 1 waits the second it was asked for, then the reply streams", () =>
    Effect.gen(function* () {
      const { fake, stream } = yield* setup()
      c.enqueue(fake, { status: 429, message: "slow down", headers: { "retry-after": "1" } }, c.text("ok"))
      const when = ts()
      const reply = yield* collect(stream(), { now: () => when })
      assert.deepStrictEqual(reply.events, [ChatResponse.message(when, "ok")])
      assert.strictEqual(fake.requests.length, 2)
      // The test policy's own backoff is 1 ms: only Retry-After explains the wait.
      const waited = fake.requests[1]!.receivedAt - fake.requests[0]!.receivedAt
      assert.isAtLeast(waited, 950, `waited ${waited} ms`)
    })
  )

  it.live("HTTP 429 asking for longer than parley waits is not retried; the error says how long", () =>
    Effect.gen(function* () {
      const { fake, stream } = yield* setup()
      c.enqueue(fake, { status: 429, message: "rate limited", headers: { "retry-after": "120" } }, c.text("unused"))
      const error = yield* Effect.flip(collect(stream()))
      assert.deepStrictEqual(errorFields(error), {
        message:
          `${c.provider}: HTTP 429 after 1 attempt: rate limited. ` +
          "The provider asks to wait 120 s before retrying (parley waits at most 30 s); try again later.",
        failure: "http",
        status: 429,
        retryable: true,
        attempts: 1
      })
      assert.strictEqual(error.retryAfterMs, 120_000)
      assert.strictEqual(fake.requests.length, 1)
    })
  )

  it.live("HTTP 401 says which key variable to check; 403 too; neither is retried", () =>
    Effect.gen(function* () {
      const { fake, stream } = yield* setup()
      c.enqueue(
        fake,
        { status: 401, message: "invalid x-api-key" },
        { status: 403, message: "no access to this model" }
      )
      const unauthorized = yield* Effect.flip(collect(stream()))
      assert.deepStrictEqual(errorFields(unauthorized), {
        message: `${c.provider}: HTTP 401 after 1 attempt: invalid x-api-key. Check ${c.keyVariable}.`,
        failure: "http",
        status: 401,
        retryable: false,
        attempts: 1
      })
      const forbidden = yield* Effect.flip(collect(stream()))
      assert.strictEqual(
        forbidden.message,
        `${c.provider}: HTTP 403 after 1 attempt: no access to this model. Check that ${c.keyVariable} may use this model.`
      )
      assert.strictEqual(fake.requests.length, 2)
    })
  )

  it.live("an HTML 502 page is summarised by its title (or its size), never printed raw", () =>
    Effect.gen(function* () {
      const { fake, stream } = yield* setup()
      const page =
        "<html>\n<head><title>502 Bad Gateway</title></head>\n<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body>\n</html>\n"
      c.enqueue(fake, ...Array.from({ length: 4 }, () => ({ status: 502, body: page })))
      const error = yield* Effect.flip(collect(stream()))
      assert.deepStrictEqual(errorFields(error), {
        message: `${c.provider}: HTTP 502 after 4 attempts: HTML error page "502 Bad Gateway"`,
        failure: "http",
        status: 502,
        retryable: true,
        attempts: 4
      })
      const untitled = "<!DOCTYPE html><html><body><p>upstream went away</p></body></html>"
      c.enqueue(
        fake,
        { status: 503, body: untitled },
        { status: 503, body: untitled },
        { status: 503, body: untitled },
        {
          status: 503,
          body: untitled
        }
      )
      assert.strictEqual(
        (yield* Effect.flip(collect(stream()))).message,
        `${c.provider}: HTTP 503 after 4 attempts: HTML error page (${untitled.length} bytes)`
      )
    })
  )

  it.live("malformed server-sent events fail with one clear error and the SDK writes nothing to the console", () =>
    Effect.gen(function* () {
      const { fake, stream } = yield* setup()
      const spies = (["error", "warn", "log", "info", "debug"] as const).map((level) => vi.spyOn(console, level))
      c.enqueue(fake, { sse: c.malformed })
      const error = yield* Effect.flip(collect(stream()))
      assert.deepStrictEqual(errorFields(error), {
        message: `${c.provider}: the reply stream is malformed: an event is not valid JSON.`,
        failure: "reply",
        status: undefined,
        retryable: false,
        attempts: 1
      })
      for (const spy of spies) assert.strictEqual(spy.mock.calls.length, 0, "the SDK logged to the console")
    })
  )
})

describe("end markers and stop reasons specific to one provider", () => {
  const anthropic = Effect.gen(function* () {
    const fake = yield* FakeLlmServer.make
    const provider = yield* AnthropicProvider.make({ apiKey: "k", baseUrl: fake.url, retry: fastRetry })
    return { fake, stream: () => provider.stream(requestFor("anthropic/claude-test", conversation())) }
  })
  const openai = Effect.gen(function* () {
    const fake = yield* FakeLlmServer.make
    const provider = yield* OpenAiProvider.make({ apiKey: "k", baseUrl: `${fake.url}/v1`, retry: fastRetry })
    return { fake, stream: () => provider.stream(requestFor("openai/gpt-test", conversation())) }
  })

  it.live("anthropic: message_delta with a stop reason but no message_stop is still cut off", () =>
    Effect.gen(function* () {
      const { fake, stream } = yield* anthropic
      // message_start, block start, 3 text deltas, block stop, message_delta — then the connection closes.
      fake.enqueueAnthropic({ blocks: [{ type: "text", text: "Hello world" }], endAfterEvents: 7 })
      const error = yield* Effect.flip(collect(stream()))
      assert.strictEqual(error.message, "anthropic: the reply was cut off: the stream ended before message_stop.")
    })
  )

  it.live("anthropic: an error event mid-reply names what the provider said", () =>
    Effect.gen(function* () {
      const { fake, stream } = yield* anthropic
      fake.enqueueAnthropic({
        sse: `${anthropicStart}event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })}\n\n`
      })
      const error = yield* Effect.flip(collect(stream()))
      assert.deepStrictEqual(errorFields(error), {
        message: "anthropic: the provider reported an error mid-reply: Overloaded",
        failure: "reply",
        status: undefined,
        retryable: false,
        attempts: 1
      })
    })
  )

  it.live("anthropic: tool arguments cut by the token limit say so (and no call is made)", () =>
    Effect.gen(function* () {
      const { fake, stream } = yield* anthropic
      const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`
      fake.enqueueAnthropic({
        sse:
          anthropicStart +
          event("content_block_start", {
            type: "content_block_start",
            index: 0,
            content_block: { type: "tool_use", id: "toolu_1", name: "write_note", input: {} }
          }) +
          event("content_block_delta", {
            type: "content_block_delta",
            index: 0,
            delta: { type: "input_json_delta", partial_json: '{"path": "a' }
          }) +
          event("content_block_stop", { type: "content_block_stop", index: 0 }) +
          event("message_delta", {
            type: "message_delta",
            delta: { stop_reason: "max_tokens", stop_sequence: null },
            usage: { output_tokens: 9 }
          }) +
          event("message_stop", { type: "message_stop" })
      })
      const seen: Array<ProviderDelta> = []
      const error = yield* Effect.flip(Stream.runForEach(stream(), (d) => Effect.sync(() => void seen.push(d))))
      assert.strictEqual(
        error.message,
        "anthropic: the reply hit the output token limit in the middle of the arguments for tool `write_note`; nothing was run."
      )
      assert.isFalse(seen.some((d) => d._tag === "ToolCall"))
    })
  )

  it.live("openai: a finish_reason without [DONE], or [DONE] without a finish_reason, is a whole reply", () =>
    Effect.gen(function* () {
      const { fake, stream } = yield* openai
      fake.enqueueOpenAi(
        { content: "no done", omitDone: true },
        { content: "no finish", omitFinish: true },
        {
          toolCalls: [{ id: "call_1", name: "write_note", arguments: '{"path":"a"}' }],
          omitFinish: true
        }
      )
      const when = ts()
      const first = yield* collect(stream(), { now: () => when })
      assert.deepStrictEqual([first.events, first.stopReason], [[ChatResponse.message(when, "no done")], "end_turn"])
      const second = yield* collect(stream(), { now: () => when })
      assert.deepStrictEqual(
        [second.events, second.stopReason],
        [[ChatResponse.message(when, "no finish")], "end_turn"]
      )
      const third = yield* collect(stream(), { now: () => when })
      assert.strictEqual(third.stopReason, "tool_use")
    })
  )

  it.live("openai: neither a finish_reason nor [DONE] is cut off, even after every chunk of content", () =>
    Effect.gen(function* () {
      const { fake, stream } = yield* openai
      fake.enqueueOpenAi({ content: "all of it", omitFinish: true, omitDone: true })
      const error = yield* Effect.flip(collect(stream()))
      assert.strictEqual(
        error.message,
        "openai: the reply was cut off: the stream ended before a finish_reason or [DONE]."
      )
    })
  )

  it.live("openai: a content-filter stop is a refusal, with its own warning", () =>
    Effect.gen(function* () {
      const { fake, stream } = yield* openai
      fake.enqueueOpenAi({ content: "I can't", finishReason: "content_filter" })
      const reply = yield* collect(stream())
      assert.strictEqual(reply.stopReason, "refusal")
      assert.strictEqual(
        replyWarning("openai/gpt-test", reply.stopReason),
        "warning: openai/gpt-test refused to answer or was stopped by a content filter (saved as it is)."
      )
    })
  )

  it.live("no server at all: a connection error after every attempt, named as such", () =>
    Effect.gen(function* () {
      // A port that was just free: nothing listens on it.
      const { fake } = yield* Effect.scoped(Effect.map(FakeLlmServer.make, (fake) => ({ fake })))
      const provider = yield* AnthropicProvider.make({ apiKey: "k", baseUrl: fake.url, retry: fastRetry })
      const error = yield* Effect.flip(collect(provider.stream(requestFor("anthropic/claude-test", conversation()))))
      assert.strictEqual(error.failure, "connection")
      assert.strictEqual(error.attempts, 4)
      assert.match(error.message, /^anthropic: no response after 4 attempts: Connection error\. \(.*ECONNREFUSED.*\)$/)
    })
  )
})
