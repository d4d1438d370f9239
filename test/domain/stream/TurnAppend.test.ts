import { describe, expect, it } from "@effect/vitest"
import type { StreamEntry } from "../../../src/domain/event/ConversationEvent.ts"
import * as TurnAppend from "../../../src/domain/stream/TurnAppend.ts"
import { shape, streams } from "../_streams.ts"

/** Appends like `TurnMut::build`: all or nothing. */
const build = (
  stream: ReadonlyArray<StreamEntry>,
  batch: ReadonlyArray<StreamEntry>
): Array<StreamEntry> | TurnAppend.AppendRejection => {
  const result = TurnAppend.validate(stream, batch)
  return result._tag === "Ok" ? [...stream, ...result.entries] : result.rejection
}

const ok = (x: Array<StreamEntry> | TurnAppend.AppendRejection): Array<StreamEntry> => {
  if (!Array.isArray(x)) throw new Error(`rejected: ${TurnAppend.describeRejection(x)}`)
  return x
}

/** JP's `start_turn(req)`: a batch of turn_start + chat_request. */
const startTurn = (b: ReturnType<typeof streams>, stream: ReadonlyArray<StreamEntry>, content = "q") =>
  ok(build(stream, [b.ts(), b.cr(content)]))

describe("validated appends (jp-reference §4.4, §7.2)", () => {
  it("build flushes buffered events", () => {
    const b = streams()
    const s = ok(build(startTurn(b, []), [b.msg("a")]))
    expect(s.length).toBe(3)
    expect(shape(s)[2]).toBe("M:a")
  })

  it("build flushes multiple events", () => {
    const b = streams()
    expect(ok(build(startTurn(b, []), [b.msg("a"), b.call("c")])).length).toBe(4)
  })

  it("chained events all land", () => {
    const b = streams()
    expect(shape(ok(build(startTurn(b, []), [b.msg("a"), b.call("c"), b.msg("b")])))).toEqual([
      "TS",
      "CR:q",
      "M:a",
      "TC:c",
      "M:b"
    ])
  })

  it("a turn_start that does not open the batch is silently dropped", () => {
    const b = streams()
    const s = startTurn(b, [])
    expect(ok(build(s, [b.msg("a"), b.ts()])).length).toBe(3)
    expect(ok(build(s, [b.delta(), b.ts()])).filter((e) => e.type === "turn_start").length).toBe(1)
  })

  it("injects a turn_start into an empty stream (current_turn_mut), stamped like the first event", () => {
    const b = streams()
    const request = b.cr("q")
    const s = ok(build([], [request]))
    expect(shape(s)).toEqual(["TS", "CR:q"])
    expect(s[0]!.timestamp).toBe(request.timestamp)
    // Also when the stream holds only a packed base config delta.
    const delta = b.delta()
    expect(shape(ok(build([delta], [b.cr("r")])))).toEqual(["DELTA", "TS", "CR:r"])
  })

  it("does not split a legacy implicit turn with an injected turn_start (quirk #3)", () => {
    const b = streams()
    const legacy = [b.delta(), b.cr("q"), b.call("c")]
    expect(shape(ok(build(legacy, [b.result("c")])))).toEqual(["DELTA", "CR:q", "TC:c", "TR:c"])
  })

  it("an empty build is a no-op", () => {
    const b = streams()
    const s = startTurn(b, [])
    expect(ok(build(s, []))).toEqual(s)
  })

  it("a tool call response requires a matching request; the stream is unchanged", () => {
    const b = streams()
    const s = startTurn(b, [])
    expect(build(s, [b.result("nonexistent")])).toEqual({ _tag: "OrphanedToolCallResponse", id: "nonexistent" })
    expect(s.length).toBe(2)
  })

  it("a whole batch is rejected when one event is invalid", () => {
    const b = streams()
    const s = startTurn(b, [])
    expect(build(s, [b.call("c"), b.result("c"), b.result("c")])).toEqual({
      _tag: "DuplicateToolCallResponse",
      id: "c"
    })
  })

  it("a response is accepted when the request came in an earlier build", () => {
    const b = streams()
    const s = ok(build(startTurn(b, []), [b.call("c")]))
    expect(ok(build(s, [b.result("c")])).length).toBe(4)
  })

  it("request and response may come in the same build", () => {
    const b = streams()
    expect(ok(build(startTurn(b, []), [b.call("c"), b.result("c")])).length).toBe(4)
  })

  it("a duplicate tool call response is rejected", () => {
    const b = streams()
    const s = ok(build(startTurn(b, []), [b.call("tc1"), b.result("tc1")]))
    expect(build(s, [b.result("tc1")])).toEqual({ _tag: "DuplicateToolCallResponse", id: "tc1" })
  })

  it("an inquiry response requires a matching request", () => {
    const b = streams()
    expect(build(startTurn(b, []), [b.answer("nonexistent")])).toEqual({
      _tag: "OrphanedInquiryResponse",
      id: "nonexistent"
    })
  })

  it("an inquiry response is accepted when the request exists", () => {
    const b = streams()
    const s = ok(build(startTurn(b, []), [b.ask("iq1")]))
    expect(ok(build(s, [b.answer("iq1")])).length).toBe(4)
  })

  it("the same tool call id is allowed again in a later turn", () => {
    const b = streams()
    let s = ok(build(startTurn(b, [], "1"), [b.call("tc1"), b.result("tc1")]))
    s = ok(build(startTurn(b, s, "2"), [b.call("tc1"), b.result("tc1")]))
    expect(s.length).toBe(8)
  })

  it("a response from a previous turn does not satisfy the current turn", () => {
    const b = streams()
    let s = ok(build(startTurn(b, [], "1"), [b.call("tc1"), b.result("tc1")]))
    s = startTurn(b, s, "2")
    expect(build(s, [b.result("tc1")])).toEqual({ _tag: "OrphanedToolCallResponse", id: "tc1" })
  })

  it("a tool call id may be reused within a turn across cycles", () => {
    const b = streams()
    let s = ok(build(startTurn(b, []), [b.call("tc1"), b.result("tc1")]))
    s = ok(build(s, [b.msg("again")]))
    s = ok(build(s, [b.call("tc1"), b.result("tc1")]))
    expect(s.length).toBe(7)
    s = ok(build(s, [b.msg("done")]))
    expect(s.length).toBe(8)
  })

  it("a reused id still rejects excess responses", () => {
    const b = streams()
    const s = ok(build(startTurn(b, []), [b.call("tc1"), b.call("tc1"), b.result("tc1"), b.result("tc1")]))
    expect(build(s, [b.result("tc1")])).toEqual({ _tag: "DuplicateToolCallResponse", id: "tc1" })
  })

  it("a duplicate inquiry response is rejected", () => {
    const b = streams()
    const s = ok(build(startTurn(b, []), [b.ask("iq1"), b.answer("iq1")]))
    expect(build(s, [b.cancel("iq1")])).toEqual({ _tag: "DuplicateInquiryResponse", id: "iq1" })
  })

  it("requests and chat events are never rejected, duplicates included", () => {
    const b = streams()
    expect(
      ok(build(startTurn(b, []), [b.call("a"), b.call("a"), b.ask("i"), b.ask("i"), b.cr("x"), b.msg("y")])).length
    ).toBe(8)
  })

  it("a batch that opens with a turn_start validates against an empty window", () => {
    const b = streams()
    const s = ok(build(startTurn(b, []), [b.call("c")]))
    expect(build(s, [b.ts(), b.cr("2"), b.result("c")])).toEqual({ _tag: "OrphanedToolCallResponse", id: "c" })
  })

  it("an orphan response already in a damaged turn does not use up a later request (docs/decisions.md#one-home-for-each-stream-rule)", () => {
    // A hand-edited or damaged file: a response stored before its request.
    // JP's counts would call the next response a duplicate, while sanitize and
    // the incomplete-turn analysis see the call as pending; append agrees with them.
    const b = streams()
    const damaged = [b.ts(), b.cr("q"), b.result("c"), b.call("c")]
    expect(shape(ok(build(damaged, [b.result("c")])))).toEqual(["TS", "CR:q", "TR:c", "TC:c", "TR:c"])
    expect(build(damaged, [b.result("c"), b.result("c")])).toEqual({ _tag: "DuplicateToolCallResponse", id: "c" })
  })

  it("the store path (validateAgainst + advance) leaves the state untouched until advance", () => {
    const b = streams()
    const stream = startTurn(b, [])
    const counts = TurnAppend.turnCounts(stream)
    const tail = { hasEvents: true, counts }
    const call = [b.call("c")]
    expect(TurnAppend.validateAgainst(tail, call)._tag).toBe("Ok")
    // Not advanced yet: the request is not open.
    expect(TurnAppend.validateAgainst(tail, [b.result("c")])).toEqual({
      _tag: "Rejected",
      rejection: { _tag: "OrphanedToolCallResponse", id: "c" }
    })
    TurnAppend.advance(counts, call)
    // A rejected batch that closed the request first changes nothing either.
    expect(TurnAppend.validateAgainst(tail, [b.result("c"), b.result("c")])._tag).toBe("Rejected")
    expect(TurnAppend.validateAgainst(tail, [b.result("c")])._tag).toBe("Ok")
    TurnAppend.advance(counts, [b.ts(), b.cr("2")])
    expect(TurnAppend.validateAgainst(tail, [b.result("c")])).toEqual({
      _tag: "Rejected",
      rejection: { _tag: "OrphanedToolCallResponse", id: "c" }
    })
  })
})
