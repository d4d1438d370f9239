import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import * as ExecutorScripted from "../../../src/layers/executor/ExecutorScripted.ts"
import { Executor } from "../../../src/services/Executor.ts"
import { completed, needsInput } from "./helpers.ts"

const context = { conversationId: "17738399468", root: "/nowhere" }
const call = (name: string, args: Record<string, string> = {}) => ({ id: "call_1", name, arguments: args })

describe("ExecutorScripted", () => {
  it.effect("plays outcomes in order and reports running out as a tool error", () =>
    Effect.gen(function* () {
      const { executor, calls } = ExecutorScripted.make({
        flaky: {
          outcomes: [
            { type: "error", message: "try again", trace: ["t"], transient: true },
            { type: "success", content: "done" }
          ]
        }
      })
      expect(completed(yield* executor.execute(call("flaky"), {}, context))).toStrictEqual({
        content: `{"message":"try again","trace":["t"]}`,
        is_error: true
      })
      expect(completed(yield* executor.execute(call("flaky"), {}, context))).toStrictEqual({
        content: "done",
        is_error: false
      })
      expect(completed(yield* executor.execute(call("flaky"), {}, context))).toStrictEqual({
        content: "Scripted tool 'flaky' has no outcome for call 3.",
        is_error: true
      })
      expect(calls.length).toBe(3)
    })
  )

  it.effect("askThen asks until answered; the source can be scripted; answers are echoed back", () =>
    Effect.gen(function* () {
      const executor = yield* Executor
      const asked = needsInput(yield* executor.execute(call("note"), { other: 1 }, context))
      expect({ ...asked.question }).toStrictEqual({
        id: "overwrite",
        text: "Overwrite?",
        answer_type: { type: "boolean" },
        default: true
      })
      expect(asked.source).toStrictEqual({ source: "tool", name: "note" })
      expect(asked.answers).toStrictEqual({ other: 1 })
      expect(completed(yield* executor.execute(call("note"), { overwrite: false }, context))).toStrictEqual({
        content: "kept",
        is_error: false
      })
      const assistant = needsInput(yield* executor.execute(call("ask"), {}, context))
      expect(assistant.source).toStrictEqual({ source: "assistant" })
    }).pipe(
      Effect.provide(
        ExecutorScripted.layer({
          note: {
            respond: ExecutorScripted.askThen(
              { id: "overwrite", text: "Overwrite?", answer_type: { type: "boolean" }, default: true },
              (answer) => ({ type: "success", content: answer === true ? "written" : "kept" })
            )
          },
          ask: {
            source: { source: "assistant" },
            outcomes: [{ type: "needs_input", question: { id: "q", text: "?", answer_type: "Text" } }]
          }
        })
      )
    )
  )

  it.effect("invalid question ids, non-outcomes and unknown tools follow the live rules", () =>
    Effect.gen(function* () {
      const { executor } = ExecutorScripted.make({
        bad: { outcomes: [{ type: "needs_input", question: { id: "a.b", text: "?", answer_type: { type: "text" } } }] },
        junk: { outcomes: ["hello"] }
      })
      expect(completed(yield* executor.execute(call("bad"), {}, context))).toStrictEqual({
        content: `Tool 'bad' asked a question with an invalid id "a.b": question ids must not contain '.'.`,
        is_error: true
      })
      const junk = completed(yield* executor.execute(call("junk"), {}, context))
      expect(junk.is_error).toBe(true)
      expect(junk.content).toMatch(/^Scripted tool 'junk' returned something that is not an outcome: /)
      expect(completed(yield* executor.execute(call("nope"), {}, context)).content).toMatch(
        /^Tool 'nope' is not available\./
      )
    })
  )

  it.effect("definitions, permission and kind come from the script", () =>
    Effect.gen(function* () {
      const { executor } = ExecutorScripted.make({
        b: { description: "B", run: "ask", kind: "local" },
        a: { parameters: { type: "object", properties: { x: { type: "string" } } } }
      })
      expect(executor.definitions).toStrictEqual([
        { name: "a", description: "", parameters: { type: "object", properties: { x: { type: "string" } } } },
        { name: "b", description: "B", parameters: { type: "object", properties: {} } }
      ])
      expect([
        executor.permission("a"),
        executor.permission("b"),
        executor.kind("a"),
        executor.kind("b"),
        executor.kind("c")
      ]).toStrictEqual(["unattended", "ask", "builtin", "local", undefined])
    })
  )

  it.effect("a slow scripted tool can be interrupted", () =>
    Effect.gen(function* () {
      let finished = false
      const { executor } = ExecutorScripted.make({
        slow: {
          respond: () =>
            Effect.sleep("10 seconds").pipe(
              Effect.map(() => {
                finished = true
                return { type: "success", content: "late" }
              })
            )
        }
      })
      const fiber = yield* Effect.forkChild(executor.execute(call("slow"), {}, context))
      yield* TestClock.adjust("1 second")
      yield* Fiber.interrupt(fiber)
      yield* TestClock.adjust("20 seconds")
      expect(finished).toBe(false)
    })
  )
})
