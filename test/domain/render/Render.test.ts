import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import { ChatRequest } from "../../../src/domain/event/ChatRequest.ts"
import { ChatResponse } from "../../../src/domain/event/ChatResponse.ts"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"
import { ToolCallRequest } from "../../../src/domain/event/ToolCallRequest.ts"
import { ToolCallResponse } from "../../../src/domain/event/ToolCallResponse.ts"
import { TurnStart } from "../../../src/domain/event/TurnStart.ts"
import type { StreamEntry } from "../../../src/domain/event/ConversationEvent.ts"
import * as EntryCodec from "../../../src/domain/storage/EntryCodec.ts"
import { InquiryAnswerType } from "../../../src/domain/event/InquiryAnswerType.ts"
import { incompleteSummary } from "../../../src/domain/stream/IncompleteTurn.ts"
import { incompleteMarker, inquiryOutcomeText, renderJson, renderMarkdown } from "../../../src/domain/render/Render.ts"
import { streams } from "../_streams.ts"

const history = (b: ReturnType<typeof streams>): Array<StreamEntry> => [
  b.ts(),
  b.cr("Fix the build."),
  b.msg("Done, the build passes.")
]

describe("RFD 082 reader behavior", () => {
  it("renders each inquiry outcome", () => {
    const b = streams()
    expect(inquiryOutcomeText(b.answer("i", true))).toBe("Answer: true")
    expect(inquiryOutcomeText(b.answer("i", "staging"))).toBe('Answer: "staging"')
    expect(inquiryOutcomeText(b.answer("i", null))).toBe("Answer: null")
    expect(inquiryOutcomeText(b.answer("i", { a: [1, 2] }))).toBe('Answer: {"a":[1,2]}')
    expect(inquiryOutcomeText(b.redact("i"))).toBe("Answer: <redacted>")
    expect(inquiryOutcomeText(b.cancel("i", "user"))).toBe("Cancelled (user)")
    expect(inquiryOutcomeText(b.cancel("i", "backend_error"))).toBe("Cancelled (backend_error)")
    expect(inquiryOutcomeText(b.cancel("i", "no_prompt_backend"))).toBe("Cancelled (no_prompt_backend)")
    expect(inquiryOutcomeText(b.cancel("i", "assistant_routing_denied"))).toBe("Cancelled (assistant_routing_denied)")
    expect(inquiryOutcomeText(b.cancel("i", "some_future_variant"))).toBe("Cancelled (some_future_variant)")
  })

  it("shows the outcomes inside the printed conversation", () => {
    const b = streams()
    const md = renderMarkdown({
      id: "17738399468",
      entries: [
        b.ts(),
        b.cr("Deploy"),
        b.call("c1", "deploy", { env: "prod" }),
        b.ask("c1.confirm.1", "deploy", "Deploy to prod?"),
        b.answer("c1.confirm.1", true),
        b.ask("c1.token.1", "deploy", "Token?", InquiryAnswerType.secret),
        b.redact("c1.token.1"),
        b.ask("c1.note.1", "deploy", "Note?", InquiryAnswerType.text),
        b.cancel("c1.note.1", "some_future_variant"),
        b.result("c1", "deployed"),
        b.msg("Deployed.")
      ]
    })
    expect(md).toContain("Answer: true")
    expect(md).toContain("Answer: <redacted>")
    expect(md).toContain("Cancelled (some_future_variant)")
    expect(md).not.toContain("Incomplete turn")
  })
})

describe("renderMarkdown", () => {
  it("renders a complete conversation exactly", () => {
    const b = streams()
    const entries = [
      b.delta(),
      b.ts(),
      b.cr("Write a note"),
      b.reasoning("Use the tool."),
      b.call("call_1", "write_note", { path: "a.txt" }),
      b.ask("call_1.overwrite.1", "write_note", "Overwrite a.txt?"),
      b.answer("call_1.overwrite.1", true),
      b.result("call_1", "wrote a.txt"),
      b.msg("Done."),
      b.unknown("turn_statistics")
    ]
    expect(renderMarkdown({ id: "17727391057", title: "Notes", entries })).toBe(
      [
        "# Notes",
        "Conversation `jp-c17727391057`",
        "## Turn 1",
        "### You · 2026-03-05T08:40:02Z\n\nWrite a note",
        "### Assistant (reasoning) · 2026-03-05T08:40:03Z\n\nUse the tool.",
        '### Tool call `write_note` (`call_1`) · 2026-03-05T08:40:04Z\n\n```json\n{\n  "path": "a.txt"\n}\n```',
        "### Question from tool write_note (`call_1.overwrite.1`) · 2026-03-05T08:40:05Z\n\nOverwrite a.txt?\n\n_Answer type: boolean_",
        "### Inquiry response (`call_1.overwrite.1`) · 2026-03-05T08:40:06Z\n\nAnswer: true",
        "### Tool result `write_note` (`call_1`) · 2026-03-05T08:40:07Z\n\n```\nwrote a.txt\n```",
        "### Assistant · 2026-03-05T08:40:08Z\n\nDone.",
        "_Entry of unknown kind `turn_statistics` (kept, not shown)._"
      ].join("\n\n") + "\n"
    )
  })

  it("uses a longer fence when a tool result contains backticks, and shows select options", () => {
    const b = streams()
    const md = renderMarkdown({
      id: "1",
      entries: [
        b.ts(),
        b.cr("q"),
        b.call("c", "x"),
        b.ask("c.pick.1", "x", "Pick", InquiryAnswerType.select(["a", "b"])),
        b.answer("c.pick.1", "b"),
        b.result("c", "```diff\n-a\n+b\n```", true),
        b.msg("ok")
      ]
    })
    expect(md).toContain("### Tool error `x` (`c`)")
    expect(md).toContain("````\n```diff\n-a\n+b\n```\n````")
    expect(md).toContain('_Answer type: select · Options: "a", "b"_')
    expect(md.startsWith("# Conversation jp-c1\n\n## Turn 1")).toBe(true)
  })

  it("numbers turns from 1, including the implicit leading turn", () => {
    const b = streams()
    const md = renderMarkdown({ id: "1", entries: [b.cr("a"), b.msg("b"), b.ts(), b.cr("c"), b.msg("d")] })
    expect(md.match(/^## Turn \d+$/gm)).toEqual(["## Turn 1", "## Turn 2"])
  })
})

describe("compactions in print (RFD 064)", () => {
  it("shows each compaction at the first turn it covers: range, when, what it does, the summary", () => {
    const b = streams()
    const entries = [
      b.ts(),
      b.cr("one"),
      b.msg("a"),
      b.ts(),
      b.cr("two"),
      b.msg("b"),
      b.compaction(0, 1, { summary: "We set things up.\n\nThen we stopped." }),
      b.compaction(1, 1, { reasoning: "strip", tool_calls: { policy: "strip", request: false, response: true } }),
      b.compaction(5, 6, { tool_calls: { policy: "omit" } })
    ]
    expect(renderMarkdown({ id: "1", entries })).toBe(
      [
        "# Conversation jp-c1",
        "## Turn 1",
        "> **Compaction** of turns 1–2 · 2026-03-05T08:40:06Z: the model sees this summary instead:\n>\n> We set things up.\n>\n> Then we stopped.",
        "### You · 2026-03-05T08:40:01Z\n\none",
        "### Assistant · 2026-03-05T08:40:02Z\n\na",
        "## Turn 2",
        "> **Compaction** of turn 2 · 2026-03-05T08:40:07Z: for the model, reasoning stripped, tool results stripped.",
        "### You · 2026-03-05T08:40:04Z\n\ntwo",
        "### Assistant · 2026-03-05T08:40:05Z\n\nb",
        "> **Compaction** of turns 6–7 · 2026-03-05T08:40:08Z: for the model, tool calls omitted."
      ].join("\n\n") + "\n"
    )
  })

  it("a compaction of the incomplete turn is shown in it", () => {
    const b = streams()
    const md = renderMarkdown({
      id: "1",
      entries: [b.ts(), b.cr("one"), b.msg("a"), b.ts(), b.cr("two"), b.compaction(1, 1, { reasoning: "strip" })]
    })
    expect(md).toContain("## Turn 2 (incomplete)\n\n> **Compaction** of turn 2")
  })
})

describe("incomplete turns in print (RFD 023 display) and ls (contract §3)", () => {
  const printed = (entries: Array<StreamEntry>) => renderMarkdown({ id: "17738399468", title: "T", entries })

  it("stops after a ChatRequest", () => {
    const b = streams()
    const entries = [...history(b), b.ts(), b.cr("And the tests?")]
    expect(incompleteSummary(entries)).toEqual({ state: "pending-llm-response" })
    const md = printed(entries)
    expect(
      md.endsWith(
        "## Turn 2 (incomplete)\n\n### You · 2026-03-05T08:40:04Z\n\nAnd the tests?\n\n⏳ Incomplete turn (pending LLM response)\n"
      )
    ).toBe(true)
  })

  it("stops after ToolCallRequests", () => {
    const b = streams()
    const entries = [
      ...history(b),
      b.ts(),
      b.cr("Check"),
      b.msg("I'll check."),
      b.call("c1", "cargo_check"),
      b.call("c2", "fs_read_file")
    ]
    expect(incompleteSummary(entries)).toEqual({ state: "pending-tool-execution" })
    expect(
      printed(entries).endsWith(
        "⏳ Incomplete turn (pending tool execution)\n  ⏳ cargo_check — pending execution\n  ⏳ fs_read_file — pending execution\n"
      )
    ).toBe(true)
  })

  it("stops after some ToolCallResponses", () => {
    const b = streams()
    const entries = [
      ...history(b),
      b.ts(),
      b.cr("Check"),
      b.call("c1", "cargo_check"),
      b.call("c2", "fs_read_file"),
      b.call("c3", "cargo_test"),
      b.result("c1"),
      b.result("c3", "1 failed", true)
    ]
    expect(incompleteSummary(entries)).toEqual({ state: "pending-tool-execution" })
    expect(
      printed(entries).endsWith(
        [
          "⏳ Incomplete turn (pending tool execution)",
          "  ✓ cargo_check — completed",
          "  ⏳ fs_read_file — pending execution",
          "  ✗ cargo_test — failed"
        ].join("\n") + "\n"
      )
    ).toBe(true)
  })

  it("stops at an unanswered InquiryRequest", () => {
    const b = streams()
    const entries = [
      ...history(b),
      b.ts(),
      b.cr("Modify"),
      b.msg("I'll modify those files for you."),
      b.call("c1", "cargo_check"),
      b.call("c2", "fs_read_file"),
      b.call("c3", "fs_modify_file"),
      b.result("c1"),
      b.result("c2"),
      b.ask("c3.overwrite.1", "fs_modify_file", "Overwrite existing file?")
    ]
    expect(incompleteSummary(entries)).toEqual({ state: "waiting-for-input", tool: "fs_modify_file" })
    const md = printed(entries)
    expect(
      md.endsWith(
        [
          "⏳ Incomplete turn (waiting for input)",
          "  ✓ cargo_check — completed",
          "  ✓ fs_read_file — completed",
          '  ⏸ fs_modify_file — waiting for input: "Overwrite existing file?"'
        ].join("\n") + "\n"
      )
    ).toBe(true)
    expect(md).toContain("### Assistant · 2026-03-05T08:40:05Z\n\nI'll modify those files for you.")
  })

  it("shows only the first line of a long pending question in the marker", () => {
    const b = streams()
    const entries = [
      b.ts(),
      b.cr("q"),
      b.call("t", "fs_modify_file"),
      b.ask("t.apply_changes", "fs_modify_file", "Apply this patch?\n\n```diff\n-a\n+b\n```")
    ]
    expect(incompleteMarker(entries)).toBe(
      '⏳ Incomplete turn (waiting for input)\n  ⏸ fs_modify_file — waiting for input: "Apply this patch? …"'
    )
  })

  it("stops after all responses without a follow-up ChatResponse", () => {
    const b = streams()
    const entries = [...history(b), b.ts(), b.cr("Check"), b.call("c1", "cargo_check"), b.result("c1")]
    expect(incompleteSummary(entries)).toEqual({ state: "pending-follow-up" })
    expect(printed(entries).endsWith("⏳ Incomplete turn (pending follow-up)\n  ✓ cargo_check — completed\n")).toBe(
      true
    )
  })

  it("renders the complete turns before the incomplete one", () => {
    const b = streams()
    const md = printed([...history(b), b.ts(), b.cr("next")])
    expect(md.indexOf("Done, the build passes.")).toBeLessThan(md.indexOf("## Turn 2 (incomplete)"))
    expect(md.indexOf("## Turn 1")).toBeLessThan(md.indexOf("Done, the build passes."))
  })
})

describe("renderJson", () => {
  it("lists every entry in file order with on-disk names and no storage base64", () => {
    const raw = [
      { type: "config_delta", timestamp: "2026-03-05 19:31:45.7", delta: { assistant: { model: { id: "x" } } } },
      { timestamp: "2026-03-05 19:31:45.8", type: "turn_start" },
      { timestamp: "2026-03-05 19:31:45.9", type: "chat_request", content: "hi" },
      {
        timestamp: "2026-03-05 19:31:46.0",
        type: "tool_call_request",
        id: "t",
        name: "fs_read_file",
        arguments: { path: "c3JjL21haW4ucnM=" }
      },
      {
        timestamp: "2026-03-05 19:31:46.1",
        type: "inquiry_request",
        id: "t.apply_changes",
        source: { source: "tool", name: "fs_read_file" },
        question: { text: "Ok?", answer_type: { type: "boolean" }, default: true }
      },
      { timestamp: "2026-03-05 19:31:46.2", type: "inquiry_response", id: "t.apply_changes", answer: true },
      {
        timestamp: "2026-03-05 19:31:46.3",
        type: "tool_call_response",
        id: "t",
        content: "ZmlsZSBjb250ZW50cw==",
        is_error: false
      },
      { timestamp: "2026-03-05 19:31:46.4", type: "unknown_future_kind", metadata: { foo: "YmFy" } },
      {
        timestamp: "2026-03-05 19:31:46.5",
        type: "chat_response",
        message: "done",
        metadata: { anthropic_thinking_signature: "c2ln" }
      }
    ]
    const entries = raw.map(EntryCodec.decodeEntry)
    const parsed = JSON.parse(Result.getOrThrow(renderJson(entries)))
    expect(parsed).toEqual([
      raw[0],
      raw[1],
      raw[2],
      { ...raw[3], arguments: { path: "src/main.rs" } },
      raw[4],
      raw[5],
      { ...raw[6], content: "file contents" },
      raw[7],
      { ...raw[8], metadata: { anthropic_thinking_signature: "sig" } }
    ])
    expect(Object.keys(parsed[0])).toEqual(["type", "timestamp", "delta"])
    expect(Result.getOrThrow(renderJson(entries)).endsWith("]\n")).toBe(true)
    expect(Result.getOrThrow(renderJson([]))).toBe("[]\n")
  })

  it("writes new events in the RFD 082 shape", () => {
    const b = streams()
    const parsed = JSON.parse(Result.getOrThrow(renderJson([b.cancel("c.q.1", "user")])))
    expect(parsed).toEqual([
      {
        timestamp: "2026-03-05 08:40:00.0",
        type: "inquiry_response",
        outcome: "cancelled",
        id: "c.q.1",
        reason: "user"
      }
    ])
  })
})

describe("fences around content with very many backtick runs (found in review)", () => {
  it("renders a tool result holding 200,000 backtick runs", () => {
    const entries = [
      new TurnStart({ timestamp: Timestamp.make("2026-01-01 00:00:00.0") }),
      new ChatRequest({ timestamp: Timestamp.make("2026-01-01 00:00:00.1"), content: "x" }),
      new ToolCallRequest({
        timestamp: Timestamp.make("2026-01-01 00:00:00.2"),
        id: "c",
        name: "read_file",
        arguments: {}
      }),
      new ToolCallResponse({
        timestamp: Timestamp.make("2026-01-01 00:00:00.3"),
        id: "c",
        content: "`a` ".repeat(200_000) + "````",
        is_error: false
      }),
      ChatResponse.message(Timestamp.make("2026-01-01 00:00:00.4"), "ok")
    ]
    const md = renderMarkdown({ id: "1", entries })
    expect(md).toContain("`````\n`a` `a`")
  })
})
