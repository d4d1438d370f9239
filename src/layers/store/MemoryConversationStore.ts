/**
 * An in-memory `ConversationStore` for tests and for embedding parley in
 * another program. Sessions follow the same rules as the file store's (they
 * share `ConversationSession.make`). A new or rewritten stream goes through
 * the storage codec, so what a test reads back is what disk would hold;
 * appends go straight onto the stored array (O(event), like the journal).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { MemoryConversationStore } from "parley"
 *
 * declare const program: Effect.Effect<void>
 * Effect.provide(program, MemoryConversationStore.layer())
 * ```
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import type { StreamEntry } from "../../domain/event/ConversationEvent.ts"
import * as Timestamp from "../../domain/event/Timestamp.ts"
import type { Conversation } from "../../domain/storage/Conversation.ts"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as EntryCodec from "../../domain/storage/EntryCodec.ts"
import { ConversationStore, type NewConversation } from "../../services/ConversationStore.ts"
import * as ConversationSession from "../../services/ConversationSession.ts"
import { ConversationExists, ConversationLocked, ConversationNotFound } from "../../services/StoreErrors.ts"
import { summaryOf } from "./Summary.ts"

/** What disk would give back: encoded, then decoded. */
const stored = (entries: ReadonlyArray<StreamEntry>): Array<StreamEntry> =>
  entries.map((e) => EntryCodec.decodeEntry(EntryCodec.encodeEntry(e)))

/** Builds an in-memory store, optionally seeded. */
export const make = (seed: ReadonlyArray<Conversation> = []) =>
  // The store and its `open` make no generator at run time (every stored event would outlive its use:
  // docs/benchmarks.md#coordinator); `create`, called far less often, still does.
  Effect.sync(() => {
    const state = Ref.makeUnsafe(
      new Map<string, Conversation>(seed.map((c) => [c.id, { ...c, entries: [...c.entries] }]))
    )
    const locks = new Set<string>()

    const get = (id: ConversationId.ConversationId) =>
      Effect.flatMap(Ref.get(state), (m) => {
        const c = m.get(id)
        return c === undefined ? Effect.fail(new ConversationNotFound({ id })) : Effect.succeed(c)
      })

    const put = (id: string, f: (c: Conversation) => Conversation) =>
      Ref.update(state, (m) => {
        const c = m.get(id)
        return c === undefined ? m : new Map(m).set(id, f(c))
      })

    const lock = (id: string) =>
      Effect.acquireRelease(
        Effect.suspend(() => {
          if (locks.has(id)) return Effect.fail(new ConversationLocked({ id, holder: process.pid, path: "memory" }))
          locks.add(id)
          return Effect.void
        }),
        () => Effect.sync(() => locks.delete(id))
      )

    const openLocked = (id: ConversationId.ConversationId) =>
      Effect.flatMap(get(id), (conversation) => {
        // The stored array is this store's own (never handed out), so it can grow in place.
        let kept = conversation.entries as Array<StreamEntry>
        return ConversationSession.make(conversation, {
          // Called as the write starts: memory is written at once, so the append takes one step.
          appendDurable: (entries) => {
            kept.push(...entries)
            return Exit.void
          },
          rewrite: (entries) =>
            Effect.suspend(() => {
              kept = stored(entries)
              return put(id, (c) => ({ ...c, entries: kept }))
            })
        }).pipe(
          Effect.tap((session) =>
            Effect.addFinalizer(() =>
              Effect.flatMap(session.metadata, (metadata) => put(id, (c) => ({ ...c, metadata })))
            )
          )
        )
      })

    const create = (init: NewConversation) =>
      Effect.gen(function* () {
        const taken = yield* Ref.get(state)
        let id = init.id
        if (id !== undefined && (taken.has(id) || locks.has(id))) return yield* new ConversationExists({ id })
        if (id === undefined) {
          let n = BigInt(ConversationId.fromEpochMillis(yield* Clock.currentTimeMillis))
          while (taken.has(String(n)) || locks.has(String(n))) n++
          id = String(n) as ConversationId.ConversationId
        }
        const newId = id
        yield* lock(newId)
        yield* Ref.update(state, (m) =>
          new Map(m).set(newId, {
            id: newId,
            archived: false,
            metadata: init.metadata,
            baseConfig: init.baseConfig ?? { _tag: "File", text: "{}\n" },
            entries: stored(init.entries ?? [])
          })
        )
        return yield* openLocked(newId)
      })

    return ConversationStore.of({
      list: (options) =>
        Effect.map(Ref.get(state), (m) => ({
          conversations: [...m.values()]
            .filter((c) => options?.archived === true || !c.archived)
            .map((c) => summaryOf(c, `memory:${ConversationId.display(c.id)}`))
            .sort((a, b) => Timestamp.compare(b.lastActivatedAt, a.lastActivatedAt) || (a.id < b.id ? 1 : -1)),
          damaged: []
        })),
      load: (id) => Effect.map(get(id), (c) => ({ ...c, entries: c.entries.slice() })),
      open: (id) => lock(id).pipe(Effect.andThen(openLocked(id))),
      create,
      // As the file store: one conversation when an id is given (NotFound when there is none), else all.
      check: (id) =>
        Effect.flatMap(Ref.get(state), (m) => {
          const targets = [...m.values()].filter((c) => id === undefined || c.id === id)
          return id !== undefined && targets.length === 0
            ? Effect.fail(new ConversationNotFound({ id }))
            : Effect.succeed(
                targets.map((c) => ({ id: c.id, path: `memory:${c.id}`, ok: true, roundtrip: "identical" as const }))
              )
        }),
      remove: (id) =>
        Effect.scoped(
          Effect.andThen(
            lock(id),
            Effect.flatMap(get(id), () =>
              Ref.update(state, (m) => {
                const next = new Map(m)
                next.delete(id)
                return next
              })
            )
          )
        )
    })
  })

/** The in-memory store as a layer (fresh state per build). */
export const layer = (seed: ReadonlyArray<Conversation> = []): Layer.Layer<ConversationStore> =>
  Layer.effect(ConversationStore, make(seed))
