import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as EventsFile from "../../../src/domain/storage/EventsFile.ts"
import type { StreamEntry } from "../../../src/domain/event/ConversationEvent.ts"
import { EPOCH, INTERRUPTED_TOOL_CALL, sanitize } from "../../../src/domain/stream/Sanitize.ts"
import { ToolCallResponse } from "../../../src/domain/event/ToolCallResponse.ts"
import { fixtureCorpus } from "../../support/Fixtures.ts"
import { shape, streams } from "../_streams.ts"

const frozen = (entries: Array<StreamEntry>) => Object.freeze(entries.slice())

describe("sanitize (jp-reference §4.5, §7.1)", () => {
  it("injects the synthetic response directly after an orphaned tool call", () => {
    const b = streams()
    const request = b.call("orphan_1")
    const out = sanitize([b.cr("hi"), request, b.msg("done")])
    expect(shape(out)).toEqual(["TS", "CR:hi", "TC:orphan_1", "TR:orphan_1!", "M:done"])
    const synthetic = out[3] as ToolCallResponse
    expect(synthetic).toBeInstanceOf(ToolCallResponse)
    expect(synthetic.content).toBe("Tool call was interrupted.")
    expect(INTERRUPTED_TOOL_CALL).toBe("Tool call was interrupted.")
    expect(synthetic.is_error).toBe(true)
    expect(synthetic.timestamp).toBe(request.timestamp)
  })

  it("leaves matched tool calls alone", () => {
    const b = streams()
    const input = [b.ts(), b.cr("hi"), b.call("a"), b.result("a"), b.msg("done")]
    const out = sanitize(input)
    expect(out).toEqual(input)
    out.forEach((e, i) => expect(e).toBe(input[i]))
  })

  it("handles a partial set: only the unanswered call gets a synthetic response, right after it", () => {
    const b = streams()
    const out = sanitize([b.ts(), b.cr("hi"), b.call("a"), b.call("b"), b.result("a", "ok"), b.msg("x")])
    expect(shape(out)).toEqual(["TS", "CR:hi", "TC:a", "TC:b", "TR:b!", "TR:a", "M:x"])
    expect((out[5] as ToolCallResponse).content).toBe("ok")
  })

  it("removes a lone turn_start", () => {
    expect(sanitize([streams().ts()])).toEqual([])
  })

  it("keeps a non-empty turn", () => {
    const b = streams()
    const input = [b.ts(), b.cr("hi")]
    expect(sanitize(input)).toEqual(input)
  })

  it("removes the trailing empty turn after prior turns", () => {
    const b = streams()
    const out = sanitize([b.ts(), b.cr("q"), b.msg("a"), b.ts()])
    expect(shape(out)).toEqual(["TS", "CR:q", "M:a"])
  })

  it("removes a trailing empty turn even behind trailing config deltas, keeping the deltas", () => {
    const b = streams()
    const out = sanitize([b.ts(), b.cr("q"), b.msg("a"), b.ts(), b.delta()])
    expect(shape(out)).toEqual(["TS", "CR:q", "M:a", "DELTA"])
  })

  it("drops leading non-user events and injects a turn_start", () => {
    const b = streams()
    const early = b.msg("early")
    const request = b.cr("q")
    const out = sanitize([early, request, b.msg("a")])
    expect(shape(out)).toEqual(["TS", "CR:q", "M:a"])
    expect(out[0]!.timestamp).toBe(request.timestamp)
  })

  it("removes an orphaned tool call response", () => {
    const b = streams()
    expect(shape(sanitize([b.cr("q"), b.result("nobody"), b.msg("a")]))).toEqual(["TS", "CR:q", "M:a"])
  })

  it("removes an orphaned inquiry response", () => {
    const b = streams()
    expect(shape(sanitize([b.cr("q"), b.answer("c.q.1"), b.msg("a")]))).toEqual(["TS", "CR:q", "M:a"])
  })

  it("removes an orphaned inquiry request", () => {
    const b = streams()
    expect(shape(sanitize([b.cr("q"), b.askAssistant("c.q.1"), b.msg("a")]))).toEqual(["TS", "CR:q", "M:a"])
  })

  it("keeps matched pairs intact", () => {
    const b = streams()
    const out = sanitize([b.cr("q"), b.call("c"), b.result("c"), b.ask("c.q"), b.answer("c.q"), b.msg("a")])
    expect(shape(out)).toEqual(["TS", "CR:q", "TC:c", "TR:c", "IQ:c.q", "IA:c.q", "M:a"])
  })

  it("handles a --from cut through a tool call", () => {
    const b = streams()
    expect(shape(sanitize([b.result("cut"), b.msg("x"), b.cr("q"), b.msg("a")]))).toEqual(["TS", "CR:q", "M:a"])
  })

  it("deduplicates leading turn starts, keeping the last", () => {
    const b = streams()
    const starts = [b.ts(), b.ts(), b.ts()]
    const out = sanitize([...starts, b.cr("q"), b.msg("a")])
    expect(shape(out)).toEqual(["TS", "CR:q", "M:a"])
    expect(out[0]).toBe(starts[2])
  })

  it("keeps two proper turns", () => {
    const b = streams()
    const input = [b.ts(), b.cr("1"), b.msg("a"), b.ts(), b.cr("2"), b.msg("b")]
    expect(sanitize(input)).toEqual(input)
  })

  it("preserves events when there is no chat_request (inserting a turn_start at 0)", () => {
    const b = streams()
    const first = b.reasoning("think")
    const out = sanitize([first, b.call("c"), b.result("c")])
    expect(shape(out)).toEqual(["TS", "R:think", "TC:c", "TR:c"])
    expect(out[0]!.timestamp).toBe(first.timestamp)
  })

  it("is a no-op on a healthy stream", () => {
    const b = streams()
    const input = [b.ts(), b.cr("q"), b.msg("a")]
    const out = sanitize(input)
    expect(out).not.toBe(input)
    expect(out.length).toBe(3)
    out.forEach((e, i) => expect(e).toBe(input[i]))
  })

  it("preserves a compaction, a config delta and an unknown entry in place", () => {
    const b = streams()
    const input = [
      b.ts(),
      b.cr("q"),
      b.compaction(0, 0),
      b.msg("a"),
      b.delta(),
      b.unknown(),
      b.ts(),
      b.cr("r"),
      b.msg("b")
    ]
    const out = sanitize(input)
    expect(shape(out)).toEqual([
      "TS",
      "CR:q",
      "COMPACTION",
      "M:a",
      "DELTA",
      "UNKNOWN:turn_statistics",
      "TS",
      "CR:r",
      "M:b"
    ])
    out.forEach((e, i) => expect(e).toBe(input[i]))
  })

  it("never mutates its input", () => {
    const b = streams()
    const input = frozen([b.msg("x"), b.ts(), b.ts(), b.cr("q"), b.call("a"), b.ask("a.q.1"), b.result("zz"), b.ts()])
    const before = input.slice()
    sanitize(input)
    expect(input).toEqual(before)
  })
})

describe("sanitize: RFD 082 turn-scoped inquiry repair", () => {
  it("repairs a turn-1 orphan within its turn instead of pairing it with turn 2", () => {
    const b = streams()
    const orphan = b.ask("call_1.confirm")
    const request2 = b.ask("call_1.confirm")
    const response2 = b.answer("call_1.confirm")
    const out = sanitize([
      b.ts(),
      b.cr("1"),
      b.call("call_1"),
      orphan,
      b.result("call_1"),
      b.msg("a"),
      b.ts(),
      b.cr("2"),
      b.call("call_1"),
      request2,
      response2,
      b.result("call_1"),
      b.msg("b")
    ])
    const inquiries = out.filter((e) => e.type === "inquiry_request" || e.type === "inquiry_response")
    expect(inquiries).toEqual([request2, response2])
    expect(inquiries[0]).toBe(request2)
  })

  it("pairs legacy duplicate ids by order within a turn", () => {
    const b = streams()
    const first = b.ask("call_1.confirm")
    const response = b.answer("call_1.confirm")
    const second = b.ask("call_1.confirm")
    const out = sanitize([b.ts(), b.cr("q"), b.call("call_1"), first, response, second, b.result("call_1"), b.msg("a")])
    expect(out.filter((e) => e.type === "inquiry_request")).toEqual([first])
    expect(out.filter((e) => e.type === "inquiry_response")).toEqual([response])
    expect(shape(out)).toEqual([
      "TS",
      "CR:q",
      "TC:call_1",
      "IQ:call_1.confirm",
      "IA:call_1.confirm",
      "TR:call_1",
      "M:a"
    ])
  })

  it("drops an inquiry response that precedes every request with its id", () => {
    const b = streams()
    const out = sanitize([b.ts(), b.cr("q"), b.answer("x.q.1"), b.ask("x.q.1"), b.msg("a")])
    expect(shape(out)).toEqual(["TS", "CR:q", "M:a"])
  })

  it("keeps every RFD 082 outcome as a valid closing response", () => {
    const b = streams()
    const out = sanitize([
      b.ts(),
      b.cr("q"),
      b.call("c"),
      b.ask("c.a.1"),
      b.answer("c.a.1", null),
      b.ask("c.b.1"),
      b.cancel("c.b.1", "some_future_variant"),
      b.ask("c.s.1"),
      b.redact("c.s.1"),
      b.result("c"),
      b.msg("done")
    ])
    expect(out.filter((e) => e.type === "inquiry_request" || e.type === "inquiry_response").length).toBe(6)
  })
})

describe("sanitize: tool calls are paired per turn and by count (parley's answer to quirk #2)", () => {
  it("answers a reused tool-call id whose second request lacks a response", () => {
    const b = streams()
    const out = sanitize([b.ts(), b.cr("q"), b.call("f_0"), b.result("f_0"), b.call("f_0"), b.msg("x")])
    expect(shape(out)).toEqual(["TS", "CR:q", "TC:f_0", "TR:f_0", "TC:f_0", "TR:f_0!", "M:x"])
  })

  it("does not let a later turn's response satisfy an earlier turn's request", () => {
    const b = streams()
    const out = sanitize([b.ts(), b.cr("1"), b.call("c"), b.msg("a"), b.ts(), b.cr("2"), b.result("c"), b.msg("b")])
    expect(shape(out)).toEqual(["TS", "CR:1", "TC:c", "TR:c!", "M:a", "TS", "CR:2", "M:b"])
  })

  it("drops a duplicate response beyond the number of requests", () => {
    const b = streams()
    const out = sanitize([b.ts(), b.cr("q"), b.call("c"), b.result("c"), b.result("c"), b.msg("x")])
    expect(shape(out)).toEqual(["TS", "CR:q", "TC:c", "TR:c", "M:x"])
  })
})

describe("sanitize: turn_start normalization", () => {
  it("does not insert a second turn_start when there is no chat_request and the stream starts with one (quirk #1)", () => {
    const b = streams()
    const input = [b.ts(), b.reasoning("r"), b.msg("m")]
    const out = sanitize(input)
    expect(shape(out)).toEqual(["TS", "R:r", "M:m"])
    out.forEach((e, i) => expect(e).toBe(input[i]))
  })

  it("without a chat_request, marks an implicit leading turn even when a later turn_start exists", () => {
    const b = streams()
    const first = b.msg("legacy")
    const out = sanitize([first, b.ts(), b.msg("later")])
    expect(shape(out)).toEqual(["TS", "M:legacy", "TS", "M:later"])
    expect(out[0]!.timestamp).toBe(first.timestamp)
  })

  it("stamps a turn_start inserted before a leading config delta with the epoch", () => {
    const b = streams()
    const out = sanitize([b.delta(), b.msg("m")])
    expect(shape(out)).toEqual(["TS", "DELTA", "M:m"])
    expect(out[0]!.timestamp).toBe(EPOCH)
    expect(EPOCH).toBe("1970-01-01 00:00:00.0")
  })

  it("inserts the turn_start right before the first chat_request, after a packed base delta", () => {
    const b = streams()
    const delta = b.delta()
    const request = b.cr("q")
    const out = sanitize([delta, request, b.msg("a")])
    expect(shape(out)).toEqual(["DELTA", "TS", "CR:q", "M:a"])
    expect(out[1]!.timestamp).toBe(request.timestamp)
  })

  it("leaves an empty middle turn alone", () => {
    const b = streams()
    const input = [b.ts(), b.cr("1"), b.msg("a"), b.ts(), b.ts(), b.cr("2"), b.msg("b")]
    expect(sanitize(input)).toEqual(input)
  })

  it("leaves only the non-events when there are only turn starts and non-events", () => {
    const b = streams()
    const out = sanitize([b.delta(), b.ts(), b.ts(), b.unknown()])
    expect(shape(out)).toEqual(["DELTA", "UNKNOWN:turn_statistics"])
  })

  it("returns an empty array for an empty stream", () => {
    expect(sanitize([])).toEqual([])
  })
})

describe("sanitize: trailing empty turns", () => {
  it("removes every trailing empty turn, so a second sanitize changes nothing", () => {
    const b = streams()
    const once = sanitize([b.ts(), b.cr("q"), b.msg("a"), b.ts(), b.delta(), b.ts()])
    expect(shape(once)).toEqual(["TS", "CR:q", "M:a", "DELTA"])
    expect(sanitize(once)).toEqual(once)
  })
})

describe("sanitize on the JP corpus (read only)", () => {
  const dir = path.join(fixtureCorpus.dir, "conversations", "17738348630-workspace-sanitization-strategy")

  it("removes exactly the orphaned inquiry request left by a backend failure", () => {
    const file = path.join(dir, "events.json")
    const entries = EventsFile.parse(fs.readFileSync(file, "utf8"), file)
    const orphan = entries[175]!
    expect(orphan.type).toBe("inquiry_request")
    const out = sanitize(entries)
    expect(out.length).toBe(entries.length - 1)
    expect(out).not.toContain(orphan)
    expect(out).toEqual(entries.filter((e) => e !== orphan))
  })
})
