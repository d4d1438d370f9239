import { describe, expect, it } from "@effect/vitest"
import type { StreamEntry } from "../../../src/domain/event/ConversationEvent.ts"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"
import * as Compact from "../../../src/domain/stream/Compact.ts"
import * as CompactOptions from "../../../src/domain/stream/CompactOptions.ts"
import { streams } from "../_streams.ts"

const conversation = (turnCount: number): ReadonlyArray<StreamEntry> => {
  const b = streams()
  const entries: Array<StreamEntry> = []
  for (let t = 0; t < turnCount; t++) entries.push(b.ts(), b.cr(`q${t}`), b.msg(`a${t}`))
  return entries
}

const none = { reasoning: false, summary: false, tools: undefined, compact: [] }

describe("conversation compact's options", () => {
  it("refuses range flags that cannot go together, naming them", () => {
    expect(CompactOptions.conflict({ keepLast: -1 })).toBe(
      "--keep-first and --keep-last take a number of turns (0 or more)."
    )
    expect(CompactOptions.conflict({ from: "2", keepFirst: 1 })).toBe(
      "--from and --keep-first cannot be used together."
    )
    expect(CompactOptions.conflict({ to: "-1", keepLast: 1 })).toBe("--to and --keep-last cannot be used together.")
    expect(CompactOptions.conflict({ from: "2", keepLast: 1 })).toBeUndefined()
  })

  it("the policy flags make one rule; with --compact they are refused; a bad --tools mode is named", () => {
    const rules = CompactOptions.rulesOf({ ...none, reasoning: true, tools: "omit" }, undefined)
    expect(typeof rules === "string" ? rules : rules.map((r) => [r.reasoning, r.toolCalls])).toEqual([
      ["strip", "omit"]
    ])
    expect(CompactOptions.rulesOf({ ...none, summary: true, compact: [""] }, undefined)).toBe(
      "--reasoning, --tools and --summary cannot be used with --compact."
    )
    expect(CompactOptions.rulesOf({ ...none, tools: "drop" }, undefined)).toBe(
      '--tools: "drop" is not one of strip, strip-requests, strip-responses, omit.'
    )
    expect(CompactOptions.rulesOf(none, undefined)).toEqual(
      Compact.combineRules(Compact.configRules(undefined), false, [])
    )
  })

  it("bounds: --from / --to resolve against the conversation, --keep-* override, a bad bound names its flag", () => {
    const entries = conversation(6)
    const now = Timestamp.fromEpochNanos(0n)
    expect(CompactOptions.boundsOf({ from: "2", to: "-1" }, entries, now)).toEqual({
      from: { _tag: "At", bound: { _tag: "Absolute", n: 1 } },
      to: { _tag: "At", bound: { _tag: "FromEnd", n: 0 } }
    })
    expect(CompactOptions.boundsOf({ keepFirst: 1 }, entries, now)).toEqual({
      from: Compact.keepOverride("from", 1),
      to: Compact.DEFAULT_BOUND
    })
    expect(CompactOptions.boundsOf({ to: "soon" }, entries, now)).toMatch(/^--to: invalid range bound "soon"/)
  })

  it("--reset takes all or a compaction number, and nothing else", () => {
    expect(CompactOptions.resetIndex("all", false)).toBeUndefined()
    expect(CompactOptions.resetIndex("2", false)).toBe(2)
    expect(CompactOptions.resetIndex("0", false)).toEqual({
      refused: '--reset: "0" is not a compaction number (1, 2, …).'
    })
    expect(CompactOptions.resetIndex("all", true)).toEqual({
      refused: "--reset removes compactions: it takes no policy, range, --compact or --model."
    })
  })
})
