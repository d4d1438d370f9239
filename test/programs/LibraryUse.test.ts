import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { program } from "../../examples/library/coordinator.ts"

describe("library use (the docs/library.md example)", () => {
  it.effect("the coordinator composes into another Effect program with mock layers only", () =>
    Effect.gen(function* () {
      const result = yield* program
      expect(result).toStrictEqual({
        responses: ["deployed"],
        recorded: [
          "turn_start",
          "chat_request",
          "tool_call_request",
          "inquiry_request",
          "inquiry_response",
          "tool_call_response"
        ]
      })
    })
  )
})
