/**
 * The lines of `query --format jsonl` (RFD 027): each run event as a JSON
 * object with a snake_case `type`, and back.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import * as RunEvent from "../../../src/domain/run/RunEvent.ts"
import * as RunEventLine from "../../../src/domain/run/RunEventLine.ts"
import { Question } from "../../../src/domain/tool/Question.ts"

const call = { id: "c1", name: "write_note", arguments: { path: "a.txt" } }

const events: ReadonlyArray<RunEvent.RunEvent> = [
  RunEvent.make.ConversationKnown({ conversation_id: "17953588145", created: true }),
  RunEvent.make.ModelChosen({ model: "scripted" }),
  RunEvent.make.Waiting({ waiting: true }),
  RunEvent.make.TextDelta({ text: "Hi" }),
  RunEvent.make.ReasoningDelta({ text: "hm" }),
  RunEvent.make.ReplyFinished({ stop_reason: "tool_use" }),
  RunEvent.make.ToolCallsAnnounced({ calls: [call] }),
  RunEvent.make.ToolStarted({ call, resumed: false }),
  RunEvent.make.ToolFinished({ call, ran: true, response: { content: "ok", is_error: false } }),
  RunEvent.make.QuestionClosed({
    kind: "question",
    inquiry_id: "c1.token.1",
    call,
    question: Schema.decodeUnknownSync(Question)({ id: "token", text: "Token?", answer_type: { type: "secret" } }),
    by: "config",
    outcome: { _tag: "Redacted" }
  }),
  RunEvent.make.Warning({ text: "cut" }),
  RunEvent.make.MessageDelivered({ id: 2, message: "also the tests", via: "attach", when: "next" }),
  RunEvent.make.Stopped({ ending: "completed", incomplete: null })
]

describe("RFD 027: a run event as a --format jsonl line", () => {
  it("RFD 027 `--format jsonl`: each line names its event in `type` (snake_case), with the event's own fields", () => {
    expect(events.map((e) => RunEventLine.encode(e).type)).toStrictEqual([
      "conversation_known",
      "model_chosen",
      "waiting",
      "text_delta",
      "reasoning_delta",
      "reply_finished",
      "tool_calls_announced",
      "tool_started",
      "tool_finished",
      "question_closed",
      "warning",
      "message_delivered",
      "stopped"
    ])
    expect(RunEventLine.encode(RunEvent.make.TextDelta({ text: "Hi" }))).toStrictEqual({
      type: "text_delta",
      text: "Hi"
    })
    expect(RunEventLine.encode(events[8]!)).toStrictEqual({
      type: "tool_finished",
      call,
      ran: true,
      response: { content: "ok", is_error: false }
    })
  })

  it("RFD 027 `--format jsonl`: a line decodes back to its event; no line has `_tag`", () => {
    for (const e of events) {
      const line = JSON.parse(JSON.stringify(RunEventLine.encode(e)))
      expect(Object.keys(line)).not.toContain("_tag")
      expect(RunEventLine.encode(RunEventLine.decode(line))).toStrictEqual(RunEventLine.encode(e))
    }
  })
})
