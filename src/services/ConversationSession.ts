/**
 * The one open conversation (docs/storage.md; RFD 023 "Incremental Persistence").
 *
 * A `ConversationSession` is what `ConversationStore.open` / `create` hand
 * out for a scope: the cross-process lock is held, the entries live in a
 * `Ref`, and every change goes through it:
 *
 * - `append` is durable first, then visible, and the pair is atomic with
 *   respect to interruption: once an append has started it completes both
 *   steps, so nothing on disk is missing from what the program sees and
 *   nothing it sees is missing from disk.
 * - the incomplete-turn operations of RFD 023 (split, resume, discard,
 *   replace the pending query) are methods, so the turn rules have one home.
 * - closing the scope (the store's part) folds what is durable on disk,
 *   never a copy held in memory.
 *
 * {@link make} builds the session over a store's persistence primitives, so
 * every store (file, memory, your own) shares the same rules.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import type { ConversationSession } from "parley"
 *
 * const lastEvent = (session: ConversationSession.ConversationSession) =>
 *   Effect.map(session.snapshot, (s) => s.entries.at(-1))
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { ChatRequest } from "../domain/event/ChatRequest.ts"
import { isConversationEvent, type StreamEntry } from "../domain/event/ConversationEvent.ts"
import type { BaseConfig, Conversation } from "../domain/storage/Conversation.ts"
import type { ConversationId } from "../domain/storage/ConversationId.ts"
import type { ConversationMetadata } from "../domain/storage/ConversationMetadata.ts"
import * as EntryCodec from "../domain/storage/EntryCodec.ts"
import * as EventId from "../domain/storage/EventId.ts"
import * as IncompleteTurn from "../domain/stream/IncompleteTurn.ts"
import * as TurnAppend from "../domain/stream/TurnAppend.ts"
import * as SessionInStep from "./SessionInStep.ts"
import { AppendRejected, type StoreIoError } from "./StoreErrors.ts"

/**
 * The entries at one instant. `entries` is computed on first read, so taking
 * a snapshot costs O(1) and only a reader pays for the copy.
 */
export interface Snapshot {
  readonly length: number
  readonly entries: ReadonlyArray<StreamEntry>
}

/** The open conversation: read it, append to it, resume or discard its incomplete turn. */
export interface ConversationSession {
  readonly id: ConversationId
  readonly archived: boolean
  readonly baseConfig: BaseConfig
  /** The entries as they stand: everything durable, nothing more. */
  readonly snapshot: Effect.Effect<Snapshot>
  /** The metadata that closing the session writes. */
  readonly metadata: Effect.Effect<ConversationMetadata>
  /** The whole conversation as it stands. */
  readonly conversation: Effect.Effect<Conversation>
  /**
   * Appends to the current turn after validating the batch against it (JP's
   * `TurnMut` rules; a batch starting with `turn_start` opens a new turn).
   * Returns once the entries are on disk and visible; an interrupt that
   * arrives meanwhile waits for both.
   */
  append(entries: ReadonlyArray<StreamEntry>): Effect.Effect<void, AppendRejected | StoreIoError>
  /** The incomplete last turn (RFD 023), or `null` when the last turn is complete. */
  readonly incompleteTurn: Effect.Effect<IncompleteTurn.IncompleteTurn | null>
  /**
   * Prepares the incomplete turn for resuming and says how to resume it:
   * trailing bare `turn_start`s are dropped (appends must land in the
   * resumed turn). `null` when there is nothing to resume.
   */
  readonly resumeIncompleteTurn: Effect.Effect<IncompleteTurn.TurnAnalysis | null, StoreIoError>
  /** Drops the incomplete last turn, durably. False when there was none. */
  readonly discardIncompleteTurn: Effect.Effect<boolean, StoreIoError>
  /** Replaces the text of the incomplete turn's pending query (RFD 023 "edit"). */
  replacePendingQuery(content: string): Effect.Effect<void, StoreIoError>
  /**
   * Removes compactions, durably (`conversation compact --reset`): all of
   * them, or the one at this 0-based position among the compactions. Returns
   * how many were removed.
   */
  removeCompactions(which: "all" | number): Effect.Effect<number, StoreIoError>
  /** Changes the metadata written when the session closes (title, last activity). */
  updateMetadata(f: (metadata: ConversationMetadata) => ConversationMetadata): Effect.Effect<void>
}

/** What a store does for a session; everything else is shared. */
export interface SessionPersistence {
  /**
   * Makes `entries` durable after the first `at` entries; returns once they
   * are on disk. Called as the write starts, holding the session's writer
   * lock: a store that writes at once (memory) may write right there and
   * return the `Exit` (`Exit.void`), and the append is then done in that
   * one step. `entries` may be several appends' together (the ones that
   * waited while the write before them ran): all of them or none.
   */
  appendDurable(entries: ReadonlyArray<StreamEntry>, at: number): Effect.Effect<void, StoreIoError>
  /** Replaces the whole stream durably (discard, edit). */
  rewrite(entries: ReadonlyArray<StreamEntry>): Effect.Effect<void, StoreIoError>
}

/**
 * What the session holds between rewrites. An append changes it in place
 * (only the writer does, holding the permit); a rewrite replaces it whole.
 */
interface State {
  /** Append-only between rewrites, so a snapshot is (array, length). */
  readonly entries: Array<StreamEntry>
  hasEvents: boolean
  /** The current turn's request/response counts, advanced on every append. */
  readonly counts: TurnAppend.TurnCounts
  /** Every `event_id` the stream holds: a new entry's id is none of them (JP RFD 097). */
  readonly eventIds: EventId.Taken
}

const stateOf = (entries: ReadonlyArray<StreamEntry>): State => {
  const eventIds = new EventId.Taken()
  for (const e of entries) {
    const id = EntryCodec.eventIdOf(e)
    if (id !== undefined) eventIds.add(id)
  }
  return {
    entries: entries.slice(),
    hasEvents: entries.some(isConversationEvent),
    counts: TurnAppend.turnCounts(entries),
    eventIds
  }
}

/** Gives each appended entry without an `event_id` a fresh one, as JP's stream does on insertion. */
const assignEventIds = (entries: ReadonlyArray<StreamEntry>, taken: EventId.Taken): void => {
  for (const e of entries) {
    const id = EntryCodec.eventIdOf(e)
    if (id === undefined) EntryCodec.withEventId(e, taken.fresh())
    else taken.add(id)
  }
}

/**
 * The entries up to `length`, copied on first read. A class, so the getter
 * lives on the prototype: an object literal with its own getter costs far
 * more to make, and the coordinator takes a snapshot for every question.
 */
class LazySnapshot implements Snapshot {
  readonly length: number
  private copy: ReadonlyArray<StreamEntry> | undefined

  constructor(private readonly all: ReadonlyArray<StreamEntry>) {
    this.length = all.length
  }

  get entries(): ReadonlyArray<StreamEntry> {
    this.copy ??= this.all.slice(0, this.length)
    return this.copy
  }
}

const snapshotOf = (entries: ReadonlyArray<StreamEntry>): Snapshot => new LazySnapshot(entries)

/**
 * A writer waiting for the lock: `granted` once it is handed over. An
 * append's waiter carries its `batch`; the writer ahead of it may take that
 * batch into its own write (`taken`), and sets its `outcome` when that write
 * ends. `wake` resumes the waiter once it sleeps; `settled`, a waiter that
 * was interrupted after its batch was taken and waits for that write.
 */
interface Waiter<B, E> {
  granted: boolean
  wake: ((outcome: Exit.Exit<void, E> | undefined) => void) | undefined
  readonly batch: B | undefined
  taken: boolean
  outcome: Exit.Exit<void, E> | undefined
  /** Resumes an interrupt that waits for `outcome` (the write it is in has started). */
  settled: (() => void) | undefined
}

/** The most appends one write takes in (a bound on one write's size and on the wait of the first of them). */
const MAX_GROUP = 1000

/** A group write that gave fewer outcomes than batches: a defect, said rather than read as "the lock is yours". */
const MISSING = Exit.die(new Error("the group write gave no outcome for this append"))

/**
 * One writer at a time, in arrival order; waiting is interruptible, the
 * write is not. A write that finds the lock free (nearly every append) takes
 * it in the step that starts the write: Effect's Semaphore spends two more
 * steps and several closures per write, and the coordinator writes five
 * times per tool call. A release hands the lock straight to the oldest
 * waiter, so a writer arriving meanwhile cannot overtake it.
 *
 * Group commit: an append that gets the lock takes the appends waiting right
 * behind it (up to the first other writer) into one write, so a store that
 * syncs each write (the file store's `fdatasync`, a database round trip)
 * syncs once for all of them. Parallel tool calls each record their events:
 * one at a time, 1,000 calls took 5,000 syncs in a row.
 */
class WriteLock<B, E> {
  private held = false
  private readonly waiting: Array<Waiter<B, E>> = []

  /** Runs the write `start` makes, once the lock is ours, uninterruptibly. */
  exclusive<A, E2, R>(start: () => Effect.Effect<A, E2, R>): Effect.Effect<A, E2, R> {
    return Effect.uninterruptibleMask((restore) => {
      if (!this.held) {
        this.held = true
        return this.holding(start, undefined)
      }
      return Effect.flatMap(this.queue(undefined, restore), () => this.holding(start, undefined))
    })
  }

  /**
   * Writes `batch` with `one` once the lock is ours; with `group` when appends
   * wait behind it (their batches after this one, one outcome each, in order).
   * Taken into the write of a writer ahead, it has that write's outcome.
   */
  append(
    batch: B,
    one: (batch: B) => Effect.Effect<void, E>,
    group: (batches: ReadonlyArray<B>) => Effect.Effect<ReadonlyArray<Exit.Exit<void, E>>>
  ): Effect.Effect<void, E> {
    return Effect.uninterruptibleMask((restore) => {
      if (!this.held) {
        this.held = true
        return this.holdingAppend(batch, one, group)
      }
      return Effect.flatMap(this.queue(batch, restore), (outcome) =>
        outcome === undefined ? this.holdingAppend(batch, one, group) : outcome
      )
    })
  }

  /**
   * {@link append} begun in the caller's step, which must be an
   * uninterruptible step of a running fiber: with the lock free, the write
   * starts now and what it gives comes back (an `Exit` when it ended as it
   * started: the memory store), so the caller goes on in the same step; with
   * the lock held, the effect that waits in line (uninterruptibly, as an
   * append made in an uninterruptible region always did).
   */
  appendInStep(
    batch: B,
    one: (batch: B) => Effect.Effect<void, E>,
    group: (batches: ReadonlyArray<B>) => Effect.Effect<ReadonlyArray<Exit.Exit<void, E>>>
  ): Effect.Effect<void, E> {
    if (this.held) return this.append(batch, one, group)
    this.held = true
    return this.holdingAppend(batch, one, group)
  }

  /** Waits in line: `undefined` once the lock is ours, or the outcome of the write that took `batch`. */
  private queue(
    batch: B | undefined,
    restore: <A, E2, R>(effect: Effect.Effect<A, E2, R>) => Effect.Effect<A, E2, R>
  ): Effect.Effect<Exit.Exit<void, E> | undefined> {
    const waiter: Waiter<B, E> = {
      granted: false,
      wake: undefined,
      batch,
      taken: false,
      outcome: undefined,
      settled: undefined
    }
    this.waiting.push(waiter)
    return Effect.onExitPrimitive(
      restore(this.turnOf(waiter)),
      (exit) => (Exit.isFailure(exit) ? this.leave(waiter) : undefined),
      true
    )
  }

  /** The write `start(input)` makes, the lock released as it ends (`input` passed on, so no closure is made per append). */
  private holding<X, A, E2, R>(start: (input: X) => Effect.Effect<A, E2, R>, input: X): Effect.Effect<A, E2, R> {
    let write: Effect.Effect<A, E2, R>
    try {
      write = start(input)
    } catch (defect) {
      this.release()
      throw defect
    }
    // A write that is an Exit already finished as it started: the lock is free again in the same step.
    if (Exit.isExit(write)) {
      this.release()
      return write
    }
    return Effect.onExitPrimitive(write, () => this.release(), true)
  }

  /** An append holding the lock: alone (the usual case), or with the appends waiting right behind it. */
  private holdingAppend(
    batch: B,
    one: (batch: B) => Effect.Effect<void, E>,
    group: (batches: ReadonlyArray<B>) => Effect.Effect<ReadonlyArray<Exit.Exit<void, E>>>
  ): Effect.Effect<void, E> {
    if (this.waiting.length === 0 || this.waiting[0]!.batch === undefined) return this.holding(one, batch)
    const taken: Array<Waiter<B, E>> = []
    while (taken.length < MAX_GROUP && this.waiting.length > 0 && this.waiting[0]!.batch !== undefined) {
      const w = this.waiting.shift()!
      w.taken = true
      taken.push(w)
    }
    const batches = [batch, ...taken.map((w) => w.batch!)]
    const write = Effect.onExitPrimitive(
      Effect.suspend(() => group(batches)),
      (exit) => {
        // Cast: a write that died or was interrupted ended every batch in it the same way (its Exit has no value).
        for (let i = 0; i < taken.length; i++)
          this.settle(taken[i]!, Exit.isSuccess(exit) ? (exit.value[i + 1] ?? MISSING) : (exit as Exit.Exit<void>))
        return this.release()
      },
      true
    )
    return Effect.flatMap(write, (outcomes) => outcomes[0] ?? MISSING)
  }

  /** Gives a taken waiter its outcome: wakes it, or the interrupt that waits for it. */
  private settle(waiter: Waiter<B, E>, outcome: Exit.Exit<void, E>): void {
    waiter.outcome = outcome
    const wake = waiter.settled ?? (waiter.wake === undefined ? undefined : () => waiter.wake!(outcome))
    if (wake !== undefined) Fiber.getCurrent()!.currentDispatcher.scheduleTask(wake, 0)
  }

  /** Resumes once the lock is handed to `waiter` (with `undefined`), or its batch was written by the writer ahead (with the outcome). */
  private turnOf(waiter: Waiter<B, E>): Effect.Effect<Exit.Exit<void, E> | undefined> {
    return Effect.callback<Exit.Exit<void, E> | undefined>((resume) => {
      if (waiter.outcome !== undefined) return resume(Effect.succeed(waiter.outcome))
      if (waiter.granted) return resume(Effect.undefined)
      waiter.wake = (outcome) => resume(Effect.succeed(outcome))
    })
  }

  /**
   * Hands the lock to the oldest waiter, or frees it. Always called by a
   * running fiber (a writer's exit), which schedules the waiter's wake-up
   * rather than running it inside its own exit: a long queue must not nest.
   */
  private release(): undefined {
    const next = this.waiting.shift()
    if (next === undefined) {
      this.held = false
    } else {
      next.granted = true
      if (next.wake !== undefined) {
        const wake = next.wake
        Fiber.getCurrent()!.currentDispatcher.scheduleTask(() => wake(undefined), 0)
      }
    }
    return undefined
  }

  /**
   * An interrupted waiter leaves the queue, or passes the lock on if it was
   * handed over meanwhile. One whose batch was taken (at any step after it
   * joined the queue, even before it slept) waits for the write it is in:
   * an append that started finishes, durable and visible. This runs as the
   * wait ends, uninterruptibly, and checks the outcome as it registers, so
   * a write that ended meanwhile is not waited for.
   */
  private leave(waiter: Waiter<B, E>): Effect.Effect<void> | undefined {
    if (waiter.taken) {
      if (waiter.outcome !== undefined) return undefined
      return Effect.callback<void>((done) => {
        if (waiter.outcome !== undefined) return done(Effect.void)
        waiter.settled = () => done(Effect.void)
      })
    }
    if (waiter.granted) return this.release()
    this.waiting.splice(this.waiting.indexOf(waiter), 1)
    return undefined
  }
}

type AppendError = AppendRejected | StoreIoError

const rejected = (id: ConversationId, rejection: TurnAppend.AppendRejection): AppendRejected =>
  new AppendRejected({ id, reason: TurnAppend.describeRejection(rejection) })

/**
 * One append, validated against the state as its write starts. Written
 * without a generator: the coordinator appends five times per tool call.
 */
const writeOne =
  (state: Ref.Ref<State>, persistence: SessionPersistence, id: ConversationId) =>
  (batch: ReadonlyArray<StreamEntry>): Effect.Effect<void, AppendError> => {
    const s = Ref.getUnsafe(state)
    const result = TurnAppend.validateAgainst(s, batch)
    if (result._tag === "Rejected") return Effect.fail(rejected(id, result.rejection))
    assignEventIds(result.entries, s.eventIds)
    const visible = () => {
      // Durable: now visible. The array only grows here, so earlier snapshots stay valid.
      s.entries.push(...result.entries)
      TurnAppend.advance(s.counts, result.entries)
      s.hasEvents ||= result.entries.some(isConversationEvent)
    }
    const durable = persistence.appendDurable(result.entries, s.entries.length)
    if (!Exit.isExit(durable)) return Effect.map(durable, visible)
    // Written already (a store that writes at once).
    if (Exit.isSuccess(durable)) visible()
    return durable
  }

/**
 * Appends taken into one write (group commit): each batch is validated in
 * order against the state with the accepted ones before it (a tentative
 * pairing, so a rejected batch fails alone and changes nothing), all are
 * made durable by one `appendDurable`, then visible together. One outcome per
 * batch; a failed write fails every batch it held, and none is visible.
 */
const writeGroup =
  (state: Ref.Ref<State>, persistence: SessionPersistence, id: ConversationId) =>
  (batches: ReadonlyArray<ReadonlyArray<StreamEntry>>): Effect.Effect<ReadonlyArray<Exit.Exit<void, AppendError>>> => {
    const s = Ref.getUnsafe(state)
    const tail = { hasEvents: s.hasEvents, counts: s.counts.tentative() }
    const outcomes: Array<Exit.Exit<void, AppendError> | undefined> = []
    const accepted: Array<StreamEntry> = []
    for (const batch of batches) {
      const result = TurnAppend.validateAgainst(tail, batch)
      if (result._tag === "Rejected") {
        outcomes.push(Exit.fail(rejected(id, result.rejection)))
        continue
      }
      assignEventIds(result.entries, s.eventIds)
      TurnAppend.advance(tail.counts, result.entries)
      tail.hasEvents ||= result.entries.some(isConversationEvent)
      accepted.push(...result.entries)
      outcomes.push(undefined)
    }
    const done = (written: Exit.Exit<void, AppendError>) => outcomes.map((o) => o ?? written)
    if (accepted.length === 0) return Effect.succeed(done(Exit.void))
    return Effect.map(Effect.exit(persistence.appendDurable(accepted, s.entries.length)), (written) => {
      if (Exit.isSuccess(written)) {
        s.entries.push(...accepted)
        TurnAppend.advance(s.counts, accepted)
        s.hasEvents = tail.hasEvents
      }
      return done(written)
    })
  }

/**
 * A session over `persistence`, starting from `conversation` (as on disk).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { ConversationSession } from "parley"
 * import type { Conversation } from "parley"
 *
 * declare const conversation: Conversation.Conversation
 * const session = ConversationSession.make(conversation, {
 *   appendDurable: () => Effect.void, // where your store writes
 *   rewrite: () => Effect.void
 * })
 * ```
 */
export const make = (conversation: Conversation, persistence: SessionPersistence): Effect.Effect<ConversationSession> =>
  // Not a generator made here at run time: V8 would keep what it captured (every event of the session) past the
  // session, until a full collection (docs/benchmarks.md#coordinator).
  Effect.sync(() => {
    const state = Ref.makeUnsafe(stateOf(conversation.entries))
    const metadata = Ref.makeUnsafe(conversation.metadata)
    const writer = new WriteLock<ReadonlyArray<StreamEntry>, AppendError>()

    const snapshot = Effect.sync(() => snapshotOf(Ref.getUnsafe(state).entries))

    const one = writeOne(state, persistence, conversation.id)
    const group = writeGroup(state, persistence, conversation.id)
    const append = (batch: ReadonlyArray<StreamEntry>) =>
      batch.length === 0 ? Effect.void : writer.append(batch, one, group)
    const inStep: SessionInStep.InStep = {
      append,
      snapshot,
      appendInStep: (batch) => (batch.length === 0 ? Exit.void : writer.appendInStep(batch, one, group)),
      snapshotInStep: () => snapshotOf(Ref.getUnsafe(state).entries)
    }

    /** Replaces the stream on disk, then in memory. */
    const rewrite = (entries: ReadonlyArray<StreamEntry>) =>
      persistence.rewrite(entries).pipe(Effect.andThen(Ref.set(state, stateOf(entries))))

    const incompleteTurn = Effect.map(Ref.get(state), (s) => IncompleteTurn.splitIncompleteTurn(s.entries).incomplete)

    const resumeIncompleteTurn = writer.exclusive(() =>
      Effect.gen(function* () {
        const { complete, incomplete } = IncompleteTurn.splitIncompleteTurn((yield* Ref.get(state)).entries)
        if (incomplete === null) return null
        const resumable = IncompleteTurn.resumableEntries(incomplete)
        if (resumable.length !== incomplete.entries.length) yield* rewrite([...complete, ...resumable])
        return IncompleteTurn.analyze(incomplete)
      })
    )

    const discardIncompleteTurn = writer.exclusive(() =>
      Effect.gen(function* () {
        const kept = IncompleteTurn.discardIncompleteTurn((yield* Ref.get(state)).entries)
        if (kept === null) return false
        yield* rewrite(kept)
        return true
      })
    )

    const removeCompactions = (which: "all" | number) =>
      writer.exclusive(() =>
        Effect.gen(function* () {
          const entries = (yield* Ref.get(state)).entries
          let seen = -1
          const kept = entries.filter((e) => {
            if (e.type !== "compaction") return true
            seen++
            return which !== "all" && seen !== which
          })
          if (kept.length !== entries.length) yield* rewrite(kept)
          return entries.length - kept.length
        })
      )

    const replacePendingQuery = (content: string) =>
      writer.exclusive(() =>
        Effect.gen(function* () {
          const entries = (yield* Ref.get(state)).entries
          const at = entries.findLastIndex((e) => e.type === "chat_request")
          if (at < 0) return
          const next = entries.slice()
          const old = entries[at] as ChatRequest
          // The edited request is the same entry: it keeps its id, as an edit does in JP.
          const id = EntryCodec.eventIdOf(old)
          const edited = new ChatRequest({ ...old, content })
          next[at] = id === undefined ? edited : EntryCodec.withEventId(edited, id)
          yield* rewrite(next)
        })
      )

    const session: ConversationSession = {
      id: conversation.id,
      archived: conversation.archived,
      baseConfig: conversation.baseConfig,
      snapshot,
      metadata: Ref.get(metadata),
      conversation: Effect.map(Effect.all([Ref.get(state), Ref.get(metadata)]), ([s, m]) => ({
        ...conversation,
        metadata: m,
        entries: s.entries.slice()
      })),
      append,
      incompleteTurn,
      resumeIncompleteTurn,
      discardIncompleteTurn,
      replacePendingQuery,
      removeCompactions,
      updateMetadata: (f) => Ref.update(metadata, f)
    }
    SessionInStep.register(session, inStep)
    return session
  })
