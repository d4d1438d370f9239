/**
 * Readers that take no lock (`load`, `ls`, `check`, `print`) racing a writer
 * that folds its journal into `events.json` (docs/storage.md#durable-appends): a reader must see a
 * whole conversation, never one that lost the journaled entries or one that
 * looks damaged because the fold wrote `events.json` while it was reading.
 *
 * The interleavings are made exact by running the writer's fold from inside
 * the reader's `readFile` of `events.json` (node:fs/promises is wrapped).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import * as Effect from "effect/Effect"
import { ChatRequest } from "../../../src/domain/event/ChatRequest.ts"
import { ChatResponse } from "../../../src/domain/event/ChatResponse.ts"
import type { StreamEntry } from "../../../src/domain/event/ConversationEvent.ts"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"
import { TurnStart } from "../../../src/domain/event/TurnStart.ts"
import * as ConversationId from "../../../src/domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../../src/domain/storage/ConversationMetadata.ts"
import * as EntryCodec from "../../../src/domain/storage/EntryCodec.ts"
import * as FileConversationStore from "../../../src/layers/store/FileConversationStore.ts"
import * as Journal from "../../../src/layers/store/Journal.ts"
import { ConversationStore } from "../../../src/services/ConversationStore.ts"
import { tempDir } from "../../support/Fixtures.ts"

/** Runs once, right after the next `readFile` of an `events.json` resolves; may replace what it returns. */
const hook = vi.hoisted(() => ({
  afterEventsRead: undefined as undefined | ((file: string, data: Buffer) => Promise<Buffer>)
}))

vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>()
  const readFile = (async (...args: Parameters<typeof real.readFile>) => {
    const data = await real.readFile(...args)
    const after = hook.afterEventsRead
    if (after === undefined || !String(args[0]).endsWith(`${path.sep}events.json`) || !Buffer.isBuffer(data))
      return data
    hook.afterEventsRead = undefined
    return after(String(args[0]), data)
  }) as typeof real.readFile
  return { ...real, readFile, default: { ...real, readFile } }
})

const id = ConversationId.parse("17738399468")!
const ts = (s: string) => Timestamp.make(`2026-03-18 13:19:${s}`)
const firstTurn: ReadonlyArray<StreamEntry> = [
  new TurnStart({ timestamp: ts("01.0") }),
  new ChatRequest({ timestamp: ts("01.1"), content: "hi" })
]
const journaled: ReadonlyArray<StreamEntry> = [
  ChatResponse.message(ts("02.0"), "hello"),
  new TurnStart({ timestamp: ts("03.0") }),
  new ChatRequest({ timestamp: ts("03.1"), content: "again" })
]
const types = (entries: ReadonlyArray<StreamEntry>) => entries.map((e) => e.type)

const withStore = <A, E>(storageDir: string, f: (store: ConversationStore["Service"]) => Effect.Effect<A, E>) =>
  Effect.flatMap(ConversationStore, f).pipe(Effect.provide(FileConversationStore.layer({ storageDir })))

/** A conversation at rest holding `firstTurn`, and a journal (what a running writer left) holding `journaled`. */
const seedWithJournal = (storage: string) =>
  Effect.gen(function* () {
    yield* withStore(storage, (s) =>
      Effect.scoped(
        s.create({
          id,
          metadata: ConversationMetadata.make({ title: "t", last_activated_at: ts("00.0") }),
          entries: firstTurn
        })
      )
    )
    const dir = path.join(storage, "conversations", "17738399468-t")
    const base = String(fs.statSync(path.join(dir, "events.json")).size)
    yield* Effect.promise(() =>
      Journal.append(
        dir,
        journaled.map((e, i) => ({ at: firstTurn.length + i, entry: EntryCodec.encodeEntry(e) })),
        base
      )
    )
    return dir
  })

/** Gives the conversation a new title through a session, as a writer does (its close renames the directory). */
const retitle = (storage: string, title: string) =>
  Effect.runPromise(
    withStore(storage, (s) =>
      Effect.scoped(
        Effect.flatMap(s.open(id), (session) =>
          session.updateMetadata((m) => new ConversationMetadata.ConversationMetadata({ ...m, title }))
        )
      )
    )
  )

describe("readers racing a fold", () => {
  it.effect("the fold completes after the reader read events.json: it still sees every journaled entry", () =>
    Effect.gen(function* () {
      const storage = tempDir()
      const dir = yield* seedWithJournal(storage)
      hook.afterEventsRead = async (_, data) => {
        expect(await Journal.fold(dir)).toBe("folded")
        return data
      }
      const seen = yield* withStore(storage, (s) => s.load(id))
      expect(hook.afterEventsRead).toBeUndefined()
      expect(types(seen.entries)).toStrictEqual(types([...firstTurn, ...journaled]))
    })
  )

  it.effect("the fold writes events.json while the reader reads it: the conversation is not reported damaged", () =>
    Effect.gen(function* () {
      const storage = tempDir()
      const dir = yield* seedWithJournal(storage)
      // readFile takes the size first, then reads: the fold's tail lands between the two.
      hook.afterEventsRead = async (file, data) => {
        expect(await Journal.fold(dir)).toBe("folded")
        return fs.readFileSync(file).subarray(0, data.length)
      }
      const seen = yield* withStore(storage, (s) => s.load(id))
      expect(hook.afterEventsRead).toBeUndefined()
      expect(types(seen.entries)).toStrictEqual(types([...firstTurn, ...journaled]))
      const listing = yield* withStore(storage, (s) => s.list())
      expect(listing.damaged).toStrictEqual([])
    })
  )

  it.effect("ls racing the fold lists the conversation (not damaged) with every event", () =>
    Effect.gen(function* () {
      const storage = tempDir()
      const dir = yield* seedWithJournal(storage)
      hook.afterEventsRead = async (file, data) => {
        await Journal.fold(dir)
        return fs.readFileSync(file).subarray(0, data.length)
      }
      const listing = yield* withStore(storage, (s) => s.list())
      expect(listing.damaged).toStrictEqual([])
      expect(listing.conversations.map((c) => c.events)).toStrictEqual([firstTurn.length + journaled.length])
    })
  )

  it.effect(
    "ls racing a close that renames the directory for a new title lists it once, under its new name, not damaged",
    () =>
      Effect.gen(function* () {
        const storage = tempDir()
        yield* seedWithJournal(storage)
        yield* withStore(storage, (s) => Effect.scoped(s.open(id))) // at rest
        const conversations = path.join(storage, "conversations")
        hook.afterEventsRead = async (file, data) => {
          // What close does: the new title first, then the directory renamed to match.
          await retitle(storage, "renamed")
          expect(fs.existsSync(file)).toBe(false)
          return data
        }
        const listing = yield* withStore(storage, (s) => s.list())
        expect(hook.afterEventsRead).toBeUndefined()
        expect(listing.damaged).toStrictEqual([])
        expect(listing.conversations.map((c) => [c.id, c.title, c.events, path.basename(c.path)])).toStrictEqual([
          [id, "renamed", firstTurn.length + journaled.length, "17738399468-renamed"]
        ])
        // The index holds the new name only.
        const again = yield* withStore(storage, (s) => s.list())
        expect(again).toStrictEqual(listing)
        expect(fs.readdirSync(conversations).sort()).toStrictEqual(
          [FileConversationStore.INDEX, "17738399468-renamed"].sort()
        )
      })
  )

  it.effect(
    "ls racing two renames (a new title, then the old one back) follows the conversation back: listed once, not damaged",
    () =>
      Effect.gen(function* () {
        const storage = tempDir()
        yield* seedWithJournal(storage)
        yield* withStore(storage, (s) => Effect.scoped(s.open(id))) // at rest
        let title = "t"
        const rename = async (_: string, data: Buffer) => {
          title = title === "t" ? "renamed" : "t"
          await retitle(storage, title)
          // Armed again (after the writer's own reads) for the listing's read of the new directory.
          if (title === "renamed") hook.afterEventsRead = rename
          return data
        }
        hook.afterEventsRead = rename
        const listing = yield* withStore(storage, (s) => s.list())
        expect([hook.afterEventsRead, title]).toStrictEqual([undefined, "t"])
        expect(listing.damaged).toStrictEqual([])
        expect(listing.conversations.map((c) => [c.id, c.title, c.events, path.basename(c.path)])).toStrictEqual([
          [id, "t", firstTurn.length + journaled.length, "17738399468-t"]
        ])
      })
  )

  it.effect("load and check racing a close that renames the directory follow it: the conversation, not damage", () =>
    Effect.gen(function* () {
      const storage = tempDir()
      yield* seedWithJournal(storage)
      yield* withStore(storage, (s) => Effect.scoped(s.open(id))) // at rest
      let title = "t"
      const rename = async (_: string, data: Buffer) => {
        title = title === "t" ? "renamed" : "t"
        await retitle(storage, title)
        return data
      }
      hook.afterEventsRead = rename
      const seen = yield* withStore(storage, (s) => s.load(id))
      expect([seen.metadata.title, seen.entries.length]).toStrictEqual(["renamed", firstTurn.length + journaled.length])
      hook.afterEventsRead = rename
      const results = yield* withStore(storage, (s) => s.check(id))
      expect(results.map((r) => [r.ok, r.roundtrip, path.basename(r.path)])).toStrictEqual([
        [true, "identical", "17738399468-t"]
      ])
    })
  )

  it.effect("load and check racing the removal of a conversation: not found, never damaged", () =>
    Effect.gen(function* () {
      const storage = tempDir()
      yield* seedWithJournal(storage)
      const remove = async (_: string, data: Buffer) => {
        await Effect.runPromise(withStore(storage, (s) => s.remove(id)))
        return data
      }
      hook.afterEventsRead = remove
      const loaded = yield* withStore(storage, (s) => Effect.flip(s.load(id)))
      expect(loaded._tag).toBe("ConversationNotFound")
      yield* seedWithJournal(storage)
      hook.afterEventsRead = remove
      const checked = yield* withStore(storage, (s) => Effect.flip(s.check(id)))
      expect(checked._tag).toBe("ConversationNotFound")
    })
  )

  it.effect("ls racing the removal of a conversation leaves it out, not damaged", () =>
    Effect.gen(function* () {
      const storage = tempDir()
      const dir = yield* seedWithJournal(storage)
      hook.afterEventsRead = async (_, data) => {
        await Effect.runPromise(withStore(storage, (s) => s.remove(id)))
        expect(fs.existsSync(dir)).toBe(false)
        return data
      }
      const listing = yield* withStore(storage, (s) => s.list())
      expect(hook.afterEventsRead).toBeUndefined()
      expect(listing).toStrictEqual({ conversations: [], damaged: [] })
    })
  )

  it.effect("check racing a writer that appends and folds compares what it decoded: identical, not changed", () =>
    Effect.gen(function* () {
      const storage = tempDir()
      yield* seedWithJournal(storage)
      yield* withStore(storage, (s) => Effect.scoped(s.open(id))) // at rest: no journal
      hook.afterEventsRead = async (file, data) => {
        // Another process opens the conversation, appends a reply and closes it.
        await Effect.runPromise(
          withStore(storage, (s) =>
            Effect.scoped(
              Effect.flatMap(s.open(id), (session) => session.append([ChatResponse.message(ts("04.0"), "late")]))
            )
          )
        )
        expect(fs.readFileSync(file).length).toBeGreaterThan(data.length)
        return data
      }
      const results = yield* withStore(storage, (s) => s.check())
      expect(hook.afterEventsRead).toBeUndefined()
      expect(results.map((r) => [r.ok, r.roundtrip, r.error])).toStrictEqual([[true, "identical", undefined]])
    })
  )
})
