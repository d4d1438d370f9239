import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { ChatRequest } from "../../../src/domain/event/ChatRequest.ts"
import { ChatResponse } from "../../../src/domain/event/ChatResponse.ts"
import * as ConversationId from "../../../src/domain/storage/ConversationId.ts"
import * as EntryCodec from "../../../src/domain/storage/EntryCodec.ts"
import { InquiryAnswerType } from "../../../src/domain/event/InquiryAnswerType.ts"
import * as InquiryId from "../../../src/domain/event/InquiryId.ts"
import { InquiryRequest } from "../../../src/domain/event/InquiryRequest.ts"
import { InquiryResponse } from "../../../src/domain/event/InquiryResponse.ts"
import { InquirySource } from "../../../src/domain/event/InquirySource.ts"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"
import { ToolCallRequest } from "../../../src/domain/event/ToolCallRequest.ts"
import { ToolCallResponse } from "../../../src/domain/event/ToolCallResponse.ts"
import { TurnStart } from "../../../src/domain/event/TurnStart.ts"
import * as FileConversationStore from "../../../src/layers/store/FileConversationStore.ts"
import * as FileLock from "../../../src/layers/store/FileLock.ts"
import { ConversationStore } from "../../../src/services/ConversationStore.ts"
import type * as ConversationSession from "../../../src/services/ConversationSession.ts"
import type { StreamEntry } from "../../../src/domain/event/ConversationEvent.ts"
import * as ConversationMetadata from "../../../src/domain/storage/ConversationMetadata.ts"
import * as EventsFile from "../../../src/domain/storage/EventsFile.ts"
import { copyToTemp, corpora, snapshotTree, tempDir } from "../../support/Fixtures.ts"

const withStore = <A, E>(storageDir: string, f: (store: ConversationStore["Service"]) => Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const store = yield* ConversationStore
    return yield* f(store)
  }).pipe(Effect.provide(FileConversationStore.layer({ storageDir })))

const id = ConversationId.parse("17738399468")!
const ts = (s: string) => Timestamp.make(`2026-03-18 13:19:${s}`)

/** Every RFD 082 shape, plus legacy and unknown entries. */
const everyShape = () => {
  const tcid = "call_1"
  return [
    new TurnStart({ timestamp: ts("06.8") }),
    new ChatRequest({ timestamp: ts("06.800012"), content: "Write the note ✓", author: "me" }),
    ChatResponse.reasoning(ts("07.1"), "thinking…", { anthropic_thinking_signature: "c2lnbmF0dXJl" }),
    new ToolCallRequest({
      timestamp: ts("07.2"),
      id: tcid,
      name: "write_note",
      arguments: { path: "a.txt", n: 2, flags: [true, null] }
    }),
    new InquiryRequest({
      timestamp: ts("07.3"),
      id: InquiryId.forToolQuestion(tcid, "overwrite", 1),
      source: InquirySource.tool("write_note"),
      question: { text: "Overwrite a.txt?", answer_type: InquiryAnswerType.boolean, default: true }
    }),
    InquiryResponse.answered(ts("07.4"), InquiryId.forToolQuestion(tcid, "overwrite", 1), true),
    new InquiryRequest({
      timestamp: ts("07.5"),
      id: InquiryId.forToolQuestion(tcid, "note", 1),
      source: InquirySource.assistant,
      question: { text: "Anything else?", answer_type: InquiryAnswerType.text }
    }),
    InquiryResponse.answered(ts("07.6"), InquiryId.forToolQuestion(tcid, "note", 1), null),
    new InquiryRequest({
      timestamp: ts("07.7"),
      id: InquiryId.forToolQuestion(tcid, "token", 1),
      source: InquirySource.tool("write_note"),
      question: { text: "API token?", answer_type: InquiryAnswerType.secret }
    }),
    InquiryResponse.redacted(ts("07.8"), InquiryId.forToolQuestion(tcid, "token", 1)),
    ...["user", "backend_error", "no_prompt_backend", "assistant_routing_denied", "some_future_variant"].flatMap(
      (reason, i) => [
        new InquiryRequest({
          timestamp: ts(`08.${i}`),
          id: InquiryId.forToolQuestion(tcid, `q${i}`, 1),
          source: InquirySource.user,
          question: { text: `q${i}?`, answer_type: InquiryAnswerType.select(["a", { value: 2, description: "two" }]) }
        }),
        InquiryResponse.cancelled(ts(`08.${i}5`), InquiryId.forToolQuestion(tcid, `q${i}`, 1), reason)
      ]
    ),
    EntryCodec.decodeEntry({
      timestamp: ts("09.0"),
      type: "inquiry_request",
      id: "call_1.legacy",
      source: { source: "tool", name: "write_note" },
      question: { text: "old?", answer_type: { type: "boolean" }, default: true }
    }),
    EntryCodec.decodeEntry({ timestamp: ts("09.1"), type: "inquiry_response", id: "call_1.legacy", answer: true }),
    EntryCodec.decodeEntry({
      type: "mystery_kind",
      timestamp: ts("09.2"),
      payload: { deep: [1, 2] },
      metadata: { x: "not decoded" }
    }),
    new ToolCallResponse({ timestamp: ts("09.3"), id: tcid, content: "wrote 12 bytes\n", is_error: false }),
    EntryCodec.decodeEntry({
      type: "config_delta",
      timestamp: ts("09.4"),
      delta: { assistant: { model: { id: "x" } } }
    }),
    ChatResponse.message(ts("09.5"), "Done.")
  ]
}

/** Runs `f` with the conversation `id` open (closing the scope folds and unlocks). */
const inSession = <A, E>(
  storageDir: string,
  f: (session: ConversationSession.ConversationSession) => Effect.Effect<A, E>
) => withStore(storageDir, (store) => Effect.scoped(Effect.flatMap(store.open(id), f)))

/** Creates the conversation `id` (title "t") holding `entries`. */
const seed = (storageDir: string, entries: ReadonlyArray<StreamEntry> = [], title = "t") =>
  withStore(storageDir, (store) =>
    Effect.scoped(
      store.create({ id, metadata: ConversationMetadata.make({ title, last_activated_at: ts("06.8") }), entries })
    )
  )

const turn = (n: number) => [
  new TurnStart({ timestamp: ts(`1${n}.0`) }),
  new ChatRequest({ timestamp: ts(`1${n}.1`), content: `q${n}` })
]
const types = (entries: ReadonlyArray<StreamEntry>) => entries.map((e) => e.type)
const eventsText = (storage: string, name = "17738399468-t") =>
  fs.readFileSync(path.join(storage, "conversations", name, "events.json"), "utf8")

describe("FileConversationStore", () => {
  // The subset always; the whole corpus when ../shared is beside the clone (the name says why it was skipped).
  for (const corpus of corpora)
    it.effect.skipIf(corpus.absent)(
      `open → close of every conversation of ${corpus.label}${corpus.absent ? ` (skipped: ${corpus.skipNote})` : ""} leaves every byte and mtime as it was`,
      () =>
        Effect.gen(function* () {
          const storage = copyToTemp(corpus.dir)
          const before = snapshotTree(path.join(storage, "conversations"))
          const mtimes = () =>
            [...before.keys()].map((f) => fs.statSync(path.join(storage, "conversations", f)).mtimeMs)
          const m0 = mtimes()
          yield* withStore(storage, (store) =>
            Effect.gen(function* () {
              const { conversations, damaged } = yield* store.list({ archived: true })
              expect(conversations.length).toBe(corpus.conversations)
              expect(damaged).toStrictEqual([])
              for (const row of conversations) yield* Effect.scoped(store.open(row.id))
            })
          )
          const after = snapshotTree(path.join(storage, "conversations"))
          after.delete(FileConversationStore.INDEX)
          expect(after).toStrictEqual(before)
          expect(mtimes()).toStrictEqual(m0) // identical files are not rewritten
        })
    )

  it.effect("a conversation holding every RFD 082 shape is created and re-loads identically", () =>
    Effect.gen(function* () {
      const storage = tempDir()
      const entries = everyShape()
      const text = yield* withStore(storage, (store) =>
        Effect.gen(function* () {
          yield* Effect.scoped(
            store.create({
              id,
              metadata: ConversationMetadata.make({ title: "Every shape", last_activated_at: ts("06.8") }),
              entries
            })
          )
          const back = yield* store.load(id)
          expect(back.entries.length).toBe(entries.length)
          for (let i = 0; i < entries.length; i++) expect(back.entries[i]).toStrictEqual(entries[i])
          return fs.readFileSync(path.join(storage, "conversations", "17738399468-every-shape", "events.json"), "utf8")
        })
      )
      expect(text).toBe(EventsFile.render(entries))
      // Written events use RFD 082 shapes; the legacy flat response stays flat.
      expect(text).toContain(`"outcome": "redacted"`)
      expect(text).toContain(`"reason": "some_future_variant"`)
      expect(text).toContain(`"answer_type": {\n        "type": "secret"\n      }`)
      const legacy = JSON.parse(text).find(
        (e: { id?: string; type: string }) => e.type === "inquiry_response" && e.id === "call_1.legacy"
      )
      expect(Object.keys(legacy)).toStrictEqual(["timestamp", "type", "id", "answer"])
      const meta = fs.readFileSync(
        path.join(storage, "conversations", "17738399468-every-shape", "metadata.json"),
        "utf8"
      )
      expect(meta).toBe(`{\n  "title": "Every shape",\n  "last_activated_at": "2026-03-18 13:19:06.8"\n}\n`)
    })
  )

  it.effect("appends journal durably, are visible at once, and closing folds them in place into JP's events.json", () =>
    Effect.gen(function* () {
      const storage = tempDir()
      const dir = path.join(storage, "conversations", "17738399468-t")
      const all = [
        ...turn(0),
        new ToolCallRequest({ timestamp: ts("20.0"), id: "c1", name: "x", arguments: { a: [1, "é"] } })
      ]
      yield* seed(storage)
      yield* inSession(storage, (session) =>
        Effect.gen(function* () {
          yield* session.append(all.slice(0, 2))
          yield* session.append(all.slice(2))
          expect(types((yield* session.snapshot).entries)).toStrictEqual([
            "turn_start",
            "chat_request",
            "tool_call_request"
          ])
          expect(eventsText(storage)).toBe("[]\n")
          expect(fs.readFileSync(path.join(dir, FileConversationStore.JOURNAL), "utf8").split("\n").length).toBe(4)
          // Another reader (another process's view) sees every appended event.
          expect(types((yield* withStore(storage, (s) => s.load(id))).entries)).toStrictEqual(types(all))
        })
      )
      expect(fs.existsSync(path.join(dir, FileConversationStore.JOURNAL))).toBe(false)
      expect(eventsText(storage)).toBe(EventsFile.render(all))
      // A second session appends to the non-empty file: only the tail is written, bytes as a full render.
      const more = turn(1)
      yield* inSession(storage, (session) => session.append(more))
      expect(eventsText(storage)).toBe(EventsFile.render([...all, ...more]))
    })
  )

  it.live(
    "version: the same while nothing changes; another after each append, the fold and a rename; NotFound for none",
    () =>
      Effect.gen(function* () {
        const storage = tempDir()
        yield* seed(storage)
        const version = () => withStore(storage, (s) => s.version!(id))
        // Just written: within a file time's granularity a second write could leave the stamp as it is, so
        // each version is another (also from another store of this process).
        expect(yield* version()).not.toBe(yield* version())
        const settle = () => {
          const hourAgo = new Date(Date.now() - 3_600_000)
          const conversations = path.join(storage, "conversations")
          for (const d of fs.readdirSync(conversations).filter((n) => n.startsWith("17738399468")))
            for (const f of fs.readdirSync(path.join(conversations, d)))
              fs.utimesSync(path.join(conversations, d, f), hourAgo, hourAgo)
        }
        settle()
        const seen = [yield* version()]
        expect(yield* version()).toBe(seen[0])
        yield* inSession(storage, (session) =>
          Effect.gen(function* () {
            yield* session.append(turn(0))
            // Journaled, not folded: load sees it, so the version is another (settled: by its stamp alone).
            settle()
            seen.push(yield* version())
          })
        )
        // Folded into events.json on close.
        settle()
        seen.push(yield* version())
        const dir = path.join(storage, "conversations", "17738399468-t")
        fs.renameSync(dir, path.join(storage, "conversations", "17738399468-renamed"))
        settle()
        seen.push(yield* version())
        expect(new Set(seen).size).toBe(seen.length)
        const missing = yield* Effect.exit(withStore(storage, (s) => s.version!(ConversationId.parse("17000000001")!)))
        expect(Exit.isFailure(missing) && Cause.squash(missing.cause)).toMatchObject({ _tag: "ConversationNotFound" })
      })
  )

  it.effect("append validates against the current turn and a rejected batch writes nothing", () =>
    Effect.gen(function* () {
      const storage = tempDir()
      yield* seed(storage)
      yield* inSession(storage, (session) =>
        Effect.gen(function* () {
          yield* session.append(turn(0))
          const orphan = yield* Effect.exit(
            session.append([
              new ToolCallRequest({ timestamp: ts("07.2"), id: "ok", name: "x", arguments: {} }),
              new ToolCallResponse({ timestamp: ts("07.3"), id: "nope", content: "", is_error: false })
            ])
          )
          expect(Exit.isFailure(orphan) && String(orphan.cause)).toContain(
            `tool call response "nope" has no matching tool call request`
          )
          expect((yield* session.snapshot).length).toBe(2)
          const dupe = InquiryId.make("c.q.1")
          yield* session.append([
            new InquiryRequest({
              timestamp: ts("07.4"),
              id: dupe,
              source: InquirySource.user,
              question: { text: "?", answer_type: InquiryAnswerType.text }
            })
          ])
          yield* session.append([InquiryResponse.answered(ts("07.5"), dupe, "a")])
          const twice = yield* Effect.exit(session.append([InquiryResponse.answered(ts("07.6"), dupe, "b")]))
          expect(Exit.isFailure(twice) && String(twice.cause)).toContain(`already has a response`)
        })
      )
      expect(types((yield* withStore(storage, (s) => s.load(id))).entries)).toStrictEqual([
        "turn_start",
        "chat_request",
        "inquiry_request",
        "inquiry_response"
      ])
    })
  )

  it.effect(
    "a journal left by a crashed run (with a torn last line) is read by everyone and folded by the next open",
    () =>
      Effect.gen(function* () {
        const storage = tempDir()
        const dir = path.join(storage, "conversations", "17738399468-t")
        yield* seed(storage)
        // The appended entries themselves: the session gave them their event ids (JP RFD 097).
        const first = turn(0)
        yield* inSession(storage, (session) => session.append(first))
        // Simulate a run killed mid-append: journal lines the fold never saw, and half a line.
        const second = turn(1)
        const lines = second.map((e, i) =>
          JSON.stringify({
            at: 2 + i,
            base: String(Buffer.byteLength(eventsText(storage))),
            entry: EntryCodec.encodeEntry(e)
          })
        )
        fs.writeFileSync(
          path.join(dir, FileConversationStore.JOURNAL),
          lines.join("\n") + "\n" + `{"at":4,"entry":{"timest`
        )
        expect(types((yield* withStore(storage, (s) => s.load(id))).entries)).toStrictEqual([
          "turn_start",
          "chat_request",
          "turn_start",
          "chat_request"
        ])
        // Any command that opens it heals it, whatever it goes on to do.
        yield* inSession(storage, () => Effect.void)
        expect(fs.existsSync(path.join(dir, FileConversationStore.JOURNAL))).toBe(false)
        expect(eventsText(storage)).toBe(EventsFile.render([...first, ...second]))
        const check = yield* withStore(storage, (s) => s.check())
        expect(check.map((r) => [r.ok, r.roundtrip])).toStrictEqual([[true, "identical"]])
      })
  )

  it.effect("a fold cut short at any byte is finished by the next reader and opener; nothing is lost or doubled", () =>
    Effect.gen(function* () {
      const storage = tempDir()
      const dir = path.join(storage, "conversations", "17738399468-t")
      yield* seed(storage, turn(0))
      const before = fs.readFileSync(path.join(dir, "events.json"))
      const added = [ChatResponse.message(ts("30.0"), "done ✓"), ...turn(1)]
      const base = String(before.length)
      const journal = added
        .map((e, i) => JSON.stringify({ at: 2 + i, base, entry: EntryCodec.encodeEntry(e) }) + "\n")
        .join("")
      const foldLine = JSON.stringify({ fold: { base, cut: before.length - 3 } }) + "\n"
      const full = Buffer.from(EventsFile.render([...turn(0), ...added]))
      // Every instant of step 2: the tail written up to byte k (and the file not yet truncated).
      for (let k = before.length - 3; k <= full.length; k += 7) {
        const torn = Buffer.concat([full.subarray(0, k), before.subarray(Math.min(k, before.length))])
        fs.writeFileSync(path.join(dir, "events.json"), torn)
        fs.writeFileSync(path.join(dir, FileConversationStore.JOURNAL), journal + foldLine)
        expect(types((yield* withStore(storage, (s) => s.load(id))).entries)).toStrictEqual(
          types([...turn(0), ...added])
        )
        yield* inSession(storage, () => Effect.void)
        expect(fs.readFileSync(path.join(dir, "events.json"))).toStrictEqual(full)
        expect(fs.existsSync(path.join(dir, FileConversationStore.JOURNAL))).toBe(false)
      }
    })
  )

  it.effect(
    "a fold record about a file JP rewrote since (after a crash mid-fold) is ignored: JP's entries are never cut off",
    () =>
      Effect.gen(function* () {
        const storage = tempDir()
        const dir = path.join(storage, "conversations", "17738399468-t")
        yield* seed(storage, turn(0))
        const before = fs.readFileSync(path.join(dir, "events.json"))
        const added = [ChatResponse.message(ts("30.0"), "parley's reply")]
        const base = String(before.length)
        const journal =
          added.map((e, i) => JSON.stringify({ at: 2 + i, base, entry: EntryCodec.encodeEntry(e) }) + "\n").join("") +
          JSON.stringify({ fold: { base, cut: before.length - 3 } }) +
          "\n"
        const folded = [...turn(0), ...added]
        const jpTurn = [
          new TurnStart({ timestamp: ts("40.0") }),
          new ChatRequest({ timestamp: ts("40.1"), content: "JP's own turn" })
        ]
        // Killed before step 2 (JP saw the file without parley's reply) and after it (JP saw the reply).
        for (const jpSaw of [turn(0), folded]) {
          const jpWrote = EventsFile.render([...jpSaw, ...jpTurn])
          fs.writeFileSync(path.join(dir, "events.json"), jpWrote)
          fs.writeFileSync(path.join(dir, FileConversationStore.JOURNAL), journal)
          const seen = types((yield* withStore(storage, (s) => s.load(id))).entries)
          expect(seen).toStrictEqual(types([...jpSaw, ...jpTurn]))
          yield* inSession(storage, () => Effect.void)
          expect(eventsText(storage)).toBe(jpWrote)
          expect(fs.existsSync(path.join(dir, FileConversationStore.JOURNAL))).toBe(false)
        }
      })
  )

  it.effect(
    "a journal line holding arguments nested 5,000 deep folds into events.json, and reads back (no recursion limit: docs/decisions.md#json-depth)",
    () =>
      Effect.gen(function* () {
        const storage = tempDir()
        const dir = path.join(storage, "conversations", "17738399468-t")
        yield* seed(storage, turn(0))
        const before = eventsText(storage)
        const deep = `{"timestamp":"2026-03-18 13:19:30.0","type":"tool_call_request","id":"x","name":"n","arguments":{"d":${"[".repeat(5000)}"YQ=="${"]".repeat(5000)}}}`
        fs.writeFileSync(
          path.join(dir, FileConversationStore.JOURNAL),
          `{"at":2,"base":"${Buffer.byteLength(before)}","entry":${deep}}\n`
        )
        yield* inSession(storage, () => Effect.void)
        expect(fs.existsSync(path.join(dir, FileConversationStore.JOURNAL))).toBe(false)
        const entries = (yield* withStore(storage, (s) => s.load(id))).entries
        expect(types(entries).at(-1)).toBe("tool_call_request")
        let leaf: unknown = (entries.at(-1) as ToolCallRequest).arguments["d"]
        for (let i = 1; i < 5000; i++) leaf = (leaf as Array<unknown>)[0]
        expect(leaf).toStrictEqual(["a"])
      })
  )

  for (const [name, entry] of [["an entry with a numeric type", `{"type":5}`]] as const) {
    it.effect(
      `a journal line holding ${name} is never folded into JP's events.json: open fails naming the journal`,
      () =>
        Effect.gen(function* () {
          const storage = tempDir()
          const dir = path.join(storage, "conversations", "17738399468-t")
          yield* seed(storage, turn(0))
          const before = eventsText(storage)
          fs.writeFileSync(
            path.join(dir, FileConversationStore.JOURNAL),
            `{"at":2,"base":"${Buffer.byteLength(before)}","entry":${entry}}\n`
          )
          const exit = yield* Effect.exit(inSession(storage, () => Effect.void))
          expect(Exit.isFailure(exit) && Cause.squash(exit.cause)).toMatchObject({
            _tag: "ConversationCorrupt",
            file: path.join(dir, FileConversationStore.JOURNAL)
          })
          expect(eventsText(storage)).toBe(before)
          expect(fs.existsSync(path.join(dir, FileConversationStore.JOURNAL))).toBe(true)
        })
    )
  }

  it.effect("a discard that crashed before removing the journal does not bring the dropped events back", () =>
    Effect.gen(function* () {
      const storage = tempDir()
      const dir = path.join(storage, "conversations", "17738399468-t")
      yield* seed(storage)
      let journal = ""
      yield* inSession(storage, (session) =>
        Effect.gen(function* () {
          yield* session.append([...turn(0), ChatResponse.message(ts("07.2"), "a")])
          yield* session.append(turn(1))
          journal = fs.readFileSync(path.join(dir, FileConversationStore.JOURNAL), "utf8")
          expect(yield* session.discardIncompleteTurn).toBe(true)
          expect(types((yield* session.snapshot).entries)).toStrictEqual([
            "turn_start",
            "chat_request",
            "chat_response"
          ])
        })
      )
      fs.writeFileSync(path.join(dir, FileConversationStore.JOURNAL), journal)
      expect(types((yield* withStore(storage, (s) => s.load(id))).entries)).toStrictEqual([
        "turn_start",
        "chat_request",
        "chat_response"
      ])
      yield* inSession(storage, () => Effect.void)
      expect(types(EventsFile.parse(eventsText(storage), "events.json"))).toStrictEqual([
        "turn_start",
        "chat_request",
        "chat_response"
      ])
    })
  )

  it.effect("a temp file a writer killed mid-rewrite left is removed by the next open; a live writer's is kept", () =>
    Effect.gen(function* () {
      const storage = tempDir()
      const dir = path.join(storage, "conversations", "17738399468-t")
      yield* seed(storage, turn(0))
      // pid 2^22+1 is not alive (pid_max is at most 2^22).
      const dead = "events.json.4194305.k2j4x1.tmp"
      const live = `events.json.${process.ppid}.a1b2c3.tmp`
      for (const name of [dead, live]) fs.writeFileSync(path.join(dir, name), '[\n  {"half": ')
      yield* inSession(storage, () => Effect.void)
      expect(fs.readdirSync(dir).sort()).toStrictEqual(["base_config.json", "events.json", live, "metadata.json"])
    })
  )

  it.effect("renames the directory when the title changes, keeping other files", () =>
    Effect.gen(function* () {
      const storage = tempDir()
      yield* seed(storage, [], "Old title")
      fs.writeFileSync(path.join(storage, "conversations", "17738399468-old-title", "QUERY_MESSAGE.md"), "draft")
      yield* inSession(storage, (session) =>
        session.updateMetadata((m) => new ConversationMetadata.ConversationMetadata({ ...m, title: "New title!" }))
      )
      expect(fs.readdirSync(path.join(storage, "conversations")).filter((n) => !n.startsWith("."))).toStrictEqual([
        "17738399468-new-title"
      ])
      expect(
        fs.readFileSync(path.join(storage, "conversations", "17738399468-new-title", "QUERY_MESSAGE.md"), "utf8")
      ).toBe("draft")
    })
  )

  it.effect("open fails fast for a second holder, naming the pid; a stale lock is taken over and released", () =>
    Effect.gen(function* () {
      const storage = tempDir()
      yield* seed(storage)
      const lockFile = path.join(storage, "locks", "jp-c17738399468.lock")
      // A live foreign holder: our parent process, with its start time (what a holder records).
      fs.writeFileSync(
        lockFile,
        JSON.stringify({
          pid: process.ppid,
          acquired_at: "x",
          proc_start: yield* Effect.promise(() => FileLock.processStart(process.ppid))
        })
      )
      const held = yield* Effect.exit(inSession(storage, () => Effect.void))
      expect(Exit.isFailure(held) && String(held.cause)).toContain(`pid ${process.ppid}`)
      fs.writeFileSync(lockFile, JSON.stringify({ pid: 2 ** 22 + 12345, acquired_at: "x" }))
      yield* inSession(storage, () =>
        Effect.sync(() => expect(JSON.parse(fs.readFileSync(lockFile, "utf8")).pid).toBe(process.pid))
      )
      expect(fs.existsSync(lockFile)).toBe(false)
    })
  )

  it.effect("a create that fails after taking the id's lock lets go of it", () =>
    Effect.gen(function* () {
      const storage = tempDir()
      // conversations/ is a file: looking for the id's directory fails (ENOTDIR) once the lock is taken.
      fs.writeFileSync(path.join(storage, "conversations"), "")
      const failed = yield* Effect.exit(seed(storage))
      expect(Exit.isFailure(failed) && Cause.squash(failed.cause)).toMatchObject({ _tag: "StoreIoError" })
      expect(fs.existsSync(path.join(storage, "locks", "jp-c17738399468.lock"))).toBe(false)
      fs.rmSync(path.join(storage, "conversations"))
      yield* seed(storage)
      expect(types((yield* withStore(storage, (s) => s.load(id))).entries)).toStrictEqual([])
    })
  )

  it.effect(
    "create gives concurrent creators distinct ids; a half-made directory of a dead creator is invisible and swept",
    () =>
      Effect.gen(function* () {
        const storage = tempDir()
        const conversations = path.join(storage, "conversations")
        // What a creator killed mid-create leaves: a dot-named staging directory (pid 2^22+1 is not alive).
        fs.mkdirSync(path.join(conversations, ".parley-new-4194305-17738399468-x"), { recursive: true })
        fs.writeFileSync(path.join(conversations, ".parley-new-4194305-17738399468-x", "metadata.json"), "{")
        const ids = yield* withStore(storage, (store) =>
          Effect.forEach(
            Array.from({ length: 12 }, (_, i) => i),
            (i) =>
              Effect.scoped(
                Effect.map(
                  store.create({
                    metadata: ConversationMetadata.make({ title: `c${i}`, last_activated_at: ts("06.8") })
                  }),
                  (s) => s.id
                )
              ),
            { concurrency: "unbounded" }
          )
        )
        expect(new Set(ids).size).toBe(12)
        const listing = yield* withStore(storage, (store) => store.list())
        expect(listing.conversations.length).toBe(12)
        expect(listing.damaged).toStrictEqual([])
        expect(fs.readdirSync(conversations).filter((n) => n.startsWith(".parley-new-"))).toStrictEqual([])
        expect((yield* withStore(storage, (s) => s.check())).every((r) => r.ok && r.roundtrip === "identical")).toBe(
          true
        )
      })
  )
})

describe("bad input gives a clear error naming file and entry; nothing on disk changes", () => {
  const cases: Array<[string, (dir: string) => void, RegExp]> = [
    [
      "truncated JSON",
      (d) => fs.writeFileSync(path.join(d, "events.json"), `[\n  {"type": "turn_start"`),
      /events\.json: invalid JSON at line 2/
    ],
    [
      "a non-array",
      (d) => fs.writeFileSync(path.join(d, "events.json"), `{"type": "turn_start"}\n`),
      /events\.json: expected a JSON array/
    ],
    [
      "an entry without type",
      (d) =>
        fs.writeFileSync(
          path.join(d, "events.json"),
          `[{"type":"config_delta","delta":{}},{"timestamp":"2026-01-01 00:00:00.0"}]\n`
        ),
      /events\.json: entry 1: missing field "type"/
    ],
    [
      "a known type with wrong fields",
      (d) =>
        fs.writeFileSync(
          path.join(d, "events.json"),
          `[{"type":"config_delta"},{"timestamp":"2026-01-01 00:00:00.0","type":"tool_call_response","id":"a","content":"x","is_error":"no"}]\n`
        ),
      /events\.json: entry 1: tool_call_response: field "is_error" must be a boolean/
    ],
    [
      "corrupt metadata",
      (d) => fs.writeFileSync(path.join(d, "metadata.json"), `{"title": 3`),
      /metadata\.json: invalid JSON/
    ],
    [
      "metadata without last_activated_at",
      (d) => fs.writeFileSync(path.join(d, "metadata.json"), `{"title": "x"}\n`),
      /metadata\.json: missing field "last_activated_at"/
    ]
  ]
  for (const [name, damage, expected] of cases) {
    it.effect(name, () =>
      Effect.gen(function* () {
        const storage = tempDir()
        const dir = path.join(storage, "conversations", "17738399468-x")
        fs.mkdirSync(dir, { recursive: true })
        fs.writeFileSync(
          path.join(dir, "metadata.json"),
          `{\n  "title": "x",\n  "last_activated_at": "2026-01-01 00:00:00.0"\n}\n`
        )
        damage(dir)
        const before = snapshotTree(storage)
        const exit = yield* Effect.exit(withStore(storage, (store) => store.load(id)))
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit)) expect(String(exit.cause)).toMatch(expected)
        const check = yield* withStore(storage, (store) => store.check())
        const listing = yield* withStore(storage, (store) => store.list())
        expect(listing.conversations).toStrictEqual([])
        expect(listing.damaged.map((d) => d.reason).join()).toMatch(expected)
        expect(check.length).toBe(1)
        expect(check[0]!.ok).toBe(false)
        expect(check[0]!.error).toMatch(expected)
        const after = snapshotTree(storage)
        after.delete(path.join("conversations", FileConversationStore.INDEX)) // the listing's cache
        expect(after).toStrictEqual(before)
      })
    )
  }
})
