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
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import type { StreamEntry } from "../../src/domain/event/ConversationEvent.ts"
import * as TurnState from "../../src/domain/stream/TurnState.ts"
import { askThen } from "../../src/layers/executor/ExecutorScripted.ts"
import * as ToolCoordinator from "../../src/programs/ToolCoordinator.ts"
import type { ConversationSession } from "../../src/services/ConversationSession.ts"
import { ConversationStore } from "../../src/services/ConversationStore.ts"
import { call, conversationId, digest, setup } from "./CoordinatorHarness.ts"

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
                const slow: ConversationSession = {
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
