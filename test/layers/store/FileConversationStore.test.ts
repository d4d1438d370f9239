import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { ChatRequest } from "../../../src/domain/event/ChatRequest.ts"
import { ChatResponse } from "../../../src/domain/event/ChatResponse.ts"
import * as Conversation from "../../../src/domain/storage/Conversation.ts"
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
import { ConversationStore } from "../../../src/services/ConversationStore.ts"
import { copyToTemp, corpora, snapshotTree, tempDir } from "../../support/Fixtures.ts"

const withStore = <A, E>(storageDir: string, f: (store: ConversationStore["Service"]) => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
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
    new ToolCallRequest({ timestamp: ts("07.2"), id: tcid, name: "write_note", arguments: { path: "a.txt", n: 2, flags: [true, null] } }),
    new InquiryRequest({ timestamp: ts("07.3"), id: InquiryId.forToolQuestion(tcid, "overwrite", 1), source: InquirySource.tool("write_note"), question: { text: "Overwrite a.txt?", answer_type: InquiryAnswerType.boolean, default: true } }),
    InquiryResponse.answered(ts("07.4"), InquiryId.forToolQuestion(tcid, "overwrite", 1), true),
    new InquiryRequest({ timestamp: ts("07.5"), id: InquiryId.forToolQuestion(tcid, "note", 1), source: InquirySource.assistant, question: { text: "Anything else?", answer_type: InquiryAnswerType.text } }),
    InquiryResponse.answered(ts("07.6"), InquiryId.forToolQuestion(tcid, "note", 1), null),
    new InquiryRequest({ timestamp: ts("07.7"), id: InquiryId.forToolQuestion(tcid, "token", 1), source: InquirySource.tool("write_note"), question: { text: "API token?", answer_type: InquiryAnswerType.secret } }),
    InquiryResponse.redacted(ts("07.8"), InquiryId.forToolQuestion(tcid, "token", 1)),
    ...["user", "backend_error", "no_prompt_backend", "assistant_routing_denied", "some_future_variant"].flatMap((reason, i) => [
      new InquiryRequest({ timestamp: ts(`08.${i}`), id: InquiryId.forToolQuestion(tcid, `q${i}`, 1), source: InquirySource.user, question: { text: `q${i}?`, answer_type: InquiryAnswerType.select(["a", { value: 2, description: "two" }]) } }),
      InquiryResponse.cancelled(ts(`08.${i}5`), InquiryId.forToolQuestion(tcid, `q${i}`, 1), reason)
    ]),
    EntryCodec.decodeEntry({ timestamp: ts("09.0"), type: "inquiry_request", id: "call_1.legacy", source: { source: "tool", name: "write_note" }, question: { text: "old?", answer_type: { type: "boolean" }, default: true } }),
    EntryCodec.decodeEntry({ timestamp: ts("09.1"), type: "inquiry_response", id: "call_1.legacy", answer: true }),
    EntryCodec.decodeEntry({ type: "mystery_kind", timestamp: ts("09.2"), payload: { deep: [1, 2] }, metadata: { x: "not decoded" } }),
    new ToolCallResponse({ timestamp: ts("09.3"), id: tcid, content: "wrote 12 bytes\n", is_error: false }),
    EntryCodec.decodeEntry({ type: "config_delta", timestamp: ts("09.4"), delta: { assistant: { model: { id: "x" } } } }),
    ChatResponse.message(ts("09.5"), "Done.")
  ]
}

describe("FileConversationStore", () => {
  // The subset always; the whole corpus when ../shared is beside the clone (the name says why it was skipped).
  for (const corpus of corpora) it.effect.skipIf(corpus.absent)(`load → save of every conversation of ${corpus.label}${corpus.absent ? ` (skipped: ${corpus.skipNote})` : ""} leaves every byte and mtime as it was`, () =>
    Effect.gen(function*() {
      const storage = copyToTemp(corpus.dir)
      const before = snapshotTree(path.join(storage, "conversations"))
      const mtimes = () => [...before.keys()].map((f) => fs.statSync(path.join(storage, "conversations", f)).mtimeMs)
      const m0 = mtimes()
      yield* withStore(storage, (store) =>
        Effect.gen(function*() {
          const rows = yield* store.list({ archived: true })
          expect(rows.length).toBe(corpus.conversations)
          for (const row of rows) {
            const c = yield* store.load(row.id)
            yield* store.save(c)
          }
        }))
      const after = snapshotTree(path.join(storage, "conversations"))
      after.delete(FileConversationStore.INDEX)
      expect(after).toStrictEqual(before)
      expect(mtimes()).toStrictEqual(m0) // identical files are not rewritten
    }))

  it.effect("a conversation holding every RFD 082 shape saves and re-loads identically", () =>
    Effect.gen(function*() {
      const storage = tempDir()
      const entries = everyShape()
      const c: Conversation.Conversation = { ...Conversation.make({ id, title: "Every shape", now: ts("06.8") }), entries }
      const text = yield* withStore(storage, (store) =>
        Effect.gen(function*() {
          yield* store.save(c)
          const back = yield* store.load(id)
          expect(back.entries.length).toBe(entries.length)
          for (let i = 0; i < entries.length; i++) expect(back.entries[i]).toStrictEqual(entries[i])
          yield* store.save(back)
          return fs.readFileSync(path.join(storage, "conversations", "17738399468-every-shape", "events.json"), "utf8")
        }))
      // Written events use RFD 082 shapes; the legacy flat response stays flat.
      expect(text).toContain(`"outcome": "redacted"`)
      expect(text).toContain(`"reason": "some_future_variant"`)
      expect(text).toContain(`"id": "call_1.overwrite.1"`)
      expect(text).toContain(`"answer_type": {\n        "type": "secret"\n      }`)
      expect(text).toContain(`"type": "mystery_kind"`)
      expect(text).toContain(`"x": "not decoded"`)
      const legacy = JSON.parse(text).find((e: { id?: string; type: string }) => e.type === "inquiry_response" && e.id === "call_1.legacy")
      expect(Object.keys(legacy)).toStrictEqual(["timestamp", "type", "id", "answer"])
      const meta = fs.readFileSync(path.join(storage, "conversations", "17738399468-every-shape", "metadata.json"), "utf8")
      expect(meta).toBe(`{\n  "title": "Every shape",\n  "last_activated_at": "2026-03-18 13:19:06.8"\n}\n`)
    }))

  it.effect("append journals durably and save folds it into JP's events.json", () =>
    Effect.gen(function*() {
      const storage = tempDir()
      const dir = path.join(storage, "conversations", "17738399468-t")
      yield* withStore(storage, (store) =>
        Effect.gen(function*() {
          yield* store.save(Conversation.make({ id, title: "t", now: ts("06.8") }))
          yield* store.append(id, [new TurnStart({ timestamp: ts("07.0") }), new ChatRequest({ timestamp: ts("07.1"), content: "hi" })])
          yield* store.append(id, [new ToolCallRequest({ timestamp: ts("07.2"), id: "c1", name: "x", arguments: {} })])
          expect(fs.readFileSync(path.join(dir, "events.json"), "utf8")).toBe("[]\n")
          expect(fs.readFileSync(path.join(dir, FileConversationStore.JOURNAL), "utf8").split("\n").length).toBe(4)
          // A second store instance (another process's view) sees every appended event.
          const other = yield* withStore(storage, (s) => s.load(id))
          expect(other.entries.map((e) => e.type)).toStrictEqual(["turn_start", "chat_request", "tool_call_request"])
          yield* store.save(yield* store.load(id))
        }))
      expect(fs.existsSync(path.join(dir, FileConversationStore.JOURNAL))).toBe(false)
      expect(JSON.parse(fs.readFileSync(path.join(dir, "events.json"), "utf8")).map((e: { type: string }) => e.type))
        .toStrictEqual(["turn_start", "chat_request", "tool_call_request"])
    }))

  it.effect("append validates against the current turn and a rejected batch writes nothing", () =>
    Effect.gen(function*() {
      const storage = tempDir()
      yield* withStore(storage, (store) =>
        Effect.gen(function*() {
          yield* store.save(Conversation.make({ id, title: "t", now: ts("06.8") }))
          yield* store.append(id, [new TurnStart({ timestamp: ts("07.0") }), new ChatRequest({ timestamp: ts("07.1"), content: "hi" })])
          const orphan = yield* Effect.exit(store.append(id, [
            new ToolCallRequest({ timestamp: ts("07.2"), id: "ok", name: "x", arguments: {} }),
            new ToolCallResponse({ timestamp: ts("07.3"), id: "nope", content: "", is_error: false })
          ]))
          expect(Exit.isFailure(orphan) && String(orphan.cause)).toContain(`tool call response "nope" has no matching tool call request`)
          expect((yield* store.load(id)).entries.length).toBe(2)
          const dupe = InquiryId.make("c.q.1")
          yield* store.append(id, [new InquiryRequest({ timestamp: ts("07.4"), id: dupe, source: InquirySource.user, question: { text: "?", answer_type: InquiryAnswerType.text } })])
          yield* store.append(id, [InquiryResponse.answered(ts("07.5"), dupe, "a")])
          const twice = yield* Effect.exit(store.append(id, [InquiryResponse.answered(ts("07.6"), dupe, "b")]))
          expect(Exit.isFailure(twice) && String(twice.cause)).toContain(`already has a response`)
        }))
    }))

  it.effect("a torn journal line (crash mid-append) is ignored; entries folded before a crash are not duplicated", () =>
    Effect.gen(function*() {
      const storage = tempDir()
      const dir = path.join(storage, "conversations", "17738399468-t")
      yield* withStore(storage, (store) =>
        Effect.gen(function*() {
          yield* store.save(Conversation.make({ id, title: "t", now: ts("06.8") }))
          yield* store.append(id, [new TurnStart({ timestamp: ts("07.0") }), new ChatRequest({ timestamp: ts("07.1"), content: "hi" })])
        }))
      const journal = fs.readFileSync(path.join(dir, FileConversationStore.JOURNAL), "utf8")
      // Simulate: save renamed events.json, then crashed before removing the journal,
      // and a later append was torn mid-line.
      yield* withStore(storage, (store) => Effect.flatMap(store.load(id), (c) => store.save(c)))
      fs.writeFileSync(path.join(dir, FileConversationStore.JOURNAL), journal + `{"at":2,"entry":{"timestamp":"2026-03`)
      const c = yield* withStore(storage, (store) => store.load(id))
      expect(c.entries.map((e) => e.type)).toStrictEqual(["turn_start", "chat_request"])
    }))

  it.effect("after a torn last line, the next append cuts it off and both loads see every reported event", () =>
    Effect.gen(function*() {
      const storage = tempDir()
      const dir = path.join(storage, "conversations", "17738399468-t")
      yield* withStore(storage, (store) =>
        Effect.gen(function*() {
          yield* store.save(Conversation.make({ id, title: "t", now: ts("06.8") }))
          yield* store.append(id, [new TurnStart({ timestamp: ts("07.0") }), new ChatRequest({ timestamp: ts("07.1"), content: "hi" })])
        }))
      fs.appendFileSync(path.join(dir, FileConversationStore.JOURNAL), `{"at":2,"base":"x","entry":{"timest`)
      yield* withStore(storage, (store) =>
        Effect.gen(function*() {
          expect((yield* store.load(id)).entries.length).toBe(2)
          yield* store.append(id, [ChatResponse.message(ts("07.2"), "hello")])
        }))
      const c = yield* withStore(storage, (store) => store.load(id))
      expect(c.entries.map((e) => e.type)).toStrictEqual(["turn_start", "chat_request", "chat_response"])
      expect(fs.readFileSync(path.join(dir, FileConversationStore.JOURNAL), "utf8").endsWith("}\n")).toBe(true)
    }))

  it.effect("a save that shrinks events.json and crashes before removing the journal does not bring the dropped events back", () =>
    Effect.gen(function*() {
      const storage = tempDir()
      const dir = path.join(storage, "conversations", "17738399468-t")
      yield* withStore(storage, (store) =>
        Effect.gen(function*() {
          yield* store.save(Conversation.make({ id, title: "t", now: ts("06.8") }))
          yield* store.append(id, [new TurnStart({ timestamp: ts("07.0") }), new ChatRequest({ timestamp: ts("07.1"), content: "one" })])
          yield* store.append(id, [ChatResponse.message(ts("07.2"), "a")])
          yield* store.append(id, [new TurnStart({ timestamp: ts("07.3") }), new ChatRequest({ timestamp: ts("07.4"), content: "two" })])
        }))
      const journal = fs.readFileSync(path.join(dir, FileConversationStore.JOURNAL), "utf8")
      // Discard the incomplete second turn, then "crash" before the journal's removal.
      yield* withStore(storage, (store) => Effect.flatMap(store.load(id), (c) => store.save({ ...c, entries: c.entries.slice(0, 3) })))
      fs.writeFileSync(path.join(dir, FileConversationStore.JOURNAL), journal)
      const c = yield* withStore(storage, (store) => store.load(id))
      expect(c.entries.map((e) => e.type)).toStrictEqual(["turn_start", "chat_request", "chat_response"])
    }))

  it.effect("renames the directory when the title changes, keeping other files", () =>
    Effect.gen(function*() {
      const storage = tempDir()
      yield* withStore(storage, (store) =>
        Effect.gen(function*() {
          const c = Conversation.make({ id, title: "Old title", now: ts("06.8") })
          yield* store.save(c)
          fs.writeFileSync(path.join(storage, "conversations", "17738399468-old-title", "QUERY_MESSAGE.md"), "draft")
          const loaded = yield* store.load(id)
          yield* store.save({ ...loaded, metadata: new (loaded.metadata.constructor as typeof import("../../../src/domain/storage/ConversationMetadata.ts").ConversationMetadata)({ ...loaded.metadata, title: "New title!" }) })
        }))
      expect(fs.readdirSync(path.join(storage, "conversations")).filter((n) => !n.startsWith("."))).toStrictEqual(["17738399468-new-title"])
      expect(fs.readFileSync(path.join(storage, "conversations", "17738399468-new-title", "QUERY_MESSAGE.md"), "utf8")).toBe("draft")
    }))

  it.effect("the lock fails fast for a second holder, naming the pid", () =>
    Effect.gen(function*() {
      const storage = tempDir()
      const lockFile = path.join(storage, "locks", "jp-c17738399468.lock")
      fs.mkdirSync(path.dirname(lockFile), { recursive: true })
      // A live foreign holder: our parent process.
      fs.writeFileSync(lockFile, JSON.stringify({ pid: process.ppid, acquired_at: "x" }))
      const held = yield* Effect.exit(withStore(storage, (store) => Effect.scoped(store.lock(id))))
      expect(Exit.isFailure(held) && String(held.cause)).toContain(`pid ${process.ppid}`)
      // A stale lock (dead pid) is taken over and released afterwards.
      fs.writeFileSync(lockFile, JSON.stringify({ pid: 2 ** 22 + 12345, acquired_at: "x" }))
      yield* withStore(storage, (store) => Effect.scoped(Effect.gen(function*() {
        yield* store.lock(id)
        expect(JSON.parse(fs.readFileSync(lockFile, "utf8")).pid).toBe(process.pid)
      })))
      expect(fs.existsSync(lockFile)).toBe(false)
    }))
})

describe("bad input gives a clear error naming file and entry; nothing on disk changes", () => {
  const cases: Array<[string, (dir: string) => void, RegExp]> = [
    ["truncated JSON", (d) => fs.writeFileSync(path.join(d, "events.json"), `[\n  {"type": "turn_start"`), /events\.json: invalid JSON at line 2/],
    ["a non-array", (d) => fs.writeFileSync(path.join(d, "events.json"), `{"type": "turn_start"}\n`), /events\.json: expected a JSON array/],
    ["an entry without type", (d) => fs.writeFileSync(path.join(d, "events.json"), `[{"type":"config_delta","delta":{}},{"timestamp":"2026-01-01 00:00:00.0"}]\n`), /events\.json: entry 1: missing field "type"/],
    ["a known type with wrong fields", (d) => fs.writeFileSync(path.join(d, "events.json"), `[{"type":"config_delta"},{"timestamp":"2026-01-01 00:00:00.0","type":"tool_call_response","id":"a","content":"x","is_error":"no"}]\n`), /events\.json: entry 1: tool_call_response: field "is_error" must be a boolean/],
    ["corrupt metadata", (d) => fs.writeFileSync(path.join(d, "metadata.json"), `{"title": 3`), /metadata\.json: invalid JSON/],
    ["metadata without last_activated_at", (d) => fs.writeFileSync(path.join(d, "metadata.json"), `{"title": "x"}\n`), /metadata\.json: missing field "last_activated_at"/]
  ]
  for (const [name, damage, expected] of cases) {
    it.effect(name, () =>
      Effect.gen(function*() {
        const storage = tempDir()
        const dir = path.join(storage, "conversations", "17738399468-x")
        fs.mkdirSync(dir, { recursive: true })
        fs.writeFileSync(path.join(dir, "metadata.json"), `{\n  "title": "x",\n  "last_activated_at": "2026-01-01 00:00:00.0"\n}\n`)
        damage(dir)
        const before = snapshotTree(storage)
        const exit = yield* Effect.exit(withStore(storage, (store) => store.load(id)))
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit)) expect(String(exit.cause)).toMatch(expected)
        const check = yield* withStore(storage, (store) => store.check())
        expect(check.length).toBe(1)
        expect(check[0]!.ok).toBe(false)
        expect(check[0]!.error).toMatch(expected)
        expect(snapshotTree(storage)).toStrictEqual(before)
      }))
  }
})
