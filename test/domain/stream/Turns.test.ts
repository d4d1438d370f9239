import { describe, expect, it } from "@effect/vitest"
import type { StreamEntry } from "../../../src/domain/event/ConversationEvent.ts"
import { ChatRequest } from "../../../src/domain/event/ChatRequest.ts"
import { TurnStart } from "../../../src/domain/event/TurnStart.ts"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"
import {
  currentTurnSchema,
  currentTurnStart,
  eventsByTurn,
  turnAtTime,
  turnCount,
  turns
} from "../../../src/domain/stream/Turns.ts"
import { shape, streams } from "../_streams.ts"

const agree = (entries: ReadonlyArray<StreamEntry>) => {
  const fromTurns = turns(entries).flatMap((t) =>
    t.entries
      .filter((e) => e.type !== "config_delta" && e.type !== "compaction" && e.type !== "unknown")
      .map(() => t.index)
  )
  const fromEvents = eventsByTurn(entries).map((x) => x.turn)
  expect(fromEvents).toEqual(fromTurns)
  return fromEvents
}

describe("turn iteration (jp-reference §4.3, §7.3)", () => {
  it("an empty stream has no turns", () => {
    expect(turns([])).toEqual([])
    expect(turnCount([])).toBe(0)
    expect(eventsByTurn([])).toEqual([])
  })

  it("events by turn agree with turns; config deltas never shift numbering", () => {
    const b = streams()
    const entries = [b.ts(), b.cr("a"), b.delta(), b.ts(), b.cr("b")]
    expect(agree(entries)).toEqual([0, 0, 1, 1])
    expect(turnCount(entries)).toBe(2)
    expect(turns(entries).map((t) => [t.start, t.end])).toEqual([
      [0, 3],
      [3, 5]
    ])
    expect(shape(turns(entries)[0]!.entries)).toEqual(["TS", "CR:a", "DELTA"])
  })

  it("agrees on an implicit leading turn", () => {
    const b = streams()
    const entries = [b.cr("a"), b.ts(), b.cr("b")]
    expect(agree(entries)).toEqual([0, 1, 1])
    expect(turnCount(entries)).toBe(2)
    expect(turns(entries).map((t) => t.index)).toEqual([0, 1])
  })

  it("a single turn holds its three events", () => {
    const b = streams()
    const entries = [b.ts(), b.cr("q"), b.msg("a")]
    const all = turns(entries)
    expect(all.length).toBe(1)
    expect(all[0]!.entries).toEqual(entries)
  })

  it("indexes three turns 0, 1, 2 with sizes 3, 3, 2", () => {
    const b = streams()
    const entries = [b.ts(), b.cr("1"), b.msg("a"), b.ts(), b.cr("2"), b.msg("b"), b.ts(), b.cr("3")]
    const all = turns(entries)
    expect(all.map((t) => t.index)).toEqual([0, 1, 2])
    expect(all.map((t) => t.entries.length)).toEqual([3, 3, 2])
    expect(all.length).toBe(3)
    expect(shape(all[all.length - 1]!.entries)).toEqual(["TS", "CR:3"])
  })

  it("events before the first turn_start form the implicit turn 0", () => {
    const b = streams()
    const orphan = b.cr("orphan")
    const all = turns([orphan, b.ts(), b.cr("second")])
    expect(all.length).toBe(2)
    expect(all[0]!.entries).toEqual([orphan])
    expect(shape(all[1]!.entries)).toEqual(["TS", "CR:second"])
  })

  it("a leading turn_start opens turn 0; consecutive turn_starts give a turn of only a turn_start", () => {
    const b = streams()
    const entries = [b.delta(), b.ts(), b.cr("1"), b.ts(), b.ts(), b.cr("2")]
    expect(turns(entries).map((t) => shape(t.entries))).toEqual([["DELTA", "TS", "CR:1"], ["TS"], ["TS", "CR:2"]])
    expect(turnCount(entries)).toBe(3)
    expect(agree(entries)).toEqual([0, 0, 1, 2, 2])
  })

  it("turns cover the input without gaps; trailing non-events join the last turn", () => {
    const b = streams()
    const entries = [b.delta(), b.cr("1"), b.compaction(), b.ts(), b.cr("2"), b.unknown(), b.delta()]
    const all = turns(entries)
    expect(all.map((t) => [t.start, t.end])).toEqual([
      [0, 3],
      [3, 7]
    ])
    expect(all.flatMap((t) => t.entries)).toEqual(entries)
    expect(eventsByTurn(entries).map((x) => x.event.type)).toEqual(["chat_request", "turn_start", "chat_request"])
  })

  it("a stream of only non-events has no turns", () => {
    const b = streams()
    expect(turns([b.delta(), b.compaction()])).toEqual([])
    expect(turnCount([b.delta()])).toBe(0)
  })

  it("a stream without turn_start is one turn", () => {
    const b = streams()
    expect(turnCount([b.cr("a"), b.msg("b"), b.cr("c"), b.msg("d")])).toBe(1)
  })
})

describe("turnAtTime", () => {
  const at = (text: string) => Timestamp.make(text)
  const entries = [
    new TurnStart({ timestamp: at("2026-01-01 10:00:00.0") }),
    new ChatRequest({ timestamp: at("2026-01-01 10:00:00.000001"), content: "1" }),
    new TurnStart({ timestamp: at("2026-01-01 12:00:00.0") }),
    new ChatRequest({ timestamp: at("2026-01-01 12:00:00.5"), content: "2" })
  ]

  it("is the last turn whose first event is at or before the time", () => {
    expect(turnAtTime(entries, "2026-01-01 09:00:00.0")).toBeUndefined()
    expect(turnAtTime(entries, "2026-01-01 11:00:00.0")?.index).toBe(0)
    expect(turnAtTime(entries, "2026-01-01 12:00:00.0")?.index).toBe(1)
    expect(turnAtTime(entries, "2026-01-01 15:00:00.0")?.index).toBe(1)
    expect(turnAtTime(entries, "2026-01-01T12:00:00Z")?.index).toBe(1)
  })
})

describe("currentTurnSchema (jp-reference §4.4)", () => {
  const schema = { type: "object", properties: { answer: { type: "boolean" } } }

  it("is undefined without a schema", () => {
    const b = streams()
    expect(currentTurnSchema([b.ts(), b.cr("q")])).toBeUndefined()
  })

  it("comes from the turn's first chat_request", () => {
    const b = streams()
    expect(currentTurnSchema([b.ts(), b.cr("q", schema)])).toEqual(schema)
  })

  it("survives a tool-use round trip", () => {
    const b = streams()
    expect(currentTurnSchema([b.ts(), b.cr("q", schema), b.call("c"), b.result("c")])).toEqual(schema)
  })

  it("is not inherited from a previous turn", () => {
    const b = streams()
    expect(currentTurnSchema([b.ts(), b.cr("q", schema), b.data({ answer: true }), b.ts(), b.cr("r")])).toBeUndefined()
  })

  it("ignores an interrupt reply in the same turn", () => {
    const b = streams()
    expect(currentTurnSchema([b.ts(), b.cr("q", schema), b.msg("partial"), b.cr("interrupt")])).toEqual(schema)
  })

  it("reads from the start of a stream without turn_start", () => {
    const b = streams()
    expect(currentTurnSchema([b.delta(), b.cr("q", schema)])).toEqual(schema)
  })
})

describe("currentTurnStart (docs/decisions.md#one-home-for-each-stream-rule)", () => {
  const skip = { skipTrailingBareTurnStarts: true }

  it("is the last turn_start, or the first event of an implicit turn, or -1 without events", () => {
    const b = streams()
    expect(currentTurnStart([b.ts(), b.cr("1"), b.msg("a"), b.ts(), b.cr("2"), b.delta()])).toBe(3)
    expect(currentTurnStart([b.delta(), b.cr("1"), b.msg("a")])).toBe(1)
    expect(currentTurnStart([b.delta(), b.ts(), b.cr("1")])).toBe(1)
    expect(currentTurnStart([b.delta(), b.compaction()])).toBe(-1)
    expect(currentTurnStart([])).toBe(-1)
  })

  it("by default a trailing bare turn_start is the current, empty turn", () => {
    const b = streams()
    const entries = [b.ts(), b.cr("1"), b.call("c"), b.ts(), b.delta(), b.ts()]
    expect(currentTurnStart(entries)).toBe(5)
    expect(currentTurnStart([b.ts()])).toBe(0)
  })

  it("can skip trailing bare turn_starts to find the last turn that holds something", () => {
    const b = streams()
    const entries = [b.ts(), b.cr("1"), b.msg("a"), b.ts(), b.cr("2"), b.call("c"), b.ts(), b.delta(), b.ts()]
    expect(currentTurnStart(entries, skip)).toBe(3)
    expect(currentTurnStart([b.cr("1"), b.ts(), b.ts()], skip)).toBe(0)
    expect(currentTurnStart([b.delta(), b.ts(), b.ts()], skip)).toBe(-1)
  })
})
