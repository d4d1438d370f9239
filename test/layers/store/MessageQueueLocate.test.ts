// The file store's message queue finds a conversation's directory by listing every conversation
// (`ConversationDir.locate`); a turn reads its queue at each step, so the queue keeps the directory
// it found and lists again only once that is gone (node:fs/promises is wrapped to count the listings).
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import * as Effect from "effect/Effect"
import type { ConversationId } from "../../../src/domain/storage/ConversationId.ts"
import * as MessageQueueFile from "../../../src/layers/store/MessageQueueFile.ts"

/** The directories listed so far (each `readdir`'s path). */
const listed = vi.hoisted(() => ({ paths: [] as Array<string> }))

vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>()
  const readdir = ((...args: Parameters<typeof real.readdir>) => {
    listed.paths.push(String(args[0]))
    return real.readdir(...args)
  }) as typeof real.readdir
  return { ...real, readdir, default: { ...real, readdir } }
})

const ID = "17738399468" as ConversationId

describe("the message queue file's directory", () => {
  it.effect("is found once for many reads and appends, and again once it moved", () =>
    Effect.gen(function* () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-queue-"))
      fs.mkdirSync(path.join(dir, `${ID}-fix-the-parser`))
      const q = MessageQueueFile.make(dir)
      const ofConversations = () => listed.paths.filter((p) => p === dir).length
      listed.paths.length = 0
      yield* q.enqueue(ID, { message: "one", surface: "terminal", when: "after" })
      for (let i = 0; i < 5; i++) yield* q.list(ID)
      yield* q.take(ID, 1)
      const before = yield* q.list(ID)
      expect(ofConversations()).toBe(1)
      fs.renameSync(path.join(dir, `${ID}-fix-the-parser`), path.join(dir, `${ID}-parser-fixed`))
      expect(yield* q.list(ID)).toStrictEqual(before)
      expect(ofConversations()).toBe(2)
      fs.rmSync(dir, { recursive: true, force: true })
    })
  )
})
