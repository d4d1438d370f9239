import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as InquiryId from "../../src/domain/event/InquiryId.ts"
import * as MockInquiryBackend from "../../src/layers/MockInquiryBackend.ts"
import { InquiryBackend, type InquiryBackendRequest } from "../../src/services/InquiryBackend.ts"

const request = (id: string): InquiryBackendRequest => ({
  entries: [],
  inquiryId: InquiryId.make(id),
  toolCallId: "call_1",
  toolName: "test_tool",
  question: { text: "Proceed?", answer_type: { type: "boolean" } }
})

describe("MockInquiryBackend", () => {
  it.effect("mock_backend_returns_configured_answer: keyed by inquiry id, requests recorded", () =>
    Effect.gen(function* () {
      const backend = yield* InquiryBackend
      assert.strictEqual(yield* backend.inquire(request("call_1.confirm.1")), true)
      assert.strictEqual(yield* backend.inquire(request("call_2.pick.1")), "B")
      assert.deepStrictEqual(
        log.map((r) => r.inquiryId),
        ["call_1.confirm.1", "call_2.pick.1"]
      )
    }).pipe(Effect.provide(MockInquiryBackend.layer({ "call_1.confirm.1": true, "call_2.pick.1": "B" }, { log })))
  )

  it.effect("mock_backend_returns_error_for_unknown_inquiry: InquiryOtherError", () =>
    Effect.gen(function* () {
      const backend = MockInquiryBackend.make(new Map([["call_1.confirm.1", true]]))
      const error = yield* Effect.flip(backend.inquire(request("call_9.other.1")))
      assert.strictEqual(error._tag, "InquiryOtherError")
      assert.strictEqual(error.message, "No mock answer for inquiry call_9.other.1")
    })
  )

  it.effect("mock_backend_ignores_cancellation: it answers synchronously, before any interrupt could land", () =>
    Effect.gen(function* () {
      const backend = MockInquiryBackend.make({ "call_1.n.1": 42 })
      const fiber = yield* Effect.forkChild(backend.inquire(request("call_1.n.1")), { startImmediately: true })
      const exit = fiber.pollUnsafe()
      assert.deepStrictEqual(exit?._tag === "Success" ? exit.value : "not done", 42)
      yield* Fiber.interrupt(fiber)
    })
  )
})

const log: Array<InquiryBackendRequest> = []
