/**
 * Properties of the stream rules over generated streams: arbitrary "soup"
 * (any event in any order, ids drawn from small pools so they collide and
 * repeat) and well-formed conversations cut at a random point (what a crash
 * leaves behind).
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import type { StreamEntry } from "../../src/domain/event/ConversationEvent.ts"
import { isConversationEvent, isProviderVisible } from "../../src/domain/event/ConversationEvent.ts"
import { fork } from "../../src/domain/stream/Fork.ts"
import {
  analyze,
  incompleteSummary,
  lastTurnStart,
  resumableEntries,
  splitIncompleteTurn,
  summaryOf
} from "../../src/domain/stream/IncompleteTurn.ts"
import { INTERRUPTED_TOOL_CALL, sanitize } from "../../src/domain/stream/Sanitize.ts"
import { intoParts } from "../../src/domain/stream/Thread.ts"
import * as TurnAppend from "../../src/domain/stream/TurnAppend.ts"
import { currentTurnStart, eventsByTurn, turnCount, turns } from "../../src/domain/stream/Turns.ts"
import { streams } from "./_streams.ts"

const RUNS = 2500

type Action =
  | { readonly k: "ts" | "cr" | "msg" | "reasoning" | "delta" | "compaction" | "unknown" }
  | { readonly k: "call" | "result"; readonly id: string }
  | { readonly k: "ask" | "answer" | "cancel" | "redact"; readonly id: string }

const TOOL_IDS = ["a", "b", "c"] as const
const INQUIRY_IDS = ["a.q.1", "a.q.2", "b.q.1", "a.q", "c.confirm", "foreign"] as const
const TOOL_NAME: Record<string, string> = { a: "alpha", b: "beta", c: "gamma", z: "zeta" }

const action: fc.Arbitrary<Action> = fc.oneof(
  { arbitrary: fc.constantFrom<Action>({ k: "ts" }, { k: "cr" }), weight: 3 },
  { arbitrary: fc.constantFrom<Action>({ k: "msg" }, { k: "reasoning" }), weight: 3 },
  { arbitrary: fc.constantFrom(...TOOL_IDS).map((id): Action => ({ k: "call", id })), weight: 3 },
  { arbitrary: fc.constantFrom(...TOOL_IDS, "z").map((id): Action => ({ k: "result", id })), weight: 3 },
  { arbitrary: fc.constantFrom(...INQUIRY_IDS).map((id): Action => ({ k: "ask", id })), weight: 2 },
  {
    arbitrary: fc
      .tuple(
        fc.constantFrom<"answer" | "cancel" | "redact">("answer", "cancel", "redact"),
        fc.constantFrom(...INQUIRY_IDS)
      )
      .map(([k, id]): Action => ({ k, id })),
    weight: 2
  },
  { arbitrary: fc.constantFrom<Action>({ k: "delta" }, { k: "compaction" }, { k: "unknown" }), weight: 1 }
)

const build = (actions: ReadonlyArray<Action>): Array<StreamEntry> => {
  const b = streams()
  return actions.map((a) => {
    switch (a.k) {
      case "ts":
        return b.ts()
      case "cr":
        return b.cr("q")
      case "msg":
        return b.msg("m")
      case "reasoning":
        return b.reasoning("r")
      case "delta":
        return b.delta()
      case "compaction":
        return b.compaction()
      case "unknown":
        return b.unknown()
      case "call":
        return b.call(a.id, TOOL_NAME[a.id]!)
      case "result":
        return b.result(a.id)
      case "ask":
        return b.ask(a.id, TOOL_NAME[a.id.split(".")[0]!] ?? "alpha")
      case "answer":
        return b.answer(a.id)
      case "cancel":
        return b.cancel(a.id)
      case "redact":
        return b.redact(a.id)
    }
  })
}

const soup: fc.Arbitrary<Array<StreamEntry>> = fc.array(action, { maxLength: 40 }).map(build)

/**
 * Well-formed conversations: turns of request → cycles of (reasoning?,
 * message?, tool calls whose inquiries and responses arrive in any order) →
 * final message, with config deltas between turns; then cut anywhere.
 */
const conversation: fc.Arbitrary<{ readonly full: Array<StreamEntry>; readonly cut: Array<StreamEntry> }> = fc
  .record({
    turns: fc.array(
      fc.record({
        delta: fc.boolean(),
        implicit: fc.boolean(),
        cycles: fc.array(
          fc.record({
            reasoning: fc.boolean(),
            message: fc.boolean(),
            tools: fc.array(
              fc.array(fc.constantFrom<"answer" | "cancel" | "redact">("answer", "answer", "cancel", "redact"), {
                maxLength: 2
              }),
              { maxLength: 3 }
            ),
            order: fc.array(fc.nat(), { minLength: 3, maxLength: 3 })
          }),
          { maxLength: 3 }
        )
      }),
      { minLength: 1, maxLength: 4 }
    ),
    cutAt: fc.nat()
  })
  .map(({ turns: spec, cutAt }) => {
    const b = streams()
    const full: Array<StreamEntry> = []
    let callNo = 0
    spec.forEach((turn, t) => {
      if (turn.delta) full.push(b.delta())
      // Only the first turn may be a legacy implicit one (no turn_start).
      if (!(t === 0 && turn.implicit)) full.push(b.ts())
      full.push(b.cr(`turn ${t}`))
      for (const cycle of turn.cycles) {
        if (cycle.reasoning) full.push(b.reasoning("thinking"))
        if (cycle.message) full.push(b.msg("working"))
        const ids = cycle.tools.map(() => `call_${callNo++}`)
        ids.forEach((id, i) => full.push(b.call(id, `tool_${i}`)))
        const order = ids.map((_, i) => i).sort((x, y) => (cycle.order[x] ?? 0) - (cycle.order[y] ?? 0))
        for (const i of order) {
          cycle.tools[i]!.forEach((outcome, q) => {
            const inquiry = `${ids[i]}.question_${q}.1`
            full.push(b.ask(inquiry, `tool_${i}`))
            full.push(
              outcome === "answer" ? b.answer(inquiry, q) : outcome === "cancel" ? b.cancel(inquiry) : b.redact(inquiry)
            )
          })
          full.push(b.result(ids[i]!))
        }
      }
      full.push(b.msg(`done ${t}`))
    })
    return { full, cut: full.slice(0, cutAt % (full.length + 1)) }
  })

/** Every request of every turn is answered exactly once, after it, with its id. */
const expectPairedPerTurn = (entries: ReadonlyArray<StreamEntry>) => {
  for (const turn of turns(entries)) {
    const open = new Map<string, number>()
    for (const e of turn.entries) {
      if (e.type === "tool_call_request") open.set(e.id, (open.get(e.id) ?? 0) + 1)
      if (e.type === "tool_call_response") {
        expect(open.get(e.id) ?? 0).toBeGreaterThan(0)
        open.set(e.id, open.get(e.id)! - 1)
      }
    }
    for (const n of open.values()) expect(n).toBe(0)
    const inquiries = new Map<string, number>()
    for (const e of turn.entries) {
      if (e.type === "inquiry_request") inquiries.set(e.id, (inquiries.get(e.id) ?? 0) + 1)
      if (e.type === "inquiry_response") {
        expect(inquiries.get(e.id) ?? 0).toBeGreaterThan(0)
        inquiries.set(e.id, inquiries.get(e.id)! - 1)
      }
    }
    for (const n of inquiries.values()) expect(n).toBe(0)
  }
}

const expectSameObjects = (a: ReadonlyArray<StreamEntry>, b: ReadonlyArray<StreamEntry>) => {
  expect(a.length).toBe(b.length)
  a.forEach((e, i) => expect(e).toBe(b[i]))
}

/** A reference for well-formed cut streams: contract §3 read off the last turn with plain counting. */
const referenceSummary = (entries: ReadonlyArray<StreamEntry>) => {
  let start = 0
  for (let i = entries.length - 1; i >= 0; i--)
    if (entries[i]!.type === "turn_start") {
      start = i
      break
    }
  const turn = entries.slice(start)
  const first = turn.findIndex((e) => e.type === "chat_request")
  if (first < 0) return null
  const count = (type: string, id: string) =>
    turn.filter((e) => e.type === type && (e as { id: string }).id === id).length
  const pendingCalls = turn.filter(
    (e) => e.type === "tool_call_request" && count("tool_call_response", e.id) < count("tool_call_request", e.id)
  )
  for (const e of turn) {
    if (e.type !== "inquiry_request" || count("inquiry_response", e.id) > 0) continue
    const call = pendingCalls.find((c) => c.type === "tool_call_request" && e.id.startsWith(`${c.id}.`))
    if (call !== undefined && call.type === "tool_call_request") return { state: "waiting-for-input", tool: call.name }
  }
  if (pendingCalls.length > 0) return { state: "pending-tool-execution" }
  const lastResult = turn.map((e) => e.type).lastIndexOf("tool_call_response")
  const lastReply = turn.map((e) => e.type).lastIndexOf("chat_response")
  if (lastResult >= 0 && lastReply < lastResult) return { state: "pending-follow-up" }
  if (lastReply < first) return { state: "pending-llm-response" }
  return null
}

describe("stream properties", () => {
  it("after sanitize + intoParts no internal event remains and every tool call has exactly one response in its turn", () => {
    fc.assert(
      fc.property(soup, (entries) => {
        const clean = sanitize(entries)
        expectPairedPerTurn(clean)
        const { events } = intoParts({ events: clean })
        expect(events.every(isProviderVisible)).toBe(true)
        expect(events.length).toBe(clean.filter(isProviderVisible).length)
      }),
      { numRuns: RUNS }
    )
  })

  it("sanitize is idempotent and keeps every non-event in order", () => {
    fc.assert(
      fc.property(soup, (entries) => {
        const once = sanitize(entries)
        expectSameObjects(sanitize(once), once)
        const globals = (xs: ReadonlyArray<StreamEntry>) =>
          xs.filter((e) => e.type === "config_delta" || e.type === "compaction" || e.type === "unknown")
        expectSameObjects(globals(once), globals(entries))
      }),
      { numRuns: RUNS }
    )
  })

  it("splitting then re-joining an incomplete turn gives back the original entries", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          soup,
          conversation.map((c) => c.cut)
        ),
        (entries) => {
          const { complete, incomplete } = splitIncompleteTurn(entries)
          expectSameObjects([...complete, ...(incomplete?.entries ?? [])], entries)
          expect(incompleteSummary(entries)).toEqual(incomplete === null ? null : summaryOf(incomplete))
          if (incomplete !== null) {
            const a = analyze(incomplete)
            const summary = summaryOf(incomplete)!
            expect(a.phase === "Executing").toBe(a.pendingToolCalls.length > 0)
            expect(a.phase === "Executing").toBe(
              summary.state === "waiting-for-input" || summary.state === "pending-tool-execution"
            )
            expect(a.pendingInquiry !== null).toBe(summary.state === "waiting-for-input")
          }
        }
      ),
      { numRuns: RUNS }
    )
  })

  it("turn iteration covers the input and agrees with events-by-turn", () => {
    fc.assert(
      fc.property(soup, (entries) => {
        const all = turns(entries)
        expect(all.length).toBe(turnCount(entries))
        if (all.length > 0)
          expectSameObjects(
            all.flatMap((t) => t.entries),
            entries
          )
        const byTurn = eventsByTurn(entries)
        expect(byTurn.map((x) => x.turn)).toEqual(
          all.flatMap((t) =>
            t.entries
              .filter((e) => e.type !== "config_delta" && e.type !== "compaction" && e.type !== "unknown")
              .map(() => t.index)
          )
        )
      }),
      { numRuns: RUNS }
    )
  })

  it("a well-formed conversation is complete, and every cut of it reads as contract §3 says", () => {
    fc.assert(
      fc.property(conversation, ({ full, cut }) => {
        expect(incompleteSummary(full)).toBeNull()
        expect(splitIncompleteTurn(full).incomplete).toBeNull()
        expect(incompleteSummary(cut)).toEqual(referenceSummary(cut))
      }),
      { numRuns: RUNS }
    )
  })

  it("resuming a cut restores the answers given so far to each pending tool call", () => {
    fc.assert(
      fc.property(conversation, ({ cut }) => {
        const { incomplete } = splitIncompleteTurn(cut)
        if (incomplete === null) return
        const a = analyze(incomplete)
        for (const call of a.pendingToolCalls) {
          const expected: Record<string, unknown> = {}
          for (let i = 0; i < incomplete.entries.length; i++) {
            const e = incomplete.entries[i]!
            if (e.type === "inquiry_response" && e.outcome === "answered" && e.id.startsWith(`${call.id}.`)) {
              expected[e.id.split(".")[1]!] = e.answer
            }
          }
          expect(a.answeredInquiries.get(call.id) ?? {}).toEqual(expected)
        }
      }),
      { numRuns: RUNS }
    )
  })

  it("a fork carries the incomplete turn unchanged and leaves the rest sanitized", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          soup,
          conversation.map((c) => c.cut)
        ),
        (entries) => {
          const forked = fork(entries)
          const before = splitIncompleteTurn(entries)
          if (before.incomplete === null) {
            expect(forked).toEqual(sanitize(entries))
            return
          }
          const after = splitIncompleteTurn(forked)
          expectSameObjects(after.incomplete?.entries ?? [], before.incomplete.entries)
          expect(after.complete).toEqual(sanitize(before.complete))
          expectPairedPerTurn(after.complete)
        }
      ),
      { numRuns: RUNS }
    )
  })

  it("forking a crashed conversation keeps what resuming it would do", () => {
    fc.assert(
      fc.property(conversation, ({ cut }) => {
        const forked = fork(cut)
        expect(incompleteSummary(forked)).toEqual(incompleteSummary(cut))
        expectPairedPerTurn(splitIncompleteTurn(forked).complete)
      }),
      { numRuns: RUNS }
    )
  })

  // One home for each stream rule (docs/decisions.md#one-home-for-each-stream-rule): one rule for where the current turn starts, one for
  // pairing; the properties below hold the three users of each together.

  it("the current turn start agrees with turn iteration, with and without skipping bare turn_starts", () => {
    fc.assert(
      fc.property(soup, (entries) => {
        const events = (xs: ReadonlyArray<StreamEntry>) => xs.filter(isConversationEvent)
        const all = turns(entries)
        const start = currentTurnStart(entries)
        expect(start < 0).toBe(all.length === 0)
        if (start >= 0) expectSameObjects(events(entries.slice(start)), events(all.at(-1)!.entries))
        // Skipping: from the last turn holding more than a turn_start to the end.
        const holding = all.findLastIndex((t) =>
          t.entries.some((e) => isConversationEvent(e) && e.type !== "turn_start")
        )
        const skipped = currentTurnStart(entries, { skipTrailingBareTurnStarts: true })
        expect(skipped).toBe(lastTurnStart(entries))
        expect(skipped < 0).toBe(holding < 0)
        if (skipped >= 0)
          expectSameObjects(events(entries.slice(skipped)), events(all.slice(holding).flatMap((t) => t.entries)))
      }),
      { numRuns: RUNS }
    )
  })

  it("validated append accepts exactly the responses sanitize keeps", () => {
    fc.assert(
      fc.property(soup, (tail) => {
        // A leading turn and request, so sanitize's step 1 drops nothing.
        const b = streams(1000)
        const entries = [b.ts(), b.cr("q"), ...tail]
        const kept = new Set(sanitize(entries))
        entries.forEach((e, i) => {
          if (e.type !== "tool_call_response" && e.type !== "inquiry_response") return
          expect(TurnAppend.validate(entries.slice(0, i), [e])._tag === "Ok").toBe(kept.has(e))
        })
      }),
      { numRuns: RUNS }
    )
  })

  it("the last turn's open requests are those sanitize repairs, the incomplete-turn analysis reports and append lets close", () => {
    fc.assert(
      fc.property(soup, (tail) => {
        const b = streams(1000)
        const entries = [b.ts(), b.cr("q"), ...tail]
        const start = lastTurnStart(entries)
        const turn = { entries: entries.slice(start) }
        const a = analyze(turn)
        const clean = sanitize(entries)
        const inTurn = new Set(turn.entries)
        // Sanitize answers exactly the pending tool calls with a synthetic response…
        const interrupted = clean.flatMap((e, i) => {
          const next = clean[i + 1]
          return e.type === "tool_call_request" &&
            inTurn.has(e) &&
            next?.type === "tool_call_response" &&
            !inTurn.has(next) &&
            next.content === INTERRUPTED_TOOL_CALL
            ? [e]
            : []
        })
        expectSameObjects(interrupted, a.pendingToolCalls)
        // …and drops exactly the unanswered inquiries.
        const unanswered = a.toolCalls
          .flatMap((c) => c.inquiries)
          .filter((q) => q.response === null)
          .map((q) => q.request)
        const unansweredAll = turn.entries.filter((e) => e.type === "inquiry_request" && !clean.includes(e))
        for (const q of unanswered) expect(unansweredAll).toContain(q)
        // Append, on the resumable turn, accepts one response for exactly the ids with open requests.
        const resumed = [...entries.slice(0, start), ...resumableEntries(turn)]
        for (const id of [...TOOL_IDS, "z"]) {
          const open = a.pendingToolCalls.some((c) => c.id === id)
          expect(TurnAppend.validate(resumed, [b.result(id)])._tag === "Ok").toBe(open)
        }
        for (const id of INQUIRY_IDS) {
          const open = unansweredAll.some((e) => e.type === "inquiry_request" && e.id === id)
          expect(TurnAppend.validate(resumed, [b.answer(id)])._tag === "Ok").toBe(open)
        }
        // Answering every pending call, in order, is accepted as one batch.
        expect(
          TurnAppend.validate(
            resumed,
            a.pendingToolCalls.map((c) => b.result(c.id))
          )._tag
        ).toBe("Ok")
      }),
      { numRuns: RUNS }
    )
  })

  it("a one-entry batch (checked without a tentative pairer) is judged as in a longer batch", () => {
    const b = streams()
    // A config delta after the entry: neither paired nor an event, so it changes nothing about the entry's verdict.
    const probes: Array<StreamEntry> = [
      ...[...TOOL_IDS, "z"].flatMap((id) => [b.result(id), b.call(id)]),
      ...INQUIRY_IDS.flatMap((id) => [b.answer(id), b.cancel(id), b.ask(id)]),
      b.cr("q"),
      b.msg("m"),
      b.delta()
    ]
    fc.assert(
      fc.property(soup, (stream) => {
        for (const e of probes) {
          const longer = TurnAppend.validate(stream, [e, b.delta()])
          const expected = longer._tag === "Ok" ? { _tag: "Ok", entries: longer.entries.slice(0, -1) } : longer
          expect(TurnAppend.validate(stream, [e])).toEqual(expected)
        }
      }),
      { numRuns: RUNS / 5 }
    )
  })

  it("the store's incremental append agrees with validating against the whole stream", () => {
    fc.assert(
      fc.property(soup, fc.array(fc.nat({ max: 4 }), { maxLength: 20 }), (entries, sizes) => {
        // Appends the soup in batches of the given sizes (rest one by one), as a store would.
        let stream: Array<StreamEntry> = []
        const counts = TurnAppend.turnCounts(stream)
        let at = 0
        for (let k = 0; at < entries.length; k++) {
          const batch = entries.slice(at, at + Math.max(1, sizes[k] ?? 1))
          at += batch.length
          const expected = TurnAppend.validate(stream, batch)
          const result = TurnAppend.validateAgainst({ hasEvents: stream.some(isConversationEvent), counts }, batch)
          expect(result).toEqual(expected)
          if (result._tag === "Ok") {
            TurnAppend.advance(counts, result.entries)
            stream = [...stream, ...result.entries]
          }
        }
        // The state moved forward equals the state read from the stream.
        for (const e of [...TOOL_IDS, "z"].map((id) => streams().result(id))) {
          expect(TurnAppend.validateAgainst({ hasEvents: true, counts }, [e])).toEqual(TurnAppend.validate(stream, [e]))
        }
      }),
      { numRuns: RUNS }
    )
  })
})
