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

describe("RFD 064's bounds and JP's --compact DSL", () => {
  const ten = conversation(10)
  const range = (spec: string) => {
    const rule = Compact.parseSpec(spec)
    if (typeof rule === "string") throw new Error(rule)
    return Compact.resolveRuleRange(ten, ten, rule, Compact.DEFAULT_BOUND, Compact.DEFAULT_BOUND)
  }

  it("parses policies and ranges as compact_flag.rs does (1-based turns, -N keeps the last N)", () => {
    expect(range("r")).toEqual({ from: 1, to: 6 })
    expect(range("s:..-3")).toEqual({ from: 0, to: 6 })
    expect(range("r+t:5..-3")).toEqual({ from: 4, to: 6 })
    expect(range("s:5..10")).toEqual({ from: 4, to: 9 })
    expect(range("r:-20")).toBeUndefined()
    expect(range("t=sreq:5")).toEqual({ from: 4, to: 9 })
    expect(range("r:..")).toEqual({ from: 0, to: 9 })
    expect(range("r:-10..-3")).toEqual({ from: 0, to: 6 })
    expect(Compact.parseSpec("r+t=o")).toMatchObject({ reasoning: "strip", toolCalls: "omit" })
    expect(Compact.parseSpec("x")).toBe("unknown policy 'x'")
    expect(Compact.parseSpec("r=1")).toBe("`reasoning` does not take a value")
    expect(Compact.parseSpec("t=shred")).toBe("unknown tool_calls mode: `shred`")
    expect(Compact.parseSpec("s:0..")).toBe("turn indices are 1-based; `0` is not a valid turn")
    expect(Compact.parseCompactFlag(["", "r:-2"])).toMatchObject({
      useConfigRules: true,
      specs: [{ reasoning: "strip" }]
    })
  })

  it("combines rules as JP does: explicit ones replace the configured ones unless a bare --compact keeps them", () => {
    const configured = Compact.configRules([{ keep_last: 5 }, { keep_first: 0 }])
    const explicit = [Compact.parseSpec("r") as Compact.Rule]
    expect(Compact.combineRules(configured, false, [])).toBe(configured)
    expect(Compact.combineRules(configured, false, explicit)).toEqual(explicit)
    expect(Compact.combineRules(configured, true, explicit)).toEqual([...configured, ...explicit])
    expect(Compact.configRules([])).toEqual([Compact.ruleOf(Compact.DEFAULT_RULE)])
  })

  it("resolves command-line bounds as turn_range.rs does; a start past the end or an end before the start selects nothing", () => {
    const now = Timestamp.make("2026-03-05 10:00:00.0")
    const at = (text: string, side: "from" | "to") => {
      const b = Compact.parseCliBound(text, side)
      if (typeof b === "string") throw new Error(b)
      return Compact.resolveCliBound(ten, b, side, now)
    }
    expect(Compact.resolveRuleRange(ten, ten, Compact.ruleOf({}), at("3", "from"), at("-1", "to"))).toEqual({
      from: 2,
      to: 9
    })
    expect(Compact.resolveBounds(ten, { _tag: "Absolute", n: 10 }, undefined)).toBeUndefined()
    expect(Compact.resolveBounds(ten, undefined, { _tag: "FromEnd", n: 10 })).toBeUndefined()
    expect(Compact.resolveBounds(ten, { _tag: "Absolute", n: 5 }, { _tag: "Absolute", n: 2 })).toBeUndefined()
    expect(Compact.parseCliBound("0", "from")).toBe("turn numbers are 1-based; 0 is not a turn")
    expect(Compact.parseCliBound("last", "to")).toMatch(/only valid for --from/)
    expect(Compact.parseCliBound("1h30m", "from")).toEqual({ _tag: "Ago", ms: 5_400_000 })
    expect(Compact.parseCliBound("soon", "from")).toMatch(/^invalid range bound "soon"/)
  })
})
