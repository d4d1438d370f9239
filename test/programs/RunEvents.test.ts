// One run event stream (docs/decisions.md#one-run-event-stream) at the program level: the run-event stream (a late
// subscriber sees the run whole; the JSON report is a fold of it), first
// answer wins under a race, and the `wait` policy deferring after its timeout.
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as fc from "fast-check"
import * as RunEvent from "../../src/domain/run/RunEvent.ts"
import * as RunReport from "../../src/domain/run/RunReport.ts"
import { Question } from "../../src/domain/tool/Question.ts"
import * as ExecutorScripted from "../../src/layers/executor/ExecutorScripted.ts"
import * as MockInquiryBackend from "../../src/layers/MockInquiryBackend.ts"
import * as MockPromptBackend from "../../src/layers/prompt/MockPromptBackend.ts"
import * as PendingAnswersLive from "../../src/layers/PendingAnswersLive.ts"
import * as RunEventsLive from "../../src/layers/RunEventsLive.ts"
import * as RunLive from "../../src/layers/RunLive.ts"
import * as MemoryConversationStore from "../../src/layers/store/MemoryConversationStore.ts"
import * as Query from "../../src/programs/Query.ts"
import { Config } from "../../src/services/Config.ts"
import { Provider, ProviderDelta as Delta } from "../../src/services/Provider.ts"
import { RunEvents } from "../../src/services/RunEvents.ts"
import { call, digest, setup } from "./CoordinatorHarness.ts"

const boolQ = { id: "q", text: "Apply?", answer_type: { type: "boolean" } } as const

describe("the run-event hub", () => {
  it.effect(
    "a subscriber arriving at any point sees every event once, in order, and the stream ends after Stopped",
    () =>
      Effect.gen(function* () {
        const hub = yield* RunEvents
        const early = yield* Effect.forkChild(Stream.runCollect(hub.sequenced))
        yield* Effect.yieldNow
        for (let i = 0; i < 5; i++) yield* hub.publish(RunEvent.make.TextDelta({ text: `t${i}` }))
        const middle = yield* Effect.forkChild(Stream.runCollect(hub.sequenced))
        yield* Effect.yieldNow
        for (let i = 5; i < 10; i++) yield* hub.publish(RunEvent.make.TextDelta({ text: `t${i}` }))
        yield* hub.publish(RunEvent.make.Stopped({ ending: "completed", incomplete: null }))
        const late = yield* Stream.runCollect(hub.sequenced)
        const expected = [...Array.from({ length: 10 }, (_, i) => `t${i}`), "end"]
        const shown = (items: Iterable<RunEvent.Sequenced>) =>
          [...items].map((e) => (e.event._tag === "TextDelta" ? e.event.text : "end"))
        for (const got of [yield* Fiber.join(early), yield* Fiber.join(middle), late]) {
          expect(shown(got)).toStrictEqual(expected)
          expect([...got].map((e) => e.seq)).toStrictEqual(Array.from({ length: 11 }, (_, i) => i + 1))
        }
        // Resuming after a dropped connection: no gap, no duplicate.
        expect([...(yield* Stream.runCollect(hub.since(7)))].map((e) => e.seq)).toStrictEqual([8, 9, 10, 11])
        // The next event starts a new run: late subscribers see only it.
        yield* hub.publish(RunEvent.make.TextDelta({ text: "next" }))
        expect(yield* hub.latest).toBe(12)
        yield* hub.publish(RunEvent.make.Stopped({ ending: "completed", incomplete: null }))
        expect([...(yield* Stream.runCollect(hub.events))].map((e) => e._tag)).toStrictEqual(["TextDelta", "Stopped"])
        // Numbers go on across runs; a cursor from the earlier run resumes at the start of this one.
        expect([...(yield* Stream.runCollect(hub.since(3)))].map((e) => e.seq)).toStrictEqual([12, 13])
        expect([...(yield* Stream.runCollect(hub.since(12)))].map((e) => e.seq)).toStrictEqual([13])
      }).pipe(Effect.provide(RunEventsLive.layer))
  )

  it.effect("publishUnsafe is publish done as it is called: one numbering, one replay, live subscribers see it", () =>
    Effect.gen(function* () {
      const hub = yield* RunEvents
      const live = yield* Effect.forkChild(Stream.runCollect(hub.sequenced))
      yield* Effect.yieldNow
      yield* hub.publish(RunEvent.make.TextDelta({ text: "a" }))
      hub.publishUnsafe(RunEvent.make.TextDelta({ text: "b" }))
      expect(yield* hub.latest).toBe(2)
      yield* hub.publish(RunEvent.make.TextDelta({ text: "c" }))
      hub.publishUnsafe(RunEvent.make.Stopped({ ending: "completed", incomplete: null }))
      const shown = (items: Iterable<RunEvent.Sequenced>) =>
        [...items].map((e) => `${e.seq}:${e.event._tag === "TextDelta" ? e.event.text : "end"}`)
      const expected = ["1:a", "2:b", "3:c", "4:end"]
      expect(shown(yield* Fiber.join(live))).toStrictEqual(expected)
      expect(shown(yield* Stream.runCollect(hub.sequenced))).toStrictEqual(expected)
    }).pipe(Effect.provide(RunEventsLive.layer))
  )

  it("events cross JSON and back unchanged", () => {
    const event = RunEvent.make.QuestionClosed({
      kind: "question",
      inquiry_id: "c.q.1",
      call: { id: "c", name: "t", arguments: { a: [1, "x"] } },
      question: new Question({
        id: "q" as never,
        text: "Apply?",
        answer_type: { type: "select", options: ["a", "b"] }
      }),
      by: "you",
      outcome: { _tag: "Answered", answer: "a" }
    })
    const wire = JSON.parse(JSON.stringify(RunEvent.encode(event)))
    expect(RunEvent.encode(RunEvent.decode(wire))).toStrictEqual(RunEvent.encode(event))
  })
})

/** A scripted run: each reply's text chunks, then tool calls (a tool that asks, one that fails, one that succeeds). */
const runQuery = (
  replies: ReadonlyArray<{ chunks: ReadonlyArray<string>; calls: ReadonlyArray<"ask" | "ok" | "fail"> }>
) => {
  const queue = replies.map((r, i) => [
    ...r.chunks.map((text) => Delta.TextDelta({ text })),
    ...r.calls.map((kind, j) => Delta.ToolCall({ id: `c${i}_${j}`, name: kind, arguments: { j }, metadata: {} })),
    Delta.Finish({ reason: r.calls.length > 0 ? "tool_use" : "end_turn" })
  ])
  const answers: Record<string, boolean> = {}
  replies.forEach((r, i) => r.calls.forEach((_, j) => (answers[`c${i}_${j}.q.1`] = (i + j) % 2 === 0)))
  const layer = Layer.mergeAll(
    RunLive.layer,
    MemoryConversationStore.layer([]),
    Layer.succeed(
      Provider,
      Provider.of({
        stream: () =>
          Stream.fromIterable(queue.shift() ?? [Delta.TextDelta({ text: "end" }), Delta.Finish({ reason: "end_turn" })])
      })
    ),
    ExecutorScripted.layer({
      ask: { respond: ExecutorScripted.askThen(boolQ, (a) => ({ type: "success", content: `got ${a}` })) },
      ok: { respond: () => ({ type: "success", content: "fine" }) },
      fail: { respond: () => ({ type: "error", message: "broke", transient: false }) }
    }),
    MockPromptBackend.layer([], { interactive: false }),
    MockInquiryBackend.layer(answers),
    Config.layerEmpty
  )
  return Effect.gen(function* () {
    const hub = yield* RunEvents
    const live = yield* Effect.forkChild(Stream.runCollect(hub.events))
    yield* Effect.yieldNow
    yield* Query.query({
      message: "go",
      target: Query.Target.New(),
      model: "scripted",
      root: "/tmp",
      interactive: false
    })
    return { live: [...(yield* Fiber.join(live))], replay: [...(yield* Stream.runCollect(hub.events))] }
  }).pipe(Effect.provide(layer))
}

describe("the JSON report is a fold of the run's events", () => {
  it.effect("property: folding a replay of the recorded run gives the report of the live run", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.record({
              chunks: fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 }),
              calls: fc.array(fc.constantFrom("ask", "ok", "fail"), { maxLength: 3 })
            }),
            { minLength: 1, maxLength: 3 }
          ),
          async (replies) => {
            const { live, replay } = await Effect.runPromise(runQuery(replies as never))
            expect(RunReport.toJson(RunReport.fold(replay), {})).toStrictEqual(
              RunReport.toJson(RunReport.fold(live), {})
            )
            const report = RunReport.fold(live)
            expect(report.ending).toBe("completed")
            // The turn ends with the first reply that calls no tool.
            const upTo = replies.findIndex((r) => r.calls.length === 0)
            const calls = (upTo < 0 ? replies : replies.slice(0, upTo + 1)).flatMap((r) => r.calls)
            expect(report.toolCalls.map((c) => c.outcome)).toStrictEqual(
              calls.map((k) => (k === "fail" ? "error" : "success"))
            )
            expect(report.questions.map((q) => q.outcome)).toStrictEqual(
              calls.filter((k) => k === "ask").map(() => "answered")
            )
            expect(live.at(-1)?._tag).toBe("Stopped")
          }
        ),
        { numRuns: 40 }
      )
    )
  )

  it("the report: a reply cut short has no stop reason; secrets never appear; open questions carry their options", () => {
    const call1 = { id: "c1", name: "use_token", arguments: {} }
    const events: Array<RunEvent.RunEvent> = [
      RunEvent.make.ConversationKnown({ conversation_id: "17000000001", created: false }),
      RunEvent.make.Waiting({ waiting: true }),
      RunEvent.make.TextDelta({ text: "Writing" }),
      RunEvent.make.TextDelta({ text: "." }),
      RunEvent.make.ReplyFinished({ stop_reason: "tool_use" }),
      RunEvent.make.ToolStarted({ call: call1, resumed: false }),
      RunEvent.make.ToolStarted({ call: { id: "c2", name: "slow", arguments: {} }, resumed: false }),
      RunEvent.make.QuestionClosed({
        kind: "question",
        call: call1,
        inquiry_id: "c1.token.1",
        question: { id: "token", text: "Token?", answer_type: { type: "secret" } } as never,
        by: "you",
        outcome: { _tag: "Redacted" }
      }),
      RunEvent.make.QuestionOpened({
        kind: "question",
        call: call1,
        inquiry_id: "c1.pick.1",
        question: {
          id: "pick",
          text: "Pick?",
          answer_type: { type: "select", options: ["a", "b"] },
          default: "a"
        } as never,
        source: { source: "tool", name: "use_token" },
        audience: "person",
        since: "2026-03-01T10:00:00Z"
      }),
      RunEvent.make.ToolFinished({ call: call1, ran: true, response: { content: "got 8 chars", is_error: false } }),
      RunEvent.make.Waiting({ waiting: true }),
      RunEvent.make.TextDelta({ text: "Coun" })
    ]
    expect(RunReport.toJson(RunReport.fold(events), { outcome: "interrupted" })).toStrictEqual({
      conversation_id: "17000000001",
      created: false,
      model: null,
      outcome: "interrupted",
      reply: "Writing.\nCoun",
      stop_reason: null,
      tool_calls: [
        { id: "c1", name: "use_token", arguments: {}, outcome: "success", content: "got 8 chars" },
        { id: "c2", name: "slow", arguments: {}, outcome: "unfinished" }
      ],
      questions: [
        {
          id: "c1.token.1",
          inquiry_id: "c1.token.1",
          kind: "question",
          tool_call_id: "c1",
          tool: "use_token",
          question: "Token?",
          answer_type: "secret",
          answered_by: "you",
          outcome: "redacted"
        },
        {
          id: "c1.pick.1",
          inquiry_id: "c1.pick.1",
          kind: "question",
          tool_call_id: "c1",
          tool: "use_token",
          question: "Pick?",
          answer_type: "select",
          answered_by: null,
          outcome: "open",
          options: ["a", "b"],
          default: "a"
        }
      ],
      incomplete: null
    })
  })
})

describe("answers from anywhere", () => {
  it.live("first answer wins under a race: two answerers at once, 200 trials, exactly one recorded response each", () =>
    Effect.gen(function* () {
      for (let trial = 0; trial < 200; trial++) {
        const calls = [call("c", "t")]
        const answers = yield* PendingAnswersLive.make
        const h = yield* setup(
          {
            tools: {
              t: { respond: ExecutorScripted.askThen(boolQ, (a) => ({ type: "success", content: `got ${a}` })) }
            },
            config: { conversation: { inquiry: { detached: "wait" } } },
            answers
          },
          calls
        )
        const outcome = yield* Effect.gen(function* () {
          const run = yield* Effect.forkChild(h.run(calls))
          while ((yield* answers.list).length === 0) yield* Effect.sleep("1 millis")
          const offers = yield* Effect.all(
            [
              Effect.result(answers.offer("c.q.1", trial % 2 === 0, "you")),
              Effect.result(answers.offer("c.q.1", trial % 2 !== 0, "other"))
            ],
            { concurrency: "unbounded" }
          )
          const responses = yield* Fiber.join(run)
          return { offers, responses, persisted: digest(yield* h.persisted) }
        }).pipe(Effect.provide(h.layer))
        const won = outcome.offers.filter((o) => o._tag === "Success")
        expect(won.length).toBe(1)
        const lost = outcome.offers.find((o) => o._tag === "Failure")!
        expect(lost._tag === "Failure" && lost.failure._tag).toBe("QuestionAlreadyAnswered")
        expect(outcome.persisted.filter((l) => l.startsWith("answered "))).toHaveLength(1)
        expect(outcome.responses[0]!.content).toBe(`got ${trial % 2 === 0}`)
      }
    })
  )

  it.effect("an answer that does not fit is refused and the question stays open for the next one", () =>
    Effect.gen(function* () {
      const calls = [call("c", "t")]
      const answers = yield* PendingAnswersLive.make
      const h = yield* setup(
        {
          tools: { t: { respond: ExecutorScripted.askThen(boolQ, (a) => ({ type: "success", content: `got ${a}` })) } },
          config: { conversation: { inquiry: { detached: "wait" } } },
          answers
        },
        calls
      )
      const result = yield* Effect.gen(function* () {
        const run = yield* Effect.forkChild(h.run(calls))
        while ((yield* answers.list).length === 0) yield* Effect.yieldNow
        const wrong = yield* Effect.flip(answers.offer("c.q.1", "yes please", "other"))
        const unknown = yield* Effect.flip(answers.offer("c.q.9", true, "other"))
        yield* answers.offer("c.q.1", true, "other")
        return { wrong, unknown, responses: yield* Fiber.join(run) }
      }).pipe(Effect.provide(h.layer))
      expect(result.wrong).toMatchObject({ _tag: "AnswerDoesNotFit", inquiry_id: "c.q.1", expected: "yes or no" })
      expect(result.unknown).toMatchObject({ _tag: "QuestionNotOpen", inquiry_id: "c.q.9", open: ["c.q.1"] })
      expect(result.responses[0]!.content).toBe("got true")
      expect(h.events.filter((e) => e._tag === "QuestionClosed")).toMatchObject([
        { by: "other", outcome: { _tag: "Answered", answer: true } }
      ])
    })
  )

  it.effect("wait: with nobody answering, the question is deferred after wait_timeout, and the run says so", () =>
    Effect.gen(function* () {
      const calls = [call("c", "t"), call("d", "u")]
      const h = yield* setup(
        {
          tools: {
            t: { respond: ExecutorScripted.askThen(boolQ, () => ({ type: "success", content: "never" })) },
            u: { outcomes: [{ type: "success", content: "done" }] }
          },
          config: { conversation: { inquiry: { detached: "wait", wait_timeout: "90s" } } }
        },
        calls
      )
      const result = yield* Effect.gen(function* () {
        const run = yield* Effect.forkChild(h.runAll(calls))
        yield* TestClock.adjust(Duration.seconds(89))
        expect(h.events.some((e) => e._tag === "Warning")).toBe(false)
        yield* TestClock.adjust(Duration.seconds(1))
        return { ...(yield* Fiber.join(run)), persisted: digest(yield* h.persisted) }
      }).pipe(Effect.provide(h.layer))
      expect(result.deferred).toStrictEqual(["c.q.1"])
      expect(result.responses.map((r) => r.id)).toStrictEqual(["d"])
      expect(h.events.filter((e) => e._tag === "Warning")).toStrictEqual([
        { _tag: "Warning", text: `Nobody answered "Apply?" (c.q.1) within 1m 30s; it is deferred.` }
      ])
      expect(
        result.persisted.filter((l) => l.startsWith("ask ") || l.startsWith("answered ") || l.startsWith("cancelled "))
      ).toStrictEqual(["ask c.q.1 (tool t) boolean: Apply?"])
    })
  )
})
