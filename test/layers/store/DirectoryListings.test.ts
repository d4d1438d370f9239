// How often the file store lists every conversation (node:fs/promises is wrapped to count the
// listings; a storage of 10,000 conversations lists them in ~6 ms each, docs/storage.md#new-ids-and-locks):
// - making a conversation lists them where it must: to pick a fresh id, to see that no directory of it
//   appeared before its lock was taken, and to sweep what killed writers left; not again to find the
//   directory it has just made, nor to sweep stale locks when the only lock there is its own;
// - a new conversation made without entries is opened from what was written, not read back;
// - the message queue finds a conversation's directory by listing them (`ConversationDir.locate`), and a
//   turn reads its queue at each step: it keeps the directory it found and lists again once that is gone.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import * as Effect from "effect/Effect"
import type { ConversationId } from "../../../src/domain/storage/ConversationId.ts"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"
import * as ConversationMetadata from "../../../src/domain/storage/ConversationMetadata.ts"
import * as FileConversationStore from "../../../src/layers/store/FileConversationStore.ts"
import * as MessageQueueFile from "../../../src/layers/store/MessageQueueFile.ts"
import { ConversationStore } from "../../../src/services/ConversationStore.ts"

/** The directories listed so far (each `readdir`'s path). */
const listed = vi.hoisted(() => ({ paths: [] as Array<string>, reads: [] as Array<string> }))

vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>()
  const readdir = ((...args: Parameters<typeof real.readdir>) => {
    listed.paths.push(String(args[0]))
    return real.readdir(...args)
  }) as typeof real.readdir
  const readFile = ((...args: Parameters<typeof real.readFile>) => {
    listed.reads.push(String(args[0]))
    return real.readFile(...args)
  }) as typeof real.readFile
  return { ...real, readdir, readFile, default: { ...real, readdir, readFile } }
})

// A session's close reads through node:fs's callback form (layers/store/FileCalls.ts): counted too.
vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>()
  const readFile = ((...args: Parameters<typeof real.readFile>) => {
    listed.reads.push(String(args[0]))
    return real.readFile(...args)
  }) as typeof real.readFile
  return { ...real, readFile, default: { ...real, readFile } }
})

describe("a new conversation", () => {
  it.effect(
    "lists the conversations three times (the fresh id, the check under its lock, the staging sweep) and reads nothing of its own back",
    () =>
      Effect.gen(function* () {
        const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-create-"))
        const conversations = path.join(storageDir, "conversations")
        const make = Effect.scoped(
          Effect.flatMap(ConversationStore, (store) =>
            store.create({ metadata: ConversationMetadata.make({ title: "hi", last_activated_at: Timestamp.now() }) })
          )
        ).pipe(Effect.provide(FileConversationStore.layer({ storageDir })))
        yield* make // the storage's directories made
        listed.paths.length = 0
        listed.reads.length = 0
        const session = yield* make
        expect(listed.paths.filter((p) => p === conversations).length).toBe(3)
        const made = fs.readdirSync(conversations).filter((n) => n.startsWith(session.id))
        expect(made).toHaveLength(1)
        // Opened from what it wrote: its events and base config are not read back, nor its new directory listed
        // (closing reads the journal, none, and the metadata, to write it only if it changed).
        const own = path.join(conversations, made[0]!)
        expect([...listed.reads, ...listed.paths].filter((p) => p.startsWith(own)).sort()).toStrictEqual([
          path.join(own, "events.json.journal"),
          path.join(own, "metadata.json")
        ])
        fs.rmSync(storageDir, { recursive: true, force: true })
      })
  )
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
