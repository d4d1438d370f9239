/**
 * Listing benchmark (issue: Stream rules): `conversation ls` over 1,000
 * synthetic conversations of ~200 KB each vs a floor that only reads each
 * `metadata.json`. The store answers from its stat-validated sidecar index,
 * so an unchanged event log is never parsed; the cold first listing (which
 * builds the index) is reported too.
 */
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as FileConversationStore from "../src/layers/store/FileConversationStore.ts"
import { ConversationStore } from "../src/services/ConversationStore.ts"
import { type Goal, measure } from "./Harness.ts"

const COUNT = 1000

const b64 = (s: string) => Buffer.from(s).toString("base64")

/** ~`bytes` (200 KB by default) of realistic events: turns with tool calls and responses. */
export const eventsText = (seed: number, bytes = 200_000): string => {
  const entries: Array<Record<string, unknown>> = []
  let t = 0
  const ts = () =>
    `2026-03-01 10:${String(Math.floor(t / 60) % 60).padStart(2, "0")}:${String(t++ % 60).padStart(2, "0")}.${seed % 1000}`
  let size = 0
  for (let turn = 0; size < bytes; turn++) {
    entries.push(
      { timestamp: ts(), type: "turn_start" },
      { timestamp: ts(), type: "chat_request", content: `question ${turn} ${"lorem ipsum ".repeat(20)}` }
    )
    for (let c = 0; c < 4; c++) {
      const id = `toolu_${seed}_${turn}_${c}`
      entries.push({
        timestamp: ts(),
        type: "tool_call_request",
        id,
        name: "fs_read_file",
        arguments: { path: b64(`src/file_${c}.rs`) }
      })
      entries.push({
        timestamp: ts(),
        type: "tool_call_response",
        id,
        content: b64("fn main() {}\n".repeat(300)),
        is_error: false
      })
    }
    entries.push({ timestamp: ts(), type: "chat_response", message: "answer ".repeat(200) })
    size = JSON.stringify(entries).length
  }
  return JSON.stringify(entries, null, 2) + "\n"
}

export const run = async (): Promise<ReadonlyArray<Goal>> => {
  const storage = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-ls-"))
  const conversations = path.join(storage, "conversations")
  const template = eventsText(1)
  for (let i = 0; i < COUNT; i++) {
    const id = 17000000000 + i
    const dir = path.join(conversations, `${id}-synthetic-conversation-${i}`)
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(
      path.join(dir, "metadata.json"),
      JSON.stringify({ title: `Synthetic conversation ${i}`, last_activated_at: "2026-03-01 10:00:00.0" }, null, 2) +
        "\n"
    )
    fs.writeFileSync(path.join(dir, "base_config.json"), "{}\n")
    fs.writeFileSync(path.join(dir, "events.json"), template)
  }
  const layer = FileConversationStore.layer({ storageDir: storage })
  const list = () =>
    Effect.runPromise(
      ConversationStore.use((s) => s.list()).pipe(
        Effect.map((l) => l.conversations),
        Effect.provide(layer)
      )
    )
  const t0 = performance.now()
  const rows = await list()
  const coldMs = performance.now() - t0
  if (rows.length !== COUNT) throw new Error(`listed ${rows.length} of ${COUNT}`)
  const floor = await measure(
    "readdir + read every metadata.json",
    async () => {
      const names = await fsp.readdir(conversations)
      await Promise.all(
        names
          .filter((n) => !n.startsWith("."))
          .map((n) => fsp.readFile(path.join(conversations, n, "metadata.json"), "utf8").then(JSON.parse))
      )
    },
    { runs: 9 }
  )
  const warm = await measure("store.list() with its index", list, { runs: 9 })
  fs.rmSync(storage, { recursive: true, force: true })
  return [
    {
      name: `conversation ls over ${COUNT} conversations of ${(template.length / 1000).toFixed(0)} KB`,
      subject: warm,
      floor,
      maxRatio: 2,
      note: `cold first listing (parses every log once, builds the index): ${coldMs.toFixed(0)} ms`
    }
  ]
}
