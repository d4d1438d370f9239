import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { ChatRequest } from "../../../src/domain/event/ChatRequest.ts"
import { ChatResponse } from "../../../src/domain/event/ChatResponse.ts"
import { ToolCallRequest } from "../../../src/domain/event/ToolCallRequest.ts"
import { ToolCallResponse } from "../../../src/domain/event/ToolCallResponse.ts"
import * as AnthropicProvider from "../../../src/layers/provider/Anthropic.ts"
import { collect, type ProviderDelta } from "../../../src/domain/model/Reply.ts"
import type { ProviderError } from "../../../src/services/Provider.ts"
import * as FakeLlmServer from "../../support/FakeLlmServer.ts"
import { conversation, countCacheControl, fastRetry, requestFor, ts, writeNote } from "./fixtures.ts"

const setup = Effect.gen(function* () {
  const fake = yield* FakeLlmServer.make
  const provider = yield* AnthropicProvider.make({ apiKey: "test-key", baseUrl: fake.url, retry: fastRetry })
  return { fake, provider }
})

const EPHEMERAL = { type: "ephemeral" }

describe("Anthropic provider (real SDK against the fake Messages API)", () => {
  it.live("sends system parts separately, groups parallel tool results, hides inquiries, sends thinking back", () =>
    Effect.gen(function* () {
      const { fake, provider } = yield* setup
      fake.enqueueAnthropic({ blocks: [{ type: "text", text: "Summary." }] })
      yield* collect(provider.stream(requestFor("anthropic/claude-test", conversation())))

      const seen = fake.requests[0]!
      assert.strictEqual(seen.path, "/v1/messages")
      assert.strictEqual(seen.headers.authorization, "Bearer test-key")
      const body = seen.body
      assert.strictEqual(body.model, "claude-test")
      assert.strictEqual(body.stream, true)
      assert.strictEqual(body.max_tokens, 8192)
      // 4 cache points: last message, last system part, last tool, then the earlier system part.
      assert.deepStrictEqual(body.system, [
        { type: "text", text: "You are a helpful assistant.", cache_control: EPHEMERAL },
        { type: "text", text: "Section one.", cache_control: EPHEMERAL }
      ])
      assert.deepStrictEqual(body.messages, [
        { role: "user", content: [{ type: "text", text: "Write notes a.txt and b.txt" }] },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "I should write both.", signature: "sig-1" },
            { type: "text", text: "Writing both notes." },
            { type: "tool_use", id: "call_1", name: "write_note", input: { path: "a.txt" } },
            { type: "tool_use", id: "call_2", name: "write_note", input: { path: "b.txt" } }
          ]
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_1", content: "wrote a.txt", is_error: false },
            { type: "tool_result", tool_use_id: "call_2", content: "disk full", is_error: true }
          ]
        },
        { role: "assistant", content: [{ type: "text", text: "Both done." }] },
        { role: "user", content: [{ type: "text", text: "Thanks. Now summarize.", cache_control: EPHEMERAL }] }
      ])
      assert.deepStrictEqual(body.tools, [
        {
          name: "write_note",
          description: "Write a note to a file.",
          input_schema: writeNote.parameters,
          cache_control: EPHEMERAL
        }
      ])
      assert.notProperty(body, "tool_choice")
      assert.notProperty(body, "output_config")
      const raw = JSON.stringify(body)
      for (const hidden of ["SECRET-QUESTION", "SECRET-ANSWER", "turn_start", "inquiry", "jean"]) {
        assert.notInclude(raw, hidden)
      }
      assert.strictEqual(countCacheControl(body), 4)
    })
  )

  it.live("streams text, thinking (with signature), redacted thinking and tool_use; collect builds the events", () =>
    Effect.gen(function* () {
      const { fake, provider } = yield* setup
      fake.enqueueAnthropic({
        blocks: [
          { type: "thinking", thinking: "Let me think about it.", signature: "EqsC-signature==" },
          { type: "redacted_thinking", data: "opaque-blob" },
          { type: "text", text: "I will write the note." },
          { type: "tool_use", id: "toolu_01", name: "write_note", input: { path: "a.txt", body: "hi ✓" } }
        ],
        usage: { input: 120, output: 42, cacheRead: 100, cacheWrite: 7 }
      })
      const deltas = yield* Stream.runCollect(provider.stream(requestFor("anthropic/claude-test", conversation())))
      const tags = deltas.map((d) => d._tag)
      assert.isAbove(tags.filter((t) => t === "TextDelta").length, 1, "text arrives in several deltas")
      assert.isAbove(tags.filter((t) => t === "ReasoningDelta").length, 1)
      assert.strictEqual(
        deltas
          .filter((d): d is Extract<ProviderDelta, { _tag: "TextDelta" }> => d._tag === "TextDelta")
          .map((d) => d.text)
          .join(""),
        "I will write the note."
      )
      assert.deepStrictEqual(
        deltas.filter((d) => d._tag === "ToolCallStart"),
        [{ _tag: "ToolCallStart", id: "toolu_01", name: "write_note" }] as never
      )
      assert.deepStrictEqual(deltas.at(-2), {
        _tag: "Usage",
        usage: { inputTokens: 120, outputTokens: 42, cacheReadTokens: 100, cacheWriteTokens: 7 }
      } as never)
      assert.deepStrictEqual(deltas.at(-1), { _tag: "Finish", reason: "tool_use" } as never)

      const when = ts()
      const reply = yield* collect(Stream.fromIterable(deltas), { now: () => when })
      assert.deepStrictEqual(reply.events, [
        ChatResponse.reasoning(when, "Let me think about it.", { anthropic_thinking_signature: "EqsC-signature==" }),
        ChatResponse.reasoning(when, "", { anthropic_redacted_thinking: "opaque-blob" }),
        ChatResponse.message(when, "I will write the note."),
        new ToolCallRequest({
          timestamp: when,
          id: "toolu_01",
          name: "write_note",
          arguments: { path: "a.txt", body: "hi ✓" }
        })
      ])
      assert.strictEqual(reply.stopReason, "tool_use")
    })
  )

  it.live("round-trips signed and redacted thinking from one reply into the next request", () =>
    Effect.gen(function* () {
      const { fake, provider } = yield* setup
      fake.enqueueAnthropic(
        {
          blocks: [
            { type: "thinking", thinking: "Hmm.", signature: "sig-A" },
            { type: "redacted_thinking", data: "blob" },
            { type: "tool_use", id: "toolu_9", name: "write_note", input: {} }
          ]
        },
        { blocks: [{ type: "text", text: "ok" }] }
      )
      const first = [new ChatRequest({ timestamp: ts(), content: "Go" })]
      const reply = yield* collect(provider.stream(requestFor("anthropic/claude-test", first)))
      const second = [
        ...first,
        ...reply.events,
        new ToolCallResponse({ timestamp: ts(), id: "toolu_9", content: "done", is_error: false })
      ]
      yield* collect(provider.stream(requestFor("anthropic/claude-test", second)))
      assert.deepStrictEqual(fake.requests[1]!.body.messages[1], {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "Hmm.", signature: "sig-A" },
          { type: "redacted_thinking", data: "blob" },
          { type: "tool_use", id: "toolu_9", name: "write_note", input: {} }
        ]
      })
    })
  )

  it.live("reasoning without an Anthropic signature is not sent; empty text is skipped", () =>
    Effect.gen(function* () {
      const { fake, provider } = yield* setup
      fake.enqueueAnthropic({ blocks: [{ type: "text", text: "ok" }] })
      const entries = [
        new ChatRequest({ timestamp: ts(), content: "Hi" }),
        ChatResponse.reasoning(ts(), "openai thoughts", { openai_item_id: "x" }),
        ChatResponse.message(ts(), "Hello"),
        ChatResponse.message(ts(), ""),
        new ChatRequest({ timestamp: ts(), content: "Again" })
      ]
      yield* collect(provider.stream(requestFor("anthropic/claude-test", entries)))
      assert.deepStrictEqual(fake.requests[0]!.body.messages, [
        { role: "user", content: [{ type: "text", text: "Hi" }] },
        { role: "assistant", content: [{ type: "text", text: "Hello" }] },
        { role: "user", content: [{ type: "text", text: "Again", cache_control: EPHEMERAL }] }
      ])
    })
  )

  it.live("structured output uses output_config json_schema and decodes the JSON into a data ChatResponse", () =>
    Effect.gen(function* () {
      const { fake, provider } = yield* setup
      fake.enqueueAnthropic({ blocks: [{ type: "text", text: '{"answer": true}' }] })
      const schema = {
        type: "object",
        properties: { answer: { type: "boolean" } },
        required: ["answer"],
        additionalProperties: false
      }
      const entries = [...conversation(), new ChatRequest({ timestamp: ts(), content: "Answer?", schema })]
      const deltas = yield* Stream.runCollect(
        provider.stream(requestFor("anthropic/claude-test", entries, { toolChoice: "none" }))
      )
      assert.isFalse(
        deltas.some((d) => d._tag === "TextDelta"),
        "JSON is not printed as text"
      )
      const when = ts()
      const reply = yield* collect(Stream.fromIterable(deltas), { now: () => when })
      assert.deepStrictEqual(reply.events, [ChatResponse.structured(when, { answer: true })])
      const body = fake.requests[0]!.body
      assert.deepStrictEqual(body.output_config, { format: { type: "json_schema", schema } })
      assert.deepStrictEqual(body.tool_choice, { type: "none" })
      assert.strictEqual(body.tools.length, 1, "tools stay in the request (cache prefix)")
    })
  )

  it("cache control: at most 4 points, shared by the last message, tagged events, system parts and tools", () => {
    const entries = conversation()
    const tagged = entries.map((e) =>
      e.type === "chat_response" && e.message === "Both done."
        ? ChatResponse.message(e.timestamp, "Both done.", { cache_breakpoint: true })
        : e
    )
    const request = {
      ...requestFor("anthropic/claude-test", tagged),
      systemParts: ["p1", "p2", "p3", "p4", "p5"]
    }
    const params = AnthropicProvider.toMessagesParams(request, "claude-test")
    assert.strictEqual(countCacheControl(params), 4)
    const marked = (blocks: ReadonlyArray<{ cache_control?: unknown }> | undefined) =>
      (blocks ?? []).map((b) => b.cache_control !== undefined)
    // last message, the tagged event, the last system part, the last tool
    assert.deepStrictEqual(marked(params.system as never), [false, false, false, false, true])
    assert.deepStrictEqual(marked(params.messages.at(-1)!.content as never), [true])
    assert.deepStrictEqual(marked(params.messages.at(-2)!.content as never), [true])
    assert.deepStrictEqual(marked(params.tools as never), [true])

    // Without tools and tagged events, the spare points go to earlier system parts.
    const plain = AnthropicProvider.toMessagesParams(
      { ...request, events: requestFor("x", entries).events, tools: [] },
      "m"
    )
    assert.strictEqual(countCacheControl(plain), 4)
    assert.deepStrictEqual(marked(plain.system as never), [false, false, true, true, true])
  })

  it("a single short request still fits: one message, one system part", () => {
    const params = AnthropicProvider.toMessagesParams(
      {
        model: "anthropic/m",
        systemParts: [],
        events: [new ChatRequest({ timestamp: ts(), content: "Hi" })],
        tools: []
      },
      "m",
      { maxTokens: 100, thinkingBudget: 50 }
    )
    assert.deepStrictEqual(params as unknown, {
      model: "m",
      max_tokens: 100,
      stream: true,
      messages: [{ role: "user", content: [{ type: "text", text: "Hi", cache_control: EPHEMERAL }] }],
      thinking: { type: "enabled", budget_tokens: 50 }
    })
  })
})

describe("Anthropic provider: retries, errors, interruption", () => {
  it.live("transient errors (429, 529, connection reset) are retried, then the reply streams", () =>
    Effect.gen(function* () {
      const { fake, provider } = yield* setup
      fake.enqueueAnthropic(
        { status: 429 },
        { status: 529, message: "Overloaded" },
        { reset: true },
        {
          blocks: [{ type: "text", text: "finally" }]
        }
      )
      const reply = yield* collect(provider.stream(requestFor("anthropic/claude-test", conversation())))
      assert.strictEqual(reply.events.length, 1)
      assert.strictEqual((reply.events[0] as ChatResponse).message, "finally")
      assert.strictEqual(fake.requests.length, 4)
      // every attempt sent the same body
      assert.deepStrictEqual(fake.requests[3]!.body, fake.requests[0]!.body)
    })
  )

  it.live("retries are bounded: the last transient error surfaces with the attempt count", () =>
    Effect.gen(function* () {
      const { fake, provider } = yield* setup
      fake.enqueueAnthropic(...Array.from({ length: 5 }, () => ({ status: 503, message: "upstream down" })))
      const error: ProviderError = yield* Effect.flip(
        collect(provider.stream(requestFor("anthropic/claude-test", conversation())))
      )
      assert.strictEqual(error._tag, "ProviderError")
      assert.strictEqual(error.provider, "anthropic")
      assert.strictEqual(error.status, 503)
      assert.strictEqual(error.detail, "upstream down")
      assert.strictEqual(error.message, "anthropic: HTTP 503 after 4 attempts: upstream down")
      assert.isTrue(error.retryable)
      assert.strictEqual(error.attempts, 4)
      assert.strictEqual(fake.requests.length, 4)
    })
  )

  it.live("a permanent error surfaces once with the provider's message", () =>
    Effect.gen(function* () {
      const { fake, provider } = yield* setup
      fake.enqueueAnthropic(
        { status: 400, message: "messages: roles must alternate" },
        { blocks: [{ type: "text", text: "unused" }] }
      )
      const error = yield* Effect.flip(collect(provider.stream(requestFor("anthropic/claude-test", conversation()))))
      assert.deepStrictEqual(
        { status: error.status, message: error.message, retryable: error.retryable, attempts: error.attempts },
        {
          status: 400,
          message: "anthropic: HTTP 400 after 1 attempt: messages: roles must alternate",
          retryable: false,
          attempts: 1
        }
      )
      assert.strictEqual(fake.requests.length, 1)
    })
  )

  it.live("a connection reset after the stream started is not retried (text may already be shown)", () =>
    Effect.gen(function* () {
      const { fake, provider } = yield* setup
      fake.enqueueAnthropic({ blocks: [{ type: "text", text: "a long answer that breaks" }], breakAfterEvents: 4 })
      const error = yield* Effect.flip(collect(provider.stream(requestFor("anthropic/claude-test", conversation()))))
      assert.strictEqual(error._tag, "ProviderError")
      assert.isUndefined(error.status)
      assert.strictEqual(error.failure, "reply")
      assert.strictEqual(error.message, "anthropic: the connection broke mid-reply: terminated (other side closed)")
      assert.strictEqual(error.attempts, 1)
      assert.strictEqual(fake.requests.length, 1)
    })
  )

  it.live("interrupting mid-stream aborts the HTTP request: the server sees the socket close", () =>
    Effect.gen(function* () {
      const { fake, provider } = yield* setup
      fake.enqueueAnthropic({ blocks: [{ type: "text", text: "x".repeat(400) }], chunkSize: 2, delayMs: 20 })
      const seen: Array<string> = []
      const fiber = yield* Effect.forkChild(
        Stream.runForEach(provider.stream(requestFor("anthropic/claude-test", conversation())), (d) =>
          Effect.sync(() => void seen.push(d._tag))
        )
      )
      while (seen.filter((t) => t === "TextDelta").length < 3) yield* Effect.sleep("5 millis")
      yield* Fiber.interrupt(fiber)
      const ended = yield* Effect.promise(() => fake.requests[0]!.ended)
      assert.strictEqual(ended, "aborted")
      assert.isBelow(fake.requests[0]!.eventsSent, 50, "the server stopped streaming long before the end")
    })
  )

  it.live("interrupting while waiting for the response headers aborts the request", () =>
    Effect.gen(function* () {
      const { fake, provider } = yield* setup
      fake.enqueueAnthropic({ blocks: [{ type: "text", text: "late" }], headersDelayMs: 2_000 })
      const fiber = yield* Effect.forkChild(
        collect(provider.stream(requestFor("anthropic/claude-test", conversation())))
      )
      while (fake.requests.length === 0) yield* Effect.sleep("5 millis")
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(yield* Effect.promise(() => fake.requests[0]!.ended), "aborted")
      assert.strictEqual(fake.requests[0]!.eventsSent, 0)
    })
  )

  it.live("taking only the first deltas closes the connection too", () =>
    Effect.gen(function* () {
      const { fake, provider } = yield* setup
      fake.enqueueAnthropic({ blocks: [{ type: "text", text: "y".repeat(400) }], chunkSize: 2, delayMs: 10 })
      const first = yield* Stream.runCollect(
        provider.stream(requestFor("anthropic/claude-test", conversation())).pipe(
          Stream.filter((d) => d._tag === "TextDelta"),
          Stream.take(2)
        )
      )
      assert.strictEqual(first.length, 2)
      assert.strictEqual(yield* Effect.promise(() => fake.requests[0]!.ended), "aborted")
    })
  )
})
