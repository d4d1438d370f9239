/**
 * The `effect/ai` bridges at their edges, each in a full turn on a scripted
 * `LanguageModel` (docs/library.md#bridges-to-effectai-parleyai; the review's outside-in pass): a turn
 * interrupted while a handler runs (after its questions were answered), a
 * turn resumed with an answer to a question the tool no longer asks, an
 * inquiry side call whose `generateObject` reply is not JSON, and a call to a
 * tool the toolkit does not have.
 */
import * as RunLive from "../../src/layers/RunLive.ts"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Tool, Toolkit } from "effect/ai"
import { executorFromToolkit, Inquiry, providerLayer } from "../../src/ai/index.ts"
import { ChatRequest } from "../../src/domain/event/ChatRequest.ts"
import type { StreamEntry } from "../../src/domain/event/ConversationEvent.ts"
import * as InquiryId from "../../src/domain/event/InquiryId.ts"
import { InquiryRequest } from "../../src/domain/event/InquiryRequest.ts"
import { InquiryResponse } from "../../src/domain/event/InquiryResponse.ts"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
import { ToolCallRequest } from "../../src/domain/event/ToolCallRequest.ts"
import { TurnStart } from "../../src/domain/event/TurnStart.ts"
import * as Conversation from "../../src/domain/storage/Conversation.ts"
import * as ConversationId from "../../src/domain/storage/ConversationId.ts"
import * as LlmInquiryBackend from "../../src/layers/LlmInquiryBackend.ts"
import * as MockInquiryBackend from "../../src/layers/MockInquiryBackend.ts"
import * as MockPromptBackend from "../../src/layers/prompt/MockPromptBackend.ts"
import * as MemoryConversationStore from "../../src/layers/store/MemoryConversationStore.ts"
import * as TurnLoop from "../../src/programs/TurnLoop.ts"
import { Config } from "../../src/services/Config.ts"
import { ConversationStore } from "../../src/services/ConversationStore.ts"
import type { Answers } from "../../src/services/Executor.ts"
import { PromptBackend } from "../../src/services/PromptBackend.ts"
import { finish, scriptedModel, type Step } from "../../src/ai/Testing.ts"

const id = ConversationId.parse("17000000902")!
const at = Timestamp.now()

const Deploy = Tool.make("deploy", {
  description: "Deploy the service.",
  parameters: Schema.Struct({ service: Schema.String }),
  success: Schema.String
})
const toolkit = Toolkit.make(Deploy)

/** The call the model makes, then its closing words once the result is in. */
const steps = (): Array<Step> => [
  [{ type: "tool-call", id: "call_1", name: "deploy", params: { service: "api" } }, finish("tool-calls")],
  [{ type: "text-delta", id: "t", delta: "Deployed." }, finish("stop")]
]

const shape = (entries: ReadonlyArray<StreamEntry>) =>
  entries.map((e) => {
    const { timestamp: _t, metadata: _m, ...rest } = JSON.parse(JSON.stringify(e)) as Record<string, unknown>
    return rest
  })

const load = ConversationStore.use((s) => s.load(id))

/** Runs (or resumes) the conversation's turn in a session of its own. */
const turn = (message?: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const session = yield* ConversationStore.use((s) => s.open(id))
      const analysis = yield* session.resumeIncompleteTurn
      const start =
        message !== undefined
          ? TurnLoop.TurnStartMode.NewTurn({ message })
          : TurnLoop.TurnStartMode.Resume({ analysis: analysis! })
      return yield* TurnLoop.runTurn({ session, model: "effect/ai", root: "/tmp", start })
    })
  )

const withConversation = (entries: ReadonlyArray<StreamEntry> = []) =>
  MemoryConversationStore.layer([{ ...Conversation.make({ id, now: at }), entries: [...entries] }])

describe("the effect/ai bridges at their edges", () => {
  it.effect(
    "a turn interrupted while the handler runs leaves the call pending; resumed, the handler runs with the recorded answers and asks nothing again",
    () =>
      Effect.gen(function* () {
        const runs: Array<Answers> = []
        const started = yield* Deferred.make<void>()
        let interrupted = 0
        let block = true
        const executor = executorFromToolkit(toolkit, {
          deploy: ({ service }) =>
            Effect.gen(function* () {
              runs.push(yield* Inquiry.answers)
              const env = yield* Inquiry.ask(Inquiry.select("env", "Which environment?", ["staging", "production"]))
              const go = yield* Inquiry.ask(Inquiry.boolean("confirm", `Deploy ${service} to ${env}?`))
              if (block) {
                // The deploy itself, long enough to be interrupted (the finalizer is in place before the test hears it started).
                yield* Deferred.succeed(started, undefined).pipe(
                  Effect.andThen(Effect.never),
                  Effect.onInterrupt(() => Effect.sync(() => void interrupted++))
                )
              }
              return go ? `deployed ${service} to ${env}` : "not deployed"
            })
        })
        const layer = (prompt: Layer.Layer<PromptBackend>, model: Array<Step>) =>
          Layer.mergeAll(
            RunLive.layer,
            executor,
            providerLayer().pipe(Layer.provide(scriptedModel(model, []))),
            MockInquiryBackend.layer({}),
            prompt
          ).pipe(
            Layer.provideMerge(
              Config.layerLiteral({
                conversation: { tools: { deploy: { questions: { env: { answer: "staging" } } } } }
              })
            )
          )

        const fiber = yield* Effect.forkChild(
          turn("Deploy the api").pipe(
            Effect.provide(layer(MockPromptBackend.layer([{ _tag: "Answer", answer: true }]), steps()))
          )
        )
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)
        expect(interrupted).toBe(1) // the handler was interrupted, and the turn waited for it
        const stopped = (yield* load).entries
        expect(shape(stopped).map((e) => [e["type"], e["id"] ?? null, e["answer"] ?? null])).toStrictEqual([
          ["turn_start", null, null],
          ["chat_request", null, null],
          ["tool_call_request", "call_1", null],
          ["inquiry_request", "call_1.env.1", null],
          ["inquiry_response", "call_1.env.1", "staging"],
          ["inquiry_request", "call_1.confirm.1", null],
          ["inquiry_response", "call_1.confirm.1", true]
        ])

        // Resumed: nobody is asked anything (the prompt has no answer to give), the handler runs once with both answers.
        block = false
        const prompts = yield* MockPromptBackend.make([])
        yield* turn().pipe(Effect.provide(layer(Layer.succeed(PromptBackend, prompts.service), steps().slice(1))))
        expect(prompts.prompts.shown).toStrictEqual([])
        expect(runs).toStrictEqual([
          {},
          { env: "staging" },
          { env: "staging", confirm: true },
          { env: "staging", confirm: true }
        ])
        expect(shape((yield* load).entries.slice(stopped.length))).toStrictEqual([
          { type: "tool_call_response", id: "call_1", content: "deployed api to staging", is_error: false },
          { type: "chat_response", message: "Deployed." }
        ])
      }).pipe(Effect.provide(withConversation()))
  )

  it.effect(
    "resumed with an answer to a question the tool no longer asks: the answer is passed on, ignored, and the questions it asks now are asked",
    () =>
      Effect.gen(function* () {
        // What an older version of the tool left: its question `old` answered, then a crash.
        const recorded: ReadonlyArray<StreamEntry> = [
          new TurnStart({ timestamp: at }),
          new ChatRequest({ timestamp: at, content: "Deploy the api" }),
          new ToolCallRequest({ timestamp: at, id: "call_1", name: "deploy", arguments: { service: "api" } }),
          new InquiryRequest({
            timestamp: at,
            id: InquiryId.make("call_1.old.1"),
            source: { source: "tool", name: "deploy" },
            question: { text: "Old question?", answer_type: { type: "boolean" } }
          }),
          InquiryResponse.answered(at, InquiryId.make("call_1.old.1"), true)
        ]
        const runs: Array<Answers> = []
        const executor = executorFromToolkit(toolkit, {
          deploy: ({ service }) =>
            Effect.gen(function* () {
              runs.push(yield* Inquiry.answers)
              const go = yield* Inquiry.ask(Inquiry.boolean("confirm", `Deploy ${service}?`))
              return go ? `deployed ${service}` : "not deployed"
            })
        })
        const stored = yield* Effect.gen(function* () {
          yield* turn()
          return (yield* load).entries
        }).pipe(
          Effect.provide(
            Layer.mergeAll(
              RunLive.layer,
              withConversation(recorded),
              executor,
              providerLayer().pipe(Layer.provide(scriptedModel(steps().slice(1), []))),
              MockInquiryBackend.layer({}),
              MockPromptBackend.layer([{ _tag: "Answer", answer: true }])
            ).pipe(Layer.provideMerge(Config.layerEmpty))
          )
        )
        expect(runs).toStrictEqual([{ old: true }, { old: true, confirm: true }])
        expect(shape(stored.slice(recorded.length))).toStrictEqual([
          {
            type: "inquiry_request",
            id: "call_1.confirm.1",
            source: { source: "tool", name: "deploy" },
            question: { text: "Deploy api?", answer_type: { type: "boolean" } }
          },
          { type: "inquiry_response", id: "call_1.confirm.1", outcome: "answered", answer: true },
          { type: "tool_call_response", id: "call_1", content: "deployed api", is_error: false },
          { type: "chat_response", message: "Deployed." }
        ])
      })
  )

  it.effect(
    "an inquiry answered by the model with text that is not JSON is recorded as backend_error, and the tool's call ends in an error the model reads",
    () =>
      Effect.gen(function* () {
        const runs: Array<Answers> = []
        const executor = executorFromToolkit(toolkit, {
          deploy: ({ service }) =>
            Effect.gen(function* () {
              runs.push(yield* Inquiry.answers)
              const env = yield* Inquiry.ask(Inquiry.select("env", "Which environment?", ["staging", "production"]))
              return `deployed ${service} to ${env}`
            })
        })
        const model: Array<Step> = [
          steps()[0]!,
          [{ type: "text", text: "staging, I think" }, finish("stop")], // the side call's reply: not the JSON object asked for
          steps()[1]!
        ]
        const provider = providerLayer().pipe(Layer.provide(scriptedModel(model, [])))
        const stored = yield* Effect.gen(function* () {
          yield* turn("Deploy the api")
          return (yield* load).entries
        }).pipe(
          Effect.provide(
            Layer.mergeAll(
              RunLive.layer,
              withConversation(),
              executor,
              provider,
              LlmInquiryBackend.layer({ model: "effect/ai" }).pipe(Layer.provide(provider)),
              MockPromptBackend.layer([], { interactive: false }) // nobody at a terminal: the model answers
            ).pipe(Layer.provideMerge(Config.layerEmpty))
          )
        )
        const tail = shape(stored.slice(3))
        expect(tail.slice(0, 2)).toStrictEqual([
          {
            type: "inquiry_request",
            id: "call_1.env.1",
            source: { source: "tool", name: "deploy" },
            question: {
              text: "Which environment?",
              answer_type: { type: "select", options: [{ value: "staging" }, { value: "production" }] }
            }
          },
          { type: "inquiry_response", id: "call_1.env.1", outcome: "cancelled", reason: "backend_error" }
        ])
        expect(tail[2]).toMatchObject({
          type: "tool_call_response",
          id: "call_1",
          is_error: true,
          content: expect.stringContaining("Which environment?")
        })
        expect(tail[3]).toStrictEqual({ type: "chat_response", message: "Deployed." })
        expect(runs).toStrictEqual([{}]) // never run with an answer it did not get
      })
  )

  it.effect("a call to a tool the toolkit does not have is answered 'not available' and the turn goes on", () =>
    Effect.gen(function* () {
      const executor = executorFromToolkit(toolkit, { deploy: ({ service }) => Effect.succeed(`deployed ${service}`) })
      const model: Array<Step> = [
        [{ type: "tool-call", id: "call_1", name: "rollback", params: { service: "api" } }, finish("tool-calls")],
        steps()[1]!
      ]
      const stored = yield* Effect.gen(function* () {
        yield* turn("Roll back the api")
        return (yield* load).entries
      }).pipe(
        Effect.provide(
          Layer.mergeAll(
            RunLive.layer,
            withConversation(),
            executor,
            providerLayer().pipe(Layer.provide(scriptedModel(model, []))),
            MockInquiryBackend.layer({}),
            MockPromptBackend.layer([])
          ).pipe(Layer.provideMerge(Config.layerEmpty))
        )
      )
      const tail = shape(stored.slice(2))
      expect(tail[0]).toStrictEqual({
        type: "tool_call_request",
        id: "call_1",
        name: "rollback",
        arguments: { service: "api" }
      })
      expect(tail[1]).toMatchObject({
        type: "tool_call_response",
        id: "call_1",
        is_error: true,
        content: expect.stringMatching(/^Tool 'rollback' is not available\./)
      })
      expect(tail.slice(2)).toStrictEqual([{ type: "chat_response", message: "Deployed." }])
    })
  )
})
