import { describe, expect, it } from "@effect/vitest"
import type { StreamEntry } from "../../../src/domain/event/ConversationEvent.ts"
import * as ContextWindow from "../../../src/domain/model/ContextWindow.ts"
import { shape, streams } from "../_streams.ts"

describe("windowOf", () => {
  it("config beats the table; a dated snapshot reads as its model; unknown models have no limit", () => {
    const config = {
      providers: {
        anthropic: {
          models: { "claude-sonnet-4-5": { context_window: 1_000_000 }, "claude-test": { context_window: 2000 } }
        }
      }
    }
    expect(ContextWindow.windowOf("anthropic/claude-sonnet-4-5", {})).toBe(200_000)
    expect(ContextWindow.windowOf("anthropic/claude-sonnet-4-5-20250929", {})).toBe(200_000)
    expect(ContextWindow.windowOf("anthropic/claude-sonnet-4-5", config)).toBe(1_000_000)
    expect(ContextWindow.windowOf("anthropic/claude-test", config)).toBe(2000)
    expect(ContextWindow.windowOf("openai/gpt-5-mini", config)).toBe(400_000)
    expect(ContextWindow.windowOf("openai/llama3", {})).toBeUndefined()
    expect(ContextWindow.windowOf("scripted", {})).toBeUndefined()
    expect(
      ContextWindow.windowOf("scripted", { providers: { scripted: { models: { scripted: { context_window: 50 } } } } })
    ).toBe(50)
  })
})

describe("the character estimate (JP's estimate_event_chars)", () => {
  it("counts what a provider is sent of each event, and nothing of the others", () => {
    const b = streams()
    expect(ContextWindow.eventChars(b.cr("12345"))).toBe(5)
    expect(ContextWindow.eventChars(b.msg("abc"))).toBe(3)
    expect(ContextWindow.eventChars(b.reasoning("abcd"))).toBe(4)
    expect(ContextWindow.eventChars(b.data({ a: 1 }))).toBe(`{"a":1}`.length)
    expect(ContextWindow.eventChars(b.call("c", "tool", { p: "x" }))).toBe(4 + `{"p":"x"}`.length)
    expect(ContextWindow.eventChars(b.result("c", "out", true))).toBe(3)
    expect(ContextWindow.eventChars(b.ask("c.q.1"))).toBe(0)
    expect(ContextWindow.eventChars(b.ts())).toBe(0)
    expect(
      ContextWindow.requestChars({
        systemParts: ["sys"],
        events: [b.cr("hello")],
        tools: [{ name: "t", description: "dd", parameters: { type: "object" } }]
      })
    ).toBe(3 + 1 + 2 + `{"type":"object"}`.length + 5)
    expect(ContextWindow.tokensOf(8)).toBe(2)
    expect(ContextWindow.tokensOf(9)).toBe(3)
  })
})

describe("inquiry truncation (RFD 034, JP's truncate_to_fit)", () => {
  it("drops nothing within 90% of the window (3 characters per token, after the overhead)", () => {
    // window 100 tokens = 300 characters; budget 270 − 20 overhead = 250.
    expect(ContextWindow.inquiryCut([100, 100, 50], 100, 20)).toBe(0)
    expect(ContextWindow.inquiryCut([100, 100, 51], 100, 20)).toBeGreaterThan(0)
  })

  it("cuts the oldest events down to 80%, in steps of a tenth of the target, so small additions keep the cut", () => {
    // target 240 − 20 = 220, step 22; total 300 → 80 over → rounded up to 88 → the first event (100) covers it.
    expect(ContextWindow.inquiryCut([100, 100, 100], 100, 20)).toBe(1)
    // A few more characters at the end do not move the cut.
    expect(ContextWindow.inquiryCut([100, 100, 100, 5], 100, 20)).toBe(1)
    // 30 × 10 characters: 300 − 220 = 80 → 88 → 9 events.
    expect(ContextWindow.inquiryCut(Array(30).fill(10), 100, 20)).toBe(9)
    expect(ContextWindow.inquiryCut([...Array(30).fill(10), 3], 100, 20)).toBe(9)
  })

  it("fitInquiry keeps a stable prefix cut, re-pairs what the cut split, and keeps nothing without a chat request", () => {
    const b = streams()
    const big = "x".repeat(600)
    const entries: Array<StreamEntry> = [
      b.delta(),
      b.ts(),
      b.cr(big),
      b.msg("a"),
      b.ts(),
      b.cr("two"),
      b.call("c", "t"),
      b.result("c", big),
      b.msg("b"),
      b.ts(),
      b.cr("three"),
      b.msg("c")
    ]
    // 100 tokens: everything before "three" must go; the delta stays.
    const fitted = ContextWindow.fitInquiry(entries, { window: 100, overheadChars: 0 })
    expect(shape(fitted)).toEqual(["DELTA", "TS", "CR:three", "M:c"])
    expect(ContextWindow.fitInquiry(entries, { window: 10_000, overheadChars: 0 })).toBe(entries)
    // Nothing but replies would be left: nothing is kept.
    expect(
      shape(ContextWindow.fitInquiry([b.ts(), b.cr(big), b.msg("short")], { window: 100, overheadChars: 0 }))
    ).toEqual([])
  })
})
