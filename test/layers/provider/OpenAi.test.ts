import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { ChatRequest } from "../../../src/domain/event/ChatRequest.ts"
import { ChatResponse } from "../../../src/domain/event/ChatResponse.ts"
import { ToolCallRequest } from "../../../src/domain/event/ToolCallRequest.ts"
import * as OpenAiProvider from "../../../src/layers/provider/OpenAi.ts"
import { collect } from "../../../src/domain/model/Reply.ts"
import * as FakeLlmServer from "../../support/FakeLlmServer.ts"
import { conversation, fastRetry, requestFor, ts, writeNote } from "./fixtures.ts"

const setup = Effect.gen(function* () {
  const fake = yield* FakeLlmServer.make
  const provider = yield* OpenAiProvider.make({ apiKey: "test-key", baseUrl: `${fake.url}/v1`, retry: fastRetry })
  return { fake, provider }
})

const inquirySchema = {
  type: "object",
  properties: { answer: { type: "boolean" } },
  required: ["answer"],
  additionalProperties: false
}

describe("OpenAI provider (real SDK against the fake chat completions API)", () => {
  it.live(
    "sends one system message, assistant tool_calls, one tool message per result; hides inquiries and reasoning",
    () =>
      Effect.gen(function* () {
        const { fake, provider } = yield* setup
        fake.enqueueOpenAi({ content: "Summary." })
        yield* collect(provider.stream(requestFor("openai/gpt-test", conversation())))
        const seen = fake.requests[0]!
        assert.strictEqual(seen.path, "/v1/chat/completions")
        assert.strictEqual(seen.headers.authorization, "Bearer test-key")
        assert.deepStrictEqual(seen.body, {
          model: "gpt-test",
          stream: true,
          stream_options: { include_usage: true },
          messages: [
            { role: "system", content: "You are a helpful assistant.\n\nSection one." },
            { role: "user", content: "Write notes a.txt and b.txt" },
            {
              role: "assistant",
              content: "Writing both notes.",
              tool_calls: [
                { id: "call_1", type: "function", function: { name: "write_note", arguments: '{"path":"a.txt"}' } },
                { id: "call_2", type: "function", function: { name: "write_note", arguments: '{"path":"b.txt"}' } }
              ]
            },
            { role: "tool", tool_call_id: "call_1", content: "wrote a.txt" },
            { role: "tool", tool_call_id: "call_2", content: "disk full" },
            { role: "assistant", content: "Both done." },
            { role: "user", content: "Thanks. Now summarize." }
          ],
          tools: [
            {
              type: "function",
              function: { name: "write_note", description: writeNote.description, parameters: writeNote.parameters }
            }
          ]
        })
        const raw = JSON.stringify(seen.body)
        for (const hidden of ["SECRET-QUESTION", "SECRET-ANSWER", "I should write both", "jean"])
          assert.notInclude(raw, hidden)
      })
  )

  it.live("streams reasoning, text and parallel tool calls; collect builds the events", () =>
    Effect.gen(function* () {
      const { fake, provider } = yield* setup
      fake.enqueueOpenAi({
        reasoning: "Two files, two calls.",
        content: "Writing them now.",
        toolCalls: [
          { id: "call_a", name: "write_note", arguments: '{"path":"a.txt"}' },
          { id: "call_b", name: "write_note", arguments: '{"path":"b.txt","n":2}' }
        ],
        usage: { prompt: 30, completion: 12, cached: 20 }
      })
      const deltas = yield* Stream.runCollect(provider.stream(requestFor("openai/gpt-test", conversation())))
      assert.isAbove(deltas.filter((d) => d._tag === "TextDelta").length, 1)
      assert.isAbove(deltas.filter((d) => d._tag === "ReasoningDelta").length, 1)
      assert.deepStrictEqual(
        deltas.filter((d) => d._tag === "ToolCallStart").map((d) => d.id),
        ["call_a", "call_b"]
      )
      assert.deepStrictEqual(deltas.at(-2), {
        _tag: "Usage",
        usage: { inputTokens: 30, outputTokens: 12, cacheReadTokens: 20, cacheWriteTokens: 0 }
      } as never)
      const when = ts()
      const reply = yield* collect(Stream.fromIterable(deltas), { now: () => when })
      assert.deepStrictEqual(reply.events, [
        ChatResponse.reasoning(when, "Two files, two calls."),
        ChatResponse.message(when, "Writing them now."),
        new ToolCallRequest({ timestamp: when, id: "call_a", name: "write_note", arguments: { path: "a.txt" } }),
        new ToolCallRequest({ timestamp: when, id: "call_b", name: "write_note", arguments: { path: "b.txt", n: 2 } })
      ])
      assert.strictEqual(reply.stopReason, "tool_use")
    })
  )

  it.live("structured output: response_format json_schema (strict), tool_choice none, decoded data", () =>
    Effect.gen(function* () {
      const { fake, provider } = yield* setup
      fake.enqueueOpenAi({ content: '{"answer":"B"}' })
      const schema = {
        type: "object",
        properties: { answer: { type: "string", enum: ["A", "B"] } },
        required: ["answer"],
        additionalProperties: false
      }
      const entries = [...conversation(), new ChatRequest({ timestamp: ts(), content: "Which?", schema })]
      const deltas = yield* Stream.runCollect(
        provider.stream(requestFor("openai/gpt-test", entries, { toolChoice: "none" }))
      )
      assert.isFalse(deltas.some((d) => d._tag === "TextDelta"))
      const when = ts()
      assert.deepStrictEqual((yield* collect(Stream.fromIterable(deltas), { now: () => when })).events, [
        ChatResponse.structured(when, { answer: "B" })
      ])
      const body = fake.requests[0]!.body
      assert.deepStrictEqual(body.response_format, {
        type: "json_schema",
        json_schema: { name: "response", schema, strict: true }
      })
      assert.strictEqual(body.tool_choice, "none")
      assert.strictEqual(body.tools.length, 1)
    })
  )

  it.live("a structured reply that is not JSON comes back as text (no data event)", () =>
    Effect.gen(function* () {
      const { fake, provider } = yield* setup
      fake.enqueueOpenAi({ content: "I cannot answer that." })
      const when = ts()
      const reply = yield* collect(
        provider.stream(requestFor("openai/gpt-test", conversation(), { schema: inquirySchema })),
        { now: () => when }
      )
      assert.deepStrictEqual(reply.events, [ChatResponse.message(when, "I cannot answer that.")])
    })
  )
})

describe("toStrictSchema", () => {
  it("leaves a strict schema unchanged (the inquiry schemas)", () => {
    assert.deepStrictEqual(OpenAiProvider.toStrictSchema(inquirySchema), inquirySchema)
  })

  it("rewrites const to a one-value enum, closes objects, makes optional keys required and nullable", () => {
    assert.deepStrictEqual(
      OpenAiProvider.toStrictSchema({
        type: "object",
        properties: {
          inquiry_id: { type: "string", const: "call_1.q.1" },
          answer: { type: "boolean" },
          note: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
          tags: { type: "array", items: { oneOf: [{ type: "string" }, { type: "number" }] } }
        },
        required: ["inquiry_id", "answer"]
      }),
      {
        type: "object",
        properties: {
          inquiry_id: { type: "string", enum: ["call_1.q.1"] },
          answer: { type: "boolean" },
          note: {
            anyOf: [
              {
                type: "object",
                properties: { text: { type: "string" } },
                required: ["text"],
                additionalProperties: false
              },
              { type: "null" }
            ]
          },
          tags: {
            anyOf: [{ type: "array", items: { anyOf: [{ type: "string" }, { type: "number" }] } }, { type: "null" }]
          }
        },
        required: ["inquiry_id", "answer", "note", "tags"],
        additionalProperties: false
      }
    )
  })
})

describe("OpenAI provider: retries, errors, interruption", () => {
  it.live("429, 500 and a connection reset are retried, then the reply streams", () =>
    Effect.gen(function* () {
      const { fake, provider } = yield* setup
      fake.enqueueOpenAi(
        { status: 429, message: "Rate limit reached" },
        { status: 500 },
        { reset: true },
        { content: "ok" }
      )
      const reply = yield* collect(provider.stream(requestFor("openai/gpt-test", conversation())))
      assert.strictEqual((reply.events[0] as ChatResponse).message, "ok")
      assert.strictEqual(fake.requests.length, 4)
    })
  )

  it.live("a permanent error surfaces once with the provider's message", () =>
    Effect.gen(function* () {
      const { fake, provider } = yield* setup
      fake.enqueueOpenAi({ status: 401, message: "Incorrect API key provided" }, { content: "unused" })
      const error = yield* Effect.flip(collect(provider.stream(requestFor("openai/gpt-test", conversation()))))
      assert.deepStrictEqual(
        {
          provider: error.provider,
          status: error.status,
          message: error.message,
          retryable: error.retryable,
          attempts: error.attempts
        },
        {
          provider: "openai",
          status: 401,
          message: "openai: HTTP 401 after 1 attempt: Incorrect API key provided. Check OPENAI_API_KEY.",
          retryable: false,
          attempts: 1
        }
      )
      assert.strictEqual(fake.requests.length, 1)
    })
  )

  it.live("interrupting mid-stream closes the connection", () =>
    Effect.gen(function* () {
      const { fake, provider } = yield* setup
      fake.enqueueOpenAi({ content: "z".repeat(300), chunkSize: 2, delayMs: 20 })
      let texts = 0
      const fiber = yield* Effect.forkChild(
        Stream.runForEach(provider.stream(requestFor("openai/gpt-test", conversation())), (d) =>
          Effect.sync(() => void (d._tag === "TextDelta" && texts++))
        )
      )
      while (texts < 3) yield* Effect.sleep("5 millis")
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(yield* Effect.promise(() => fake.requests[0]!.ended), "aborted")
      assert.isBelow(fake.requests[0]!.eventsSent, 50)
    })
  )
})

describe("ChunkConverter edge cases (found in review)", () => {
  it("a choice without a delta is ignored, and a tool name repeated in every delta is not doubled", () => {
    const c = new OpenAiProvider.ChunkConverter(false)
    const chunk = (choices: unknown) =>
      ({ id: "x", object: "chat.completion.chunk", created: 0, model: "m", choices }) as never
    c.push(chunk([{ index: 0, finish_reason: "stop" }])) // used to throw on the missing delta
    c.push(
      chunk([
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, id: "t1", function: { name: "read_file", arguments: '{"pa' } }] }
        }
      ])
    )
    c.push(
      chunk([
        { index: 0, delta: { tool_calls: [{ index: 0, function: { name: "read_file", arguments: 'th":"a"}' } }] } }
      ])
    )
    const end = c.end()
    assert.isArray(end)
    const call = (end as ReadonlyArray<{ _tag: string; name?: string; arguments?: unknown }>).find(
      (d) => d._tag === "ToolCall"
    )
    assert.strictEqual(call?.name, "read_file")
    assert.deepStrictEqual(call?.arguments, { path: "a" })
  })
})
