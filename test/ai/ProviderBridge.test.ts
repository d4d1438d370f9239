/**
 * `providerLayer` (docs/library.md#bridges-to-effectai-parleyai): parley's turn loop, coordinator and LLM
 * inquiry backend on an effect/ai `LanguageModel`. The model here is a
 * scripted `LanguageModel.make` (./_model.ts); what it was sent is compared
 * in full, so an inquiry event reaching it would show.
 */
import * as RunLive from "../../src/layers/RunLive.ts"
import { textSoFar } from "../support/RunEvents.ts"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { AiError, Tool } from "effect/ai"
import { providerLayer, toPrompt } from "../../src/ai/index.ts"
import { ChatRequest } from "../../src/domain/event/ChatRequest.ts"
import type { StreamEntry } from "../../src/domain/event/ConversationEvent.ts"
import * as Conversation from "../../src/domain/storage/Conversation.ts"
import * as ConversationId from "../../src/domain/storage/ConversationId.ts"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
import * as InquirySchema from "../../src/domain/tool/InquirySchema.ts"
import * as ExecutorScripted from "../../src/layers/executor/ExecutorScripted.ts"
import * as LlmInquiryBackend from "../../src/layers/LlmInquiryBackend.ts"
import * as MockPromptBackend from "../../src/layers/prompt/MockPromptBackend.ts"
import * as MemoryConversationStore from "../../src/layers/store/MemoryConversationStore.ts"
import * as TurnLoop from "../../src/programs/TurnLoop.ts"
import { Config } from "../../src/services/Config.ts"
import { ConversationStore } from "../../src/services/ConversationStore.ts"
import { collect } from "../../src/domain/model/Reply.ts"
import { Provider, ProviderError } from "../../src/services/Provider.ts"
import { finish, type SeenRequest, scriptedModel, type Step } from "../../src/ai/Testing.ts"

const id = ConversationId.parse("17000000900")!
const at = Timestamp.now()

const writeNote = {
  description: "Write a note to a file.",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  respond: ExecutorScripted.askThen(
    { id: "overwrite", text: "Overwrite a.txt?", answer_type: { type: "boolean" } },
    (answer) => ({ type: "success", content: answer === true ? "written a.txt" : "kept a.txt" })
  )
}

/** The conversation's entries with timestamps and empty metadata left out, for exact comparison. */
const shape = (entries: ReadonlyArray<StreamEntry>) =>
  entries.map((e) => {
    const { timestamp: _t, metadata, ...rest } = JSON.parse(JSON.stringify(e)) as Record<string, unknown>
    return metadata !== undefined && Object.keys(metadata as object).length > 0 ? { ...rest, metadata } : rest
  })

describe("providerLayer: a parley turn on an effect/ai LanguageModel", () => {
  it.effect(
    "a full turn with a tool question answered by the LLM inquiry backend (generateObject); the model never sees an inquiry event",
    () =>
      Effect.gen(function* () {
        const seen: Array<SeenRequest> = []
        const steps: Array<Step> = [
          [
            { type: "text-start", id: "t1" },
            { type: "text-delta", id: "t1", delta: "Writing " },
            { type: "text-delta", id: "t1", delta: "the note." },
            { type: "text-end", id: "t1" },
            { type: "tool-params-start", id: "call_1", name: "write_note" },
            { type: "tool-call", id: "call_1", name: "write_note", params: { path: "a.txt" } },
            finish("tool-calls")
          ],
          // The inquiry side call: generateObject reads the JSON text.
          [{ type: "text", text: '{"answer":true}' }, finish("stop")],
          [{ type: "text-delta", id: "t2", delta: "Done." }, finish("stop")]
        ]
        const provider = providerLayer({ name: "scripted-ai" }).pipe(Layer.provide(scriptedModel(steps, seen)))
        const executor = ExecutorScripted.make({ write_note: writeNote })
        const layer = Layer.mergeAll(
          RunLive.layer,
          MemoryConversationStore.layer([Conversation.make({ id, now: at })]),
          provider,
          Layer.succeed(
            (yield* Effect.promise(() => import("../../src/services/Executor.ts"))).Executor,
            executor.executor
          ),
          MockPromptBackend.layer([], { interactive: false }), // nobody at a terminal: the question goes to the model
          LlmInquiryBackend.layer({
            model: "effect/ai",
            systemPrompt: "Be brief.",
            tools: executor.executor.definitions
          }).pipe(Layer.provide(provider)),
          Config.layerEmpty
        )
        const text: Array<string> = []
        const stored = yield* Effect.gen(function* () {
          yield* Effect.scoped(
            Effect.flatMap(
              ConversationStore.use((s) => s.open(id)),
              (session) =>
                TurnLoop.runTurn({
                  session,
                  model: "effect/ai",
                  systemPrompt: "Be brief.",
                  root: "/tmp",
                  start: TurnLoop.TurnStartMode.NewTurn({ message: "Write the note" })
                })
            )
          )
          text.push(...(yield* textSoFar))
          return (yield* ConversationStore.use((s) => s.load(id))).entries
        }).pipe(Effect.provide(layer))

        expect(shape(stored)).toStrictEqual([
          { type: "turn_start" },
          { type: "chat_request", content: "Write the note" },
          { type: "chat_response", message: "Writing the note." },
          { type: "tool_call_request", id: "call_1", name: "write_note", arguments: { path: "a.txt" } },
          {
            type: "inquiry_request",
            id: "call_1.overwrite.1",
            source: { source: "tool", name: "write_note" },
            question: { text: "Overwrite a.txt?", answer_type: { type: "boolean" } }
          },
          { type: "inquiry_response", id: "call_1.overwrite.1", outcome: "answered", answer: true },
          { type: "tool_call_response", id: "call_1", content: "written a.txt", is_error: false },
          { type: "chat_response", message: "Done." }
        ])
        expect(text).toStrictEqual(["Writing ", "the note.", "Done."])
        expect(executor.calls.map((c) => c.answers)).toStrictEqual([{}, { overwrite: true }])

        // What the model saw, request by request.
        expect(seen.map((s) => [s.method, s.responseFormat, s.toolChoice, s.tools])).toStrictEqual([
          ["streamText", "text", "auto", ["write_note"]],
          // The side call sends the turn's tools (toolChoice none): its prompt holds the paused call, and
          // Anthropic and Bedrock reject tool_use/tool_result blocks in a request that defines no tools.
          ["generateText", "json", "none", ["write_note"]],
          ["streamText", "text", "auto", ["write_note"]]
        ])
        const system = { role: "system", content: "Be brief.", options: {} }
        const user = (t: string) => ({ role: "user", content: t, options: {} }) // one text part encodes as a string
        const assistantCall = {
          role: "assistant",
          content: [
            { type: "text", text: "Writing the note.", options: {} },
            {
              type: "tool-call",
              id: "call_1",
              name: "write_note",
              params: { path: "a.txt" },
              providerExecuted: false,
              options: {}
            }
          ],
          options: {}
        }
        const toolResult = (content: string) => ({
          role: "tool",
          content: [
            {
              type: "tool-result",
              id: "call_1",
              name: "write_note",
              isFailure: false,
              result: content,
              providerExecuted: false,
              options: {}
            }
          ],
          options: {}
        })
        expect(seen[0]!.prompt.content).toStrictEqual([system, user("Write the note")])
        // The side call: the paused call gets a synthetic result, the question is the last user message; no inquiry event.
        expect(seen[1]!.prompt.content).toStrictEqual([
          system,
          user("Write the note"),
          assistantCall,
          toolResult("Tool paused: Overwrite a.txt?"),
          user(InquirySchema.promptFor("write_note", "Overwrite a.txt?", "call_1.overwrite.1"))
        ])
        expect(seen[2]!.prompt.content).toStrictEqual([
          system,
          user("Write the note"),
          assistantCall,
          toolResult("written a.txt")
        ])
        // The tool went out with parley's JSON Schema, as a dynamic tool.
        const sent = seen[0]!.options.tools[0]!
        expect(Tool.isDynamic(sent)).toBe(true)
        expect(Tool.getJsonSchema(sent)).toStrictEqual(writeNote.parameters)
        // The structured request carried the inquiry's answer schema.
        const format = seen[1]!.options.responseFormat
        expect(format.type === "json" ? Tool.getJsonSchemaFromSchema(format.schema) : undefined).toMatchObject({
          type: "object",
          properties: { answer: { type: "boolean" } },
          required: ["answer"]
        })
      })
  )

  const run = (steps: Array<Step>, request: Partial<Parameters<Provider["Service"]["stream"]>[0]> = {}) =>
    Effect.gen(function* () {
      const provider = yield* Provider
      return yield* collect(
        provider.stream({
          model: "effect/ai",
          systemParts: [],
          events: [new ChatRequest({ timestamp: at, content: "hi" })],
          tools: [],
          ...request
        })
      )
    }).pipe(Effect.provide(providerLayer().pipe(Layer.provide(scriptedModel(steps, [])))), Effect.exit)

  it.effect("a reply that ends without effect/ai's finish part is a reply ProviderError, not a complete reply", () =>
    Effect.gen(function* () {
      const exit = yield* run([[{ type: "text-delta", id: "t", delta: "half" }]])
      expect(exit).toStrictEqual(
        Exit.fail(
          new ProviderError({
            provider: "effect/ai",
            failure: "reply",
            detail: "the reply ended before the model finished it (no finish part)",
            retryable: false,
            attempts: 1
          })
        )
      )
    })
  )

  it.effect(
    "stop reasons, usage and reasoning metadata come through; the metadata goes back as the part's options",
    () =>
      Effect.gen(function* () {
        const exit = yield* run([
          [
            { type: "reasoning-start", id: "r" },
            { type: "reasoning-delta", id: "r", delta: "hmm" },
            { type: "reasoning-end", id: "r", metadata: { anthropic: { signature: "c2ln" } } },
            { type: "text-delta", id: "t", delta: "cut" },
            finish("length")
          ]
        ])
        expect(Exit.isSuccess(exit)).toBe(true)
        const reply = Exit.isSuccess(exit) ? exit.value : undefined
        expect(reply?.stopReason).toBe("max_tokens")
        expect(reply?.usage).toStrictEqual({
          inputTokens: 10,
          outputTokens: 5,
          cacheReadTokens: 2,
          cacheWriteTokens: 0
        })
        expect(shape(reply?.events ?? [])).toStrictEqual([
          { type: "chat_response", reasoning: "hmm", metadata: { effect_ai: { anthropic: { signature: "c2ln" } } } },
          { type: "chat_response", message: "cut" }
        ])
        expect(toPrompt({ systemParts: [], events: reply?.events ?? [] })).toStrictEqual([
          {
            role: "assistant",
            content: [
              { type: "reasoning", text: "hmm", options: { anthropic: { signature: "c2ln" } } },
              { type: "text", text: "cut" }
            ]
          }
        ])
      })
  )

  it.effect("an effect/ai error becomes a one-line ProviderError that keeps status and retryability", () =>
    Effect.gen(function* () {
      const rateLimited = AiError.make({
        module: "Test",
        method: "streamText",
        reason: new AiError.RateLimitError({ http: { response: { status: 429, headers: {} } } })
      })
      const exit = yield* run([rateLimited])
      expect(Exit.isFailure(exit)).toBe(true)
      const error = Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail") : undefined
      const e = error?._tag === "Fail" ? (error.error as ProviderError) : undefined
      expect([e?.failure, e?.status, e?.retryable, e?.attempts]).toStrictEqual(["http", 429, true, 1])
      expect(e?.message).toMatch(/^effect\/ai: HTTP 429 after 1 attempt: /)
    })
  )

  it.effect("a tool call whose arguments are not a JSON object fails the reply", () =>
    Effect.gen(function* () {
      const exit = yield* run([[{ type: "tool-call", id: "c", name: "t", params: [1] }, finish("tool-calls")]], {
        tools: [{ name: "t", description: "", parameters: { type: "object" } }]
      })
      expect(exit).toStrictEqual(
        Exit.fail(
          new ProviderError({
            provider: "effect/ai",
            failure: "reply",
            detail: "the model called t with arguments that are not a JSON object: [1]",
            retryable: false,
            attempts: 1
          })
        )
      )
    })
  )

  it.effect("a call to a tool that was not offered still comes back to parley (it answers 'not available')", () =>
    Effect.gen(function* () {
      const exit = yield* run([[{ type: "tool-call", id: "c", name: "gone", params: {} }, finish("tool-calls")]], {
        tools: [{ name: "t", description: "", parameters: { type: "object" } }]
      })
      const reply = Exit.isSuccess(exit) ? exit.value : undefined
      expect(shape(reply?.events ?? [])).toStrictEqual([
        { type: "tool_call_request", id: "c", name: "gone", arguments: {} }
      ])
    })
  )
})
