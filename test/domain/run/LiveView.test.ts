import { describe, expect, it } from "@effect/vitest"
import { InquirySource } from "../../../src/domain/event/InquirySource.ts"
import * as LiveView from "../../../src/domain/run/LiveView.ts"
import * as RunEvent from "../../../src/domain/run/RunEvent.ts"
import { QuestionId } from "../../../src/domain/tool/Question.ts"

const call = RunEvent.toolCall({ id: "call_1", name: "write_file", arguments: { path: "a.txt", lines: [1, 2] } })
const question = {
  id: QuestionId.make("overwrite"),
  text: "Overwrite a.txt?",
  answer_type: { type: "boolean" as const }
}

/** Every shape a tool call's events take (optional fields present and absent), and one of each other kind. */
const events: ReadonlyArray<RunEvent.RunEvent> = [
  RunEvent.make.ToolStarted({ call, resumed: false }),
  RunEvent.make.ToolStarted({ call, resumed: true }),
  RunEvent.make.ToolFinished({ call, ran: true, response: { content: "wrote 2 lines", is_error: false } }),
  RunEvent.make.ToolFinished({ call, ran: false, response: { content: "", is_error: true } }),
  RunEvent.make.QuestionOpened({
    inquiry_id: "call_1.overwrite.1",
    kind: "question",
    call,
    question,
    source: InquirySource.tool("write_file"),
    audience: "person",
    since: "2026-12-02T08:00:00.000000Z"
  }),
  RunEvent.make.QuestionOpened({
    inquiry_id: "call_1.permission.1",
    kind: "approval",
    call,
    question,
    source: InquirySource.user,
    audience: "nobody",
    since: "2026-12-02T08:00:00.000000Z",
    label: "write_file (1 of 3)"
  }),
  ...[
    { _tag: "Answered", answer: true },
    { _tag: "Answered", answer: "yes" },
    { _tag: "Answered", answer: { edit: { path: "b.txt" } } },
    { _tag: "Redacted" },
    { _tag: "Cancelled", reason: "user" }
  ].map((outcome, i) =>
    RunEvent.make.QuestionClosed({
      inquiry_id: "call_1.overwrite.1",
      kind: "question",
      call,
      question,
      by: "you",
      ...(i % 2 === 0 ? { via: "attach" as const } : {}),
      outcome: outcome as RunEvent.QuestionOutcome
    })
  ),
  // The other sources, an approval of arguments other than the call's (an MCP server's form), answers of every JSON kind.
  ...[InquirySource.assistant, InquirySource.other("mcp:fs")].map((source) =>
    RunEvent.make.QuestionOpened({
      inquiry_id: "call_1.form.1",
      kind: "approval",
      call: RunEvent.toolCall({ id: "call_1", name: "write_file", arguments: { path: "c.txt", mode: 420 } }),
      question,
      source,
      audience: "person",
      since: "2026-12-02T08:00:00.000000Z"
    })
  ),
  ...[1.5, null, [1, "two", { three: false }], { nested: { deep: [] } }].map((answer) =>
    RunEvent.make.QuestionClosed({
      inquiry_id: "call_1.overwrite.1",
      kind: "question",
      call,
      question,
      by: "assistant",
      outcome: { _tag: "Answered", answer }
    })
  ),
  RunEvent.make.TextDelta({ text: "Hello" }),
  RunEvent.make.Warning({ text: "a warning" }),
  RunEvent.make.Stopped({ ending: "completed", incomplete: null })
]

describe("LiveView.sizeOf", () => {
  it("is an event's JSON size (strings without escapes), with or without sizes kept, for every shape a call's events take", () => {
    const sizes = new LiveView.Sizes()
    for (const event of events) {
      const exact = event._tag === "TextDelta" ? event.text.length + 40 : JSON.stringify(event).length
      expect({ tag: event._tag, size: LiveView.sizeOf(event) }).toEqual({ tag: event._tag, size: exact })
      // Twice: the second time the call's arguments and the question are sizes kept.
      expect(LiveView.sizeOf(event, sizes)).toBe(exact)
      expect(LiveView.sizeOf(event, sizes)).toBe(exact)
    }
  })

  it("kept sizes are per object: a new question of the same text is measured, not taken for the last", () => {
    const sizes = new LiveView.Sizes()
    const a = { id: "q", text: "short" }
    const b = { id: "q", text: "a much longer question" }
    expect(sizes.of(a)).toBe(JSON.stringify(a).length)
    expect(sizes.of(b)).toBe(JSON.stringify(b).length)
    expect(sizes.of(a)).toBe(JSON.stringify(a).length)
  })

  it("sizes stay right past the bounds of what is kept (an object over 16 KiB kept alone, the map emptied past 1 MiB)", () => {
    const sizes = new LiveView.Sizes()
    const big = { content: "x".repeat(20_000) }
    const other = { content: "y".repeat(30_000) }
    expect(sizes.of(big)).toBe(JSON.stringify(big).length)
    expect(sizes.of(other)).toBe(JSON.stringify(other).length)
    expect(sizes.of(big)).toBe(JSON.stringify(big).length)
    // 100 objects of 15 KiB each are 1.5 MiB: measured right all the same, as the map empties and fills again.
    const many = Array.from({ length: 100 }, (_, i) => ({ i, content: "z".repeat(15_000) }))
    for (const round of [1, 2])
      for (const o of many) expect({ round, size: sizes.of(o) }).toEqual({ round, size: JSON.stringify(o).length })
  })
})
