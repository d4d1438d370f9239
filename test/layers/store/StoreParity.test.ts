/**
 * The memory store and the file store answer the same calls the same way
 * (issue 10): a program tested against memory behaves the same on disk.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { ChatRequest } from "../../../src/domain/event/ChatRequest.ts"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"
import { TurnStart } from "../../../src/domain/event/TurnStart.ts"
import * as ConversationId from "../../../src/domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../../src/domain/storage/ConversationMetadata.ts"
import * as FileConversationStore from "../../../src/layers/store/FileConversationStore.ts"
import * as MemoryConversationStore from "../../../src/layers/store/MemoryConversationStore.ts"
import { ConversationStore } from "../../../src/services/ConversationStore.ts"
import { tempDir } from "../../support/Fixtures.ts"

const ts = (s: string) => Timestamp.make(`2026-03-18 13:19:${s}`)
const a = ConversationId.parse("17738399461")!
const b = ConversationId.parse("17738399462")!
const missing = ConversationId.parse("17738399469")!

const stores: Array<[string, () => Layer.Layer<ConversationStore>]> = [
  ["memory", () => MemoryConversationStore.layer()],
  ["file", () => FileConversationStore.layer({ storageDir: tempDir() })]
]

/** What each call gave: its value (reduced to what both stores share) or its error's tag. */
const outcome = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>, view: (a: A) => unknown) =>
  Effect.match(effect, { onFailure: (e) => `fails ${e._tag}`, onSuccess: view })

const scenario = Effect.gen(function*() {
  const store = yield* ConversationStore
  for (const [id, title] of [[a, "first"], [b, "second"]] as const) {
    yield* Effect.scoped(Effect.flatMap(
      store.create({ id, metadata: ConversationMetadata.make({ title, last_activated_at: ts("00.0") }) }),
      (session) => session.append([new TurnStart({ timestamp: ts("01.0") }), new ChatRequest({ timestamp: ts("01.1"), content: title })])
    ))
  }
  return {
    listBefore: yield* outcome(store.list(), (l) => l.conversations.map((c) => c.id)),
    checkOne: yield* outcome(store.check(a), (rows) => rows.map((r) => [r.id, r.ok, r.roundtrip])),
    checkMissing: yield* outcome(store.check(missing), (rows) => rows.map((r) => r.id)),
    checkAll: yield* outcome(store.check(), (rows) => rows.map((r) => r.id).sort()),
    createTaken: yield* outcome(Effect.scoped(store.create({ id: a, metadata: ConversationMetadata.make({ last_activated_at: ts("00.0") }) })), () => "created"),
    openTwice: yield* outcome(Effect.scoped(Effect.andThen(store.open(a), store.open(a))), () => "opened"),
    removeMissing: yield* outcome(store.remove(missing), () => "removed"),
    removeOpen: yield* outcome(Effect.scoped(Effect.andThen(store.open(b), store.remove(b))), () => "removed"),
    remove: yield* outcome(store.remove(b), () => "removed"),
    listAfter: yield* outcome(store.list(), (l) => l.conversations.map((c) => [c.id, c.title, c.events]))
  }
})

describe("memory and file stores agree", () => {
  it.effect("list order on a tie, check (one, missing, all), create of a taken id, a second open, remove (missing, open elsewhere, present), list", () =>
    Effect.gen(function*() {
      const results = yield* Effect.forEach(stores, ([, layer]) => Effect.provide(scenario, layer()))
      const expected = {
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
      }
      for (const [i, [name]] of stores.entries()) expect({ store: name, ...results[i] }).toStrictEqual({ store: name, ...expected })
    }))
})
