import { describe, expect, it } from "@effect/vitest"
import type { StreamEntry } from "../../../src/domain/event/ConversationEvent.ts"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"
import * as Compact from "../../../src/domain/stream/Compact.ts"
import { streams } from "../_streams.ts"

const conversation = (
  turnCount: number,
  extra: (b: ReturnType<typeof streams>) => ReadonlyArray<StreamEntry> = () => []
) => {
  const b = streams()
  const entries: Array<StreamEntry> = []
  for (let t = 0; t < turnCount; t++) entries.push(b.ts(), b.cr(`q${t}`), b.msg(`a${t}`))
  return [...entries, ...extra(b)]
}

describe("compaction ranges (RFD 064, D50)", () => {
  it("conversation compact: keep_first … last − keep_last, whatever earlier compactions cover", () => {
    expect(Compact.resolveRange(conversation(10), { keepFirst: 1, keepLast: 3 })).toEqual({ from: 1, to: 6 })
    expect(
      Compact.resolveRange(
        conversation(10, (b) => [b.compaction(1, 6)]),
        { keepFirst: 1, keepLast: 3 }
      )
    ).toEqual({ from: 1, to: 6 })
    expect(Compact.resolveRange(conversation(5), { keepFirst: 1, keepLast: 3 })).toEqual({ from: 1, to: 1 })
    expect(Compact.resolveRange(conversation(10), { keepFirst: 0, keepLast: 0 })).toEqual({ from: 0, to: 9 })
  })

  it("is empty when the kept turns leave none (parley does not clamp into kept turns as JP does)", () => {
    expect(Compact.resolveRange(conversation(4), { keepFirst: 1, keepLast: 3 })).toBeUndefined()
    expect(Compact.resolveRange(conversation(1), { keepFirst: 1, keepLast: 3 })).toBeUndefined()
    expect(Compact.resolveRange(conversation(3), { keepFirst: 5, keepLast: 0 })).toBeUndefined()
    expect(Compact.resolveRange([], { keepFirst: 0, keepLast: 0 })).toBeUndefined()
  })

  it("the rolling range starts after the furthest compacted turn (D50's example)", () => {
    expect(Compact.rollingRange(conversation(13), { keepFirst: 1, keepLast: 3 })).toEqual({ from: 1, to: 9 })
    expect(
      Compact.rollingRange(
        conversation(21, (b) => [b.compaction(1, 9)]),
        { keepFirst: 1, keepLast: 3 }
      )
    ).toEqual({ from: 10, to: 17 })
    expect(
      Compact.rollingRange(
        conversation(13, (b) => [b.compaction(1, 9)]),
        { keepFirst: 1, keepLast: 3 }
      )
    ).toBeUndefined()
  })

  it("a summary range grows over partly overlapping summaries, repeatedly, and ignores contained ones and mechanical ones", () => {
    const entries = conversation(20, (b) => [
      b.compaction(2, 6, { summary: "A" }),
      b.compaction(8, 12, { summary: "B" }),
      b.compaction(0, 19, { reasoning: "strip" })
    ])
    expect(Compact.extendSummaryRange(entries, { from: 4, to: 9 })).toEqual({ from: 2, to: 12 })
    expect(Compact.extendSummaryRange(entries, { from: 1, to: 7 })).toEqual({ from: 1, to: 7 })
    expect(Compact.extendSummaryRange(entries, { from: 3, to: 5 })).toEqual({ from: 3, to: 5 })
  })

  it("a mechanical rule says what its config says", () => {
    const at = Timestamp.make("2026-03-05 10:00:00.0")
    expect(Compact.mechanicalRule({ from: 1, to: 6 }, Compact.DEFAULT_RULE, at)).toEqual({
      timestamp: at,
      from_turn: 1,
      to_turn: 6,
      reasoning: "strip",
      tool_calls: { policy: "strip", request: true, response: true }
    })
    expect(Compact.mechanicalRule({ from: 0, to: 0 }, { tool_calls: "strip-responses" }, at)).toEqual({
      timestamp: at,
      from_turn: 0,
      to_turn: 0,
      tool_calls: { policy: "strip", request: false, response: true }
    })
    expect(Compact.keepOf({})).toEqual({ keepFirst: 1, keepLast: 3 })
  })
})
