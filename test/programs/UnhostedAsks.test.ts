// `UnhostedAsks.of` (docs/ask.md): a listing opens only the conversations where a `parley ask` waits and no live
// asker hosts it — not another tool's waiting turn, not a running one, not a turn whose open questions are no
// asker's. `conversation ls` and the inbox closing a killed asker's question are test/cli/Ask.test.ts.
import { describe, expect, it } from "@effect/vitest"
import type { ConversationId } from "../../src/domain/storage/ConversationId.ts"
import * as UnhostedAsks from "../../src/programs/UnhostedAsks.ts"
import type { ConversationSummary, IncompleteSummary } from "../../src/services/ConversationStoreTag.ts"

const row = (
  id: string,
  incomplete: IncompleteSummary | null,
  waiting?: ConversationSummary["waiting"]
): ConversationSummary => ({
  id: id as ConversationId,
  title: null,
  events: 4,
  lastEventAt: null,
  lastActivatedAt: "2026-03-01T10:00:00Z",
  archived: false,
  incomplete,
  tokens: 0,
  labels: [],
  path: `/p/.parley/conversations/${id}`,
  lastError: null,
  ...(waiting !== undefined ? { waiting } : {})
})

const question = { id: "q", text: "Deploy?", answer_type: { type: "boolean" as const } }
const asking = { state: "waiting-for-input", tool: "ask" } as const

describe("UnhostedAsks.of", () => {
  it("names the asker's waiting turns nobody hosts, and only those", () => {
    const rows = [
      row("1", asking),
      row("2", asking),
      row("3", { state: "waiting-for-input", tool: "deploy" }),
      row("4", asking, [
        { inquiryId: "c1.q.1", toolCallId: "c1", tool: "ask", question, since: "2026-03-01T10:00:00Z" }
      ]),
      row("5", asking, [
        { inquiryId: "ask_1.q.1", toolCallId: "ask_1", tool: "ask", question, since: "2026-03-01T10:00:00Z" }
      ]),
      row("6", null)
    ]
    expect(UnhostedAsks.of(rows, new Map([["2", { pid: 1 }]]))).toStrictEqual(["1", "5"])
  })
})
