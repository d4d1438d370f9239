// `FollowTurn.follow` (docs/library.md): a follower shows a running turn's events, asks its questions for a
// person and offers the answers (via `attach`); the closed question says `you` when this follower's offer won,
// `other` when another client's did (its prompt then closes, told who answered); a subscription closed because the
// follower fell behind is taken again after the last event seen; the follow ends with `Stopped`. The turn here is
// a small in-memory one (a queue of events, a record of offers); `conversation attach` over a real host is
// test/cli/Attach*.test.ts.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import type * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { LiveViewLagged } from "../../src/domain/run/LiveView.ts"
import * as RunEvent from "../../src/domain/run/RunEvent.ts"
import { Question } from "../../src/domain/tool/Question.ts"
import * as FollowTurn from "../../src/programs/FollowTurn.ts"
import type { RunningTurn } from "../../src/services/RunningTurns.ts"

const call = { id: "c1", name: "deploy", arguments: {} }
const question = new Question({ id: "go" as Question["id"], text: "Deploy?", answer_type: { type: "boolean" } })

const opened = (n: number) =>
  RunEvent.make.QuestionOpened({
    kind: "question",
    call,
    inquiry_id: `c1.go.${n}`,
    question,
    source: { source: "tool", name: "deploy" },
    audience: "person",
    since: "2026-03-01T10:00:00Z"
  })

const closed = (n: number, answer: Schema.Json) =>
  RunEvent.make.QuestionClosed({
    kind: "question",
    call,
    inquiry_id: `c1.go.${n}`,
    question,
    by: "you",
    outcome: { _tag: "Answered", answer }
  })

/** A turn whose events the test pushes; its subscriptions start after `after`; the first one lags once when told. */
const memoryTurn = (lagAt: number | undefined) =>
  Effect.gen(function* () {
    const events = yield* Queue.unbounded<RunEvent.Sequenced>()
    const log: Array<RunEvent.Sequenced> = []
    const offers: Array<{ inquiryId: string; value: Schema.Json; via: string | undefined }> = []
    const subscribed: Array<number> = []
    let seq = 0
    let lagged = false
    const push = (event: RunEvent.RunEvent) =>
      Effect.suspend(() => {
        const e = { seq: ++seq, event }
        log.push(e)
        return Queue.offer(events, e)
      })
    const turn: RunningTurn = {
      id: "17000000001" as RunningTurn["id"],
      info: Effect.succeed({ pid: 1, open: [] }),
      offer: (inquiryId, value, via) => Effect.sync(() => void offers.push({ inquiryId, value, via })),
      offerAll: () => Effect.void,
      subscribe: (after) => {
        subscribed.push(after)
        const replayed = log.filter((e) => e.seq > after)
        const from = replayed.at(-1)?.seq ?? after
        const replay = Stream.fromIterable(replayed)
        const live = Stream.fromQueue(events).pipe(Stream.filter((e) => e.seq > from))
        const all = Stream.concat(replay, live).pipe(Stream.takeUntil((e) => e.event._tag === "Stopped"))
        if (lagAt === undefined || lagged) return all
        lagged = true
        return all.pipe(
          Stream.takeUntil((e) => e.seq === lagAt),
          Stream.concat(Stream.fail(new LiveViewLagged({ last: lagAt })))
        )
      },
      interrupt: Effect.void
    }
    return { turn, push, offers, subscribed }
  })

const options = (turn: RunningTurn, shown: Array<RunEvent.RunEvent>) => ({
  turn,
  latest: 0,
  open: [],
  attend: true,
  show: (e: RunEvent.RunEvent) => Effect.sync(() => void shown.push(e)),
  say: () => Effect.void,
  paused: <A, E, R>(effect: Effect.Effect<A, E, R>) => effect,
  answerHint: (id: string) => `parley conversation answer ${id}`,
  stopRun: Effect.void,
  detached: Effect.never
})

describe("FollowTurn.follow", () => {
  it.live("asks a question for a person, offers the answer via attach; its close says you; ends with Stopped", () =>
    Effect.gen(function* () {
      const { turn, push, offers } = yield* memoryTurn(undefined)
      const shown: Array<RunEvent.RunEvent> = []
      yield* push(opened(1))
      const following = yield* Effect.forkChild(
        Effect.scoped(
          FollowTurn.follow({ ...options(turn, shown), ask: () => Effect.succeed({ answer: true, remember: false }) })
        )
      )
      while (offers.length === 0) yield* Effect.sleep("5 millis")
      yield* push(closed(1, true))
      yield* push(RunEvent.make.Stopped({ ending: "completed", incomplete: null }))
      const end = yield* Fiber.await(following)
      expect(end._tag).toBe("Success")
      expect(offers).toStrictEqual([{ inquiryId: "c1.go.1", value: true, via: "attach" }])
      expect(shown.map((e) => (e._tag === "QuestionClosed" ? `${e._tag}:${e.by}` : e._tag))).toStrictEqual([
        "QuestionOpened",
        "QuestionClosed:you",
        "Stopped"
      ])
    })
  )

  it.live(
    "another client's answer closes the prompt (told who answered) and reads other; a lag resubscribes after the last event seen",
    () =>
      Effect.gen(function* () {
        const { turn, push, offers, subscribed } = yield* memoryTurn(1)
        const shown: Array<RunEvent.RunEvent> = []
        const told: Array<string> = []
        let asked = false
        yield* push(opened(1))
        const following = yield* Effect.forkChild(
          Effect.scoped(
            FollowTurn.follow({
              ...options(turn, shown),
              ask: () =>
                Effect.andThen(
                  Effect.sync(() => void (asked = true)),
                  Effect.never
                ),
              closedElsewhere: (e) => void told.push(e === undefined ? "gone" : e.inquiry_id)
            })
          )
        )
        while (!asked) yield* Effect.sleep("5 millis")
        yield* push(closed(1, false))
        yield* push(RunEvent.make.Stopped({ ending: "completed", incomplete: null }))
        const end = yield* Fiber.await(following)
        expect(end._tag).toBe("Success")
        expect(offers).toStrictEqual([])
        expect(told).toStrictEqual(["c1.go.1", "gone"])
        expect(subscribed).toStrictEqual([0, 1])
        expect(shown.map((e) => (e._tag === "QuestionClosed" ? `${e._tag}:${e.by}` : e._tag))).toStrictEqual([
          "QuestionOpened",
          "QuestionClosed:other",
          "Stopped"
        ])
      })
  )
})
