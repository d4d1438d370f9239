import { describe, expect, it } from "@effect/vitest"
import { Compaction } from "../../../src/domain/event/Compaction.ts"
import { fork } from "../../../src/domain/stream/Fork.ts"
import { incompleteSummary, splitIncompleteTurn } from "../../../src/domain/stream/IncompleteTurn.ts"
import { sanitize } from "../../../src/domain/stream/Sanitize.ts"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"
import { shape, streams } from "../_streams.ts"

describe("fork (RFD 023)", () => {
  it("copies a healthy complete conversation unchanged (same entries)", () => {
    const b = streams()
    const entries = [
      b.delta(),
      b.ts(),
      b.cr("q"),
      b.call("c"),
      b.ask("c.q.1"),
      b.answer("c.q.1"),
      b.result("c"),
      b.msg("a")
    ]
    const out = fork(entries)
    expect(out).toEqual(entries)
    out.forEach((e, i) => expect(e).toBe(entries[i]))
  })

  it("sanitizes the complete part (an orphan inquiry of an earlier turn is repaired away)", () => {
    const b = streams()
    const entries = [
      b.ts(),
      b.cr("1"),
      b.call("t", "fs_modify_file"),
      b.ask("t.apply_changes", "fs_modify_file"),
      b.result("t", "secondary assistant failed", true),
      b.msg("sorry"),
      b.ts(),
      b.cr("2"),
      b.msg("ok")
    ]
    expect(shape(fork(entries))).toEqual(["TS", "CR:1", "TC:t", "TR:t!", "M:sorry", "TS", "CR:2", "M:ok"])
  })

  it("carries the incomplete turn into the fork untouched", () => {
    const b = streams()
    const head = [b.msg("stray"), b.ts(), b.cr("1"), b.msg("a")]
    const tail = [
      b.ts(),
      b.cr("2"),
      b.call("c1", "fs_modify_file"),
      b.ask("c1.overwrite.1", "fs_modify_file"),
      b.delta()
    ]
    const out = fork([...head, ...tail])
    expect(shape(out)).toEqual(["TS", "CR:1", "M:a", "TS", "CR:2", "TC:c1", "IQ:c1.overwrite.1", "DELTA"])
    out.slice(3).forEach((e, i) => expect(e).toBe(tail[i]))
    expect(incompleteSummary(out)).toEqual({ state: "waiting-for-input", tool: "fs_modify_file" })
    // Sanitizing the whole source would have erased the pending work instead.
    expect(incompleteSummary(sanitize([...head, ...tail]))).toEqual({ state: "pending-follow-up" })
  })

  it("--until mid-turn leaves that turn as the fork's incomplete turn", () => {
    const b = streams()
    const entries = [
      b.ts(),
      b.cr("1"),
      b.msg("a"),
      b.ts(),
      b.cr("2"),
      b.msg("Let me check."),
      b.call("c1", "cargo_check"),
      b.call("c2", "fs_read_file"),
      b.result("c1"),
      b.result("c2"),
      b.msg("done")
    ]
    const cut = entries[8]!.timestamp // the first tool response
    const out = fork(entries, { until: cut })
    expect(shape(out)).toEqual(["TS", "CR:1", "M:a", "TS", "CR:2", "M:Let me check.", "TC:c1", "TC:c2"])
    expect(incompleteSummary(out)).toEqual({ state: "pending-tool-execution" })
    expect(splitIncompleteTurn(out).incomplete?.entries.length).toBe(5)
  })

  it("--until is exclusive: an event stamped exactly at it is dropped", () => {
    const b = streams()
    const entries = [b.ts(), b.cr("1"), b.msg("a"), b.ts(), b.cr("2"), b.msg("b")]
    expect(shape(fork(entries, { until: entries[5]!.timestamp }))).toEqual(["TS", "CR:1", "M:a", "TS", "CR:2"])
    expect(incompleteSummary(fork(entries, { until: entries[5]!.timestamp }))).toEqual({
      state: "pending-llm-response"
    })
  })

  it("--until right after a turn_start drops the empty turn", () => {
    const b = streams()
    const entries = [b.ts(), b.cr("1"), b.msg("a"), b.ts(), b.cr("2"), b.msg("b")]
    expect(shape(fork(entries, { until: entries[4]!.timestamp! }))).toEqual(["TS", "CR:1", "M:a"])
  })

  it("accepts RFC 3339 text and keeps config deltas and unknown entries in place", () => {
    const b = streams()
    const entries = [b.delta(), b.ts(), b.cr("1"), b.msg("a"), b.unknown(), b.delta(), b.ts(), b.cr("2"), b.msg("b")]
    const until = Timestamp.toRfc3339(entries[6]!.timestamp!)
    expect(shape(fork(entries, { until }))).toEqual(["DELTA", "TS", "CR:1", "M:a", "UNKNOWN:turn_statistics", "DELTA"])
  })

  it("a cut that removes an event of turn N drops exactly the compactions with to_turn ≥ N (JP's retain)", () => {
    const b = streams()
    const entries = [
      b.ts(),
      b.cr("1"),
      b.msg("a"),
      b.compaction(0, 0),
      b.compaction(0, 1),
      b.ts(),
      b.cr("2"),
      b.msg("b"),
      b.msg("c"),
      b.compaction(1, 2)
    ]
    // Turn 1 loses all its events: only the compaction of turn 0 stays.
    expect(shape(fork(entries, { until: entries[5]!.timestamp! }))).toEqual(["TS", "CR:1", "M:a", "COMPACTION"])
    expect((fork(entries, { until: entries[5]!.timestamp! })[3] as Compaction).rule.to_turn).toBe(0)
    // Turn 1 loses its last event only: the same compactions go.
    expect(shape(fork(entries, { until: entries[8]!.timestamp! }))).toEqual([
      "TS",
      "CR:1",
      "M:a",
      "COMPACTION",
      "TS",
      "CR:2",
      "M:b"
    ])
    // Nothing removed: every compaction stays, also one whose range runs past the last turn.
    expect(shape(fork(entries, { until: b.at(1000) }))).toEqual(shape(entries))
  })

  it("the retain rule ignores the compaction's own timestamp, both ways", () => {
    const b = streams()
    const early = b.compaction(1, 1) // stamped before the cut, covers the cut turn: dropped
    const entries = [b.ts(), b.cr("1"), b.msg("a"), early, b.ts(), b.cr("2"), b.msg("b")]
    const late = Compaction.fromRule({ timestamp: b.at(999), from_turn: 0, to_turn: 0 }) // stamped after the cut, covers turn 0 only: kept
    const out = fork([...entries, late], { until: entries[6]!.timestamp! })
    expect(out.filter((e) => e.type === "compaction")).toEqual([late])
  })

  it("keeps only the non-events when --until precedes every event", () => {
    const b = streams(100)
    const entries = [b.delta(), b.ts(), b.cr("1"), b.msg("a")]
    expect(shape(fork(entries, { until: b.at(0) }))).toEqual(["DELTA"])
  })

  it("rejects an --until that is not a timestamp", () => {
    expect(() => fork([], { until: "yesterday" })).toThrow(RangeError)
  })

  it("never mutates the source", () => {
    const b = streams()
    const entries = Object.freeze([b.cr("q"), b.call("c"), b.msg("x"), b.ts(), b.cr("2"), b.call("d")])
    const before = entries.slice()
    fork(entries, { until: b.at(4) })
    fork(entries)
    expect(entries).toEqual(before)
  })
})

describe("fork --from (JP's meaning: inclusive)", () => {
  it("keeps events stamped at or after the instant; config deltas before it stay; with --until, a window", () => {
    const b = streams()
    const entries = [
      b.delta(),
      b.ts(),
      b.cr("1"),
      b.msg("a"),
      b.ts(),
      b.cr("2"),
      b.msg("b"),
      b.ts(),
      b.cr("3"),
      b.msg("c")
    ]
    const from = entries[4]!.timestamp! // the second turn's start, kept (inclusive)
    expect(shape(fork(entries, { from }))).toEqual(["DELTA", "TS", "CR:2", "M:b", "TS", "CR:3", "M:c"])
    expect(shape(fork(entries, { from, until: entries[7]!.timestamp! }))).toEqual(["DELTA", "TS", "CR:2", "M:b"])
  })

  it("a compaction goes once --from drops any event (its turn numbers no longer fit); none dropped: kept", () => {
    const b = streams()
    const entries = [b.ts(), b.cr("1"), b.msg("a"), b.ts(), b.cr("2"), b.msg("b")]
    const withCompaction = [...entries, b.compaction(0, 0)]
    expect(fork(withCompaction, { from: entries[3]!.timestamp }).some((e) => e.type === "compaction")).toBe(false)
    expect(fork(withCompaction, { from: entries[0]!.timestamp }).some((e) => e.type === "compaction")).toBe(true)
  })

  it("a bad --from is a RangeError", () => {
    expect(() => fork([], { from: "yesterday" })).toThrow(RangeError)
  })
})
