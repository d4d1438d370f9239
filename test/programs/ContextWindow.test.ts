import * as RunLive from "../../src/layers/RunLive.ts"
/**
 * The main-request check (docs/models.md#long-conversations-compactions-and-context-windows-rfd-064): a request that does not fit the
 * model's window is not sent; automatic compaction (D50, off by default)
 * compacts once and retries.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import type { StreamEntry } from "../../src/domain/event/ConversationEvent.ts"
import * as Events from "../../src/domain/event/Events.ts"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
import * as Conversation from "../../src/domain/storage/Conversation.ts"
import * as ConversationId from "../../src/domain/storage/ConversationId.ts"
import { ChatResponse } from "../../src/domain/event/ChatResponse.ts"
import { ToolCallRequest } from "../../src/domain/event/ToolCallRequest.ts"
import * as ExecutorScripted from "../../src/layers/executor/ExecutorScripted.ts"
import * as MockInquiryBackend from "../../src/layers/MockInquiryBackend.ts"
import * as MockPromptBackend from "../../src/layers/prompt/MockPromptBackend.ts"
import * as MemoryConversationStore from "../../src/layers/store/MemoryConversationStore.ts"
import { ContextWindowExceeded } from "../../src/programs/ContextWindow.ts"
import * as TurnLoop from "../../src/programs/TurnLoop.ts"
import { Config } from "../../src/services/Config.ts"
import { ConversationStore } from "../../src/services/ConversationStore.ts"
import { Provider, ProviderDelta as Delta, type ProviderRequest } from "../../src/services/Provider.ts"
import { publishedSoFar } from "../support/RunEvents.ts"

const id = ConversationId.parse("17000000400")!
const at = (s: number) => Timestamp.fromEpochNanos(1_772_700_000_000_000_000n + BigInt(s) * 1_000_000_000n)

/** `turns` complete turns, each with a tool call whose result holds 2,000 characters. */
const history = (turns: number): Array<StreamEntry> => {
  const out: Array<StreamEntry> = []
  for (let t = 0; t < turns; t++) {
    out.push(
      Events.turnStart(at(t * 10)),
      Events.chatRequest(at(t * 10 + 1), `question ${t}`),
      new ToolCallRequest({ timestamp: at(t * 10 + 2), id: `c${t}`, name: "read", arguments: { path: `f${t}` } }),
      Events.toolCallResponse(at(t * 10 + 3), `c${t}`, { content: "x".repeat(2000), is_error: false }),
      ChatResponse.message(at(t * 10 + 4), `answer ${t}`)
    )
  }
  return out
}

const run = (entries: ReadonlyArray<StreamEntry>, config: unknown) => {
  const seen: Array<ProviderRequest> = []
  const provider = Layer.succeed(
    Provider,
    Provider.of({
      stream: (request) => {
        seen.push(request)
        return Stream.fromIterable([Delta.TextDelta({ text: "ok" }), Delta.Finish({ reason: "end_turn" })])
      }
    })
  )
  const layers = Layer.mergeAll(
    RunLive.layer,
    MemoryConversationStore.layer([{ ...Conversation.make({ id, now: at(0) }), entries: [...entries] }]),
    provider,
    ExecutorScripted.layer({}),
    MockPromptBackend.layer([], { interactive: false }),
    MockInquiryBackend.layer({}),
    Config.layerLiteral(config)
  )
  return Effect.gen(function* () {
    const exit = yield* Effect.scoped(
      Effect.flatMap(
        ConversationStore.use((store) => store.open(id)),
        (session) =>
          TurnLoop.runTurn({
            session,
            model: "anthropic/claude-test",
            root: "/tmp",
            start: TurnLoop.TurnStartMode.NewTurn({ message: "and now?" })
          })
      )
    ).pipe(Effect.exit)
    const stored = (yield* ConversationStore.use((s) => s.load(id))).entries
    const warnings = (yield* publishedSoFar).flatMap((e) => (e._tag === "Warning" ? [e.text] : []))
    return { exit, stored, seen, warnings }
  }).pipe(Effect.provide(layers))
}

const window = (n: number) => ({ providers: { anthropic: { models: { "claude-test": { context_window: n } } } } })

describe("the main request and the context window", () => {
  it.effect("a request that fits is sent as it is", () =>
    Effect.gen(function* () {
      const { exit, seen, stored } = yield* run(history(8), window(100_000))
      expect(exit._tag).toBe("Success")
      expect(seen).toHaveLength(1)
      expect(stored.filter((e) => e.type === "compaction")).toEqual([])
    })
  )

  it.effect(
    "too large, automatic compaction off (the default): nothing is sent, the error names the sizes, the turn stays resumable",
    () =>
      Effect.gen(function* () {
        const { exit, seen, stored } = yield* run(history(8), window(3000))
        expect(seen).toHaveLength(0)
        expect(exit._tag).toBe("Failure")
        const error =
          exit._tag === "Failure"
            ? exit.cause.reasons.map((r) => (r._tag === "Fail" ? r.error : undefined))[0]
            : undefined
        expect(error).toBeInstanceOf(ContextWindowExceeded)
        const e = error as ContextWindowExceeded
        expect({ model: e.model, window: e.contextWindow, auto: e.autoCompaction, id: e.conversationId }).toStrictEqual(
          {
            model: "anthropic/claude-test",
            window: 3000,
            auto: "off",
            id
          }
        )
        expect(e.estimatedTokens).toBeGreaterThan(4000)
        expect(e.message).toBe(
          `The conversation is too large for anthropic/claude-test: about ${e.estimatedTokens.toLocaleString("en-US")} tokens, and its context window is 3,000 tokens (automatic compaction is off).`
        )
        expect(stored.at(-1)).toMatchObject({ type: "chat_request", content: "and now?" })
      })
  )

  it.effect(
    "automatic compaction on: one mechanical compaction of the rolling range, then the request is sent, and a warning says so",
    () =>
      Effect.gen(function* () {
        const { exit, seen, stored, warnings } = yield* run(history(8), {
          ...window(3000),
          conversation: { compaction: { auto: { enabled: true } } }
        })
        expect(exit._tag).toBe("Success")
        const compactions = stored.filter((e) => e.type === "compaction")
        expect(compactions.map((c) => ({ ...c.rule, timestamp: "T" }))).toStrictEqual([
          {
            timestamp: "T",
            from_turn: 1,
            to_turn: 5,
            reasoning: "strip",
            tool_calls: { policy: "strip", request: true, response: true },
            // Draft D50's marker: appended by automatic compaction.
            source: "auto"
          }
        ])
        expect(seen).toHaveLength(1)
        const results = seen[0]!.events
          .filter((e) => e.type === "tool_call_response")
          .map((e) => e.content.slice(0, 20))
        expect(results).toStrictEqual([
          "x".repeat(20),
          "[compacted] read: su",
          "[compacted] read: su",
          "[compacted] read: su",
          "[compacted] read: su",
          "[compacted] read: su",
          "x".repeat(20),
          "x".repeat(20)
        ])
        expect(warnings).toHaveLength(1)
        expect(warnings[0]).toMatch(
          /^compacted turns 2–6 automatically \(\[conversation\.compaction\.auto\]\): about [\d,]+ → [\d,]+ tokens of a 3,000-token window\.$/
        )
      })
  )

  it.effect("automatic compaction that is not enough stops once, without looping", () =>
    Effect.gen(function* () {
      const { exit, seen, stored } = yield* run(history(8), {
        ...window(1500),
        conversation: { compaction: { auto: { enabled: true } } }
      })
      expect(seen).toHaveLength(0)
      expect(stored.filter((e) => e.type === "compaction")).toHaveLength(1)
      expect(exit._tag === "Failure" && String(exit.cause)).toContain("automatic compaction was not enough")
    })
  )

  it.effect("too few turns for automatic compaction (min_turns)", () =>
    Effect.gen(function* () {
      const { exit, stored } = yield* run(history(4), {
        ...window(1500),
        conversation: { compaction: { auto: { enabled: true } } }
      })
      expect(stored.filter((e) => e.type === "compaction")).toHaveLength(0)
      expect(exit._tag === "Failure" && String(exit.cause)).toContain(
        "automatic compaction waits for more than 5 turns"
      )
    })
  )

  it.effect("below the trigger ratio nothing is compacted; an unknown window is no limit", () =>
    Effect.gen(function* () {
      // About 4,200 tokens against 5,000: under the window, over 75% of it, but trigger_ratio 0.9 holds it back.
      const held = yield* run(history(8), {
        ...window(5000),
        conversation: { compaction: { auto: { enabled: true, trigger_ratio: 0.9 } } }
      })
      expect(held.exit._tag).toBe("Success")
      expect(held.stored.filter((e) => e.type === "compaction")).toHaveLength(0)
      const unknown = yield* run(history(8), {})
      expect(unknown.exit._tag).toBe("Success")
    })
  )
})
