/**
 * RFD 064's projection (docs/models.md#long-conversations-compactions-and-context-windows-rfd-064): every rule of JP's
 * `stream/projection.rs` as a table case, then properties over generated
 * streams with generated compactions.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { Compaction, type CompactionRule } from "../../../src/domain/event/Compaction.ts"
import type { StreamEntry } from "../../../src/domain/event/ConversationEvent.ts"
import { isInquiryEvent, isProviderVisible } from "../../../src/domain/event/ConversationEvent.ts"
import type * as Timestamp from "../../../src/domain/event/Timestamp.ts"
import { project, SUMMARY_REQUEST } from "../../../src/domain/stream/Projection.ts"
import { sanitize } from "../../../src/domain/stream/Sanitize.ts"
import { intoParts, providerView } from "../../../src/domain/stream/Thread.ts"
import { shape, streams } from "../_streams.ts"

type Policies = Omit<CompactionRule, "timestamp" | "from_turn" | "to_turn">

const STRIP = { policy: "strip", request: true, response: true } as const
const OMIT = { policy: "omit" } as const

/** What the provider sees, with stripped content and summaries spelled out. */
const seen = (entries: ReadonlyArray<StreamEntry>): Array<string> =>
  intoParts({ events: entries }).events.map((e) => {
    switch (e.type) {
      case "tool_call_request":
        return `TC:${e.id}${JSON.stringify(e.arguments)}`
      case "tool_call_response":
        return `TR:${e.id}${e.is_error ? "!" : ""}=${e.content}`
      default:
        return shape([e])[0]!
    }
  })

/**
 * Four turns: 0 and 1 with reasoning and a tool call each (turn 1's call
 * fails), 2 with an inquiry inside its call, 3 a plain exchange.
 */
const fourTurns = () => {
  const b = streams()
  const entries: Array<StreamEntry> = [
    b.ts(),
    b.cr("q0"),
    b.reasoning("r0"),
    b.call("c0", "fs_create_file", { path: "a" }),
    b.result("c0", "200 lines"),
    b.msg("a0"),
    b.ts(),
    b.cr("q1"),
    b.reasoning("r1"),
    b.call("c1", "fs_read_file", { path: "b" }),
    b.result("c1", "no such file", true),
    b.msg("a1"),
    b.ts(),
    b.cr("q2"),
    b.call("c2", "fs_modify_file", { path: "c" }),
    b.ask("c2.ok.1"),
    b.answer("c2.ok.1"),
    b.result("c2", "diff"),
    b.msg("a2"),
    b.ts(),
    b.cr("q3"),
    b.msg("a3")
  ]
  /** A compaction stamped at `second` (from the builder's base) — for timestamp contests. */
  const at = (second: number, from: number, to: number, policies: Policies = {}) =>
    Compaction.fromRule({
      timestamp: b.at(1000 + second) as Timestamp.Timestamp,
      from_turn: from,
      to_turn: to,
      ...policies
    })
  return { b, entries, at }
}

const RAW = [
  "CR:q0",
  "R:r0",
  `TC:c0{"path":"a"}`,
  "TR:c0=200 lines",
  "M:a0",
  "CR:q1",
  "R:r1",
  `TC:c1{"path":"b"}`,
  "TR:c1!=no such file",
  "M:a1",
  "CR:q2",
  `TC:c2{"path":"c"}`,
  "TR:c2=diff",
  "M:a2",
  "CR:q3",
  "M:a3"
]

describe("projection (RFD 064, JP's projection.rs)", () => {
  it("without compactions the stream is returned as it is", () => {
    const { entries } = fourTurns()
    expect(project(entries)).toBe(entries)
    expect(seen(entries)).toEqual(RAW)
  })

  it("RFD 064's example: reasoning stripped, tool arguments emptied, results replaced by a status line that keeps the error flag", () => {
    const { entries, at } = fourTurns()
    expect(seen([...entries, at(1, 0, 2, { reasoning: "strip", tool_calls: STRIP })])).toEqual([
      "CR:q0",
      "TC:c0{}",
      "TR:c0=[compacted] fs_create_file: success",
      "M:a0",
      "CR:q1",
      "TC:c1{}",
      "TR:c1!=[compacted] fs_read_file: error",
      "M:a1",
      "CR:q2",
      "TC:c2{}",
      "TR:c2=[compacted] fs_modify_file: success",
      "M:a2",
      "CR:q3",
      "M:a3"
    ])
  })

  it.each([
    ["requests only", { policy: "strip", request: true, response: false } as const, [`TC:c1{}`, "TR:c1!=no such file"]],
    [
      "responses only",
      { policy: "strip", request: false, response: true } as const,
      [`TC:c1{"path":"b"}`, "TR:c1!=[compacted] fs_read_file: error"]
    ],
    [
      "neither",
      { policy: "strip", request: false, response: false } as const,
      [`TC:c1{"path":"b"}`, "TR:c1!=no such file"]
    ],
    ["omit", OMIT, []]
  ])("tool_calls strip %s", (_, policy, turn1Calls) => {
    const { entries, at } = fourTurns()
    expect(seen([...entries, at(1, 1, 1, { tool_calls: policy })])).toEqual([
      ...RAW.slice(0, 5),
      "CR:q1",
      "R:r1",
      ...turn1Calls,
      "M:a1",
      ...RAW.slice(10)
    ])
  })

  it("a response whose request is not in the stream is named `unknown`", () => {
    const b = streams()
    const entries = [b.ts(), b.cr("q"), b.result("ghost", "x"), b.msg("a"), b.compaction(0, 0, { tool_calls: STRIP })]
    expect(seen(entries)).toEqual(["CR:q", "TR:ghost=[compacted] unknown: success", "M:a"])
  })

  it("a summary replaces its turns with one synthetic pair at the first of them, stamped with the first dropped event", () => {
    const { entries, at } = fourTurns()
    const projected = project([...entries, at(1, 1, 2, { summary: "Read b and modified c." })])
    expect(shape(projected)).toEqual([
      ...shape(entries.slice(0, 6)),
      "TS",
      `CR:${SUMMARY_REQUEST}`,
      "M:Read b and modified c.",
      ...shape(entries.slice(19))
    ])
    expect(projected[6]!.timestamp).toBe(entries[6]!.timestamp)
    expect(projected[8]!.timestamp).toBe(entries[6]!.timestamp)
  })

  it("a summary beats the per-type policies of its turns, even newer ones (RFD 064's stacking table)", () => {
    const { entries, at } = fourTurns()
    expect(
      seen([...entries, at(1, 0, 1, { summary: "S" }), at(2, 0, 3, { tool_calls: STRIP, reasoning: "strip" })])
    ).toEqual([
      `CR:${SUMMARY_REQUEST}`,
      "M:S",
      "CR:q2",
      "TC:c2{}",
      "TR:c2=[compacted] fs_modify_file: success",
      "M:a2",
      "CR:q3",
      "M:a3"
    ])
  })

  it("a newer summary nested inside an older one splits it: the older one is injected again after it", () => {
    const { entries, at } = fourTurns()
    expect(seen([...entries, at(1, 0, 3, { summary: "old" }), at(2, 1, 2, { summary: "new" })])).toEqual([
      `CR:${SUMMARY_REQUEST}`,
      "M:old",
      `CR:${SUMMARY_REQUEST}`,
      "M:new",
      `CR:${SUMMARY_REQUEST}`,
      "M:old"
    ])
  })

  it("an older summary inside a newer one is hidden by it", () => {
    const { entries, at } = fourTurns()
    expect(seen([...entries, at(2, 0, 3, { summary: "new" }), at(1, 1, 2, { summary: "old" })])).toEqual([
      `CR:${SUMMARY_REQUEST}`,
      "M:new"
    ])
  })

  it("adjacent summaries are two turns, even with the same text; two compactions alike in text, range and time read as one", () => {
    const { entries, at } = fourTurns()
    expect(seen([...entries, at(1, 0, 1, { summary: "same" }), at(1, 2, 3, { summary: "same" })])).toEqual([
      `CR:${SUMMARY_REQUEST}`,
      "M:same",
      `CR:${SUMMARY_REQUEST}`,
      "M:same"
    ])
    expect(seen([...entries, at(1, 0, 3, { summary: "same" }), at(1, 0, 3, { summary: "same" })])).toEqual([
      `CR:${SUMMARY_REQUEST}`,
      "M:same"
    ])
  })

  it("the latest timestamp wins wherever the compaction stands; on a tie the later one in the stream wins", () => {
    const { entries, at } = fourTurns()
    const later = at(5, 0, 0, { summary: "later" })
    const earlier = at(4, 0, 0, { summary: "earlier" })
    expect(seen([...entries, later, earlier]).slice(0, 2)).toEqual([`CR:${SUMMARY_REQUEST}`, "M:later"])
    expect(
      seen([...entries, at(4, 0, 0, { summary: "first" }), at(4, 0, 0, { summary: "second" })]).slice(0, 2)
    ).toEqual([`CR:${SUMMARY_REQUEST}`, "M:second"])
    // Per kind: a tie on tool calls goes to the later entry too.
    expect(
      seen([
        ...entries,
        at(4, 1, 1, { tool_calls: OMIT }),
        at(4, 1, 1, { tool_calls: { policy: "strip", request: true, response: false } })
      ]).slice(5, 10)
    ).toEqual(["CR:q1", "R:r1", "TC:c1{}", "TR:c1!=no such file", "M:a1"])
  })

  it("each kind is won on its own: an older reasoning strip and a newer tool omit both apply", () => {
    const { entries, at } = fourTurns()
    expect(seen([...entries, at(1, 0, 3, { reasoning: "strip" }), at(2, 0, 0, { tool_calls: OMIT })])).toEqual([
      "CR:q0",
      "M:a0",
      "CR:q1",
      `TC:c1{"path":"b"}`,
      "TR:c1!=no such file",
      "M:a1",
      ...RAW.slice(10)
    ])
    // A newer compaction without an opinion on reasoning leaves the older strip in force.
    expect(
      seen([...entries, at(1, 0, 0, { reasoning: "strip" }), at(2, 0, 0, { tool_calls: STRIP })]).slice(0, 4)
    ).toEqual(["CR:q0", "TC:c0{}", "TR:c0=[compacted] fs_create_file: success", "M:a0"])
  })

  it("to_turn past the last turn is clamped to it; a range that starts after it covers nothing", () => {
    const { entries, at } = fourTurns()
    expect(seen([...entries, at(1, 2, 99, { summary: "tail" })])).toEqual([
      ...RAW.slice(0, 10),
      `CR:${SUMMARY_REQUEST}`,
      "M:tail"
    ])
    expect(seen([...entries, at(1, 4, 9, { summary: "nothing" })])).toEqual(RAW)
  })

  it("inquiry events stay invisible; config deltas and unknown entries pass through the projection", () => {
    const { b, entries, at } = fourTurns()
    const delta = b.delta()
    const unknown = b.unknown()
    const projected = project([delta, ...entries, unknown, at(1, 1, 1, { reasoning: "strip" })])
    expect(projected[0]).toBe(delta)
    expect(projected.at(-1)).toBe(unknown)
    expect(shape(projected).filter((s) => s.startsWith("IQ") || s.startsWith("IA"))).toEqual([
      "IQ:c2.ok.1",
      "IA:c2.ok.1"
    ])
    expect(shape(projected)).not.toContain("COMPACTION")
    expect(intoParts({ events: projected }).events.some(isInquiryEvent)).toBe(false)
  })

  it("turns are numbered as JP numbers them: events before the first turn_start form turn 0", () => {
    const b = streams()
    const entries = [b.cr("legacy"), b.msg("l"), b.ts(), b.cr("q1"), b.msg("a1"), b.compaction(0, 0, { summary: "S" })]
    expect(seen(entries)).toEqual([`CR:${SUMMARY_REQUEST}`, "M:S", "CR:q1", "M:a1"])
  })

  it("unchanged events are the same objects; the input is not modified", () => {
    const { entries, at } = fourTurns()
    const input = [...entries, at(1, 1, 1, { tool_calls: STRIP })]
    const before = shape(input)
    const projected = project(input)
    expect(projected[0]).toBe(entries[0])
    expect(shape(input)).toEqual(before)
    expect((entries[9] as { arguments: unknown }).arguments).toEqual({ path: "b" })
  })

  it("providerView is sanitize → project → filter: an interrupted call in a stripped turn keeps its synthetic response, stripped", () => {
    const b = streams()
    const entries = [
      b.ts(),
      b.cr("q"),
      b.call("c", "slow"),
      b.ts(),
      b.cr("q2"),
      b.msg("a2"),
      b.compaction(0, 0, { tool_calls: STRIP })
    ]
    expect(
      providerView(entries).events.map((e) =>
        e.type === "tool_call_response" ? `TR:${e.content}${e.is_error ? "!" : ""}` : shape([e])[0]
      )
    ).toEqual(["CR:q", "TC:c", "TR:[compacted] slow: error!", "CR:q2", "M:a2"])
  })
})

// --- Properties -------------------------------------------------------------

type Step =
  | { readonly k: "ts" | "cr" | "msg" | "reasoning" }
  | { readonly k: "call" | "result"; readonly id: string }
  | { readonly k: "ask" | "answer"; readonly id: string }
  | {
      readonly k: "compaction"
      readonly from: number
      readonly span: number
      readonly policies: Policies
      readonly second: number
    }

const policies: fc.Arbitrary<Policies> = fc
  .record({
    summary: fc.option(fc.constantFrom("S1", "S2"), { nil: undefined }),
    reasoning: fc.option(fc.constant("strip" as const), { nil: undefined }),
    tool_calls: fc.option(
      fc.constantFrom<CompactionRule["tool_calls"]>(STRIP, OMIT, { policy: "strip", request: false, response: true }),
      { nil: undefined }
    )
  })
  .map((p) => Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined)) as Policies)

const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.constantFrom<Step>({ k: "ts" }, { k: "cr" }, { k: "msg" }, { k: "reasoning" }), weight: 6 },
  {
    arbitrary: fc
      .tuple(fc.constantFrom<"call" | "result">("call", "result"), fc.constantFrom("a", "b"))
      .map(([k, id]): Step => ({ k, id })),
    weight: 4
  },
  {
    arbitrary: fc
      .tuple(fc.constantFrom<"ask" | "answer">("ask", "answer"), fc.constantFrom("a.q.1", "b.q.1"))
      .map(([k, id]): Step => ({ k, id })),
    weight: 2
  },
  {
    arbitrary: fc
      .record({ from: fc.nat(6), span: fc.nat(6), policies, second: fc.nat(3) })
      .map((c): Step => ({ k: "compaction", ...c })),
    weight: 2
  }
)

const build = (steps: ReadonlyArray<Step>): Array<StreamEntry> => {
  const b = streams()
  return steps.map((s): StreamEntry => {
    switch (s.k) {
      case "ts":
        return b.ts()
      case "cr":
        return b.cr("q")
      case "msg":
        return b.msg("m")
      case "reasoning":
        return b.reasoning("r")
      case "call":
        return b.call(s.id, `tool_${s.id}`, { x: 1 })
      case "result":
        return b.result(s.id, "out", s.id === "b")
      case "ask":
        return b.ask(s.id)
      case "answer":
        return b.answer(s.id)
      case "compaction":
        // Few distinct instants, so timestamp ties happen.
        return Compaction.fromRule({
          timestamp: b.at(5000 + s.second) as Timestamp.Timestamp,
          from_turn: s.from,
          to_turn: s.from + s.span,
          ...s.policies
        })
    }
  })
}

describe("projection properties", () => {
  it("sanitize → project → filter never shows an inquiry event and never leaves a tool call without its response", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }).map(build), (entries) => {
        const { events } = providerView(entries)
        expect(events.every(isProviderVisible)).toBe(true)
        const open = new Map<string, number>()
        for (const e of events) {
          if (e.type === "tool_call_request") open.set(e.id, (open.get(e.id) ?? 0) + 1)
          if (e.type === "tool_call_response") {
            expect(open.get(e.id) ?? 0).toBeGreaterThan(0)
            open.set(e.id, open.get(e.id)! - 1)
          }
        }
        expect([...open.values()].every((n) => n === 0)).toBe(true)
      }),
      { numRuns: 2000 }
    )
  })

  it("is the identity without compactions", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }).map(build), (entries) => {
        const plain = sanitize(entries.filter((e) => e.type !== "compaction"))
        expect(project(plain)).toBe(plain)
        expect(intoParts({ events: plain }).events).toEqual(plain.filter(isProviderVisible))
      }),
      { numRuns: 1000 }
    )
  })
})
