// The file store's message queue (docs/cli.md#talk-to-a-running-turn) against hostile files: a symlink planted
// as `.parley-queue.jsonl` is neither followed by a send nor by a read, and a queue file grown past what
// parley reads is refused with its size (a clear error, not the whole file in memory).
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { ConversationId } from "../../../src/domain/storage/ConversationId.ts"
import * as MessageQueueFile from "../../../src/layers/store/MessageQueueFile.ts"
import * as QueueCount from "../../../src/layers/store/QueueCount.ts"

const ID = "17738399468" as ConversationId // a test's fixed id (its directory is made below)

const conversations = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-queue-"))
  fs.mkdirSync(path.join(dir, `${ID}-fix-the-parser`))
  return { dir, queue: path.join(dir, `${ID}-fix-the-parser`, MessageQueueFile.FILE) }
}

const failure = (exit: Exit.Exit<unknown, unknown>) => (Exit.isFailure(exit) ? String(exit.cause) : "succeeded")

describe("the message queue file", () => {
  it.effect("a symlink in its place is not followed: the send fails and the file it names is untouched", () =>
    Effect.gen(function* () {
      const { dir, queue } = conversations()
      const target = path.join(dir, "elsewhere.txt")
      fs.writeFileSync(target, "keep\n")
      fs.symlinkSync(target, queue)
      const q = MessageQueueFile.make(dir)
      const sent = yield* Effect.exit(q.enqueue(ID, { message: "hi", surface: "terminal", when: "after" }))
      expect(Exit.isFailure(sent)).toBe(true)
      expect(fs.readFileSync(target, "utf8")).toBe("keep\n")
      expect(Exit.isFailure(yield* Effect.exit(q.list(ID)))).toBe(true)
      expect(QueueCount.queuedIn(path.dirname(queue))).toBe(0)
      fs.rmSync(dir, { recursive: true, force: true })
    })
  )

  it.effect("a queue file larger than parley reads is refused with its size", () =>
    Effect.gen(function* () {
      const { dir, queue } = conversations()
      fs.writeFileSync(queue, "")
      fs.truncateSync(queue, QueueCount.MAX_BYTES + 1) // sparse: no memory or disk spent on it
      const listed = yield* Effect.exit(MessageQueueFile.make(dir).list(ID))
      expect(failure(listed)).toContain(`the queue file is ${QueueCount.MAX_BYTES + 1} bytes`)
      expect(QueueCount.queuedIn(path.dirname(queue))).toBe(0)
      fs.rmSync(dir, { recursive: true, force: true })
    })
  )

  it.effect("a sender's own nonce queues a message once, however often it is sent", () =>
    Effect.gen(function* () {
      const { dir } = conversations()
      const q = MessageQueueFile.make(dir)
      const m = { message: "hi", surface: "cluster", when: "after", nonce: "cluster-7" } as const
      const first = yield* q.enqueue(ID, m)
      const again = yield* q.enqueue(ID, m)
      expect([first.id, again.id]).toStrictEqual([1, 1])
      expect(yield* q.list(ID)).toHaveLength(1)
      fs.rmSync(dir, { recursive: true, force: true })
    })
  )
  it.effect("it follows its conversation's directory: renamed (a new title), then archived", () =>
    Effect.gen(function* () {
      const { dir } = conversations()
      const q = MessageQueueFile.make(dir)
      yield* q.enqueue(ID, { message: "one", surface: "terminal", when: "after" })
      fs.renameSync(path.join(dir, `${ID}-fix-the-parser`), path.join(dir, `${ID}-parser-fixed`))
      yield* q.enqueue(ID, { message: "two", surface: "terminal", when: "after" })
      expect((yield* q.list(ID)).map((m) => m.message)).toStrictEqual(["one", "two"])
      fs.mkdirSync(path.join(dir, ".archive"))
      fs.renameSync(path.join(dir, `${ID}-parser-fixed`), path.join(dir, ".archive", `${ID}-parser-fixed`))
      expect((yield* q.list(ID)).map((m) => m.message)).toStrictEqual(["one", "two"])
      fs.rmSync(path.join(dir, ".archive"), { recursive: true })
      expect(failure(yield* Effect.exit(q.list(ID)))).toContain("ConversationNotFound")
      fs.rmSync(dir, { recursive: true, force: true })
    })
  )
})
