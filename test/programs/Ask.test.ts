// `Ask.ask` as a library program (docs/ask.md#from-an-effect-program): the question is recorded as a turn of its
// own, opened with every answerer (`PendingAnswers`) and announced on `RunEvents`; the first offer wins;
// interrupting the program closes the question as cancelled (`user`); a timeout fails or answers the default; an
// approval answered `always` is remembered in the conversation.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as AskDomain from "../../src/domain/tool/Ask.ts"
import * as RunLive from "../../src/layers/RunLive.ts"
import * as MemoryConversationStore from "../../src/layers/store/MemoryConversationStore.ts"
import * as Ask from "../../src/programs/Ask.ts"
import { ConversationStore } from "../../src/services/ConversationStore.ts"
import { PendingAnswers } from "../../src/services/PendingAnswers.ts"
import { RunEvents } from "../../src/services/RunEvents.ts"
import { RunningTurns } from "../../src/services/RunningTurns.ts"

const noneRunning = Layer.succeed(
  RunningTurns,
  RunningTurns.of({ find: () => Effect.succeed(Option.none()), candidates: Effect.succeed(new Set()) })
)

const layers = () => Layer.mergeAll(MemoryConversationStore.layer(), RunLive.layer, noneRunning)

/** The inquiry id of the one open question, once it is open. */
const opened = Effect.gen(function* () {
  for (;;) {
    const open = yield* PendingAnswers.use((p) => p.list)
    if (open.length > 0) return open[0]!.inquiryId
    yield* Effect.sleep("5 millis")
  }
})

/** The recorded entries of the one conversation. */
const entries = Effect.gen(function* () {
  const store = yield* ConversationStore
  const { conversations } = yield* store.list()
  return (yield* store.load(conversations[0]!.id)).entries
})

const target = Ask.titled("questions from /srv/app")

describe("Ask.ask", () => {
  it.live("the first offer wins: the typed answer, who gave it; recorded as a turn of its own and announced", () =>
    Effect.gen(function* () {
      const hub = yield* RunEvents
      const seen = yield* Effect.forkChild(Stream.runCollect(hub.events))
      const asking = yield* Effect.forkChild(Ask.ask("Deploy to prod?", { type: "boolean", target }))
      const id = yield* opened
      yield* PendingAnswers.use((p) => p.offer(id, true, "other", { via: "api" }))
      const answered = yield* Fiber.join(asking)
      expect([answered.answer, answered.by, answered.via, answered.joined]).toStrictEqual([true, "other", "api", false])
      expect((yield* entries).map((e) => e.type)).toStrictEqual([
        "turn_start",
        "chat_request",
        "tool_call_request",
        "inquiry_request",
        "inquiry_response",
        "tool_call_response",
        "chat_response"
      ])
      const tags = [...(yield* Fiber.join(seen))].map((e) => e._tag)
      expect(tags).toStrictEqual([
        "ConversationKnown",
        "ToolCallsAnnounced",
        "ToolStarted",
        "QuestionOpened",
        "QuestionClosed",
        "ToolFinished",
        "Stopped"
      ])
    }).pipe(Effect.provide(layers()))
  )

  it.live("interrupted, the question is closed as cancelled (user), and a later offer is refused", () =>
    Effect.gen(function* () {
      const asking = yield* Effect.forkChild(Ask.ask("Still there?", { type: "boolean", target }))
      const id = yield* opened
      yield* Fiber.interrupt(asking)
      const response = (yield* entries).find((e) => e.type === "inquiry_response")
      expect(response).toMatchObject({ outcome: "cancelled", reason: "user" })
      const late = yield* Effect.exit(PendingAnswers.use((p) => p.offer(id, true, "other")))
      expect(Exit.isFailure(late)).toBe(true)
    }).pipe(Effect.provide(layers()))
  )

  it.live("a timeout fails with AskTimedOut, or answers the default with onTimeout default", () =>
    Effect.gen(function* () {
      const failed = yield* Effect.flip(Ask.ask("Anyone?", { type: "boolean", target, timeout: "50 millis" }))
      expect(failed).toBeInstanceOf(Ask.AskTimedOut)
      const fallback = yield* Ask.ask("Anyone?", {
        type: "select",
        options: ["eu", "us"],
        default: "eu",
        target,
        timeout: "50 millis",
        onTimeout: "default"
      })
      expect([fallback.answer, fallback.by]).toStrictEqual(["eu", "parley"])
    }).pipe(Effect.provide(layers()))
  )

  it.live("an approval answered always is remembered for its tool in the conversation", () =>
    Effect.gen(function* () {
      const asking = yield* Effect.forkChild(
        Ask.ask("Run Bash?", { type: "boolean", target, approval: { tool: "Bash", arguments: { command: "ls" } } })
      )
      const id = yield* opened
      yield* PendingAnswers.use((p) => p.offer(id, "always", "other"))
      expect((yield* Fiber.join(asking)).answer).toBe(true)
      expect(AskDomain.rememberedApproval(yield* entries, "Bash")).toBe("y")
      expect(AskDomain.rememberedApproval(yield* entries, "Write")).toBeUndefined()
      // The conversations so titled are where a session's later calls look (Claude Code's hook).
      expect(yield* Ask.rememberedIn("questions from /srv/app", "Bash")).toStrictEqual(Option.some("y"))
      expect(yield* Ask.rememberedIn("questions from /srv/app", "Write")).toStrictEqual(Option.none())
      expect(yield* Ask.rememberedIn("questions from elsewhere", "Bash")).toStrictEqual(Option.none())
    }).pipe(Effect.provide(layers()))
  )
})
