/**
 * Where conversations live (docs/storage.md): list, read, create, open, check.
 *
 * A conversation is changed only through a {@link ConversationSession}, a
 * scoped handle that `open` (an existing conversation) or `create` (a new
 * one, with an id unique across processes) hands out. While the scope is
 * open the session holds the cross-process lock; closing the scope folds
 * what is durable on disk back into JP's files and releases the lock.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { ConversationStore } from "parley"
 * import type { ConversationId, StreamEntry } from "parley"
 *
 * declare const id: ConversationId.ConversationId
 * declare const event: StreamEntry
 *
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const store = yield* ConversationStore
 *   const session = yield* store.open(id) // lock taken, leftovers folded
 *   yield* session.append([event])        // durable, then visible
 * })) // scope closed: journal folded into events.json, lock released
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { StreamEntry } from "../domain/event/ConversationEvent.ts"
import type { BaseConfig, Conversation } from "../domain/storage/Conversation.ts"
import type { ConversationId } from "../domain/storage/ConversationId.ts"
import type { ConversationMetadata } from "../domain/storage/ConversationMetadata.ts"
import type { Label } from "../domain/storage/Labels.ts"
import type { LastError } from "../domain/run/LastError.ts"
import type { WaitingQuestion } from "../domain/stream/OpenQuestions.ts"
import type { QueuedMessage, Surface, When, Withdrawn } from "../domain/storage/QueuedMessage.ts"
import type { ConversationSession } from "./ConversationSession.ts"
import type { ConversationExists, ConversationLocked, OpenError, StoreError, StoreIoError } from "./StoreErrors.ts"

// The errors are not re-exported here but by ConversationStore.ts, the public module: this one is
// what `conversation ls` imports, and a re-export would load the error classes, and effect/Schema
// with them (docs/decisions.md#fast-start, start-up).

/** The incomplete state of a conversation's last turn (RFD 023 "conversation ls"). */
export interface IncompleteSummary {
  readonly state: "waiting-for-input" | "pending-tool-execution" | "pending-follow-up" | "pending-llm-response"
  readonly tool?: string
}

/** One row of a listing: cheap to compute, cached by the file layer. */
export interface ConversationSummary {
  readonly id: ConversationId
  readonly title: string | null
  readonly events: number
  readonly lastEventAt: string | null
  readonly lastActivatedAt: string
  readonly archived: boolean
  readonly incomplete: IncompleteSummary | null
  /**
   * The estimated size, in tokens, of what a provider is shown of it (its
   * compactions applied; JP's characters / 4; no system prompt or tools).
   */
  readonly tokens: number
  /** Its labels as JP reads them (JP RFD 101): keys sorted, each with its values. */
  readonly labels: ReadonlyArray<Label>
  /** Where it lives (a directory for the file layer). */
  readonly path: string
  /** The error its last run ended in, kept until its next run (`metadata.json`'s `parley_last_error`); `null`: none. */
  readonly lastError: LastError | null
  /**
   * The open questions of its turn waiting for input (`parley inbox`), when
   * the store keeps them with its listing (the file and memory stores);
   * absent otherwise, and a reader loads the conversation for them.
   */
  readonly waiting?: ReadonlyArray<WaitingQuestion> | undefined
}

/** A conversation a listing could not read: listed as damaged, and named so a person can look. */
export interface DamagedConversation {
  readonly id: string
  readonly path: string
  readonly reason: string
  /** Whether it lives among the archived conversations. */
  readonly archived: boolean
}

/** What `list` found: readable conversations (newest activity first) and damaged ones. */
export interface Listing {
  readonly conversations: ReadonlyArray<ConversationSummary>
  readonly damaged: ReadonlyArray<DamagedConversation>
}

/** The result of decoding and re-encoding one conversation (`conversation check`). */
export interface CheckResult {
  readonly id: string
  readonly path: string
  readonly ok: boolean
  readonly roundtrip: "identical" | "changed" | null
  readonly error?: string
}

/** What a new conversation starts with (`create`). */
export interface NewConversation {
  /** A specific id (tests, imports); by default the next free id for "now". */
  readonly id?: ConversationId
  readonly metadata: ConversationMetadata
  readonly baseConfig?: BaseConfig
  readonly entries?: ReadonlyArray<StreamEntry>
}

/**
 * The messages queued for a conversation while a turn runs (`domain/storage/QueuedMessage.ts`):
 * kept beside it (a private file next to `events.json`; a table in PostgreSQL),
 * never inside its events, so JP's readers see them only once delivered.
 */
export interface MessageQueue {
  /**
   * Queues a message; what it became (its id: the order it is delivered in).
   * `nonce`: the sender's own tag, when a sender may send one message twice
   * (a cluster message delivered again): a message with it already queued is
   * returned, not queued again.
   */
  enqueue(
    id: ConversationId,
    message: { readonly message: string; readonly surface: Surface; readonly when: When; readonly nonce?: string }
  ): Effect.Effect<QueuedMessage, StoreError>
  /** Every message ever queued, in id order, with its state (a reader filters the delivered by the events). */
  list(id: ConversationId): Effect.Effect<ReadonlyArray<QueuedMessage>, StoreError>
  /** The run that holds the conversation takes message `n` to deliver it: a later withdraw is too late. */
  take(id: ConversationId, n: number): Effect.Effect<void, StoreError>
  /** Withdraws message `n` unless a run took it first. */
  withdraw(id: ConversationId, n: number): Effect.Effect<Withdrawn, StoreError>
}

/**
 * Where conversations live, as a service: list, load, check, remove, and
 * `open` / `create` a scoped {@link ConversationSession}. Live:
 * `FileConversationStore.layer({ storageDir })` (JP's layout); tests and
 * embedding: `MemoryConversationStore.layer([...])`.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { ConversationStore, MemoryConversationStore } from "parley"
 *
 * const listed = ConversationStore.use((store) => store.list()).pipe(Effect.provide(MemoryConversationStore.layer()))
 * ```
 */
export class ConversationStore extends Context.Service<
  ConversationStore,
  {
    /** Conversations, newest activity first; archived ones only when asked. Damaged ones are reported, not fatal. */
    list(options?: { readonly archived?: boolean }): Effect.Effect<Listing, StoreIoError>
    /** A read-only snapshot: the files plus everything journaled since (no lock taken). */
    load(id: ConversationId): Effect.Effect<Conversation, StoreError>
    /**
     * A text that changes whenever what `load` returns may have changed, so a
     * reader can keep what it made of a load (the page `parley serve` drew)
     * until then. The file store's is its directory and the size, time and
     * inode of each file `load` reads: the stamp its listing trusts. Absent:
     * the store cannot tell, and a reader loads every time.
     */
    version?(id: ConversationId): Effect.Effect<string, StoreError>
    /**
     * Takes the conversation for writing for the scope: the lock first (fails
     * fast if another process has it), then any journal an earlier run left is
     * folded in. Closing the scope folds and releases.
     */
    open(id: ConversationId): Effect.Effect<ConversationSession, OpenError, Scope.Scope>
    /**
     * Creates a conversation under an id no other process can take (reserved
     * atomically), complete on disk before it becomes visible, and opens it.
     */
    create(init: NewConversation): Effect.Effect<ConversationSession, OpenError | ConversationExists, Scope.Scope>
    /** Decodes and re-encodes stored conversations without writing anything. */
    check(id?: ConversationId): Effect.Effect<ReadonlyArray<CheckResult>, StoreError>
    /** Removes a conversation; fails with {@link ConversationLocked} while a session (of any process) has it open. */
    remove(id: ConversationId): Effect.Effect<void, OpenError>
    /** Its queued messages, when the store keeps them (absent: messages cannot be queued). */
    readonly messages?: MessageQueue
  }
>()("parley/ConversationStore") {}
