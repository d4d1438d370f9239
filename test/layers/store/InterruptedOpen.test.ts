/**
 * An interrupt (Ctrl-C, SIGTERM, a parent's timeout) that lands while `open`
 * heals a journal an earlier run left, or while `create` builds the
 * directory (docs/storage.md#durable-appends): the lock must stay held until that work is done, or
 * another process takes the conversation while this one is still writing it.
 *
 * The interrupt is sent from inside the work (node:fs/promises and node:fs's callbacks are wrapped),
 * so it lands exactly there. The same wrapping shows what a crash between
 * two steps of close would leave.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { ChatRequest } from "../../../src/domain/event/ChatRequest.ts"
import { ChatResponse } from "../../../src/domain/event/ChatResponse.ts"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"
import { TurnStart } from "../../../src/domain/event/TurnStart.ts"
import * as ConversationId from "../../../src/domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../../src/domain/storage/ConversationMetadata.ts"
import * as EntryCodec from "../../../src/domain/storage/EntryCodec.ts"
import * as FileConversationStore from "../../../src/layers/store/FileConversationStore.ts"
import * as Journal from "../../../src/layers/store/Journal.ts"
import { ConversationStore } from "../../../src/services/ConversationStore.ts"
import { tempDir } from "../../support/Fixtures.ts"

/** Called after every `readFile`, `writeFile` and `open` of a path, whether it succeeded or not; `beforeRename` before a rename. */
const hook = vi.hoisted(() => ({
  after: undefined as undefined | ((op: "read" | "write" | "open", file: string) => Promise<void>),
  beforeRename: undefined as undefined | ((from: string, to: string) => void)
}))

vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>()
  const wrap = <F extends (...args: Array<never>) => Promise<unknown>>(op: "read" | "write" | "open", f: F): F =>
    (async (...args: Parameters<F>) => {
      try {
        return await f(...args)
      } finally {
        if (hook.after !== undefined) await hook.after(op, typeof args[0] === "string" ? args[0] : "<handle>")
      }
    }) as unknown as F
  const readFile = wrap("read", real.readFile)
  const writeFile = wrap("write", real.writeFile)
  // A new conversation's files are written through handles (AtomicFile.writeNewDurable): their open is the step to land in.
  const open = wrap("open", real.open)
  const rename = (async (from: string, to: string) => {
    hook.beforeRename?.(String(from), String(to))
    return real.rename(from, to)
  }) as typeof real.rename
  return { ...real, readFile, writeFile, open, rename, default: { ...real, readFile, writeFile, open, rename } }
})

// The store's own file handles and the reads of its close go through node:fs's callback forms
// (layers/store/FileCalls.ts): the same hook after each, before its caller goes on.
vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>()
  const wrap =
    (op: "read" | "open", f: (...args: Array<unknown>) => void) =>
    (...args: Array<unknown>) => {
      const done = args.pop() as (error: unknown, value: unknown) => void
      f(...args, (error: unknown, value: unknown) => {
        const after = hook.after
        if (after === undefined) return done(error, value)
        void after(op, typeof args[0] === "string" ? args[0] : "<handle>").finally(() => done(error, value))
      })
    }
  const readFile = wrap("read", real.readFile as (...args: Array<unknown>) => void) as unknown as typeof real.readFile
  const open = wrap("open", real.open as (...args: Array<unknown>) => void) as unknown as typeof real.open
  return { ...real, readFile, open, default: { ...real, readFile, open } }
})

const id = ConversationId.parse("17738399468")!
const ts = (s: string) => Timestamp.make(`2026-03-18 13:19:${s}`)
const metadata = ConversationMetadata.make({ title: "t", last_activated_at: ts("00.0") })

const withStore = <A, E>(storageDir: string, f: (store: ConversationStore["Service"]) => Effect.Effect<A, E>) =>
  Effect.flatMap(ConversationStore, f).pipe(Effect.provide(FileConversationStore.layer({ storageDir })))

/** How long an interrupt that is not held off takes to release the lock, at most (never reached when it is held off). */
const GRACE_MS = 300

describe("an interrupt never releases the lock before the work under it is done", () => {
  it.live("interrupted while open folds a journal left by a killed run: the lock outlives the fold", () =>
    Effect.gen(function* () {
      const storage = tempDir()
      const dir = path.join(storage, "conversations", "17738399468-t")
      const lockFile = path.join(storage, "locks", "jp-c17738399468.lock")
      yield* withStore(storage, (s) =>
        Effect.scoped(
          s.create({
            id,
            metadata,
            entries: [
              new TurnStart({ timestamp: ts("01.0") }),
              new ChatRequest({ timestamp: ts("01.1"), content: "hi" })
            ]
          })
        )
      )
      const base = String(fs.statSync(path.join(dir, "events.json")).size)
      yield* Effect.promise(() =>
        Journal.append(dir, [{ at: 2, entry: EntryCodec.encodeEntry(ChatResponse.message(ts("02.0"), "hello")) }], base)
      )
      const seen: Array<string> = []
      let interrupt: (() => void) | undefined
      hook.after = async (op, file) => {
        if (op === "read" && file.endsWith(Journal.FILE) && interrupt !== undefined) {
          // The heal fold has read the journal: interrupt the opener right here, and give it time to let go.
          const send = interrupt
          interrupt = undefined
          send()
          await new Promise((r) => setTimeout(r, GRACE_MS))
        }
        if (op === "read" && file === lockFile)
          seen.push(
            `lock released with the journal ${fs.existsSync(path.join(dir, Journal.FILE)) ? "still there" : "folded"}`
          )
      }
      const opener = yield* Effect.forkChild(
        withStore(storage, (s) => Effect.scoped(Effect.andThen(s.open(id), Effect.never)))
      )
      interrupt = () => Effect.runFork(Fiber.interrupt(opener))
      yield* Fiber.await(opener)
      hook.after = undefined
      expect(seen).toStrictEqual(["lock released with the journal folded"])
      expect(fs.existsSync(lockFile)).toBe(false)
      expect((yield* withStore(storage, (s) => s.load(id))).entries.map((e) => e.type)).toStrictEqual([
        "turn_start",
        "chat_request",
        "chat_response"
      ])
    })
  )

  it.live("interrupted while create writes the new directory: the lock outlives the directory's arrival", () =>
    Effect.gen(function* () {
      const storage = tempDir()
      const lockFile = path.join(storage, "locks", "jp-c17738399468.lock")
      const conversations = path.join(storage, "conversations")
      const seen: Array<string> = []
      let interrupt: (() => void) | undefined
      hook.after = async (op, file) => {
        if (file.includes(".parley-new-") && interrupt !== undefined) {
          const send = interrupt
          interrupt = undefined
          send()
          await new Promise((r) => setTimeout(r, GRACE_MS))
        }
        if (op === "read" && file === lockFile) {
          const names = fs.existsSync(conversations) ? fs.readdirSync(conversations) : []
          seen.push(
            `lock released with ${names.some((n) => n.startsWith(".parley-new-")) ? "the directory half made" : "the directory in place"}`
          )
        }
      }
      const creator = yield* Effect.forkChild(
        withStore(storage, (s) => Effect.scoped(Effect.andThen(s.create({ id, metadata }), Effect.never)))
      )
      interrupt = () => Effect.runFork(Fiber.interrupt(creator))
      yield* Fiber.await(creator)
      hook.after = undefined
      expect(seen).toStrictEqual(["lock released with the directory in place"])
      expect(fs.existsSync(lockFile)).toBe(false)
    })
  )
})

describe("a crash between the steps of close", () => {
  it.effect("when the directory takes the new title's name, metadata.json already holds that title", () =>
    Effect.gen(function* () {
      const storage = tempDir()
      yield* withStore(storage, (s) =>
        Effect.scoped(s.create({ id, metadata: ConversationMetadata.make({ last_activated_at: ts("00.0") }) }))
      )
      const titles: Array<string | undefined> = []
      hook.beforeRename = (from, to) => {
        if (path.basename(to).startsWith("17738399468-"))
          titles.push(JSON.parse(fs.readFileSync(path.join(from, "metadata.json"), "utf8")).title)
      }
      yield* withStore(storage, (s) =>
        Effect.scoped(
          Effect.flatMap(s.open(id), (session) =>
            session.updateMetadata(
              (m) => new ConversationMetadata.ConversationMetadata({ ...m, title: "Named at last" })
            )
          )
        )
      )
      hook.beforeRename = undefined
      // A crash right after the rename must not leave a directory named for a title its metadata does not hold.
      expect(titles).toStrictEqual(["Named at last"])
      expect(fs.readdirSync(path.join(storage, "conversations")).filter((n) => !n.startsWith("."))).toStrictEqual([
        "17738399468-named-at-last"
      ])
    })
  )
})
