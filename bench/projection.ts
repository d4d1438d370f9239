/**
 * Projection benchmark (issue 26): the provider view (`Thread.providerView`:
 * sanitize → compactions → filter) of a ~94 MB conversation with 20
 * compactions vs the same view of the same conversation without them. The
 * conversation is built as the storage bench builds it: copies of the
 * largest corpus conversation's entries. The compactions mix every policy
 * (summaries, reasoning strips, tool strips, omits) over ranges spread
 * across the turns, some nested or overlapping; they sit at the end of the
 * stream, where `conversation compact` appends them.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Compaction, type CompactionRule } from "../src/domain/event/Compaction.ts"
import type { StreamEntry } from "../src/domain/event/ConversationEvent.ts"
import * as Timestamp from "../src/domain/event/Timestamp.ts"
import * as EventsFile from "../src/domain/storage/EventsFile.ts"
import { providerView } from "../src/domain/stream/Thread.ts"
import { turnCount } from "../src/domain/stream/Turns.ts"
import { type Goal, median } from "./Harness.ts"

const corpus = path.resolve(import.meta.dirname, "..", "test", "fixtures", "corpus", "jp", "conversations")
const largest = path.join(corpus, "17738399468-rfd-review-and-phase-1-planning", "events.json")

type Policies = Omit<CompactionRule, "timestamp" | "from_turn" | "to_turn">

const POLICIES: ReadonlyArray<Policies> = [
  { summary: "The earlier work, summarised." },
  { reasoning: "strip" },
  { tool_calls: { policy: "strip", request: true, response: true } },
  { tool_calls: { policy: "omit" } },
  { reasoning: "strip", tool_calls: { policy: "strip", request: false, response: true } }
]

/** 20 compactions over `turns` turns: ranges of ~5% of the conversation, every policy, stamped one second apart. */
const compactions = (turns: number): Array<Compaction> => {
  const span = Math.max(1, Math.floor(turns / 20))
  return Array.from({ length: 20 }, (_, i) => {
    // Every third range reaches into the next one, so nesting and overlap are part of the work.
    const from = i * span
    const to = Math.min(turns - 1, from + span - 1 + (i % 3 === 0 ? span : 0))
    const timestamp = Timestamp.fromEpochNanos(1_790_000_000_000_000_000n + BigInt(i) * 1_000_000_000n)
    return Compaction.fromRule({ timestamp, from_turn: from, to_turn: to, ...POLICIES[i % POLICIES.length]! })
  })
}

export const run = async (): Promise<ReadonlyArray<Goal>> => {
  const text = fs.readFileSync(largest, "utf8")
  const template = EventsFile.parse(text, largest)
  const copies = Math.ceil(94e6 / Buffer.byteLength(text))
  const plain: Array<StreamEntry> = []
  for (let i = 0; i < copies; i++) plain.push(...template)
  const turns = turnCount(plain)
  const compacted = [...plain, ...compactions(turns)]
  const sizeMb = (Buffer.byteLength(text) * copies) / 1e6
  // One run of each per round, in alternating order, so load that comes and goes
  // (other processes on a shared machine) and the collector weigh on both alike.
  const time = (f: () => unknown) => {
    const t0 = performance.now()
    f()
    return performance.now() - t0
  }
  for (let i = 0; i < 5; i++) providerView(plain), providerView(compacted)
  const without: Array<number> = []
  const withC: Array<number> = []
  for (let round = 0; round < 61; round++) {
    if (round % 2 === 0) {
      without.push(time(() => providerView(plain)))
      withC.push(time(() => providerView(compacted)))
    } else {
      withC.push(time(() => providerView(compacted)))
      without.push(time(() => providerView(plain)))
    }
  }
  return [
    {
      name: `provider view of a ${sizeMb.toFixed(0)} MB conversation (${turns} turns) with 20 compactions vs without`,
      subject: { name: "sanitize → project (20 compactions) → filter", medianMs: median(withC) },
      floor: { name: "sanitize → filter (no compactions)", medianMs: median(without) },
      maxRatio: 1.2,
      note: "every policy: summaries, reasoning strips, tool strips and omits, some ranges overlapping; stripped copies are reused from one view to the next, as a turn rebuilds the view for every model call"
    }
  ]
}
