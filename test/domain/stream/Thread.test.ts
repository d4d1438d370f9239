import { describe, expect, it } from "@effect/vitest"
import { sanitize } from "../../../src/domain/stream/Sanitize.ts"
import { intoParts } from "../../../src/domain/stream/Thread.ts"
import { shape, streams } from "../_streams.ts"

describe("intoParts (RFD 005)", () => {
  it("yields only provider-visible events, in order", () => {
    const b = streams()
    const entries = [
      b.delta(),
      b.ts(),
      b.cr("q"),
      b.reasoning("r"),
      b.call("c"),
      b.ask("c.q.1"),
      b.answer("c.q.1"),
      b.result("c"),
      b.compaction(),
      b.unknown(),
      b.msg("a")
    ]
    const { events } = intoParts({ events: entries })
    expect(shape(events)).toEqual(["CR:q", "R:r", "TC:c", "TR:c", "M:a"])
    expect(events[0]).toBe(entries[2])
  })

  it("puts the system prompt first, then the sections", () => {
    expect(intoParts({ systemPrompt: "sys", sections: ["one", "two"], events: [] }).systemParts).toEqual([
      "sys",
      "one",
      "two"
    ])
    expect(intoParts({ sections: ["one"], events: [] }).systemParts).toEqual(["one"])
    expect(intoParts({ systemPrompt: "", events: [] }).systemParts).toEqual([])
  })

  it("does not sanitize: an unanswered tool call stays unanswered", () => {
    const b = streams()
    const entries = [b.ts(), b.cr("q"), b.call("c")]
    expect(shape(intoParts({ events: entries }).events)).toEqual(["CR:q", "TC:c"])
    expect(shape(intoParts({ events: sanitize(entries) }).events)).toEqual(["CR:q", "TC:c", "TR:c!"])
  })

  it("keeps a tool call request next to its response although inquiries sit between them", () => {
    const b = streams()
    const { events } = intoParts({
      events: sanitize([
        b.ts(),
        b.cr("q"),
        b.call("c"),
        b.ask("c.ok.1"),
        b.answer("c.ok.1"),
        b.ask("c.ok.2"),
        b.result("c")
      ])
    })
    expect(shape(events)).toEqual(["CR:q", "TC:c", "TR:c"])
  })
})
