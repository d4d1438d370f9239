// The model a conversation remembers (docs/decisions.md#new-conversation-base-config) at the program level: the conversation remembers its model
// (base config for a new one, a config_delta when a later run changes it),
// the model is chosen only when one will be called (and before a new
// conversation is created), an early stop says whether the turn is left
// incomplete, and an abandoned edit keeps the pending query.
import * as RunLive from "../../src/layers/RunLive.ts"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { ChatRequest } from "../../src/domain/event/ChatRequest.ts"
import type { StreamEntry } from "../../src/domain/event/ConversationEvent.ts"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
import { TurnStart } from "../../src/domain/event/TurnStart.ts"
import * as Conversation from "../../src/domain/storage/Conversation.ts"
import * as ConversationId from "../../src/domain/storage/ConversationId.ts"
import * as EntryCodec from "../../src/domain/storage/EntryCodec.ts"
import * as ExecutorScripted from "../../src/layers/executor/ExecutorScripted.ts"
import * as MockInquiryBackend from "../../src/layers/MockInquiryBackend.ts"
import * as MockPromptBackend from "../../src/layers/prompt/MockPromptBackend.ts"
import * as MemoryConversationStore from "../../src/layers/store/MemoryConversationStore.ts"
import type * as RunEvent from "../../src/domain/run/RunEvent.ts"
import { publishedSoFar } from "../support/RunEvents.ts"
import { until } from "../support/Until.ts"
import * as Query from "../../src/programs/Query.ts"
import { Config } from "../../src/services/Config.ts"
import { ConversationStore } from "../../src/services/ConversationStore.ts"
import { Provider, ProviderDelta as Delta, ProviderError } from "../../src/services/Provider.ts"

const id = ConversationId.parse("17000000400")!
const t = Timestamp.make("2026-03-01 10:00:00.5")

/** Replies with each text in turn (and records the model each request asked for). */
const provider = (replies: Array<ReadonlyArray<Delta>>, models: Array<string>) =>
  Layer.succeed(
    Provider,
    Provider.of({
      stream: (request) => {
        models.push(request.model)
        return Stream.fromIterable(replies.shift() ?? [Delta.TextDelta({ text: "?" })])
      }
    })
  )

const services = (
  seed: ReadonlyArray<Conversation.Conversation>,
  p: Layer.Layer<Provider>,
  prompts?: ReadonlyArray<MockPromptBackend.Scripted>
) =>
  Layer.mergeAll(
    RunLive.layer,
    MemoryConversationStore.layer(seed),
    p,
    ExecutorScripted.layer({}),
    MockPromptBackend.layer(prompts ?? [], { interactive: prompts !== undefined }),
    MockInquiryBackend.layer({}),
    Config.layerEmpty
  )

const seeded = (
  baseConfig: Conversation.BaseConfig,
  entries: ReadonlyArray<StreamEntry>
): Conversation.Conversation => ({
  ...Conversation.make({ id, now: t }),
  baseConfig,
  entries: [...entries]
})

const raw = (entries: ReadonlyArray<StreamEntry>) =>
  entries.map((e) => EntryCodec.encodeEntry(e) as Record<string, unknown>)

/** A chooser that records what it was offered, and picks `flag ?? remembered ?? fallback`. */
const chooser =
  (flag: string | undefined, fallback: string | undefined, offered: Array<string | undefined>) =>
  (remembered: string | undefined) =>
    Effect.suspend(() => {
      offered.push(remembered)
      const model = flag ?? remembered ?? fallback
      return model === undefined ? Effect.fail("no model" as const) : Effect.succeed(model)
    })

const base = { root: "/tmp", interactive: false } as const

describe("Query: the model the conversation remembers", () => {
  it.effect(
    "a new conversation is created with its model in the base config; the same model again appends nothing",
    () =>
      Effect.gen(function* () {
        const offered: Array<string | undefined> = []
        const models: Array<string> = []
        const { first, second, conversation } = yield* Effect.gen(function* () {
          const first = yield* Query.query({
            ...base,
            message: "hi",
            target: Query.Target.New(),
            model: chooser("openai/gpt-a", undefined, offered)
          })
          const second = yield* Query.query({
            ...base,
            message: "again",
            target: Query.Target.Id({ id: first.conversationId }),
            model: chooser(undefined, "anthropic/x", offered)
          })
          const conversation = yield* ConversationStore.use((s) => s.load(first.conversationId))
          return { first, second, conversation }
        }).pipe(
          Effect.provide(
            services([], provider([[Delta.TextDelta({ text: "one" })], [Delta.TextDelta({ text: "two" })]], models))
          )
        )
        expect(offered).toStrictEqual([undefined, "openai/gpt-a"])
        expect(models).toStrictEqual(["openai/gpt-a", "openai/gpt-a"])
        expect([first.model, second.model]).toStrictEqual(["openai/gpt-a", "openai/gpt-a"])
        expect(Conversation.rememberedModel(conversation.baseConfig, conversation.entries)).toBe("openai/gpt-a")
        expect(conversation.entries.map((e) => e.type)).toStrictEqual([
          "turn_start",
          "chat_request",
          "chat_response",
          "turn_start",
          "chat_request",
          "chat_response"
        ])
      })
  )

  it.effect("another model appends a config_delta naming it before the turn starts", () =>
    Effect.gen(function* () {
      const models: Array<string> = []
      const entries = yield* Effect.gen(function* () {
        yield* Query.query({
          ...base,
          message: "switch",
          target: Query.Target.Id({ id }),
          model: chooser("scripted", undefined, [])
        })
        return (yield* ConversationStore.use((s) => s.load(id))).entries
      }).pipe(Effect.provide(services([seeded(Conversation.baseConfigFor("openai/gpt-a"), [])], provider([], models))))
      expect(models).toStrictEqual(["scripted"])
      const [delta, ...rest] = raw(entries)
      expect(delta).toMatchObject({
        type: "config_delta",
        delta: { assistant: { model: { id: { provider: "scripted", name: "" } } } }
      })
      // JP's writer shape of an appended delta: today's id first (JP RFD 097).
      expect(Object.keys(delta!)).toStrictEqual(["event_id", "type", "timestamp", "delta"])
      expect(rest.map((e) => e["type"])).toStrictEqual(["turn_start", "chat_request", "chat_response"])
    })
  )

  it.effect("a failing choice on a new conversation creates nothing", () =>
    Effect.gen(function* () {
      const { error, listed } = yield* Effect.gen(function* () {
        const error = yield* Effect.flip(
          Query.query({ ...base, message: "hi", target: Query.Target.New(), model: chooser(undefined, undefined, []) })
        )
        return { error, listed: (yield* ConversationStore.use((s) => s.list())).conversations }
      }).pipe(Effect.provide(services([], provider([], []))))
      expect(error).toBe("no model")
      expect(listed).toStrictEqual([])
    })
  )

  it.effect("--continue-turn offers the remembered model; discarding calls no model at all", () =>
    Effect.gen(function* () {
      const pending = [new TurnStart({ timestamp: t }), new ChatRequest({ timestamp: t, content: "waiting" })]
      const offered: Array<string | undefined> = []
      const models: Array<string> = []
      const resumed = yield* Query.query({
        ...base,
        message: undefined,
        target: Query.Target.Id({ id }),
        continueTurn: true,
        model: chooser(undefined, undefined, offered)
      }).pipe(
        Effect.provide(services([seeded(Conversation.baseConfigFor("openai/gpt-r"), pending)], provider([], models)))
      )
      expect(resumed.outcome._tag).toBe("Resumed")
      expect(offered).toStrictEqual(["openai/gpt-r"])
      expect(models).toStrictEqual(["openai/gpt-r"])

      const never = () => Effect.die("no model may be chosen to discard")
      const discarded = yield* Query.query({
        ...base,
        message: undefined,
        target: Query.Target.Id({ id }),
        discardTurn: true,
        model: never
      }).pipe(Effect.provide(services([seeded({ _tag: "File", text: "{}\n" }, pending)], provider([], []))))
      expect(discarded.outcome._tag).toBe("Discarded")
      expect(discarded.model).toBeUndefined()
    })
  )

  it.effect("without a person or a flag, an incomplete turn is reported before any model is chosen", () =>
    Effect.gen(function* () {
      const pending = [new TurnStart({ timestamp: t }), new ChatRequest({ timestamp: t, content: "waiting" })]
      const error = yield* Effect.flip(
        Query.query({
          ...base,
          message: "next",
          target: Query.Target.Id({ id }),
          model: () => Effect.die("not needed")
        }).pipe(Effect.provide(services([seeded({ _tag: "File", text: "{}\n" }, pending)], provider([], []))))
      )
      expect(error).toBeInstanceOf(Query.IncompleteTurnPending)
    })
  )
})

describe("Query: stopping early and editing", () => {
  const stops = (events: ReadonlyArray<RunEvent.RunEvent>) =>
    events.flatMap((n) => (n._tag === "Stopped" ? [n.incomplete] : []))

  it.live("interrupted mid-stream: the partial reply is kept, so the turn is complete (no resume needed)", () =>
    Effect.gen(function* () {
      const slow = Layer.succeed(
        Provider,
        Provider.of({ stream: () => Stream.concat(Stream.make(Delta.TextDelta({ text: "partial" })), Stream.never) })
      )
      const events = yield* Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(
          Query.query({ ...base, message: "go", target: Query.Target.New(), model: "scripted" })
        )
        // Once the text arrived, not after a guessed delay (which lost the race under load).
        yield* until(
          "the text arriving",
          Effect.map(publishedSoFar, (events) => events.some((e) => e._tag === "TextDelta"))
        )
        yield* Fiber.interrupt(fiber)
        return yield* publishedSoFar
      }).pipe(Effect.provide(services([], slow)))
      expect(stops(events)).toStrictEqual([null])
      expect(events.at(-1)).toStrictEqual({ _tag: "Stopped", ending: "interrupted", incomplete: null })
    })
  )

  it.effect("a provider error before any text leaves the turn waiting for the reply", () =>
    Effect.gen(function* () {
      const failing = Layer.succeed(
        Provider,
        Provider.of({
          stream: () =>
            Stream.fail(
              new ProviderError({
                provider: "openai",
                failure: "http",
                status: 500,
                detail: "down",
                retryable: true,
                attempts: 4
              })
            )
        })
      )
      const events = yield* Effect.flip(
        Query.query({ ...base, message: "go", target: Query.Target.New(), model: "scripted" })
      ).pipe(Effect.andThen(publishedSoFar), Effect.provide(services([], failing)))
      expect(stops(events)).toStrictEqual([{ state: "pending-llm-response" }])
    })
  )

  it.effect("`e` with nothing from the editor keeps the pending query and sends nothing", () =>
    Effect.gen(function* () {
      const pending = [new TurnStart({ timestamp: t }), new ChatRequest({ timestamp: t, content: "original" })]
      const models: Array<string> = []
      const { result, entries } = yield* Effect.gen(function* () {
        const result = yield* Query.query({
          ...base,
          interactive: true,
          message: undefined,
          target: Query.Target.Id({ id }),
          model: "scripted"
        })
        return { result, entries: (yield* ConversationStore.use((s) => s.load(id))).entries }
      }).pipe(
        Effect.provide(
          services([seeded({ _tag: "File", text: "{}\n" }, pending)], provider([], models), [
            { _tag: "Resume", choice: "edit" },
            { _tag: "Edit", text: undefined }
          ])
        )
      )
      expect(result.outcome._tag).toBe("EditAbandoned")
      expect(models).toStrictEqual([])
      expect(raw(entries)).toStrictEqual(raw(pending))
    })
  )
})
