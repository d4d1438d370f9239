import * as RunLive from "../../src/layers/RunLive.ts"
import { textSoFar } from "../support/RunEvents.ts"
import { until } from "../support/Until.ts"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { ChatRequest } from "../../src/domain/event/ChatRequest.ts"
import * as Conversation from "../../src/domain/storage/Conversation.ts"
import type { StreamEntry } from "../../src/domain/event/ConversationEvent.ts"
import * as ConversationId from "../../src/domain/storage/ConversationId.ts"
import * as IncompleteTurn from "../../src/domain/stream/IncompleteTurn.ts"
import { InquiryRequest } from "../../src/domain/event/InquiryRequest.ts"
import { InquiryResponse } from "../../src/domain/event/InquiryResponse.ts"
import * as InquiryId from "../../src/domain/event/InquiryId.ts"
import { InquirySource } from "../../src/domain/event/InquirySource.ts"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
import { ToolCallRequest } from "../../src/domain/event/ToolCallRequest.ts"
import { TurnStart } from "../../src/domain/event/TurnStart.ts"
import * as ExecutorScripted from "../../src/layers/executor/ExecutorScripted.ts"
import * as MockInquiryBackend from "../../src/layers/MockInquiryBackend.ts"
import * as MockPromptBackend from "../../src/layers/prompt/MockPromptBackend.ts"
import * as Scripted from "../../src/layers/provider/Scripted.ts"
import * as MemoryConversationStore from "../../src/layers/store/MemoryConversationStore.ts"
import * as TurnLoop from "../../src/programs/TurnLoop.ts"
import { Config } from "../../src/services/Config.ts"
import { ConversationStore } from "../../src/services/ConversationStore.ts"
import type * as ConversationSession from "../../src/services/ConversationSession.ts"
import {
  Provider,
  type ProviderDelta,
  ProviderDelta as Delta,
  type ProviderRequest
} from "../../src/services/Provider.ts"

const id = ConversationId.parse("17000000300")!
const now = () => Timestamp.now()

const services = (
  entries: ReadonlyArray<StreamEntry>,
  provider: Layer.Layer<Provider>,
  tools: Parameters<typeof ExecutorScripted.layer>[0],
  inquiries: Record<string, Schema.Json> = {}
) =>
  Layer.mergeAll(
    RunLive.layer,
    MemoryConversationStore.layer([{ ...Conversation.make({ id, now: now() }), entries: [...entries] }]),
    provider,
    ExecutorScripted.layer(tools),
    MockPromptBackend.layer([], { interactive: false }),
    MockInquiryBackend.layer(inquiries),
    Config.layerEmpty
  )

/** A provider that records every request and replays canned delta lists. */
const recordingProvider = (replies: Array<ReadonlyArray<ProviderDelta>>, seen: Array<ProviderRequest>) =>
  Layer.succeed(
    Provider,
    Provider.of({
      stream: (request) => {
        seen.push(request)
        return Stream.fromIterable(replies.shift() ?? [])
      }
    })
  )

/** Runs `f` in a session on the test conversation (closed, and so folded, at the end). */
const inSession = <A, E, R>(f: (session: ConversationSession.ConversationSession) => Effect.Effect<A, E, R>) =>
  Effect.scoped(
    Effect.flatMap(
      ConversationStore.use((store) => store.open(id)),
      f
    )
  )

const types = (entries: ReadonlyArray<StreamEntry>) => entries.map((e) => e.type)

describe("TurnLoop", () => {
  it.effect("a new turn: stream, run tools (with a question), stream again; providers never see internal events", () =>
    Effect.gen(function* () {
      const seen: Array<ProviderRequest> = []
      const provider = recordingProvider(
        [
          [
            Delta.TextDelta({ text: "Let me " }),
            Delta.TextDelta({ text: "check." }),
            Delta.ToolCall({ id: "c1", name: "t", arguments: {}, metadata: {} })
          ],
          [Delta.TextDelta({ text: "All good." })]
        ],
        seen
      )
      const tools = {
        t: {
          respond: ExecutorScripted.askThen({ id: "q", text: "Sure?", answer_type: { type: "boolean" } }, () => ({
            type: "success",
            content: "ok"
          }))
        }
      }
      const text: Array<string> = []
      let visible: ReadonlyArray<StreamEntry> = []
      const stored = yield* Effect.gen(function* () {
        yield* inSession((session) =>
          TurnLoop.runTurn({
            session,
            model: "scripted",
            root: "/tmp",
            start: TurnLoop.TurnStartMode.NewTurn({ message: "Check it" })
          }).pipe(
            Effect.tap(() => Effect.map(textSoFar, (t) => text.push(...t))),
            Effect.andThen(session.snapshot),
            Effect.map((s) => (visible = s.entries))
          )
        )
        return (yield* ConversationStore.use((s) => s.load(id))).entries
      }).pipe(Effect.provide(services([], provider, tools, { "c1.q.1": true })))
      expect(types(stored)).toStrictEqual([
        "turn_start",
        "chat_request",
        "chat_response",
        "tool_call_request",
        "inquiry_request",
        "inquiry_response",
        "tool_call_response",
        "chat_response"
      ])
      expect(types(visible)).toStrictEqual(types(stored)) // what the session shows is what is on disk
      expect(text.join("")).toBe("Let me check.All good.")
      expect(seen.length).toBe(2)
      expect(seen[1]!.events.map((e) => e.type)).toStrictEqual([
        "chat_request",
        "chat_response",
        "tool_call_request",
        "tool_call_response"
      ])
      expect(seen[1]!.tools.map((t) => t.name)).toStrictEqual(["t"])
    })
  )

  it.live("interrupted mid-stream: the text received so far is persisted as the reply", () =>
    Effect.gen(function* () {
      const provider = Layer.succeed(
        Provider,
        Provider.of({
          stream: () => Stream.concat(Stream.fromIterable([Delta.TextDelta({ text: "partial answ" })]), Stream.never)
        })
      )
      const stored = yield* Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(
          inSession((session) =>
            TurnLoop.runTurn({
              session,
              model: "scripted",
              root: "/tmp",
              start: TurnLoop.TurnStartMode.NewTurn({ message: "Go" })
            })
          )
        )
        // Once the text arrived, not after a guessed delay (which lost the race under load).
        yield* until(
          "the text arriving",
          Effect.map(textSoFar, (t) => t.join("") === "partial answ")
        )
        yield* Fiber.interrupt(fiber)
        return (yield* ConversationStore.use((s) => s.load(id))).entries
      }).pipe(Effect.provide(services([], provider, {})))
      expect(types(stored)).toStrictEqual(["turn_start", "chat_request", "chat_response"])
      expect((stored[2] as { message?: string }).message).toBe("partial answ")
    })
  )

  it.effect("resume at Executing: only the pending call runs, its earlier answer is restored, attempts continue", () =>
    Effect.gen(function* () {
      const t = now()
      const done = new ToolCallRequest({ timestamp: t, id: "done", name: "t", arguments: {} })
      const pending = new ToolCallRequest({ timestamp: t, id: "open", name: "t", arguments: {} })
      const entries: Array<StreamEntry> = [
        new TurnStart({ timestamp: t }),
        new ChatRequest({ timestamp: t, content: "go" }),
        done,
        pending,
        yield* Effect.succeed(
          new (yield* Effect.promise(() => import("../../src/domain/event/ToolCallResponse.ts"))).ToolCallResponse({
            timestamp: t,
            id: "done",
            content: "earlier",
            is_error: false
          })
        ),
        new InquiryRequest({
          timestamp: t,
          id: InquiryId.make("open.first.1"),
          source: InquirySource.tool("t"),
          question: { text: "First?", answer_type: { type: "boolean" } }
        }),
        InquiryResponse.answered(t, InquiryId.make("open.first.1"), true),
        new InquiryRequest({
          timestamp: t,
          id: InquiryId.make("open.second.1"),
          source: InquirySource.tool("t"),
          question: { text: "Second?", answer_type: { type: "text" } }
        })
      ]
      const { incomplete } = IncompleteTurn.splitIncompleteTurn(entries)
      const analysis = IncompleteTurn.analyze(incomplete!)
      expect(analysis.phase).toBe("Executing")
      const scripted = ExecutorScripted.make({
        t: {
          respond: (_c, answers) =>
            answers["first"] === undefined
              ? { type: "needs_input", question: { id: "first", text: "First?", answer_type: { type: "boolean" } } }
              : answers["second"] === undefined
                ? { type: "needs_input", question: { id: "second", text: "Second?", answer_type: { type: "text" } } }
                : { type: "success", content: `first=${answers["first"]} second=${answers["second"]}` }
        }
      })
      const seen: Array<ProviderRequest> = []
      const layer = Layer.mergeAll(
        RunLive.layer,
        MemoryConversationStore.layer([{ ...Conversation.make({ id, now: t }), entries }]),
        recordingProvider([[Delta.TextDelta({ text: "Finished." })]], seen),
        Layer.succeed(
          (yield* Effect.promise(() => import("../../src/services/Executor.ts"))).Executor,
          scripted.executor
        ),
        MockPromptBackend.layer([], { interactive: false }),
        MockInquiryBackend.layer({ "open.second.1": "two" }),
        Config.layerEmpty
      )
      const stored = yield* Effect.gen(function* () {
        yield* inSession((session) =>
          TurnLoop.runTurn({
            session,
            model: "scripted",
            root: "/tmp",
            start: TurnLoop.TurnStartMode.Resume({ analysis })
          })
        )
        return (yield* ConversationStore.use((s) => s.load(id))).entries
      }).pipe(Effect.provide(layer))
      // The open question was asked again under its recorded id (the pair closes), the tool ran once with both answers.
      expect(stored.slice(entries.length).map((e) => `${e.type}:${"id" in e ? e.id : ""}`)).toStrictEqual([
        "inquiry_response:open.second.1",
        "tool_call_response:open",
        "chat_response:"
      ])
      expect(scripted.calls.map((c) => [c.call.id, c.answers])).toStrictEqual([
        ["open", { first: true, second: "two" }]
      ])
      expect((stored.at(-2) as { content: string }).content).toBe("first=true second=two")
      expect(IncompleteTurn.splitIncompleteTurn(stored).incomplete).toBeNull()
    })
  )

  it.effect("the scripted provider drives a whole turn (contract §4 steps)", () =>
    Effect.gen(function* () {
      // The script as a user writes it (contract §4), through the same decoder as --script.
      const provider = Scripted.layerFromScript({
        steps: [{ message: "Calling.", tool_calls: [{ name: "t", arguments: { a: 1 } }] }, { message: "Done." }]
      }).pipe(Layer.orDie)
      const stored = yield* Effect.gen(function* () {
        yield* inSession((session) =>
          TurnLoop.runTurn({
            session,
            model: "scripted",
            root: "/tmp",
            start: TurnLoop.TurnStartMode.NewTurn({ message: "hi" })
          })
        )
        return (yield* ConversationStore.use((s) => s.load(id))).entries
      }).pipe(Effect.provide(services([], provider, { t: { outcomes: [{ type: "success", content: "ran" }] } })))
      expect(stored.map((e) => (e.type === "tool_call_request" ? `${e.type}:${e.id}` : e.type))).toStrictEqual([
        "turn_start",
        "chat_request",
        "chat_response",
        "tool_call_request:call_1",
        "tool_call_response",
        "chat_response"
      ])
    })
  )
})

describe("runTurn over an incomplete turn (docs/decisions.md#new-turn-on-an-incomplete-one)", () => {
  const seen: Array<ProviderRequest> = []
  it.effect(
    "a new turn over an incomplete one fails with IncompleteTurnExists carrying that turn, and appends nothing",
    () =>
      Effect.gen(function* () {
        const result = yield* Effect.flip(
          inSession((session) =>
            TurnLoop.runTurn({
              session,
              model: "m",
              root: "/tmp",
              start: TurnLoop.TurnStartMode.NewTurn({ message: "second" })
            })
          )
        )
        expect(result._tag).toBe("IncompleteTurnExists")
        if (result._tag !== "IncompleteTurnExists") return
        expect(result.id).toBe(id)
        expect(result.incomplete.entries.map((e) => e.type)).toStrictEqual([
          "turn_start",
          "chat_request",
          "tool_call_request"
        ])
        expect(result.message).toBe(
          `Conversation ${ConversationId.display(id)} has an incomplete turn: resume it or discard it before starting a new one.`
        )
        expect(seen).toStrictEqual([]) // the model was not called
        expect(types((yield* ConversationStore.use((s) => s.load(id))).entries)).toStrictEqual([
          "turn_start",
          "chat_request",
          "tool_call_request"
        ])
      }).pipe(
        Effect.provide(
          services(
            [
              new TurnStart({ timestamp: now() }),
              new ChatRequest({ timestamp: now(), content: "first" }),
              new ToolCallRequest({ timestamp: now(), id: "call_1", name: "t", arguments: {} })
            ],
            recordingProvider([], seen),
            {}
          )
        )
      )
  )
})
