import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as fc from "fast-check"
import * as EventsFile from "../../../src/domain/storage/EventsFile.ts"
import { turnCount } from "../../../src/domain/stream/Turns.ts"
import type { StreamEntry } from "../../../src/domain/event/ConversationEvent.ts"
import {
  analyze,
  attemptKey,
  discardIncompleteTurn,
  incompleteSummary,
  LastTurn,
  lastTurnStart,
  resumableEntries,
  splitIncompleteTurn,
  summaryOf,
  writerQuestionId
} from "../../../src/domain/stream/IncompleteTurn.ts"
import { InquiryRequest } from "../../../src/domain/event/InquiryRequest.ts"
import { corpora } from "../../support/Fixtures.ts"
import { shape, streams } from "../_streams.ts"

/** Two complete turns, then whatever the test appends. */
const history = (b: ReturnType<typeof streams>): Array<StreamEntry> => [
  b.delta(),
  b.ts(),
  b.cr("first"),
  b.msg("one"),
  b.ts(),
  b.cr("second"),
  b.call("c0", "read"),
  b.result("c0"),
  b.msg("two")
]

const split = (entries: ReadonlyArray<StreamEntry>) => {
  const s = splitIncompleteTurn(entries)
  expect([...s.complete, ...(s.incomplete?.entries ?? [])]).toEqual(entries)
  return s
}

describe("RFD 023 detection: a complete last turn", () => {
  it("is not incomplete", () => {
    const b = streams()
    const entries = history(b)
    const s = split(entries)
    expect(s.incomplete).toBeNull()
    expect(s.complete).toEqual(entries)
    expect(incompleteSummary(entries)).toBeNull()
  })

  it("stays complete when a non-protocol entry comes last", () => {
    const b = streams()
    const entries = [...history(b), b.unknown("turn_statistics"), b.delta()]
    expect(split(entries).incomplete).toBeNull()
    expect(incompleteSummary(entries)).toBeNull()
  })

  it("is complete with an unanswered inquiry whose tool call has its response (legacy backend failure)", () => {
    const b = streams()
    const entries = [
      b.ts(),
      b.cr("q"),
      b.call("t", "fs_modify_file"),
      b.ask("t.apply_changes", "fs_modify_file"),
      b.result("t", "failed", true),
      b.msg("sorry")
    ]
    expect(incompleteSummary(entries)).toBeNull()
  })

  it("is complete for a legacy implicit turn whose later request went unanswered (conditions are per turn)", () => {
    const b = streams()
    const entries = [b.delta(), b.cr("a"), b.msg("b"), b.cr("c")]
    expect(incompleteSummary(entries)).toBeNull()
  })
})

describe("RFD 023 detection and resume-phase rows", () => {
  it("no ChatResponse after ChatRequest → Streaming, pending-llm-response", () => {
    const b = streams()
    const entries = [...history(b), b.ts(), b.cr("third")]
    const s = split(entries)
    expect(shape(s.incomplete!.entries)).toEqual(["TS", "CR:third"])
    expect(s.complete.length).toBe(9)
    const a = analyze(s.incomplete!)
    expect(a.phase).toBe("Streaming")
    expect(a.pendingToolCalls).toEqual([])
    expect(a.pendingInquiry).toBeNull()
    expect(incompleteSummary(entries)).toEqual({ state: "pending-llm-response" })
  })

  it("unmatched ToolCallRequests → Executing, pending-tool-execution", () => {
    const b = streams()
    const c1 = b.call("c1", "cargo_check")
    const c2 = b.call("c2", "fs_read_file")
    const entries = [...history(b), b.ts(), b.cr("third"), b.msg("I'll check."), c1, c2]
    const a = analyze(split(entries).incomplete!)
    expect(a.phase).toBe("Executing")
    expect(a.pendingToolCalls).toEqual([c1, c2])
    expect(a.pendingToolCalls[0]).toBe(c1)
    expect(incompleteSummary(entries)).toEqual({ state: "pending-tool-execution" })
  })

  it("some responses in → Executing with only the missing calls pending", () => {
    const b = streams()
    const c2 = b.call("c2", "fs_read_file")
    const entries = [
      b.ts(),
      b.cr("q"),
      b.call("c1", "cargo_check"),
      c2,
      b.call("c3", "x"),
      b.result("c1"),
      b.result("c3")
    ]
    const a = analyze(split(entries).incomplete!)
    expect(a.phase).toBe("Executing")
    expect(a.pendingToolCalls).toEqual([c2])
    expect(a.toolCalls.map((t) => t.status)).toEqual(["completed", "pending", "completed"])
    expect(incompleteSummary(entries)).toEqual({ state: "pending-tool-execution" })
  })

  it("unanswered InquiryRequest → Executing, waiting-for-input naming the tool", () => {
    const b = streams()
    const inquiry = b.ask("c2.overwrite.1", "fs_modify_file", "Overwrite existing file?")
    const entries = [
      b.ts(),
      b.cr("q"),
      b.call("c1", "cargo_check"),
      b.call("c2", "fs_modify_file"),
      b.call("c3", "fs_read_file"),
      b.result("c1"),
      b.result("c3"),
      inquiry
    ]
    const a = analyze(split(entries).incomplete!)
    expect(a.phase).toBe("Executing")
    expect(a.pendingInquiry).toBe(inquiry)
    expect(a.pendingInquiries).toEqual([{ request: inquiry, toolCall: entries[3], questionId: "overwrite" }])
    expect(a.toolCalls.map((t) => [t.request.name, t.status])).toEqual([
      ["cargo_check", "completed"],
      ["fs_modify_file", "waiting-for-input"],
      ["fs_read_file", "completed"]
    ])
    expect(incompleteSummary(entries)).toEqual({ state: "waiting-for-input", tool: "fs_modify_file" })
  })

  it("all tools matched, no follow-up response → Streaming, pending-follow-up", () => {
    const b = streams()
    const entries = [
      b.ts(),
      b.cr("q"),
      b.msg("Let me look."),
      b.call("c1"),
      b.call("c2"),
      b.result("c2"),
      b.result("c1")
    ]
    const a = analyze(split(entries).incomplete!)
    expect(a.phase).toBe("Streaming")
    expect(a.pendingToolCalls).toEqual([])
    expect(incompleteSummary(entries)).toEqual({ state: "pending-follow-up" })
  })

  it("an assistant reply of only tool calls, answered, is pending follow-up, not pending LLM response", () => {
    const b = streams()
    const entries = [b.ts(), b.cr("q"), b.call("c1"), b.result("c1")]
    expect(incompleteSummary(entries)).toEqual({ state: "pending-follow-up" })
    expect(analyze(split(entries).incomplete!).phase).toBe("Streaming")
  })

  it("a second cycle's tool results without a reply are pending follow-up even after an earlier reply", () => {
    const b = streams()
    const entries = [b.ts(), b.cr("q"), b.call("c1"), b.result("c1"), b.msg("more"), b.call("c2"), b.result("c2")]
    expect(incompleteSummary(entries)).toEqual({ state: "pending-follow-up" })
  })
})

describe("contract §3 ordering", () => {
  it("waiting-for-input wins over pending tool execution", () => {
    const b = streams()
    const entries = [b.ts(), b.cr("q"), b.call("a", "slow"), b.call("b", "asker"), b.ask("b.q.1", "asker")]
    expect(incompleteSummary(entries)).toEqual({ state: "waiting-for-input", tool: "asker" })
  })

  it("pending tool execution wins over pending follow-up", () => {
    const b = streams()
    const entries = [b.ts(), b.cr("q"), b.call("a"), b.call("b"), b.result("a")]
    expect(incompleteSummary(entries)).toEqual({ state: "pending-tool-execution" })
  })

  it("an answered inquiry does not make the turn wait for input", () => {
    const b = streams()
    const entries = [b.ts(), b.cr("q"), b.call("a"), b.ask("a.q.1"), b.answer("a.q.1")]
    expect(incompleteSummary(entries)).toEqual({ state: "pending-tool-execution" })
  })
})

describe("splitIncompleteTurn", () => {
  it("keeps config deltas and unknown entries of the incomplete turn in it, in order", () => {
    const b = streams()
    const head = history(b)
    const tail = [b.ts(), b.delta(), b.cr("q"), b.call("c"), b.unknown(), b.ask("c.q.1"), b.delta()]
    const s = split([...head, ...tail])
    expect(s.complete).toEqual(head)
    expect(s.incomplete!.entries).toEqual(tail)
    s.incomplete!.entries.forEach((e, i) => expect(e).toBe(tail[i]))
  })

  it("keeps a config delta written before the last turn_start in the complete part", () => {
    const b = streams()
    const head = [...history(b), b.delta()]
    const s = split([...head, b.ts(), b.cr("q")])
    expect(s.complete).toEqual(head)
  })

  it("splits a stream without turn_start at its first event (the packed base delta stays complete)", () => {
    const b = streams()
    const base = b.delta()
    const rest = [b.cr("q"), b.call("c")]
    const s = split([base, ...rest])
    expect(s.complete).toEqual([base])
    expect(s.incomplete!.entries).toEqual(rest)
  })

  it("ignores a trailing bare turn_start after a complete turn", () => {
    const b = streams()
    const entries = [...history(b), b.ts(), b.delta()]
    expect(split(entries).incomplete).toBeNull()
    expect(incompleteSummary(entries)).toBeNull()
  })

  it("does not let trailing bare turn_starts hide an unfinished turn", () => {
    const b = streams()
    const call = b.call("c")
    const tail = [b.ts(), b.cr("q"), call, b.ts(), b.delta(), b.ts()]
    const entries = [...history(b), ...tail]
    const s = split(entries)
    expect(s.incomplete!.entries).toEqual(tail)
    expect(incompleteSummary(entries)).toEqual({ state: "pending-tool-execution" })
    expect(analyze(s.incomplete!).pendingToolCalls).toEqual([call])
    expect(shape(resumableEntries(s.incomplete!))).toEqual(["TS", "CR:q", "TC:c", "DELTA"])
  })

  it("does not treat a last turn without any chat_request as incomplete", () => {
    const b = streams()
    const entries = [...history(b), b.ts(), b.msg("stray"), b.call("c")]
    expect(split(entries).incomplete).toBeNull()
    expect(incompleteSummary(entries)).toBeNull()
  })

  it("handles an empty stream and a stream of only config deltas", () => {
    expect(split([]).incomplete).toBeNull()
    const b = streams()
    expect(split([b.delta()]).incomplete).toBeNull()
    expect(lastTurnStart([b.delta()])).toBe(-1)
  })

  it("counts reused tool-call ids: two requests need two responses", () => {
    const b = streams()
    const second = b.call("f_0")
    const entries = [b.ts(), b.cr("q"), b.call("f_0"), b.result("f_0"), b.msg("again"), second]
    const s = split(entries)
    expect(analyze(s.incomplete!).pendingToolCalls).toEqual([second])
    expect(analyze(s.incomplete!).pendingToolCalls[0]).toBe(second)
  })

  it("a tool call whose only response is in an earlier turn is pending", () => {
    const b = streams()
    const entries = [b.ts(), b.cr("1"), b.call("c"), b.result("c"), b.msg("a"), b.ts(), b.cr("2"), b.call("c")]
    expect(incompleteSummary(entries)).toEqual({ state: "pending-tool-execution" })
  })
})

describe("analyze: restoring turn state", () => {
  it("restores answers of pending tool calls from the writer's three-segment ids, latest answer winning", () => {
    const b = streams()
    const entries = [
      b.ts(),
      b.cr("q"),
      b.call("c1", "deploy"),
      b.call("c2", "other"),
      b.ask("c1.env.1"),
      b.answer("c1.env.1", "staging"),
      b.ask("c1.confirm.1"),
      b.answer("c1.confirm.1", false),
      b.ask("c1.confirm.2"),
      b.answer("c1.confirm.2", true),
      b.ask("c1.token.1", "deploy", "Token?", { type: "secret" }),
      b.redact("c1.token.1"),
      b.ask("c1.why.1"),
      b.cancel("c1.why.1", "user"),
      b.ask("c1.legacy"),
      b.answer("c1.legacy", "ignored"),
      b.ask("c2.x.1"),
      b.answer("c2.x.1", 7),
      b.result("c2"),
      b.ask("c1.path.1")
    ]
    const a = analyze(split(entries).incomplete!)
    expect([...a.answeredInquiries]).toEqual([["c1", { env: "staging", confirm: true }]])
    expect([...a.attemptCounters].sort()).toEqual(
      [
        [attemptKey("c1", "confirm"), 2],
        [attemptKey("c1", "env"), 1],
        [attemptKey("c1", "path"), 1],
        [attemptKey("c1", "token"), 1],
        [attemptKey("c1", "why"), 1],
        [attemptKey("c2", "x"), 1]
      ].sort()
    )
    expect(a.pendingInquiry?.id).toBe("c1.path.1")
    expect(a.pendingInquiries[0]!.questionId).toBe("path")
    expect(a.pendingToolCalls.map((c) => c.id)).toEqual(["c1"])
  })

  it("keeps the executor state of each pending call's latest question that carries one (docs/mcp.md#rounds-2026-07-28); finished calls have none", () => {
    const b = streams()
    const withState = (id: string, state: unknown) => {
      const ask = b.ask(id, "deploy")
      return new InquiryRequest({ ...ask, metadata: { parley_executor_state: state as never } })
    }
    const entries = [
      b.ts(),
      b.cr("q"),
      b.call("c1", "deploy"),
      b.call("c2", "deploy"),
      b.call("c3", "deploy"),
      withState("c1.elicitation.1", { round: 1 }),
      b.answer("c1.elicitation.1", true),
      b.ask("c1.env.1", "deploy"),
      b.answer("c1.env.1", "staging"),
      withState("c1.elicitation.2", { round: 2 }),
      b.answer("c1.elicitation.2", true),
      b.ask("c1.color.1", "deploy"),
      b.answer("c1.color.1", "red"),
      withState("c2.elicitation.1", { round: 1 }),
      b.answer("c2.elicitation.1", true),
      b.result("c2"),
      b.ask("c3.ok.1", "deploy")
    ]
    const a = analyze(split(entries).incomplete!)
    expect([...a.executorStates]).toEqual([["c1", { round: 2 }]])
  })

  it("counts attempts across cycles that reuse a tool-call id", () => {
    const b = streams()
    const entries = [
      b.ts(),
      b.cr("q"),
      b.call("f_0"),
      b.ask("f_0.ok.1"),
      b.answer("f_0.ok.1"),
      b.result("f_0"),
      b.msg("again"),
      b.call("f_0"),
      b.ask("f_0.ok.2")
    ]
    const a = analyze(split(entries).incomplete!)
    expect(a.attemptCounters.get(attemptKey("f_0", "ok"))).toBe(2)
    expect(a.answeredInquiries.size).toBe(0) // the answer belonged to the finished first cycle
    expect(a.pendingInquiry?.id).toBe("f_0.ok.2")
  })

  it("links a foreign-format inquiry id to its running tool call by the source's tool name", () => {
    const b = streams()
    const inquiry = b.ask("inq_42", "fs_modify_file")
    const entries = [b.ts(), b.cr("q"), b.call("a", "cargo_check"), b.call("b", "fs_modify_file"), inquiry]
    const a = analyze(split(entries).incomplete!)
    expect(a.pendingInquiries).toEqual([{ request: inquiry, toolCall: entries[3], questionId: undefined }])
    expect(incompleteSummary(entries)).toEqual({ state: "waiting-for-input", tool: "fs_modify_file" })
  })

  it("links an assistant-sourced inquiry to the only running tool call", () => {
    const b = streams()
    const entries = [
      b.ts(),
      b.cr("q"),
      b.call("a", "cargo_check"),
      b.result("a"),
      b.call("b", "ask_user"),
      b.askAssistant("zz")
    ]
    expect(incompleteSummary(entries)).toEqual({ state: "waiting-for-input", tool: "ask_user" })
  })

  it("ignores an unanswered inquiry that belongs to no tool call", () => {
    const b = streams()
    const entries = [b.ts(), b.cr("q"), b.call("a", "x"), b.call("b", "y"), b.askAssistant("zz")]
    const a = analyze(split(entries).incomplete!)
    expect(a.pendingInquiry).toBeNull()
    expect(incompleteSummary(entries)).toEqual({ state: "pending-tool-execution" })
  })

  it("summaryOf agrees with incompleteSummary", () => {
    const b = streams()
    const entries = [...history(b), b.ts(), b.cr("q"), b.call("c")]
    expect(summaryOf(split(entries).incomplete!)).toEqual(incompleteSummary(entries))
  })
})

describe("writerQuestionId", () => {
  it("reads only the writer's own <call>.<question>.<attempt> ids", () => {
    expect(writerQuestionId("call_1", "call_1.overwrite.2")).toEqual({ questionId: "overwrite", attempt: 2 })
    expect(writerQuestionId("toolu.x", "toolu.x.q.1")).toEqual({ questionId: "q", attempt: 1 })
    expect(writerQuestionId("call_1", "call_1.overwrite")).toBeUndefined()
    expect(writerQuestionId("call_1", "call_2.overwrite.1")).toBeUndefined()
    expect(writerQuestionId("call_1", "call_1.a.b.1")).toBeUndefined()
    expect(writerQuestionId("call_1", "call_1.q.0")).toBeUndefined()
  })
})

describe("incompleteSummary reads only the last turn", () => {
  it("never touches entries before the last turn_start", () => {
    const b = streams()
    const prefix: Array<StreamEntry> = []
    for (let i = 0; i < 1000; i++) prefix.push(b.ts(), b.cr(`q${i}`), b.msg(`a${i}`))
    const tail = [b.ts(), b.cr("last"), b.call("c", "write_note"), b.ask("c.q.1")]
    const all = [...prefix, ...tail]
    const guarded = new Proxy(all, {
      get(target, prop, receiver) {
        if (typeof prop === "string" && /^\d+$/.test(prop) && Number(prop) < prefix.length) {
          throw new Error(`read entry ${prop}`)
        }
        return Reflect.get(target, prop, receiver)
      }
    })
    expect(incompleteSummary(guarded)).toEqual({ state: "waiting-for-input", tool: "write_note" })
  })
})

describe("condition 1 needs the chat_response after the chat_request", () => {
  it("a reply that precedes the only request does not complete the turn", () => {
    const b = streams()
    const entries = [b.msg("stray"), b.cr("q")]
    expect(incompleteSummary(entries)).toEqual({ state: "pending-llm-response" })
    expect(splitIncompleteTurn(entries).incomplete?.entries).toEqual(entries)
  })
})

describe("the JP corpus (read only)", () => {
  // Turn counts from the corpus README (JP's turn rule).
  const expectedTurns: Record<string, number> = {
    "17648402467": 1,
    "17653152345": 1,
    "17662304290": 1,
    "17665556205": 1,
    "17671120783": 1,
    "17673061097": 1,
    "17673969718": 1,
    "17727391057": 8,
    "17727484633": 1,
    "17727496665": 3,
    "17727523543": 6,
    "17728322628": 12,
    "17728424428": 2,
    "17732257364": 2,
    "17738348630": 9,
    "17738399468": 11,
    "17738500500": 5,
    "17758406187": 2,
    "17760760747": 3,
    "17800836875": 4,
    "17659773217": 1
  }

  it.for(corpora)("$label: every conversation is complete, with the documented turn count", (corpus, ctx) => {
    ctx.skip(corpus.absent, corpus.skipNote)
    const root = path.join(corpus.dir, "conversations")
    const dirs = [
      ...fs.readdirSync(root).filter((d) => !d.startsWith(".")),
      ...fs.readdirSync(path.join(root, ".archive")).map((d) => path.join(".archive", d))
    ]
    const seen: Record<string, number> = {}
    for (const dir of dirs) {
      const file = path.join(root, dir, "events.json")
      const entries = EventsFile.parse(fs.readFileSync(file, "utf8"), file)
      seen[path.basename(dir).split("-")[0]!] = turnCount(entries)
      expect(incompleteSummary(entries)).toBeNull()
      expect(splitIncompleteTurn(entries).incomplete).toBeNull()
    }
    expect(Object.keys(seen).length).toBe(corpus.conversations)
    expect(seen).toEqual(Object.fromEntries(Object.keys(seen).map((id) => [id, expectedTurns[id]])))
  })
})

describe("discardIncompleteTurn (RFD 023 --discard-turn, with RFD 064 compactions)", () => {
  it("drops the incomplete turn's events; a compaction recorded in it stays when it ends before the turn", () => {
    const b = streams()
    const entries = [
      b.ts(),
      b.cr("1"),
      b.msg("a"),
      b.compaction(0, 5),
      b.ts(),
      b.cr("2"),
      b.msg("b"),
      b.ts(),
      b.cr("3"),
      b.compaction(0, 1),
      b.compaction(1, 2),
      b.call("c")
    ]
    const kept = discardIncompleteTurn(entries)!
    expect(shape(kept)).toEqual(["TS", "CR:1", "M:a", "TS", "CR:2", "M:b", "COMPACTION"])
    expect(kept[6]).toBe(entries[9])
  })

  it("is null when the last turn is complete", () => {
    const b = streams()
    expect(discardIncompleteTurn([b.ts(), b.cr("1"), b.msg("a"), b.compaction(0, 0)])).toBeNull()
  })
})

describe("LastTurn: incompleteSummary kept as a stream grows (docs/postgres.md#tables)", () => {
  /** Checks the fold against the whole-stream rule after every entry, fed in batches of `batch`. */
  const agreeAtEveryPrefix = (entries: ReadonlyArray<StreamEntry>, batch: number) => {
    const last = LastTurn.of([])
    for (let i = 0; i < entries.length; i += batch) {
      last.push(entries.slice(i, i + batch))
      const prefix = entries.slice(0, Math.min(entries.length, i + batch))
      expect(last.summary, shape(prefix).join(" ")).toEqual(incompleteSummary(prefix))
      // Started part-way, from the stream as it stands (a session opened on it), it agrees too.
      expect(LastTurn.of(prefix).summary).toEqual(incompleteSummary(prefix))
    }
  }

  it("agrees with incompleteSummary at every prefix of random streams (calls, inquiries by id prefix, by tool name and alone, reused ids, bare turn_starts, deltas)", () => {
    const b = streams()
    const pieces = [
      () => b.ts(),
      () => b.cr("q"),
      () => b.msg("a"),
      () => b.call("c1"),
      () => b.call("c2", "other"),
      () => b.call("c1.x"),
      () => b.result("c1"),
      () => b.result("c2"),
      () => b.result("c1.x"),
      () => b.ask("c1.overwrite.1"),
      () => b.ask("c1.x.q.1"),
      () => b.ask("free", "other"),
      () => b.ask("lonely", "nobody"),
      () => b.askAssistant("asst"),
      () => b.answer("c1.overwrite.1"),
      () => b.answer("c1.x.q.1"),
      () => b.answer("free"),
      () => b.cancel("lonely"),
      () => b.answer("asst"),
      () => b.delta(),
      () => b.unknown()
    ]
    fc.assert(
      fc.property(
        fc.array(fc.nat(pieces.length - 1), { maxLength: 40 }),
        fc.integer({ min: 1, max: 4 }),
        (picks, batch) => {
          agreeAtEveryPrefix(
            picks.map((k) => pieces[k]!()),
            batch
          )
        }
      ),
      { numRuns: 300 }
    )
  })

  it.for(corpora)("$label: agrees at every prefix of every conversation", (corpus, ctx) => {
    ctx.skip(corpus.absent, corpus.skipNote)
    const root = path.join(corpus.dir, "conversations")
    for (const dir of fs.readdirSync(root).filter((d) => !d.startsWith("."))) {
      const file = path.join(root, dir, "events.json")
      const entries = EventsFile.parse(fs.readFileSync(file, "utf8"), file)
      const last = LastTurn.of([])
      for (let i = 0; i < entries.length; i++) {
        last.push([entries[i]!])
        expect(last.summary, `${dir} entry ${i}`).toEqual(incompleteSummary(entries.slice(0, i + 1)))
      }
    }
  })
})
