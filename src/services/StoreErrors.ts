/**
 * The errors of a conversation store (docs/storage.md; docs/decisions.md#errors-carry-data: errors
 * carry data, never a ready-made command line).
 *
 * Each error holds what a person or a program needs to act — the
 * conversation id, the file, the entry, the pid of the process holding the
 * lock — and its `message` says what happened in those terms. What to run
 * next (`parley conversation check ID`, with `--storage` when it was given)
 * is the CLI's to render (`src/cli/ErrorLine.ts` through `src/cli/Hint.ts`):
 * only the edge knows how parley was started and which flags must be
 * repeated for a command to work when pasted.
 *
 * They live apart from the `ConversationStore` contract so that
 * `ConversationSession` (which fails with {@link AppendRejected}) and the
 * store (which hands out sessions) do not import each other.
 *
 * @example
 * ```ts
 * import { ConversationCorrupt } from "parley"
 *
 * const error = new ConversationCorrupt({ id: "17738399468", file: "/s/conversations/17738399468/events.json", entry: 3, reason: "unknown type" })
 * error.message // "/s/conversations/17738399468/events.json: entry 3: unknown type"
 * ```
 *
 * @since 0.1.0
 */
import type {} from "effect/http-api/HttpApiSchema"
import * as Schema from "effect/Schema"

/** No conversation has this id (live or archived). */
export class ConversationNotFound extends Schema.TaggedError<ConversationNotFound>()(
  "ConversationNotFound",
  { id: Schema.String },
  { httpApiStatus: 404 }
) {
  override get message() {
    return `No conversation with id ${this.id}.`
  }
}

/** A conversation exists but one of its files cannot be decoded: the file and, when it is about one entry, its index. */
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

/**
 * Another process holds the conversation's write lock. `holder` is its pid
 * (absent when the lock file does not say, e.g. while it is being written);
 * `path` is the lock file, to remove by hand if that process is gone.
 * `host` is set by a lock that cannot go stale (PostgreSQL's advisory lock,
 * docs/postgres.md): the holder may run on another machine, and its lock ends with
 * its connection, so there is nothing to remove by hand.
 */
export class ConversationLocked extends Schema.TaggedError<ConversationLocked>()("ConversationLocked", {
  id: Schema.String,
  holder: Schema.optionalKey(Schema.Number),
  host: Schema.optionalKey(Schema.String),
  path: Schema.String
}) {
  override get message() {
    const on = this.host === undefined ? "" : ` on ${this.host}`
    const who =
      this.holder === undefined ? `another parley process${on}` : `another parley process (pid ${this.holder}${on})`
    return this.host === undefined
      ? `Conversation ${this.id} is being written by ${who}. Wait for it to finish, or remove ${this.path} if that process is gone.`
      : `Conversation ${this.id} is being written by ${who}. Wait for it to finish: its lock ends with that process.`
  }
}

/** `create` was asked for a specific id that is taken. */
export class ConversationExists extends Schema.TaggedError<ConversationExists>()("ConversationExists", {
  id: Schema.String
}) {
  override get message() {
    return `A conversation with id ${this.id} already exists. Pick another id, or omit it to get a fresh one.`
  }
}

/** A batch broke the current turn's rules (JP's `TurnMut`); nothing was written. */
export class AppendRejected extends Schema.TaggedError<AppendRejected>()("AppendRejected", {
  id: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `Cannot append to conversation ${this.id}: ${this.reason}`
  }
}

/**
 * A file system or database operation failed (permissions, disk full, …).
 * `server` is set when a database server went away or cannot be reached
 * (docs/postgres.md): nothing half-done was committed, and the same operation may
 * succeed once the server is back, so a run treats it like an interrupt.
 */
export class StoreIoError extends Schema.TaggedError<StoreIoError>()("StoreIoError", {
  path: Schema.String,
  reason: Schema.String,
  server: Schema.optionalKey(Schema.Struct({ host: Schema.String, database: Schema.String }))
}) {
  override get message() {
    return this.server === undefined
      ? `${this.path}: ${this.reason}`
      : `${this.path}: ${this.reason}. The PostgreSQL server at ${this.server.host} (database ${this.server.database}) went away or cannot be reached: check that it runs and accepts connections there`
  }
}

/** The errors of reading a conversation. */
export type StoreError = ConversationNotFound | ConversationCorrupt | StoreIoError

/** The errors of taking a conversation for writing. */
export type OpenError = StoreError | ConversationLocked
