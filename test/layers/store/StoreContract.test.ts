/**
 * One contract, three stores (docs/storage.md, docs/postgres.md#guarantees): the memory store, the file
 * store and the PostgreSQL store answer the same calls the same way, so a
 * program tested against memory behaves the same on disk and in a database.
 * Create/open/append/reopen, rejected appends, the incomplete-turn
 * operations, listing, check, remove, locks, ids that never collide, an
 * interrupt mid-append, and damage that stays local (file and PostgreSQL:
 * memory holds nothing to damage). PostgreSQL runs as a throwaway server
 * this file starts and stops; without its binaries those cases skip.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { ChatRequest } from "../../../src/domain/event/ChatRequest.ts"
import { ChatResponse } from "../../../src/domain/event/ChatResponse.ts"
import { InquiryAnswerType } from "../../../src/domain/event/InquiryAnswerType.ts"
import * as InquiryId from "../../../src/domain/event/InquiryId.ts"
import { InquiryRequest } from "../../../src/domain/event/InquiryRequest.ts"
import { InquiryResponse } from "../../../src/domain/event/InquiryResponse.ts"
import { InquirySource } from "../../../src/domain/event/InquirySource.ts"
import type { StreamEntry } from "../../../src/domain/event/ConversationEvent.ts"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"
import { ToolCallRequest } from "../../../src/domain/event/ToolCallRequest.ts"
import { ToolCallResponse } from "../../../src/domain/event/ToolCallResponse.ts"
import { TurnStart } from "../../../src/domain/event/TurnStart.ts"
import * as ConversationId from "../../../src/domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../../src/domain/storage/ConversationMetadata.ts"
import { incompleteSummary } from "../../../src/domain/stream/IncompleteTurn.ts"
import * as FileConversationStore from "../../../src/layers/store/FileConversationStore.ts"
import * as MemoryConversationStore from "../../../src/layers/store/MemoryConversationStore.ts"
import * as PgConversationStore from "../../../src/layers/store/pg/PgConversationStore.ts"
import { ConversationStore } from "../../../src/services/ConversationStore.ts"
import { tempDir } from "../../support/Fixtures.ts"
import { freshDatabase, type PgServer, pgSkip, psql, startPg } from "../../support/Pg.ts"

const ts = (s: string) => Timestamp.make(`2026-03-18 13:19:${s}`)
const a = ConversationId.parse("17738399461")!
const b = ConversationId.parse("17738399462")!
const missing = ConversationId.parse("17738399469")!
const types = (entries: ReadonlyArray<StreamEntry>) => entries.map((e) => e.type)
const turn = (n: number) => [
  new TurnStart({ timestamp: ts(`1${n}.0`) }),
  new ChatRequest({ timestamp: ts(`1${n}.1`), content: `q${n}` })
]
const meta = (title?: string) =>
  ConversationMetadata.make({ ...(title === undefined ? {} : { title }), last_activated_at: ts("00.0") })

let server: PgServer | undefined
beforeAll(async () => {
  if (pgSkip === undefined) server = await startPg()
}, 60_000)
afterAll(() => server?.stop())

/** A store under test: a fresh layer each time, and how to damage a conversation in it (when it can be). */
interface Subject {
  readonly name: string
  readonly skip: string | undefined
  /**
   * `damage` spoils a conversation's first entry; `listed` says whether the
   * listing still shows it (PostgreSQL lists from its columns and decodes
   * nothing, so only `check`, `load` and `open` meet the damaged entry).
   */
  readonly fresh: () => { layer: Layer.Layer<ConversationStore>; damage?: (id: string) => void; listed?: boolean }
}

const subjects: ReadonlyArray<Subject> = [
  { name: "memory", skip: undefined, fresh: () => ({ layer: MemoryConversationStore.layer() }) },
  {
    name: "file",
    skip: undefined,
    fresh: () => {
      const storageDir = tempDir()
      return {
        layer: FileConversationStore.layer({ storageDir }),
        damage: (id) => {
          const dir = fs.readdirSync(path.join(storageDir, "conversations")).find((n) => n.startsWith(id))!
          fs.writeFileSync(path.join(storageDir, "conversations", dir, "events.json"), '[\n  {"type": 7}\n]\n')
        }
      }
    }
  },
  {
    // As the CLI makes it: a session's close (fold, metadata, lock) with blocking file calls.
    name: "file, closing with blocking calls",
    skip: undefined,
    fresh: () => {
      const storageDir = tempDir()
      return {
        layer: FileConversationStore.layer({ storageDir, blockingClose: true }),
        damage: (id) => {
          const dir = fs.readdirSync(path.join(storageDir, "conversations")).find((n) => n.startsWith(id))!
          fs.writeFileSync(path.join(storageDir, "conversations", dir, "events.json"), '[\n  {"type": 7}\n]\n')
        }
      }
    }
  },
  {
    name: "postgres",
    skip: pgSkip,
    fresh: () => {
      const url = freshDatabase(server!)
      return {
        layer: Layer.orDie(PgConversationStore.layer({ url })),
        listed: true,
        damage: (id) =>
          psql(url, `UPDATE parley_events SET json = '  {"type": 7}' WHERE conversation_id = '${id}' AND seq = 0`)
      }
    }
  },
  {
    // A cluster runner's way (PgLock.shared): every session's lock and writes on two connections.
    name: "postgres, shared lock connections",
    skip: pgSkip,
    fresh: () => {
      const url = freshDatabase(server!)
      return {
        layer: Layer.orDie(PgConversationStore.layer({ url, lockConnections: 2 })),
        listed: true,
        damage: (id) =>
          psql(url, `UPDATE parley_events SET json = '  {"type": 7}' WHERE conversation_id = '${id}' AND seq = 0`)
      }
    }
  }
]

/** What each call gave: its value or its error's tag. */
const outcome = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>, view: (a: A) => unknown) =>
  Effect.match(effect, { onFailure: (e) => `fails ${e._tag}`, onSuccess: view })

const createWith = (id: ConversationId.ConversationId, title: string, entries: ReadonlyArray<StreamEntry>) =>
  ConversationStore.use((store) =>
    Effect.scoped(Effect.flatMap(store.create({ id, metadata: meta(title) }), (s) => s.append(entries)))
  )

for (const subject of subjects) {
  describe.skipIf(subject.skip !== undefined)(
    `the store contract: ${subject.name}${subject.skip === undefined ? "" : ` (skipped: ${subject.skip})`}`,
    () => {
      it.effect(
        "list order on a tie, check (one, missing, all), create of a taken id, a second open, remove (missing, open elsewhere, present), list",
        () =>
          Effect.gen(function* () {
            const store = yield* ConversationStore
            yield* createWith(a, "first", turn(0))
            yield* createWith(b, "second", turn(0))
            const got = {
              listBefore: yield* outcome(store.list(), (l) => l.conversations.map((c) => c.id)),
              checkOne: yield* outcome(store.check(a), (rows) => rows.map((r) => [r.id, r.ok, r.roundtrip])),
              checkMissing: yield* outcome(store.check(missing), (rows) => rows.map((r) => r.id)),
              checkAll: yield* outcome(store.check(), (rows) => rows.map((r) => r.id).sort()),
              createTaken: yield* outcome(Effect.scoped(store.create({ id: a, metadata: meta() })), () => "created"),
              openTwice: yield* outcome(Effect.scoped(Effect.andThen(store.open(a), store.open(a))), () => "opened"),
              removeMissing: yield* outcome(store.remove(missing), () => "removed"),
              removeOpen: yield* outcome(
                Effect.scoped(Effect.andThen(store.open(b), store.remove(b))),
                () => "removed"
              ),
              remove: yield* outcome(store.remove(b), () => "removed"),
              listAfter: yield* outcome(store.list(), (l) => l.conversations.map((c) => [c.id, c.title, c.events]))
            }
            expect(got).toStrictEqual({
              listBefore: [b, a], // same activity: the newer id first
              checkOne: [[a, true, "identical"]],
              checkMissing: "fails ConversationNotFound",
              checkAll: [a, b],
              createTaken: "fails ConversationExists",
              openTwice: "fails ConversationLocked",
              removeMissing: "fails ConversationNotFound",
              removeOpen: "fails ConversationLocked",
              remove: "removed",
              listAfter: [[a, "first", 2]]
            })
          }).pipe(Effect.provide(subject.fresh().layer))
      )

      it.effect(
        "appends are visible at once and to other readers; a reopened session continues; the title and activity are kept on close",
        () =>
          Effect.gen(function* () {
            const store = yield* ConversationStore
            const all = [
              ...turn(0),
              new ToolCallRequest({ timestamp: ts("20.0"), id: "c1", name: "x", arguments: { a: [1, "é"] } })
            ]
            yield* Effect.scoped(
              Effect.gen(function* () {
                const session = yield* store.create({ id: a, metadata: meta("t") })
                yield* session.append(all.slice(0, 2))
                yield* session.append(all.slice(2))
                expect(types((yield* session.snapshot).entries)).toStrictEqual(types(all))
                expect(types((yield* store.load(a)).entries)).toStrictEqual(types(all))
                yield* session.updateMetadata(() =>
                  ConversationMetadata.make({ title: "renamed", last_activated_at: ts("30.0") })
                )
              })
            )
            yield* Effect.scoped(
              Effect.gen(function* () {
                const session = yield* store.open(a)
                yield* session.append([
                  new ToolCallResponse({ timestamp: ts("20.1"), id: "c1", content: "ok", is_error: false }),
                  ChatResponse.message(ts("20.2"), "done")
                ])
              })
            )
            const back = yield* store.load(a)
            expect(types(back.entries)).toStrictEqual([
              "turn_start",
              "chat_request",
              "tool_call_request",
              "tool_call_response",
              "chat_response"
            ])
            expect(back.entries[2]).toStrictEqual(all[2])
            expect(back.metadata.title).toBe("renamed")
            const [row] = (yield* store.list()).conversations
            expect([row!.title, row!.events, row!.lastActivatedAt, row!.incomplete]).toStrictEqual([
              "renamed",
              5,
              "2026-03-18 13:19:30.0",
              null
            ])
            expect((yield* store.check(a))[0]).toMatchObject({ ok: true, roundtrip: "identical" })
          }).pipe(Effect.provide(subject.fresh().layer))
      )

      it.effect("a rejected batch writes nothing", () =>
        Effect.gen(function* () {
          const store = yield* ConversationStore
          yield* Effect.scoped(
            Effect.gen(function* () {
              const session = yield* store.create({ id: a, metadata: meta("t") })
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
            })
          )
          expect(types((yield* store.load(a)).entries)).toStrictEqual(["turn_start", "chat_request"])
        }).pipe(Effect.provide(subject.fresh().layer))
      )

      it.effect(
        "the incomplete turn: listed, split, resumed (bare turn_starts dropped), its query replaced, discarded — durably",
        () =>
          Effect.gen(function* () {
            const store = yield* ConversationStore
            yield* createWith(a, "t", [
              ...turn(0),
              ChatResponse.message(ts("10.5"), "a"),
              ...turn(1),
              new ToolCallRequest({ timestamp: ts("11.2"), id: "c", name: "slow", arguments: {} })
            ])
            expect((yield* store.list()).conversations[0]!.incomplete).toStrictEqual({
              state: "pending-tool-execution"
            })
            yield* Effect.scoped(
              Effect.gen(function* () {
                const session = yield* store.open(a)
                expect((yield* session.incompleteTurn)?.entries.at(-1)?.type).toBe("tool_call_request")
                yield* session.replacePendingQuery("q1 edited")
              })
            )
            expect(
              (yield* store.load(a)).entries
                .filter((e) => e.type === "chat_request")
                .map((e) => (e as ChatRequest).content)
            ).toStrictEqual(["q0", "q1 edited"])
            yield* Effect.scoped(
              Effect.gen(function* () {
                const session = yield* store.open(a)
                expect(yield* session.discardIncompleteTurn).toBe(true)
                expect(yield* session.discardIncompleteTurn).toBe(false)
                yield* session.append(turn(2))
                yield* session.append([new TurnStart({ timestamp: ts("40.1") })])
              })
            )
            // JP's turn rule: a turn with no chat_response after its last request is the incomplete one; discarding it leaves nothing here.
            expect(types((yield* store.load(a)).entries)).toStrictEqual(["turn_start", "chat_request", "turn_start"])
            yield* Effect.scoped(
              Effect.gen(function* () {
                const session = yield* store.open(a)
                yield* session.resumeIncompleteTurn
              })
            )
            const back = yield* store.load(a)
            expect(types(back.entries)).toStrictEqual(["turn_start", "chat_request"])
            expect((yield* store.list()).conversations[0]).toMatchObject({
              events: 2,
              incomplete: { state: "pending-llm-response" }
            })
            expect((yield* store.check(a))[0]).toMatchObject({ ok: true, roundtrip: "identical" })
          }).pipe(Effect.provide(subject.fresh().layer))
      )

      it.effect(
        "the listing's incomplete state after every single-event append, the session still open, is the whole stream's (one call, its question, answer, result, follow-up)",
        () =>
          Effect.gen(function* () {
            const store = yield* ConversationStore
            const steps: ReadonlyArray<StreamEntry> = [
              new TurnStart({ timestamp: ts("20.0") }),
              new ChatRequest({ timestamp: ts("20.1"), content: "go" }),
              new ToolCallRequest({ timestamp: ts("20.2"), id: "c1", name: "write_note", arguments: {} }),
              new InquiryRequest({
                timestamp: ts("20.3"),
                id: InquiryId.make("c1.overwrite.1"),
                source: InquirySource.tool("write_note"),
                question: { text: "Overwrite?", answer_type: InquiryAnswerType.boolean }
              }),
              InquiryResponse.answered(ts("20.4"), InquiryId.make("c1.overwrite.1"), true),
              new ToolCallResponse({ timestamp: ts("20.5"), id: "c1", content: "ok", is_error: false }),
              ChatResponse.message(ts("20.6"), "done"),
              new TurnStart({ timestamp: ts("21.0") }),
              new ChatRequest({ timestamp: ts("21.1"), content: "again" })
            ]
            const seen = yield* Effect.scoped(
              Effect.gen(function* () {
                const session = yield* store.create({ id: a, metadata: meta("steps") })
                const out: Array<unknown> = []
                for (let i = 0; i < steps.length; i++) {
                  yield* session.append([steps[i]!])
                  const row = (yield* store.list()).conversations.find((c) => c.id === a)
                  out.push([row === undefined ? "unlisted" : row.incomplete, incompleteSummary(steps.slice(0, i + 1))])
                }
                return out
              })
            )
            // Each row: [what the listing said, what the whole-stream rule says]; both move through every state.
            for (const [listed, rule] of seen as Array<[unknown, unknown]>) expect(listed).toStrictEqual(rule)
            expect((seen as Array<[unknown, unknown]>).map(([, rule]) => rule)).toStrictEqual([
              null,
              { state: "pending-llm-response" },
              { state: "pending-tool-execution" },
              { state: "waiting-for-input", tool: "write_note" },
              { state: "pending-tool-execution" },
              { state: "pending-follow-up" },
              null,
              null,
              { state: "pending-llm-response" }
            ])
            expect((yield* store.list()).conversations[0]!.incomplete).toStrictEqual({ state: "pending-llm-response" })
          }).pipe(Effect.provide(subject.fresh().layer))
      )

      it.effect("12 concurrent creates get 12 distinct ids, all listed", () =>
        Effect.gen(function* () {
          const store = yield* ConversationStore
          const ids = yield* Effect.forEach(
            Array.from({ length: 12 }, (_, i) => i),
            (i) => Effect.scoped(Effect.map(store.create({ metadata: meta(`n${i}`) }), (s) => s.id)),
            { concurrency: "unbounded" }
          )
          expect(new Set(ids).size).toBe(12)
          expect((yield* store.list()).conversations.map((c) => c.id).sort()).toStrictEqual([...ids].sort())
        }).pipe(Effect.provide(subject.fresh().layer))
      )

      it.live("an append interrupted as it starts is either durable and visible, or neither", () =>
        Effect.gen(function* () {
          const store = yield* ConversationStore
          yield* createWith(a, "t", turn(0))
          yield* Effect.scoped(
            Effect.gen(function* () {
              const session = yield* store.open(a)
              for (let i = 0; i < 20; i++) {
                const fiber = yield* Effect.forkChild(
                  session.append([
                    new ToolCallRequest({ timestamp: ts(`5${i % 10}.${i}`), id: `c${i}`, name: "x", arguments: {} })
                  ])
                )
                if (i % 2 === 1) yield* Effect.yieldNow
                yield* Fiber.interrupt(fiber)
                const seen = (yield* session.snapshot).length
                expect((yield* store.load(a)).entries.length).toBe(seen)
              }
            })
          )
        }).pipe(Effect.provide(subject.fresh().layer))
      )

      const damaging = subject.fresh
      it.effect.skipIf(subject.name === "memory")(
        "damage stays local: a damaged conversation is named by list and check, the others read; open fails naming it",
        () => {
          const fresh = damaging()
          return Effect.gen(function* () {
            const store = yield* ConversationStore
            yield* createWith(a, "good", turn(0))
            yield* createWith(b, "bad", turn(0))
            fresh.damage!(b)
            const listing = yield* store.list()
            if (fresh.listed === true) {
              expect(listing.conversations.map((c) => c.id)).toStrictEqual([b, a])
            } else {
              expect(listing.conversations.map((c) => c.id)).toStrictEqual([a])
              expect(listing.damaged.map((d) => d.id)).toStrictEqual([b])
              expect(listing.damaged[0]!.reason).toContain("entry 0")
            }
            const checked = yield* store.check()
            expect(checked.map((r) => [r.id, r.ok])).toStrictEqual([
              [a, true],
              [b, false]
            ])
            expect(checked[1]!.error).toContain("entry 0")
            const opened = yield* Effect.exit(Effect.scoped(store.open(b)))
            expect(Exit.isFailure(opened) && String(opened.cause)).toContain("entry 0")
            expect(Exit.isFailure(opened) && String(opened.cause)).toContain(b)
            expect((yield* store.load(a)).entries.length).toBe(2)
          }).pipe(Effect.provide(fresh.layer))
        }
      )
    }
  )
}
