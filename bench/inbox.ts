/**
 * Inbox benchmark: `parley inbox`'s gathering (`programs/Inbox.ts`) over
 * 1,000 conversations of ~200 KB, each with its last turn waiting for input,
 * vs what `conversation ls` does over the same storage (the store's listing,
 * then the hosts of the listed conversations). The file store's index keeps
 * a waiting turn's open questions with its row, so the inbox parses no event
 * log a warm listing would not; the goal is ≤ 1.5× the listing.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Running from "../src/layers/host/Running.ts"
import * as HostTurns from "../src/layers/host/HostTurns.ts"
import * as FileConversationStore from "../src/layers/store/FileConversationStore.ts"
import * as Inbox from "../src/programs/Inbox.ts"
import { ConversationStore } from "../src/services/ConversationStore.ts"
import { RunningTurns } from "../src/services/RunningTurns.ts"
import { type Goal, measure } from "./Harness.ts"
import { eventsText } from "./listing.ts"

const COUNT = 1000

const b64 = (s: string) => Buffer.from(s).toString("base64")

/** ~200 KB of history, then a turn whose tool call waits for its question's answer. */
const waitingText = (): string => {
  const entries = JSON.parse(eventsText(1)) as Array<Record<string, unknown>>
  const call = "toolu_wait_1"
  entries.push(
    { timestamp: "2026-03-01 11:00:00.0", type: "turn_start" },
    { timestamp: "2026-03-01 11:00:00.1", type: "chat_request", content: "Deploy it" },
    {
      timestamp: "2026-03-01 11:00:01.0",
      type: "tool_call_request",
      id: call,
      name: "deploy",
      arguments: { target: b64("prod") }
    },
    {
      timestamp: "2026-03-01 11:00:02.0",
      type: "inquiry_request",
      id: `${call}.confirm.1`,
      source: { source: "tool", name: "deploy" },
      question: { text: "Deploy prod?", answer_type: { type: "boolean" } }
    }
  )
  return JSON.stringify(entries, null, 2) + "\n"
}

export const run = async (): Promise<ReadonlyArray<Goal>> => {
  const storage = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-inbox-"))
  const conversations = path.join(storage, "conversations")
  const template = waitingText()
  for (let i = 0; i < COUNT; i++) {
    const dir = path.join(conversations, `${17000000000 + i}-waiting-conversation-${i}`)
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(
      path.join(dir, "metadata.json"),
      JSON.stringify({ title: `Waiting conversation ${i}`, last_activated_at: "2026-03-01 11:00:00.0" }, null, 2) + "\n"
    )
    fs.writeFileSync(path.join(dir, "base_config.json"), "{}\n")
    fs.writeFileSync(path.join(dir, "events.json"), template)
  }
  const layer = FileConversationStore.layer({ storageDir: storage })
  const ls = () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const { conversations: rows } = yield* ConversationStore.use((s) => s.list())
        yield* Running.of(
          storage,
          rows.map((r) => r.id)
        )
        return rows
      }).pipe(Effect.provide(layer))
    )
  const inbox = () =>
    Effect.runPromise(
      Inbox.gather.pipe(Effect.provideService(RunningTurns, HostTurns.make(storage)), Effect.provide(layer))
    )
  const t0 = performance.now()
  const rows = await ls()
  const coldMs = performance.now() - t0
  const items = await inbox()
  if (rows.length !== COUNT || items.length !== COUNT) throw new Error(`listed ${rows.length}, inbox ${items.length}`)
  const floor = await measure("conversation ls: store.list() + its hosts", ls, { runs: 9 })
  const subject = await measure("Inbox.gather", inbox, { runs: 9 })
  fs.rmSync(storage, { recursive: true, force: true })
  return [
    {
      name: `parley inbox over ${COUNT} waiting conversations of ${(template.length / 1000).toFixed(0)} KB`,
      subject,
      floor,
      maxRatio: 1.5,
      note: `cold first listing (parses every log once, builds the index with the open questions): ${coldMs.toFixed(0)} ms`
    }
  ]
}
