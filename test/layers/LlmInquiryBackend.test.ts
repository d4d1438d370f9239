import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { ChatRequest } from "../../src/domain/event/ChatRequest.ts"
import { ChatResponse } from "../../src/domain/event/ChatResponse.ts"
import { Compaction } from "../../src/domain/event/Compaction.ts"
import * as ContextWindow from "../../src/domain/model/ContextWindow.ts"
import type { StreamEntry } from "../../src/domain/event/ConversationEvent.ts"
import { InquiryAnswerType } from "../../src/domain/event/InquiryAnswerType.ts"
import * as InquiryId from "../../src/domain/event/InquiryId.ts"
import type { InquiryQuestion } from "../../src/domain/event/InquiryQuestion.ts"
import { InquiryRequest } from "../../src/domain/event/InquiryRequest.ts"
import * as InquirySchema from "../../src/domain/tool/InquirySchema.ts"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
import { ToolCallRequest } from "../../src/domain/event/ToolCallRequest.ts"
import { TurnStart } from "../../src/domain/event/TurnStart.ts"
import * as LlmInquiryBackend from "../../src/layers/LlmInquiryBackend.ts"
import * as AnthropicProvider from "../../src/layers/provider/Anthropic.ts"
import * as OpenAiProvider from "../../src/layers/provider/OpenAi.ts"
import * as Scripted from "../../src/layers/provider/Scripted.ts"
import { InquiryBackend, type InquiryBackendRequest } from "../../src/services/InquiryBackend.ts"
import {
  Provider,
  type ProviderDelta,
  ProviderDelta as Delta,
  type ProviderError,
  type ProviderRequest
} from "../../src/services/Provider.ts"
import * as FakeLlmServer from "../support/FakeLlmServer.ts"
import { countCacheControl, fastRetry, readNote, writeNote } from "./provider/fixtures.ts"

const T = (s: number) => Timestamp.make(`2026-03-05 19:31:${String(s).padStart(2, "0")}.5`)
const NOW = T(59)
const now = () => NOW

/**
 * A turn paused on a question: the assistant called write_note (call_1, asking)
 * and read_note (call_2, still running) in parallel; the inquiry request is
 * already recorded.
 */
const entries = (question: InquiryQuestion, inquiryId = "call_1.overwrite.1"): Array<StreamEntry> => [
  new TurnStart({ timestamp: T(1) }),
  new ChatRequest({ timestamp: T(2), content: "Save my note to a.txt" }),
  ChatResponse.message(T(3), "Saving it."),
  new ToolCallRequest({ timestamp: T(4), id: "call_1", name: "write_note", arguments: { path: "a.txt" } }),
  new ToolCallRequest({ timestamp: T(5), id: "call_2", name: "read_note", arguments: { path: "b.txt" } }),
  new InquiryRequest({
    timestamp: T(6),
    id: InquiryId.make(inquiryId),
    source: { source: "tool", name: "write_note" },
    question
  })
]

const boolean: InquiryQuestion = { text: "Overwrite a.txt?", answer_type: InquiryAnswerType.boolean }
const select: InquiryQuestion = { text: "Which encoding?", answer_type: InquiryAnswerType.select(["A", "B", "C"]) }
const text: InquiryQuestion = { text: "Why?", answer_type: InquiryAnswerType.text }

const request = (question: InquiryQuestion, extra: Partial<InquiryBackendRequest> = {}): InquiryBackendRequest => ({
  entries: entries(question, extra.inquiryId),
  inquiryId: InquiryId.make("call_1.overwrite.1"),
  toolCallId: "call_1",
  toolName: "write_note",
  question,
  ...extra
})

/** A provider double: answers each request with the next canned stream and records the requests. */
const recordingProvider = (replies: Array<Stream.Stream<ProviderDelta, ProviderError>>) => {
  const requests: Array<ProviderRequest> = []
  const layer = Layer.succeed(
    Provider,
    Provider.of({
      stream: (r) => {
        requests.push(r)
        return replies.shift() ?? Stream.die("no reply")
      }
    })
  )
  return { requests, layer }
}

const structured = (data: unknown) =>
  Stream.make(Delta.Structured({ data: data as never }), Delta.Finish({ reason: "end_turn" }))

const backendWith = (
  replies: Array<Stream.Stream<ProviderDelta, ProviderError>>,
  options: Partial<LlmInquiryBackend.LlmInquiryBackendOptions> = {}
) => {
  const provider = recordingProvider(replies)
  const layer = LlmInquiryBackend.layer({
    model: "anthropic/turn-model",
    systemPrompt: "You are parley.",
    sections: ["Project notes."],
    tools: [writeNote, readNote],
    now,
    ...options
  }).pipe(Layer.provide(provider.layer))
  return { requests: provider.requests, layer }
}

const inquire = (r: InquiryBackendRequest) => InquiryBackend.use((b) => b.inquire(r))

describe("LlmInquiryBackend (jp-reference §7.4 llm_backend_*)", () => {
  it.effect("llm_backend_returns_answer", () => {
    const { layer } = backendWith([structured({ answer: true })])
    return Effect.gen(function* () {
      assert.strictEqual(yield* inquire(request(boolean)), true)
    }).pipe(Effect.provide(layer))
  })

  it.effect("llm_backend_returns_error_on_missing_structured_data", () => {
    const { layer } = backendWith([Stream.make(Delta.TextDelta({ text: "I think yes." }))])
    return Effect.gen(function* () {
      const error = yield* Effect.flip(inquire(request(boolean)))
      assert.strictEqual(error._tag, "MissingStructuredData")
      assert.strictEqual(error.message, "No structured data in the LLM response")
    }).pipe(Effect.provide(layer))
  })

  it.effect("llm_backend_returns_error_on_answer_extraction_failure", () => {
    const { layer } = backendWith([structured({ unrelated: true })])
    return Effect.gen(function* () {
      const error = yield* Effect.flip(inquire(request(boolean)))
      assert.strictEqual(error._tag, "AnswerExtraction")
      assert.strictEqual(
        error.message,
        'Failed to extract answer from structured response: no `answer` field in {"unrelated":true}'
      )
    }).pipe(Effect.provide(layer))
  })

  it.effect("llm_backend_returns_cancelled: a provider call cut off by interruption is Cancelled", () => {
    const { layer } = backendWith([Stream.fromEffect(Effect.interrupt)])
    return Effect.gen(function* () {
      const error = yield* Effect.flip(inquire(request(boolean)))
      assert.strictEqual(error._tag, "InquiryCancelledError")
      assert.strictEqual(error.message, "Inquiry cancelled")
    }).pipe(Effect.provide(layer))
  })

  it.effect("llm_backend_passes_select_question / _text_question", () => {
    const { layer, requests } = backendWith([structured({ answer: "B" }), structured({ answer: "Because reasons" })])
    return Effect.gen(function* () {
      assert.strictEqual(yield* inquire(request(select)), "B")
      assert.strictEqual(yield* inquire(request(text)), "Because reasons")
      assert.deepStrictEqual(
        requests.map((r) => r.schema),
        [
          InquirySchema.schemaFor(select.answer_type as InquirySchema.AnswerableType),
          InquirySchema.schemaFor(text.answer_type as InquirySchema.AnswerableType)
        ]
      )
    }).pipe(Effect.provide(layer))
  })

  it.effect(
    "a select answer outside the options and a null answer are extraction errors (082: null is an error)",
    () => {
      const { layer } = backendWith([
        structured({ answer: "D" }),
        structured({ answer: null }),
        structured({ answer: "yes" })
      ])
      return Effect.gen(function* () {
        const notAnOption = yield* Effect.flip(inquire(request(select)))
        assert.strictEqual(
          notAnOption.message,
          'Failed to extract answer from structured response: "D" is not one of the options "A", "B", "C"'
        )
        const nullAnswer = yield* Effect.flip(inquire(request(boolean)))
        assert.strictEqual(nullAnswer.message, "Failed to extract answer from structured response: the answer is null")
        const wrongType = yield* Effect.flip(inquire(request(boolean)))
        assert.strictEqual(wrongType._tag, "AnswerExtraction")
      }).pipe(Effect.provide(layer))
    }
  )

  it.effect('a provider error maps to InquiryProviderError: "LLM provider error: …" (scripted error step)', () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(inquire(request(boolean)))
      assert.strictEqual(error._tag, "InquiryProviderError")
      assert.strictEqual(error.message, "LLM provider error: provider unavailable")
    }).pipe(
      Effect.provide(
        LlmInquiryBackend.layer({ model: "scripted" }).pipe(
          Layer.provide(Scripted.layer([{ error: "provider unavailable", toolCalls: [], delayMs: 0 }]))
        )
      )
    )
  )

  it.effect("a secret question is never sent to a model", () => {
    const { layer, requests } = backendWith([structured({ answer: "hunter2" })])
    return Effect.gen(function* () {
      const error = yield* Effect.flip(inquire(request({ text: "Token?", answer_type: InquiryAnswerType.secret })))
      assert.strictEqual(error._tag, "InquiryOtherError")
      assert.strictEqual(requests.length, 0)
    }).pipe(Effect.provide(layer))
  })

  it.effect(
    "llm_backend_uses_per_question_override > inquiry model > turn model (dedicated_model_backend_returns_answer)",
    () =>
      Effect.gen(function* () {
        const turnOnly = backendWith([structured({ answer: true })])
        yield* inquire(request(boolean)).pipe(Effect.provide(turnOnly.layer))
        const dedicated = backendWith([structured({ answer: true }), structured({ answer: false })], {
          inquiryModel: "openai/inquiry-model"
        })
        assert.strictEqual(yield* inquire(request(boolean)).pipe(Effect.provide(dedicated.layer)), true)
        assert.strictEqual(
          yield* inquire(request(boolean, { model: "openai/per-question" })).pipe(Effect.provide(dedicated.layer)),
          false
        )
        assert.deepStrictEqual(
          [...turnOnly.requests, ...dedicated.requests].map((r) => r.model),
          ["anthropic/turn-model", "openai/inquiry-model", "openai/per-question"]
        )
      })
  )
})

describe("LlmInquiryBackend: the side call's provider request", () => {
  it.effect(
    "paused tool response, interrupted parallel call, no inquiry events, question last, tools with toolChoice none",
    () => {
      const { layer, requests } = backendWith([structured({ answer: true })])
      const original = entries(boolean)
      const snapshot = JSON.stringify(original)
      return Effect.gen(function* () {
        yield* inquire({ ...request(boolean), entries: original })
        const sent = requests[0]!
        assert.deepStrictEqual(sent.systemParts, ["You are parley.", "Project notes."])
        assert.deepStrictEqual(sent.tools, [writeNote, readNote])
        assert.strictEqual(sent.toolChoice, "none")
        assert.deepStrictEqual(sent.schema, InquirySchema.schemaFor(InquiryAnswerType.boolean))
        assert.deepStrictEqual(
          sent.events.map((e) => [
            e.type,
            "id" in e ? e.id : "",
            e.type === "tool_call_response" ? e.content : "",
            e.metadata
          ]),
          [
            ["chat_request", "", "", {}],
            ["chat_response", "", "", {}],
            ["tool_call_request", "call_1", "", {}],
            ["tool_call_request", "call_2", "", {}],
            ["tool_call_response", "call_2", "Tool call was interrupted.", { cache_breakpoint: true }],
            ["tool_call_response", "call_1", "Tool paused: Overwrite a.txt?", {}],
            ["chat_request", "", "", {}]
          ]
        )
        const question = sent.events.at(-1) as ChatRequest
        assert.deepStrictEqual(
          question,
          new ChatRequest({
            timestamp: NOW,
            content:
              "The tool `write_note` requires additional input.\n\nOverwrite a.txt?\n\nProvide your answer based on the conversation context.\n\nInquiry ID: call_1.overwrite.1",
            schema: InquirySchema.schemaFor(InquiryAnswerType.boolean)
          })
        )
        // The real stream is untouched (RFD 028: no stream mutation).
        assert.strictEqual(JSON.stringify(original), snapshot)
      }).pipe(Effect.provide(layer))
    }
  )

  it.effect(
    "the schema is byte-identical across inquiries with the same answer type; only the prompt names the id",
    () => {
      const { layer, requests } = backendWith([
        structured({ answer: true }),
        structured({ answer: false }),
        structured({ answer: "A" }),
        structured({ answer: "C" })
      ])
      return Effect.gen(function* () {
        yield* inquire(request(boolean, { inquiryId: InquiryId.make("call_1.overwrite.1") }))
        yield* inquire(request(boolean, { inquiryId: InquiryId.make("call_7.backup.2"), toolCallId: "call_1" }))
        yield* inquire(request(select, { inquiryId: InquiryId.make("call_1.enc.1") }))
        yield* inquire(request(select, { inquiryId: InquiryId.make("call_1.enc.2") }))
        const schemas = requests.map((r) => JSON.stringify(r.schema))
        const attached = requests.map((r) => JSON.stringify((r.events.at(-1) as ChatRequest).schema))
        assert.strictEqual(schemas[0], schemas[1])
        assert.strictEqual(schemas[2], schemas[3])
        assert.notStrictEqual(schemas[0], schemas[2])
        assert.deepStrictEqual(attached, schemas)
        for (const s of schemas) assert.notMatch(s!, /call_/)
        assert.include((requests[1]!.events.at(-1) as ChatRequest).content, "Inquiry ID: call_7.backup.2")
      }).pipe(Effect.provide(layer))
    }
  )
})

describe("LlmInquiryBackend over the real SDKs (fake server)", () => {
  it.live(
    "Anthropic: structured output request with the paused call, ≤ 4 cache points, no inquiry text; answer decoded",
    () =>
      Effect.gen(function* () {
        const fake = yield* FakeLlmServer.make
        fake.enqueueAnthropic({ blocks: [{ type: "text", text: '{"answer":true}' }] })
        const backend = yield* LlmInquiryBackend.make({
          model: "anthropic/claude-x",
          systemPrompt: "You are parley.",
          tools: [writeNote, readNote],
          now
        }).pipe(Effect.provide(AnthropicProvider.layer({ apiKey: "k", baseUrl: fake.url, retry: fastRetry })))
        assert.strictEqual(yield* backend.inquire(request(boolean)), true)
        const body = fake.requests[0]!.body
        assert.deepStrictEqual(body.output_config, {
          format: { type: "json_schema", schema: InquirySchema.schemaFor(InquiryAnswerType.boolean) }
        })
        assert.deepStrictEqual(body.tool_choice, { type: "none" })
        assert.isAtMost(countCacheControl(body), 4)
        assert.deepStrictEqual(body.messages.at(-1), {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "call_2",
              content: "Tool call was interrupted.",
              is_error: true,
              cache_control: { type: "ephemeral" }
            },
            { type: "tool_result", tool_use_id: "call_1", content: "Tool paused: Overwrite a.txt?", is_error: false },
            {
              type: "text",
              text: "The tool `write_note` requires additional input.\n\nOverwrite a.txt?\n\nProvide your answer based on the conversation context.\n\nInquiry ID: call_1.overwrite.1",
              cache_control: { type: "ephemeral" }
            }
          ]
        })
        assert.notInclude(JSON.stringify(body), "inquiry_request")
      })
  )

  it.live("OpenAI: json_schema response format; select answer decoded", () =>
    Effect.gen(function* () {
      const fake = yield* FakeLlmServer.make
      fake.enqueueOpenAi({ content: '{"answer":"C"}' })
      const backend = yield* LlmInquiryBackend.make({ model: "openai/gpt-x", now }).pipe(
        Effect.provide(OpenAiProvider.layer({ apiKey: "k", baseUrl: `${fake.url}/v1`, retry: fastRetry }))
      )
      assert.strictEqual(yield* backend.inquire(request(select)), "C")
      assert.deepStrictEqual(fake.requests[0]!.body.response_format, {
        type: "json_schema",
        json_schema: {
          name: "response",
          schema: InquirySchema.schemaFor(select.answer_type as InquirySchema.AnswerableType),
          strict: true
        }
      })
    })
  )

  it.live("interrupting the inquiry aborts the model request (the server sees the socket close)", () =>
    Effect.gen(function* () {
      const fake = yield* FakeLlmServer.make
      fake.enqueueAnthropic({
        blocks: [
          { type: "thinking", thinking: "t".repeat(400), signature: "s" },
          { type: "text", text: '{"answer":true}' }
        ],
        chunkSize: 2,
        delayMs: 20
      })
      const backend = yield* LlmInquiryBackend.make({ model: "anthropic/claude-x", now }).pipe(
        Effect.provide(AnthropicProvider.layer({ apiKey: "k", baseUrl: fake.url, retry: fastRetry }))
      )
      const fiber = yield* Effect.forkChild(backend.inquire(request(boolean)))
      while ((fake.requests[0]?.eventsSent ?? 0) < 5) yield* Effect.sleep("5 millis")
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(yield* Effect.promise(() => fake.requests[0]!.ended), "aborted")
    })
  )
})

describe("LlmInquiryBackend: compactions and context windows (RFD 064, RFD 034)", () => {
  /** Ten older turns of 1,000 characters each before the paused turn. */
  const longHistory = (): Array<StreamEntry> => {
    const out: Array<StreamEntry> = []
    for (let t = 0; t < 10; t++) {
      out.push(
        new TurnStart({ timestamp: T(1) }),
        new ChatRequest({ timestamp: T(1), content: `old question ${t} ` + "q".repeat(480) }),
        ChatResponse.message(T(1), `old answer ${t} ` + "a".repeat(480))
      )
    }
    return out
  }
  const chars = (r: ProviderRequest) => ContextWindow.requestChars(r)

  it.effect("the side call sees the conversation with its compactions applied", () => {
    const { requests, layer } = backendWith([structured({ answer: true })])
    const history = longHistory()
    const compaction = Compaction.fromRule({ timestamp: T(2), from_turn: 0, to_turn: 8, summary: "Ten old questions." })
    return Effect.gen(function* () {
      yield* inquire(request(boolean, { entries: [...history, compaction, ...entries(boolean)] }))
      const contents = requests[0]!.events.map((e) =>
        e.type === "chat_request" ? e.content : e.type === "chat_response" ? e.message : e.type
      )
      assert.deepStrictEqual(contents.slice(0, 4), [
        "[Summary of previous conversation]",
        "Ten old questions.",
        history[28]!.type === "chat_request" ? (history[28] as ChatRequest).content : "",
        (history[29] as ChatResponse).message
      ])
    }).pipe(Effect.provide(layer))
  })

  it.effect(
    "a window that the conversation overflows: the oldest turns are cut (90% → 80%), the paused turn and the question stay",
    () => {
      const { requests, layer } = backendWith([structured({ answer: true }), structured({ answer: true })], {
        contextWindow: (m) => (m === "anthropic/small" ? 2000 : undefined)
      })
      const all = [...longHistory(), ...entries(boolean)]
      return Effect.gen(function* () {
        yield* inquire(request(boolean, { entries: all, model: "anthropic/small" }))
        const sent = requests[0]!
        // 2,000 tokens at RFD 034's 3 characters per token: 6,000 characters, cut to 80% (4,800) with the
        // overhead; the question added after the cut stays within the 90% budget.
        assert.isBelow(chars(sent), 5400)
        assert.isAbove(chars(sent), 4000)
        assert.strictEqual(sent.events[0]!.type, "chat_request")
        const first = (sent.events[0] as ChatRequest).content
        assert.match(first, /^old question [1-9] /)
        assert.strictEqual((sent.events.at(-1) as ChatRequest).content.includes("Overwrite a.txt?"), true)
        // Without a known window nothing is cut.
        yield* inquire(request(boolean, { entries: all, model: "anthropic/other" }))
        assert.match((requests[1]!.events[0] as ChatRequest).content, /^old question 0 /)
      }).pipe(Effect.provide(layer))
    }
  )
})

describe("RFD 034: the side call's settings in three layers", () => {
  it.effect(
    "question table over conversation.inquiry.assistant over the turn: model, system prompt, instructions, cache",
    () => {
      const { requests, layer } = backendWith([structured({ answer: true }), structured({ answer: false })], {
        inquiry: {
          model: "anthropic/inquiry-model",
          system_prompt: "Answer tool questions.",
          instructions: ["Be brief.", { title: "Rules", items: ["No guessing"] }],
          request: { cache: "off" }
        }
      })
      return Effect.gen(function* () {
        yield* inquire(request(boolean))
        yield* inquire(request(boolean, { assistant: { model: "openai/small", request: { cache: "long" } } }))
        assert.deepStrictEqual(
          requests.map((r) => r.model),
          ["anthropic/inquiry-model", "openai/small"]
        )
        assert.deepStrictEqual(
          requests.map((r) => r.cache),
          ["off", "long"]
        )
        // The question's table leaves system_prompt and instructions to the inquiry layer.
        for (const r of requests)
          assert.deepStrictEqual(r.systemParts, [
            "Answer tool questions.",
            "Project notes.",
            "Be brief.",
            "## Rules\n- No guessing"
          ])
      }).pipe(Effect.provide(layer))
    }
  )

  it.effect("unset everywhere: the turn's model and system prompt; max_response_bytes caps the reply", () => {
    const { requests, layer } = backendWith([
      structured({ answer: true }),
      structured({ answer: "a much longer answer than allowed" })
    ])
    return Effect.gen(function* () {
      yield* inquire(request(boolean))
      assert.strictEqual(requests[0]!.model, "anthropic/turn-model")
      assert.deepStrictEqual(requests[0]!.systemParts, ["You are parley.", "Project notes."])
      assert.strictEqual(requests[0]!.cache, undefined)
      const error = yield* Effect.flip(inquire(request(text, { assistant: { request: { max_response_bytes: 10 } } })))
      assert.strictEqual(error.message, "The reply was longer than request.max_response_bytes (10 bytes)")
    }).pipe(Effect.provide(layer))
  })
})
