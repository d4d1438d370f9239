// `CompactConversation.toJson` (docs/models.md#long-conversations-compactions-and-context-windows-rfd-064): the
// document `conversation compact --format json` prints, for a compaction with nothing to do and for a dry run.
// The command itself, appended compactions included, is test/cli/Compaction.test.ts.
import { describe, expect, it } from "@effect/vitest"
import * as CompactConversation from "../../src/programs/CompactConversation.ts"

describe("CompactConversation.toJson", () => {
  it("says the outcome, the first range and the tokens before and after; a summary's size unknown is null", () => {
    expect(
      CompactConversation.toJson(
        "17000000001",
        CompactConversation.CompactOutcome.NothingToCompact({ turns: 2, tokens: 40 })
      )
    ).toStrictEqual({ id: "17000000001", outcome: "nothing-to-compact", turns: 2, tokens_before: 40, tokens_after: 40 })
    const preview = CompactConversation.CompactOutcome.Preview({
      items: [{ range: { from: 2, to: 5 }, rule: undefined, model: "anthropic/claude-haiku-4-5" }],
      tokensBefore: 900,
      tokensAfter: undefined
    })
    expect(CompactConversation.toJson("17000000001", preview)).toStrictEqual({
      id: "17000000001",
      outcome: "dry-run",
      from_turn: 2,
      to_turn: 5,
      tokens_before: 900,
      tokens_after: null,
      ranges: [{ from_turn: 2, to_turn: 5, summary: true }]
    })
  })
})
