/**
 * The reply fold (docs/models.md#replies-and-errors; moved to the domain: docs/decisions.md#services-are-contracts): deltas
 * become the events to record, in the order the model produced them, and a
 * finished reply is never empty. Pure: the clock is passed in.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as fc from "fast-check"
import { ChatResponse } from "../../../src/domain/event/ChatResponse.ts"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"
import { ToolCallRequest } from "../../../src/domain/event/ToolCallRequest.ts"
import {
  collect,
  fold,
  ProviderDelta as Delta,
  type ProviderDelta,
  ReplyBuilder,
  replyWarning
} from "../../../src/domain/model/Reply.ts"

const when = Timestamp.make("2026-03-05 19:31:10.5")
const now = () => when
const usage = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 2, cacheWriteTokens: 0 }

describe("fold: deltas into the events to record", () => {
  it("consecutive deltas of one kind form one block; blocks, calls and data keep the model's order", () => {
    const reply = fold(
      [
        Delta.ReasoningDelta({ text: "Let me " }),
        Delta.ReasoningDelta({ text: "think." }),
        Delta.ReasoningDone({ metadata: { anthropic_thinking_signature: "sig" } }),
        Delta.TextDelta({ text: "Writing " }),
        Delta.TextDelta({ text: "it." }),
        Delta.ToolCallStart({ id: "call_1", name: "write_note" }),
        Delta.ToolCall({ id: "call_1", name: "write_note", arguments: { path: "a.txt" }, metadata: {} }),
        Delta.Structured({ data: { answer: true } }),
        Delta.Usage({ usage }),
        Delta.Finish({ reason: "tool_use" })
      ],
      now
    )
    assert.deepStrictEqual(reply.events, [
      ChatResponse.reasoning(when, "Let me think.", { anthropic_thinking_signature: "sig" }),
      ChatResponse.message(when, "Writing it."),
      new ToolCallRequest({
        timestamp: when,
        id: "call_1",
        name: "write_note",
        arguments: { path: "a.txt" },
        metadata: {}
      }),
      ChatResponse.structured(when, { answer: true })
    ])
    assert.deepStrictEqual([reply.usage, reply.stopReason], [usage, "tool_use"])
  })

  it("text after reasoning closes the reasoning block (no signature); a signature with no reasoning text is still recorded", () => {
    assert.deepStrictEqual(fold([Delta.ReasoningDelta({ text: "hm" }), Delta.TextDelta({ text: "Hi" })], now).events, [
      ChatResponse.reasoning(when, "hm"),
      ChatResponse.message(when, "Hi")
    ])
    assert.deepStrictEqual(
      fold([Delta.ReasoningDone({ metadata: { anthropic_redacted_thinking: "xyz" } })], now).events,
      [ChatResponse.reasoning(when, "", { anthropic_redacted_thinking: "xyz" })]
    )
  })

  it("a finished reply with nothing in it is one empty message; an unfinished one makes nothing up", () => {
    assert.deepStrictEqual(fold([Delta.Finish({ reason: "end_turn" })], now).events, [ChatResponse.message(when, "")])
    const cut = fold([], now)
    assert.deepStrictEqual([cut.events, cut.usage, cut.stopReason], [[], undefined, undefined])
  })

  it("the builder can be finished mid-stream (Ctrl-C keeps what was shown) and read again", () => {
    const builder = new ReplyBuilder(now)
    builder.add(Delta.TextDelta({ text: "Par" }))
    assert.deepStrictEqual(builder.finish().events, [ChatResponse.message(when, "Par")])
    assert.deepStrictEqual(builder.finish().events, [ChatResponse.message(when, "Par")])
  })

  it("property: how the provider splits the text into deltas does not change the reply", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 1 }), { minLength: 1, maxLength: 12 }),
        fc.boolean(),
        (chunks, finished) => {
          const deltas: Array<ProviderDelta> = chunks.map((text) => Delta.TextDelta({ text }))
          if (finished) deltas.push(Delta.Finish({ reason: "end_turn" }))
          const whole: Array<ProviderDelta> = [
            Delta.TextDelta({ text: chunks.join("") }),
            ...(finished ? [Delta.Finish({ reason: "end_turn" as const })] : [])
          ]
          expect(fold(deltas, now)).toStrictEqual(fold(whole, now))
        }
      )
    )
  })
})

describe("collect: the fold over a stream", () => {
  it.effect("gives what fold gives for the same deltas", () =>
    Effect.gen(function* () {
      const deltas = [
        Delta.TextDelta({ text: "a" }),
        Delta.ToolCall({ id: "c", name: "t", arguments: {}, metadata: {} }),
        Delta.Finish({ reason: "tool_use" })
      ]
      assert.deepStrictEqual(yield* collect(Stream.fromIterable(deltas), { now }), fold(deltas, now))
    })
  )

  it.effect("a reply with only reasoning is not padded", () =>
    Effect.gen(function* () {
      const reply = yield* collect(
        Stream.make(Delta.ReasoningDelta({ text: "hm" }), Delta.Finish({ reason: "end_turn" })),
        { now }
      )
      assert.deepStrictEqual(reply.events, [ChatResponse.reasoning(when, "hm")])
    })
  )

  it.effect("a failing stream fails collect with the stream's error", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        collect(Stream.concat(Stream.make(Delta.TextDelta({ text: "a" })), Stream.fail("cut")), { now })
      )
      assert.strictEqual(error, "cut")
    })
  )
})

describe("replyWarning", () => {
  it("names the model and says the reply is saved as it is; nothing for a normal finish", () => {
    assert.strictEqual(
      replyWarning("anthropic/claude-sonnet-4-5", "max_tokens"),
      "warning: anthropic/claude-sonnet-4-5 stopped at its output token limit; the reply is cut short (saved as it is)."
    )
    assert.strictEqual(
      replyWarning("openai/gpt-5", "refusal"),
      "warning: openai/gpt-5 refused to answer or was stopped by a content filter (saved as it is)."
    )
    for (const reason of ["end_turn", "tool_use", "stop_sequence", "other", undefined] as const)
      assert.isUndefined(replyWarning("m", reason))
  })
})
