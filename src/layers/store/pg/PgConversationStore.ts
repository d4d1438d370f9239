/**
 * The `ConversationStore` in PostgreSQL (docs/postgres.md), with the file store's
 * guarantees:
 *
 * - durable before visible: an append is one transaction (its entry rows and
 *   the conversation's listing columns) on the connection of the session's
 *   lock,
 *   committed before the session's `Ref` shows it; the session makes the
 *   pair uninterruptible, so an interrupt leaves it committed and visible or
 *   not there at all.
 * - locks that cannot go stale: `open` / `create` take the conversation's
 *   advisory lock for the scope (`PgLock`), on a connection of its own or,
 *   with `lockConnections`, on one of a few the process's locks share; a
 *   second writer fails at once naming the holder's pid and host.
 * - ids never collide: `create` inserts the conversation row under the
 *   lock of a fresh id; the primary key decides between racing processes.
 * - listing reads `parley_conversations` only; a conversation that cannot
 *   be decoded is reported by id, never fatal for the others. A session
 *   keeps the listing columns as it appends: the incomplete state is folded
 *   from each batch (`IncompleteTurn.LastTurn`, the listing's own rule),
 *   so an append into a long open turn costs what it appends.
 * - loading decodes the entries row by row as they stream in: the whole
 *   stream's text is never held (a 94 MB conversation peaks below the file
 *   store; bench/pg.ts).
 *
 * @example
 * ```ts
 * import * as PgConversationStore from "parley/layers/store/pg/PgConversationStore"
 * const layer = PgConversationStore.layer({ url: "postgres://parley@127.0.0.1:5432/parley" })
 * ```
 *
 * @since 0.1.0
 */
import * as Predicate from "effect/Predicate"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as Migrator from "effect/sql/Migrator"
import { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type { PgClient } from "@effect/sql-pg"
import type { StreamEntry } from "../../../domain/event/ConversationEvent.ts"
import * as Timestamp from "../../../domain/event/Timestamp.ts"
import type { Conversation } from "../../../domain/storage/Conversation.ts"
import * as ConversationId from "../../../domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../../domain/storage/ConversationMetadata.ts"
import * as JsonText from "../../../domain/storage/JsonText.ts"
import * as Labels from "../../../domain/storage/Labels.ts"
import * as IncompleteTurn from "../../../domain/stream/IncompleteTurn.ts"
import * as LastErrorModel from "../../../domain/run/LastError.ts"
import type { LastError } from "../../../domain/run/LastError.ts"
import type { MissingPackage } from "../../../domain/package/MissingPackage.ts"
import * as LoadPackage from "../../LoadPackage.ts"
import * as PgMessageQueue from "./PgMessageQueue.ts"
import {
  type CheckResult,
  type ConversationSummary,
  ConversationStore,
  type DamagedConversation,
  type NewConversation
} from "../../../services/ConversationStore.ts"
import * as ConversationSession from "../../../services/ConversationSession.ts"
import {
  ConversationCorrupt,
  ConversationExists,
  ConversationLocked,
  ConversationNotFound,
  StoreIoError
} from "../../../services/StoreErrors.ts"
import { MIGRATIONS_TABLE, migrations } from "./Migrations.ts"
import * as PgLock from "./PgLock.ts"
import * as Rows from "./Rows.ts"
import * as ServerLost from "./ServerLost.ts"
import * as PgPass from "./PgPass.ts"

/** Options of the PostgreSQL layer. */
export interface Options {
  /** `postgres://user[:password]@host[:port]/database` (or a unix socket directory as `?host=`). */
  readonly url: string
  /** Pool size (default 10); a session holds one connection for its lock and writes, unless `lockConnections`. */
  readonly maxConnections?: number
  /**
   * Keep every session's lock on this many connections shared by the process
   * (`PgLock.shared`; fewer than the pool's): for a process with many sessions
   * at once, a cluster runner's waiting turns. Unset or 0: each session's on
   * a connection of its own.
   */
  readonly lockConnections?: number
}

/** The url without its password: what errors and listings name. */
export const where = (url: string): string => {
  try {
    const u = new URL(url)
    u.password = ""
    return u.toString()
  } catch {
    return "postgres"
  }
}

/** A database error as the store's I/O error, naming the server and what failed (and the server, when it went away). */
const ioError =
  (at: string, doing: string) =>
  (error: SqlError): StoreIoError =>
    new StoreIoError({
      path: at,
      reason: `${doing}: ${error.message}`,
      ...(ServerLost.isServerLost(error) ? { server: ServerLost.serverOf(at) } : {})
    })

interface ConversationRow extends Rows.StoredConversation {
  readonly title: string | null
  readonly entries: number
  readonly events: number
  readonly last_event_at: string | null
  readonly last_activated_at: string
  readonly incomplete_state: ConversationSummary["incomplete"] extends infer I
    ? I extends { state: infer S }
      ? S | null
      : never
    : never
  readonly incomplete_tool: string | null
  readonly tokens: string | number
}

/** Builds the store over a connected client whose schema is migrated. */
export const make = (url: string, options?: { readonly lockConnections?: number | undefined }) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient
    const k = Math.floor(options?.lockConnections ?? 0) // NaN or below 1: each lock its own connection
    const locks = k > 0 ? yield* PgLock.shared(sql, k) : PgLock.own(sql)
    const at = where(url)
    const pathOf = (id: string) => `${at}#${id}`

    const locked = (id: string, holder: PgLock.Holder | undefined) =>
      new ConversationLocked({
        id,
        path: `${at} parley_locks`,
        host: holder?.host ?? "an unknown host",
        ...(holder === undefined ? {} : { holder: holder.pid })
      })

    const row = (id: string) =>
      sql<ConversationRow>`SELECT * FROM parley_conversations WHERE id = ${id}`.pipe(
        Effect.mapError(ioError(at, `reading conversation ${id}`)),
        Effect.flatMap(([r]) => (r === undefined ? Effect.fail(new ConversationNotFound({ id })) : Effect.succeed(r)))
      )

    const jsons = (id: string) =>
      sql<{ json: string }>`SELECT json FROM parley_events WHERE conversation_id = ${id} ORDER BY seq`.pipe(
        Effect.map((rs) => rs.map((r) => r.json)),
        Effect.mapError(ioError(at, `reading the events of ${id}`))
      )

    const decoded = (
      r: ConversationRow,
      texts: ReadonlyArray<string>,
      decode: (r: ConversationRow) => Conversation = (r) => Rows.decode(r, texts, pathOf(r.id))
    ) =>
      Effect.try({
        try: () => decode(r),
        catch: (e) => {
          const d = e instanceof Rows.Damaged ? e : new Rows.Damaged(pathOf(r.id), undefined, String(e))
          return new ConversationCorrupt({
            id: r.id,
            file: d.where,
            ...(d.entry === undefined ? {} : { entry: d.entry }),
            reason: d.reason
          })
        }
      })

    /**
     * The entries decoded row by row as they stream in (the driver pauses
     * the socket while a chunk is decoded), so no text of the whole stream
     * is ever held: only the entries. `undefined` when some row only the
     * whole-stream path can judge.
     */
    const streamedEntries = (id: string) =>
      Effect.suspend(() => {
        const entries: Array<StreamEntry> = []
        let whole = false
        return sql<{
          json: string
        }>`SELECT json FROM parley_events WHERE conversation_id = ${id} ORDER BY seq`.stream.pipe(
          Stream.runForEachArray((rows) =>
            Effect.sync(() => {
              for (const r of rows) {
                const entry = whole ? undefined : Rows.decodeEntry(r.json, entries.length)
                if (entry === undefined) whole = true
                else entries.push(entry)
              }
            })
          ),
          Effect.map(() => (whole ? undefined : entries)),
          Effect.mapError(ioError(at, `reading the events of ${id}`))
        )
      })

    const load = (id: ConversationId.ConversationId) =>
      Effect.gen(function* () {
        const r = yield* row(id)
        const entries = r.damage === null ? yield* streamedEntries(id) : undefined
        if (entries !== undefined) {
          const streamed = yield* Effect.exit(decoded(r, [], (c) => Rows.withEntries(c, entries, pathOf(r.id))))
          if (streamed._tag === "Success") return streamed.value
        }
        // Damage (or a text only the whole stream can judge): the whole-stream path names it.
        return yield* decoded(r, yield* jsons(id))
      })

    /** Appends rows in batches under PostgreSQL's parameter limit. */
    const insertEvents = (rows: ReadonlyArray<Rows.EventRow>) =>
      Effect.forEach(chunks(rows, 2000), (chunk) => sql`INSERT INTO parley_events ${sql.insert(chunk)}`, {
        discard: true
      })

    const updateColumns = (id: string, entries: number, c: ReturnType<typeof Rows.appendColumns>) =>
      sql`UPDATE parley_conversations SET entries = ${entries}, events = events + ${c.addEvents},
        last_event_at = COALESCE(${c.lastEventAt ?? null}, last_event_at), incomplete_state = ${c.incompleteState}, incomplete_tool = ${c.incompleteTool}
        WHERE id = ${id}`

    /**
     * A session's persistence: every write atomic (one statement or a
     * transaction) on the locked connection. The listing's incomplete state
     * is folded from the appended batches (`LastTurn`, the listing's own
     * rule), never re-read from the stream.
     */
    const persistence = (
      conversation: Conversation,
      conn: PgLock.Attempt & { _tag: "Taken" }
    ): ConversationSession.SessionPersistence => {
      // The entries as written (references only): what the fold is rebuilt from when a write fails.
      let kept = conversation.entries.slice()
      let last = IncompleteTurn.LastTurn.of(kept)
      const id = conversation.id
      return {
        // One statement (the entry rows and the listing columns together): atomic without BEGIN/COMMIT, one round trip.
        appendDurable: (entries, from) =>
          Effect.suspend(() => {
            kept.push(...entries) // the columns are of the stream with the batch; taken back if the write fails
            const c = Rows.appendColumns(last, entries)
            const rows: ReadonlyArray<Rows.EventRow> = Rows.eventRows(id, entries, from)
            const write =
              !Arr.isReadonlyArrayNonEmpty(rows) || rows.length > 2000
                ? PgLock.transaction(
                    sql,
                    conn.slot,
                    Effect.andThen(insertEvents(rows), updateColumns(id, kept.length, c))
                  )
                : PgLock.onSlot(
                    sql,
                    conn.slot,
                    sql`WITH added AS (INSERT INTO parley_events ${sql.insert(rows)})
                  UPDATE parley_conversations SET entries = ${kept.length}, events = events + ${c.addEvents},
                  last_event_at = COALESCE(${c.lastEventAt ?? null}, last_event_at), incomplete_state = ${c.incompleteState}, incomplete_tool = ${c.incompleteTool}
                  WHERE id = ${id}`
                  )
            return write.pipe(
              Effect.tapError(() =>
                Effect.sync(() => {
                  kept.splice(from)
                  last = IncompleteTurn.LastTurn.of(kept)
                })
              ),
              Effect.asVoid,
              Effect.mapError(ioError(pathOf(id), "appending"))
            )
          }),
        rewrite: (entries) =>
          PgLock.transaction(
            sql,
            conn.slot,
            Effect.gen(function* () {
              const s = Rows.summaryColumns({ ...conversation, entries })
              yield* sql`DELETE FROM parley_events WHERE conversation_id = ${id}`
              yield* insertEvents(Rows.eventRows(id, entries, 0))
              yield* sql`UPDATE parley_conversations SET ${sql.update({ entries: s.entries, events: s.events, last_event_at: s.last_event_at, incomplete_state: s.incomplete_state, incomplete_tool: s.incomplete_tool, tokens: s.tokens })} WHERE id = ${id}`
              kept = entries.slice()
              last = IncompleteTurn.LastTurn.of(kept)
            })
          ).pipe(Effect.mapError(ioError(pathOf(id), "rewriting")))
      }
    }

    /** On close: the metadata and the listing columns that need the whole stream (tokens). */
    const close = (session: ConversationSession.ConversationSession, conn: PgLock.Attempt & { _tag: "Taken" }) =>
      Effect.gen(function* () {
        const c = yield* session.conversation
        const s = Rows.summaryColumns(c)
        yield* PgLock.onSlot(
          sql,
          conn.slot,
          sql`UPDATE parley_conversations SET ${sql.update({ metadata: Rows.metadataText(c.metadata), title: s.title, dirname: s.dirname, last_activated_at: s.last_activated_at, tokens: s.tokens })} WHERE id = ${c.id}`
        )
      }).pipe(Effect.ignore)

    /** Opens a conversation whose lock `conn` holds. */
    const openLocked = (id: ConversationId.ConversationId, conn: PgLock.Attempt & { _tag: "Taken" }) =>
      Effect.gen(function* () {
        // On the session's own connection: a session never waits for the pool (many sessions may hold all of it).
        // Shared, on the pool (sessions hold none of it): a long read would hold up the other locks' writes.
        const conversation = yield* locks.shared ? load(id) : PgLock.on(sql, conn.slot.conn, load(id))
        const session = yield* ConversationSession.make(conversation, persistence(conversation, conn))
        // Added after the lock's finalizer: runs first, while the lock is still held.
        yield* Effect.addFinalizer(() => close(session, conn))
        return session
      })

    const lock = (id: ConversationId.ConversationId) =>
      locks.tryLock(id).pipe(
        Effect.mapError(ioError(pathOf(id), "taking the lock")),
        // Without `absent` an attempt is Taken or Held.
        Effect.flatMap((a) =>
          a._tag === "Taken" ? Effect.succeed(a) : Effect.fail(locked(id, a._tag === "Held" ? a.holder : undefined))
        )
      )

    const open = (id: ConversationId.ConversationId) =>
      row(id).pipe(
        Effect.andThen(lock(id)),
        Effect.flatMap((conn) => openLocked(id, conn))
      )

    /** Inserts the new conversation (row and entries, one transaction) under its lock; false when the id is taken. */
    const insertNew = (
      id: ConversationId.ConversationId,
      init: NewConversation,
      conn: PgLock.Attempt & { _tag: "Taken" }
    ) => {
      const conversation: Conversation = {
        id,
        archived: false,
        metadata: init.metadata,
        baseConfig: init.baseConfig ?? { _tag: "File", text: "{}\n" },
        entries: init.entries ?? []
      }
      return PgLock.transaction(
        sql,
        conn.slot,
        Effect.gen(function* () {
          const inserted = yield* sql`INSERT INTO parley_conversations ${sql.insert({
            id,
            archived: false,
            metadata: Rows.metadataText(conversation.metadata),
            base_config: Rows.baseConfigText(conversation.baseConfig),
            ...Rows.summaryColumns(conversation)
          })} ON CONFLICT (id) DO NOTHING RETURNING id`
          if (inserted.length === 0) return false
          yield* insertEvents(Rows.eventRows(id, conversation.entries, 0))
          return true
        })
      ).pipe(Effect.mapError(ioError(pathOf(id), "creating")))
    }

    const create = (init: NewConversation) =>
      Effect.gen(function* () {
        if (init.id !== undefined) {
          const conn = yield* lock(init.id)
          if (!(yield* insertNew(init.id, init, conn))) return yield* new ConversationExists({ id: init.id })
          return yield* openLocked(init.id, conn)
        }
        let n = BigInt(ConversationId.fromEpochMillis(yield* Clock.currentTimeMillis))
        const [top] = yield* sql<{
          id: string | null
        }>`SELECT max(id::numeric)::text AS id FROM parley_conversations WHERE id ~ '^[0-9]+$' AND length(id) = ${String(n).length}`.pipe(
          Effect.mapError(ioError(at, "choosing a new id"))
        )
        if (top?.id != null && BigInt(top.id) >= n) n = BigInt(top.id) + 1n
        for (; ; n++) {
          const id = String(n) as ConversationId.ConversationId
          // A fresh id another process holds (or took meanwhile) is skipped, never waited for.
          const attempt = yield* locks
            .tryLock(id, { absent: true })
            .pipe(Effect.mapError(ioError(pathOf(id), "taking the lock")))
          if (attempt._tag !== "Taken") continue
          if (yield* insertNew(id, init, attempt)) return yield* openLocked(id, attempt)
          // Used meanwhile (its creator has let go of the lock): give the connection back before the next id.
          yield* attempt.release
        }
      })

    const list = (options?: { readonly archived?: boolean }) =>
      sql<ConversationRow>`SELECT id, archived, title, entries, events, last_event_at, last_activated_at, incomplete_state, incomplete_tool, tokens, damage, metadata, NULL AS base_config
        FROM parley_conversations WHERE ${options?.archived === true ? sql`true` : sql`NOT archived`}`.pipe(
        Effect.mapError(ioError(at, "listing conversations")),
        Effect.map((rows) => {
          const conversations: Array<ConversationSummary> = []
          const damaged: Array<DamagedConversation> = []
          for (const r of rows) {
            if (r.damage !== null)
              damaged.push({ id: r.id, path: pathOf(r.id), reason: r.damage, archived: r.archived })
            else conversations.push(summaryOfRow(r, pathOf(r.id)))
          }
          conversations.sort(
            (a, b) => Timestamp.compare(b.lastActivatedAt, a.lastActivatedAt) || (a.id < b.id ? 1 : -1)
          )
          damaged.sort((a, b) => (a.id < b.id ? -1 : 1))
          return { conversations, damaged }
        })
      )

    const checkOne = (id: string) =>
      Effect.gen(function* () {
        const r = yield* row(id)
        const texts = yield* jsons(id)
        return yield* decoded(r, texts).pipe(
          Effect.map(
            (c): CheckResult => ({
              id,
              path: pathOf(id),
              ok: true,
              roundtrip: Rows.roundtrips(c, r, texts) ? "identical" : "changed"
            })
          ),
          Effect.catchTag("ConversationCorrupt", (e) =>
            Effect.succeed<CheckResult>({ id, path: pathOf(id), ok: false, roundtrip: null, error: e.message })
          )
        )
      })

    const check = (id?: ConversationId.ConversationId) =>
      Effect.gen(function* () {
        if (id !== undefined) return [yield* checkOne(id)]
        const ids = yield* sql<{ id: string }>`SELECT id FROM parley_conversations ORDER BY archived, id`.pipe(
          Effect.mapError(ioError(at, "listing conversations"))
        )
        // One at a time: only one conversation is ever in memory.
        return yield* Effect.forEach(ids, (r) =>
          checkOne(r.id).pipe(Effect.catchTag("ConversationNotFound", () => Effect.succeed(undefined)))
        ).pipe(Effect.map((rs) => rs.filter((r): r is CheckResult => r !== undefined)))
      })

    const remove = (id: ConversationId.ConversationId) =>
      Effect.scoped(
        row(id).pipe(
          Effect.andThen(lock(id)),
          Effect.andThen(
            sql`DELETE FROM parley_conversations WHERE id = ${id}`.pipe(
              Effect.mapError(ioError(pathOf(id), "removing"))
            )
          ),
          Effect.asVoid
        )
      )

    return ConversationStore.of({ list, load, open, create, check, remove, messages: PgMessageQueue.make(sql, at) })
  })

const summaryOfRow = (r: ConversationRow, path: string): ConversationSummary => {
  const kept = keptOf(r.metadata)
  return {
    id: r.id as ConversationId.ConversationId,
    title: r.title,
    events: r.events,
    lastEventAt: r.last_event_at,
    lastActivatedAt: r.last_activated_at,
    archived: r.archived,
    incomplete:
      r.incomplete_state === null
        ? null
        : { state: r.incomplete_state, ...(r.incomplete_tool === null ? {} : { tool: r.incomplete_tool }) },
    tokens: Number(r.tokens),
    labels: kept.labels,
    path,
    lastError: kept.lastError
  }
}

/**
 * What a row's `metadata.json` text adds to its listing: its labels and its last run's error (none when it
 * has none; a row that does not decode is damage, not listed).
 */
const keptOf = (metadata: string | null): { labels: ReadonlyArray<Labels.Label>; lastError: LastError | null } => {
  const none = { labels: [], lastError: null }
  if (metadata === null) return none
  let raw: unknown
  try {
    raw = JsonText.parse(metadata)
  } catch {
    return none
  }
  if (typeof raw !== "object" || raw === null) return none
  const rawLabels = "labels" in raw ? raw.labels : undefined
  let labels: ReadonlyArray<Labels.Label> = []
  try {
    labels = rawLabels === undefined || rawLabels === null ? [] : Labels.normalize(Labels.decode(rawLabels))
  } catch {
    labels = []
  }
  const key = ConversationMetadata.LAST_ERROR_KEY
  return { labels, lastError: LastErrorModel.read(key in raw ? raw[key] : undefined) }
}

const chunks = <A>(items: ReadonlyArray<A>, size: number): Array<Arr.NonEmptyReadonlyArray<A>> => {
  const out: Array<Arr.NonEmptyReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) {
    const chunk = items.slice(i, i + size)
    if (Arr.isReadonlyArrayNonEmpty(chunk)) out.push(chunk)
  }
  return out
}

/** Applies the versioned migrations (effect/sql's Migrator takes a table lock: concurrent starts are safe). */
export const migrate = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: MIGRATIONS_TABLE })

/**
 * The client layer: a pool on `url`. `@effect/sql-pg` is an optional peer, imported when the layer is built
 * (docs/decisions.md#optional-peer-dependencies): importing this module needs only `effect`, and a missing driver is a {@link MissingPackage}.
 */
export const clientLayer = (options: Options): Layer.Layer<SqlClient | PgClient.PgClient, SqlError | MissingPackage> =>
  Layer.unwrap(
    Effect.map(
      LoadPackage.load("@effect/sql-pg", () => import("@effect/sql-pg")),
      ({ PgClient }) => {
        // A url without a password: $PGPASSWORD or ~/.pgpass, as libpq would (the driver reads neither).
        const password = PgPass.passwordFor(options.url, process.env)
        return PgClient.layer({
          url: Redacted.make(options.url),
          ...(password !== undefined ? { password: Redacted.make(password) } : {}),
          maxConnections: options.maxConnections ?? 10,
          applicationName: "parley"
        })
      }
    )
  )

/**
 * The PostgreSQL store as a layer: connects, migrates, serves. Fails with a {@link StoreIoError} naming the
 * server, or a {@link MissingPackage} when `@effect/sql-pg` is not installed.
 */
export const layer = (options: Options): Layer.Layer<ConversationStore, StoreIoError | MissingPackage> =>
  Layer.effect(
    ConversationStore,
    Effect.gen(function* () {
      // Built in the layer's scope: the pool lives as long as the store.
      const client = yield* Layer.build(clientLayer(options))
      // Fewer than the pool's: the pool's other connections serve the statements outside a lock.
      const lockConnections = Math.min(options.lockConnections ?? 0, (options.maxConnections ?? 10) - 2)
      return yield* Effect.andThen(migrate, make(options.url, { lockConnections })).pipe(Effect.provideContext(client))
    }).pipe(Effect.mapError((error) => (error._tag === "MissingPackage" ? error : connectionError(options.url, error))))
  )

/** A one-line error for a server that cannot be reached or used: host, database, what to check. */
export const connectionError = (url: string, cause: unknown): StoreIoError => {
  let host = "?"
  let database = "?"
  try {
    const u = new URL(url)
    host = `${u.hostname || u.searchParams.get("host") || "localhost"}:${u.port || "5432"}`
    database = u.pathname.replace(/^\//, "") || "(default)"
  } catch {
    // not a url: said below
  }
  // The driver's message and its causes' (ECONNREFUSED, password authentication failed, …), once each.
  const said: Array<string> = []
  for (
    let e: unknown = cause, depth = 0;
    e !== undefined && e !== null && depth < 5;
    e = Predicate.isObject(e) ? e["cause"] : undefined, depth++
  ) {
    const line = String(
      e instanceof Error ? e.message : Predicate.isObject(e) && "message" in e ? e["message"] : e
    ).split("\n")[0]!
    if (line !== "" && !said.some((s) => s.includes(line))) said.push(line)
  }
  const detail = said.join(": ")
  return new StoreIoError({
    path: where(url),
    reason: `cannot use PostgreSQL at ${host}, database ${database}: ${detail}. Check that the server runs and accepts connections there, and the user, password and database in the url`
  })
}
