import * as fs from "node:fs"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ConversationMetadata from "../../../src/domain/storage/ConversationMetadata.ts"
import * as ConversationId from "../../../src/domain/storage/ConversationId.ts"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"
import * as FileConversationStore from "../../../src/layers/store/FileConversationStore.ts"
import { ConversationStore } from "../../../src/services/ConversationStore.ts"
import { repoRoot, tempDir } from "../../support/Fixtures.ts"

const id = ConversationId.parse("17000000001")!

/** Starts the appending child, kills it with SIGKILL after `after` reported appends. */
const appendThenKill = (storage: string, after: number) =>
  new Promise<number>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", path.join(repoRoot, "test/support/appendChild.ts"), storage, id],
      {
        cwd: repoRoot,
        stdio: ["ignore", "pipe", "inherit"]
      }
    )
    let buffer = ""
    let reported = -1
    child.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString()
      const lines = buffer.split("\n")
      buffer = lines.pop()!
      for (const line of lines) {
        const m = /^appended (\d+)$/.exec(line)
        if (m !== null) reported = Number(m[1])
      }
      if (reported >= after && child.exitCode === null) child.kill("SIGKILL")
    })
    child.on("exit", () => resolve(reported))
    child.on("error", reject)
  })

describe("durability", () => {
  for (const after of [5, 37]) {
    it.live(`every append reported before kill -9 survives (killed after ${after})`, () =>
      Effect.gen(function* () {
        const storage = tempDir()
        const layer = FileConversationStore.layer({ storageDir: storage })
        yield* ConversationStore.use((s) =>
          Effect.scoped(
            s.create({
              id,
              metadata: ConversationMetadata.make({ title: "durable", last_activated_at: Timestamp.now() })
            })
          )
        ).pipe(Effect.provide(layer))
        const reported = yield* Effect.promise(() => appendThenKill(storage, after))
        expect(reported).toBeGreaterThanOrEqual(after)
        const c = yield* ConversationStore.use((s) => s.load(id)).pipe(Effect.provide(layer))
        // turn_start + chat_request, then a request/response pair per reported n.
        const responses = c.entries.filter((e) => e.type === "tool_call_response").length
        expect(responses).toBeGreaterThanOrEqual(reported)
        const requests = c.entries.filter((e) => e.type === "tool_call_request").length
        expect(requests - responses).toBeLessThanOrEqual(1)
        // The next open folds what the killed run journaled: plain JP format again, nothing lost.
        yield* ConversationStore.use((s) => Effect.scoped(s.open(id))).pipe(Effect.provide(layer))
        expect(fs.existsSync(path.join(storage, "conversations", "17000000001-durable", "events.json.journal"))).toBe(
          false
        )
        const again = yield* ConversationStore.use((s) => s.load(id)).pipe(Effect.provide(layer))
        expect(again.entries.length).toBe(c.entries.length)
      })
    )
  }
})
