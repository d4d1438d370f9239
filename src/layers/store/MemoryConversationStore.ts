/**
 * An in-memory `ConversationStore` for tests and for embedding parley in
 * another program. Same validation rules as the file store; entries go
 * through the storage codec on `save`/`append` so what a test reads back is
 * what disk would hold.
 *
 * @example
 * ```ts
 * import * as MemoryConversationStore from "./MemoryConversationStore.ts"
 * Effect.provide(program, MemoryConversationStore.layer())
 * ```
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import type { Conversation } from "../../domain/storage/Conversation.ts"
import { isConversationEvent, type StreamEntry } from "../../domain/event/ConversationEvent.ts"
import type { ConversationId } from "../../domain/storage/ConversationId.ts"
import * as ConversationId_ from "../../domain/storage/ConversationId.ts"
import * as Timestamp from "../../domain/event/Timestamp.ts"
import * as TurnAppend from "../../domain/stream/TurnAppend.ts"
import { summaryOf } from "./Summary.ts"
import {
  AppendRejected,
  ConversationLocked,
  ConversationNotFound,
  ConversationStore,
  type ConversationSummary
} from "../../services/ConversationStore.ts"

/** Builds an in-memory store, optionally seeded. */
export const make = (seed: ReadonlyArray<Conversation> = []) =>
  Effect.gen(function*() {
    const state = yield* Ref.make(new Map<string, Conversation>(seed.map((c) => [c.id, { ...c, entries: [...c.entries] }])))
    // Per conversation: the turn's request/response counts, kept current so an append costs O(batch).
    const counts = new Map<string, TurnAppend.TurnCounts>()
    const locks = new Set<string>()

    const get = (id: ConversationId) =>
      Ref.get(state).pipe(
        Effect.flatMap((m) => {
          const c = m.get(id)
          return c === undefined ? Effect.fail(new ConversationNotFound({ id })) : Effect.succeed(c)
        })
      )

    const summary = (c: Conversation): ConversationSummary => summaryOf(c, `memory:${ConversationId_.display(c.id)}`)

    return ConversationStore.of({
      list: (options) =>
        Ref.get(state).pipe(Effect.map((m) =>
          [...m.values()]
            .filter((c) => options?.archived === true || !c.archived)
            .map(summary)
            .sort((a, b) => Timestamp.compare(b.lastActivatedAt, a.lastActivatedAt))
        )),
      // Callers get a snapshot; the store keeps appending to its own array.
      load: (id) => Effect.map(get(id), (c) => ({ ...c, entries: c.entries.slice() })),
      save: (c) =>
        Effect.sync(() => counts.delete(c.id)).pipe(
          Effect.andThen(Ref.update(state, (m) => new Map(m).set(c.id, { ...c, entries: [...c.entries] })))
        ),
      append: (id, batch) =>
        Effect.gen(function*() {
          const c = yield* get(id)
          const entries = c.entries as Array<StreamEntry>
          let turn = counts.get(id)
          if (turn === undefined) {
            turn = TurnAppend.turnCounts(entries)
            counts.set(id, turn)
          }
          const result = TurnAppend.validateAgainst({ hasEvents: entries.some(isConversationEvent), counts: turn }, batch)
          if (result._tag === "Rejected") {
            return yield* new AppendRejected({ id, reason: TurnAppend.describeRejection(result.rejection) })
          }
          entries.push(...result.entries)
          TurnAppend.advance(turn, result.entries)
        }),
      lock: (id) =>
        Effect.acquireRelease(
          Effect.suspend(() => {
            if (locks.has(id)) return Effect.fail(new ConversationLocked({ id, pid: process.pid, lockFile: "memory" }))
            locks.add(id)
            return Effect.void
          }),
          () => Effect.sync(() => locks.delete(id))
        ),
      check: () => Ref.get(state).pipe(Effect.map((m) =>
        [...m.values()].map((c) => ({ id: c.id, path: `memory:${c.id}`, ok: true, roundtrip: "identical" as const }))
      )),
      remove: (id) => Ref.update(state, (m) => {
        counts.delete(id)
        const next = new Map(m)
        next.delete(id)
        return next
      })
    })
  })

/** The in-memory store as a layer (fresh state per build). */
export const layer = (seed: ReadonlyArray<Conversation> = []): Layer.Layer<ConversationStore> =>
  Layer.effect(ConversationStore, make(seed))
