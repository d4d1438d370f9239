/**
 * Where conversations live: list, load, save, append and lock.
 *
 * `append` is the per-event persistence path: it validates the batch against
 * the current turn (JP's `TurnMut` rules) and returns only once the entries
 * are durable. `save` writes JP's format atomically and skips identical files.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { ConversationStore } from "./ConversationStore.ts"
 * const program = Effect.gen(function*() {
 *   const store = yield* ConversationStore
 *   const conversation = yield* store.load(id)
 *   yield* store.append(id, [event])
 * })
 * ```
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { Conversation } from "../domain/storage/Conversation.ts"
import type { StreamEntry } from "../domain/event/ConversationEvent.ts"
import type { ConversationId } from "../domain/storage/ConversationId.ts"

export class ConversationNotFound extends Schema.TaggedError<ConversationNotFound>()("ConversationNotFound", {
  id: Schema.String
}) {
  override get message() {
    return `No conversation with id ${this.id}. Run \`parley conversation ls --archived\` to see the ids.`
  }
}

export class ConversationCorrupt extends Schema.TaggedError<ConversationCorrupt>()("ConversationCorrupt", {
  id: Schema.String,
  file: Schema.String,
  entry: Schema.optionalKey(Schema.Number),
  reason: Schema.String
}) {
  override get message() {
    return `${this.file}${this.entry === undefined ? "" : `: entry ${this.entry}`}: ${this.reason}`
  }
}

export class ConversationLocked extends Schema.TaggedError<ConversationLocked>()("ConversationLocked", {
  id: Schema.String,
  pid: Schema.Number,
  lockFile: Schema.String
}) {
  override get message() {
    return `Conversation ${this.id} is being written by another parley process (pid ${this.pid}). Wait for it to finish, or remove ${this.lockFile} if that process is gone.`
  }
}

export class AppendRejected extends Schema.TaggedError<AppendRejected>()("AppendRejected", {
  id: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `Cannot append to conversation ${this.id}: ${this.reason}`
  }
}

export class StoreIoError extends Schema.TaggedError<StoreIoError>()("StoreIoError", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `${this.path}: ${this.reason}`
  }
}

export type StoreError = ConversationNotFound | ConversationCorrupt | StoreIoError

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
  /** Where it lives (a directory for the file layer). */
  readonly path: string
}

/** The result of decoding and re-encoding one conversation (`conversation check`). */
export interface CheckResult {
  readonly id: string
  readonly path: string
  readonly ok: boolean
  readonly roundtrip: "identical" | "changed" | null
  readonly error?: string
}

export class ConversationStore extends Context.Service<ConversationStore, {
  /** Conversations, newest activity first; archived ones only when asked. */
  list(options?: { readonly archived?: boolean }): Effect.Effect<ReadonlyArray<ConversationSummary>, StoreError>
  /** The whole conversation, including events appended since the last save. */
  load(id: ConversationId): Effect.Effect<Conversation, StoreError>
  /** Writes the conversation in JP's format (atomic per file; identical files untouched). */
  save(conversation: Conversation): Effect.Effect<void, StoreError>
  /**
   * Appends events to the current turn, durably, after validating them
   * against that turn. A batch starting with `turn_start` starts a new turn.
   */
  append(id: ConversationId, entries: ReadonlyArray<StreamEntry>): Effect.Effect<void, StoreError | AppendRejected>
  /** Holds the cross-process write lock for the scope; fails fast if another process has it. */
  lock(id: ConversationId): Effect.Effect<void, ConversationLocked | StoreIoError, Scope.Scope>
  /** Decodes and re-encodes stored conversations without writing anything. */
  check(id?: ConversationId): Effect.Effect<ReadonlyArray<CheckResult>, StoreError>
  /** Removes a conversation (used by fork tests and discard flows). */
  remove(id: ConversationId): Effect.Effect<void, StoreError>
}>()("parley/ConversationStore") {}
