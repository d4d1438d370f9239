// Runs beyond the terminal (docs/questions-and-approvals.md#runs-beyond-the-terminal): a person attached from another terminal (`conversation attach`)
// is someone to ask. With nobody at this process's terminal, a question for
// a person waits for them instead of following the `detached` policy; when
// the last one leaves with the question open, it follows the policy from
// there — and an answer that won meanwhile is never lost. `Y`/`N` from an
// attached terminal is remembered for the turn.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as ExecutorScripted from "../../src/layers/executor/ExecutorScripted.ts"
import * as PendingAnswersLive from "../../src/layers/PendingAnswersLive.ts"
import type { ToolsResult } from "../../src/programs/ToolCoordinator.ts"
import type { PendingAnswers } from "../../src/services/PendingAnswers.ts"
import { call, digest, setup } from "./CoordinatorHarness.ts"

const boolQ = { id: "q", text: "Apply?", answer_type: { type: "boolean" } } as const
const tool = { t: { respond: ExecutorScripted.askThen(boolQ, (a) => ({ type: "success", content: `got ${a}` })) } }

type Setup = Effect.Success<ReturnType<typeof setup>>

/**
 * Runs `body` beside a run of one call that asks, with someone attached (in
 * `scope`) before it starts; everything shares one store.
 */
const attended = <A>(
  detached: string,
  body: (t: {
    h: Setup
    answers: PendingAnswers["Service"]
    scope: Scope.Closeable
    run: Fiber.Fiber<ToolsResult, unknown>
  }) => Effect.Effect<A, unknown, Layer.Success<Setup["layer"]>>
) =>
  Effect.gen(function* () {
    const calls = [call("c", "t")]
    const answers = yield* PendingAnswersLive.make
    const h = yield* setup(
      {
        tools: tool,
        config: { conversation: { inquiry: { detached, wait_timeout: "1m" } } },
        answers,
        inquiries: { "c.q.1": false }
      },
      calls
    )
    return yield* Effect.gen(function* () {
      const scope = yield* Scope.make()
      yield* Scope.provide(answers.attend, scope)
      const run = yield* Effect.forkChild(h.runAll(calls))
      while ((yield* answers.list).length === 0) yield* Effect.sleep("1 millis")
      return yield* body({ h, answers, scope, run })
    }).pipe(Effect.provide(h.layer))
  })

describe("a person attached from another terminal", () => {
  it.live("is asked: the question waits for them (not the defer policy), and their Y is remembered for the turn", () =>
    attended("defer", ({ answers, h, run, scope }) =>
      Effect.gen(function* () {
        expect(
          h.events.filter((e) => e._tag === "QuestionOpened").map((e) => e._tag === "QuestionOpened" && e.audience)
        ).toStrictEqual(["person"])
        yield* answers.offer("c.q.1", true, "other", { remember: true })
        const result = yield* Fiber.join(run)
        yield* Scope.close(scope, Exit.void)
        expect(result.deferred).toStrictEqual([])
        expect(result.responses.map((r) => r.content)).toStrictEqual(["got true"])
        expect(h.state.rememberedToolAnswers.get("t.q")).toBe(true)
      })
    )
  )

  for (const [policy, expected] of [
    ["defer", { deferred: ["c.q.1"], errors: [] as Array<boolean>, answered: [] as Array<string> }],
    ["deny", { deferred: [], errors: [true], answered: [] }],
    ["assistant", { deferred: [], errors: [false], answered: ["answered c.q.1: false"] }]
  ] as const) {
    it.live(`when the last one leaves with the question open, it follows detached = "${policy}"`, () =>
      attended(policy, ({ h, run, scope }) =>
        Effect.gen(function* () {
          yield* Scope.close(scope, Exit.void)
          const result = yield* Fiber.join(run)
          expect(result.deferred).toStrictEqual(expected.deferred)
          expect(result.responses.map((r) => r.is_error)).toStrictEqual(expected.errors)
          expect(digest(yield* h.persisted).filter((l) => l.startsWith("answered "))).toStrictEqual(expected.answered)
        })
      )
    )
  }

  it.live(
    "an answer offered as the last one leaves is recorded once or refused, never lost (100 trials, both orders)",
    () =>
      Effect.gen(function* () {
        const outcomes = new Set<string>()
        for (let trial = 0; trial < 100; trial++) {
          yield* attended("defer", ({ answers, h, run, scope }) =>
            Effect.gen(function* () {
              const offer = Effect.result(answers.offer("c.q.1", true, "other"))
              const leave = Effect.andThen(Effect.sleep(`${trial % 3} millis`), Scope.close(scope, Exit.void))
              const [first] =
                trial % 2 === 0
                  ? yield* Effect.all([offer, leave], { concurrency: "unbounded" })
                  : [yield* Effect.andThen(leave, offer)]
              const result = yield* Fiber.join(run)
              outcomes.add(first._tag)
              if (first._tag === "Success") expect(result.responses.map((r) => r.content)).toStrictEqual(["got true"])
              else expect(result.deferred).toStrictEqual(["c.q.1"])
              expect(digest(yield* h.persisted).filter((l) => l.startsWith("answered ")).length).toBe(
                first._tag === "Success" ? 1 : 0
              )
            })
          )
        }
        // Both sides of the race were run.
        expect([...outcomes].sort()).toStrictEqual(["Failure", "Success"])
      })
  )
})
