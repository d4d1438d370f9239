/**
 * RFD 082 "Recording lifecycle" under interruption (docs/storage.md#durable-appends): an
 * interrupt that lands while an inquiry's request or response is being
 * appended still leaves exactly one response per request — the request's
 * append finishes and is closed with `Cancelled{user}`; the response's
 * append finishes and nothing more is added.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import type { StreamEntry } from "../../src/domain/event/ConversationEvent.ts"
import type { ToolCallRequest } from "../../src/domain/event/ToolCallRequest.ts"
import * as Conversation from "../../src/domain/storage/Conversation.ts"
import * as TurnState from "../../src/domain/stream/TurnState.ts"
import { askThen } from "../../src/layers/executor/ExecutorScripted.ts"
import * as ToolCoordinator from "../../src/programs/ToolCoordinator.ts"
import * as ConversationSession from "../../src/services/ConversationSession.ts"
import { ConversationStore } from "../../src/services/ConversationStore.ts"
import { StoreIoError } from "../../src/services/StoreErrors.ts"
import { call, clock, conversationId, digest, setup, turnWith } from "./CoordinatorHarness.ts"

const question = { id: "q", text: "Proceed?", answer_type: { type: "boolean" } } as const

describe("an interrupt during an inquiry's append", () => {
  const cases: Array<[StreamEntry["type"], boolean, Array<string>]> = [
    ["inquiry_request", true, ["ask a.q.1 (tool asker) boolean: Proceed?", "cancelled a.q.1: user"]],
    ["inquiry_request", false, ["ask a.q.1 (tool asker) boolean: Proceed?", "cancelled a.q.1: user"]],
    ["inquiry_response", true, ["ask a.q.1 (tool asker) boolean: Proceed?", "answered a.q.1: true"]],
    ["inquiry_response", false, ["ask a.q.1 (tool asker) boolean: Proceed?", "answered a.q.1: true"]]
  ]
  for (const [during, interactive, expected] of cases) {
    it.live(
      `while appending the ${during} (${interactive ? "prompt" : "inquiry backend"}): one response, recorded once`,
      () =>
        Effect.gen(function* () {
          const calls = [call("a", "asker")]
          const h = yield* setup(
            {
              tools: {
                asker: {
                  respond: askThen(question as never, (answer) => ({
                    type: "success",
                    content: `q=${JSON.stringify(answer)}`
                  }))
                }
              },
              interactive,
              prompts: interactive ? [{ _tag: "Answer", answer: true }] : [],
              inquiries: { "a.q.1": true }
            },
            calls
          )
          const entries = yield* Effect.gen(function* () {
            const appending = yield* Deferred.make<void>()
            const state = yield* Ref.make(TurnState.make())
            const run = Effect.scoped(
              Effect.gen(function* () {
                const session = yield* (yield* ConversationStore).open(conversationId)
                // The append of `during` signals, then takes a while: the interrupt arrives in the middle of it.
                const slow: ConversationSession.ConversationSession = {
                  ...session,
                  append: (batch) =>
                    batch[0]?.type === during
                      ? Deferred.succeed(appending, undefined).pipe(
                          Effect.andThen(Effect.sleep("20 millis")),
                          Effect.andThen(session.append(batch))
                        )
                      : session.append(batch)
                }
                return yield* ToolCoordinator.runTools({ session: slow, calls, state, root: "/tmp" })
              })
            )
            const fiber = yield* Effect.forkChild(run)
            yield* Deferred.await(appending)
            yield* Fiber.interrupt(fiber)
            return yield* h.persisted
          }).pipe(Effect.provide(h.layer))
          // No tool_call_response: the interrupted call stays pending, so the turn can be resumed.
          expect(digest(entries).filter((l) => !l.startsWith("call"))).toStrictEqual(expected)
        })
    )
  }
})

/**
 * A session made by `ConversationSession.make` over a "disk" (an array):
 * its writes of `during` run slowly (`slow`) or fail at once (`fail`), all
 * others at once. The coordinator begins such a session's appends in its own
 * step (SessionInStep), not through a wrapper's effects as above.
 */
const madeSession = (calls: ReadonlyArray<ToolCallRequest>, during: StreamEntry["type"], mode: "slow" | "fail") =>
  Effect.gen(function* () {
    const disk: Array<StreamEntry> = [...turnWith(calls)]
    const appending = yield* Deferred.make<void>()
    const session = yield* ConversationSession.make(
      { ...Conversation.make({ id: conversationId, now: clock() }), entries: [...disk] },
      {
        appendDurable: (entries) => {
          if (entries[0]?.type !== during) {
            disk.push(...entries)
            return Exit.void
          }
          if (mode === "fail") return Exit.fail(new StoreIoError({ path: "disk", reason: "full" }))
          return Deferred.succeed(appending, undefined).pipe(
            Effect.andThen(Effect.sleep("20 millis")),
            Effect.andThen(Effect.sync(() => void disk.push(...entries)))
          )
        },
        rewrite: () => Effect.die("not used")
      }
    )
    return { disk, appending, session }
  })

const asking = (interactive: boolean) => ({
  tools: {
    asker: {
      respond: askThen(question as never, (answer) => ({ type: "success", content: `q=${JSON.stringify(answer)}` }))
    }
  },
  interactive,
  prompts: interactive ? [{ _tag: "Answer" as const, answer: true }] : [],
  inquiries: { "a.q.1": true }
})

describe("an interrupt during an append the coordinator began in its own step", () => {
  for (const during of ["inquiry_request", "inquiry_response", "tool_call_response"] as const)
    for (const interactive of [true, false])
      it.live(
        `while writing the ${during} (${interactive ? "prompt" : "inquiry backend"}): each request answered once, on disk as seen`,
        () =>
          Effect.gen(function* () {
            const calls = [call("a", "asker")]
            const h = yield* setup(asking(interactive), calls)
            const { disk, appending, session } = yield* madeSession(calls, during, "slow")
            const state = yield* Ref.make(TurnState.make())
            const fiber = yield* Effect.forkChild(
              ToolCoordinator.runTools({ session, calls, state, root: "/tmp" }).pipe(Effect.provide(h.layer))
            )
            yield* Deferred.await(appending)
            yield* Fiber.interrupt(fiber)
            // The write that was under way finished, durable and visible; the writer is free again.
            yield* session.append([]).pipe(Effect.timeout("1 second"))
            const types = disk.map((e) => e.type)
            expect(types.filter((t) => t === "inquiry_response").length).toBe(
              types.filter((t) => t === "inquiry_request").length
            )
            expect(types).toContain(during)
            expect((yield* session.snapshot).entries.map((e) => e.type)).toStrictEqual(types)
          })
      )
})

describe("a write that fails as it starts, in the coordinator's own step", () => {
  for (const during of ["inquiry_request", "inquiry_response", "tool_call_response"] as const)
    it.effect(`the ${during}'s: the run fails with the store's error, and nothing after it is recorded`, () =>
      Effect.gen(function* () {
        const calls = [call("a", "asker")]
        const h = yield* setup(asking(false), calls)
        const { disk, session } = yield* madeSession(calls, during, "fail")
        const state = yield* Ref.make(TurnState.make())
        const exit = yield* Effect.exit(
          ToolCoordinator.runTools({ session, calls, state, root: "/tmp" }).pipe(Effect.provide(h.layer))
        )
        expect(exit).toStrictEqual(Exit.fail(new StoreIoError({ path: "disk", reason: "full" })))
        const recorded = disk.map((e) => e.type).slice(turnWith(calls).length)
        const expected = {
          inquiry_request: [],
          inquiry_response: ["inquiry_request"],
          tool_call_response: ["inquiry_request", "inquiry_response"]
        }[during]
        expect(recorded).toStrictEqual(expected)
        expect((yield* session.snapshot).entries.map((e) => e.type)).toStrictEqual(disk.map((e) => e.type))
      })
    )
})
