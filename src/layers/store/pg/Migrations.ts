/**
 * The PostgreSQL store's schema (docs/postgres.md#tables), versioned for effect/sql's
 * `Migrator`: each key is `<version>_<name>`, applied once, in order,
 * recorded in `parley_migrations`. Never edit a released migration: add
 * the next one.
 *
 * - `parley_conversations`: one row per conversation: the exact text of
 *   `metadata.json` and `base_config.json` (NULL: JP's packed layout), the
 *   directory name export writes, and the listing columns (title, counts,
 *   last event, incomplete state, tokens) kept in the same transaction as
 *   every append, so `ls` decodes nothing. `damage` is set for a
 *   conversation imported from files parley cannot decode: it is kept as
 *   those files (`parley_raw_files`) so export gives them back unchanged.
 * - `parley_events`: one row per entry, `json` being the entry's text exactly
 *   as it stands in JP's `events.json` (indented two spaces, base64 fields as
 *   JP writes them), `seq` its index.
 * - `parley_locks`: who holds a conversation's advisory lock (pid, host,
 *   backend pid), written while it is held, to name the holder.
 * - `0002_events_lz4`: entry texts are compressed with lz4 where the server
 *   has it (PostgreSQL 14+ built with lz4, as Debian's is): opening a long
 *   conversation reads every row, and lz4 decompresses several times faster
 *   than the default pglz (measured on the 94 MB conversation: load ≈ 30%
 *   faster). Rows written before keep pglz; servers without lz4 keep pglz.
 *
 * @example
 * ```ts
 * import { migrations } from "parley/layers/store/pg/Migrations"
 * Object.keys(migrations) // ["0001_conversations", "0002_events_lz4"]
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql/SqlClient"

/** The table effect/sql's Migrator records applied versions in. */
export const MIGRATIONS_TABLE = "parley_migrations"

export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient>> = {
  "0001_conversations": Effect.gen(function* () {
    const sql = yield* SqlClient
    yield* sql`CREATE TABLE parley_conversations (
      id text PRIMARY KEY,
      archived boolean NOT NULL DEFAULT false,
      dirname text NOT NULL,
      metadata text,
      base_config text,
      title text,
      entries integer NOT NULL DEFAULT 0,
      events integer NOT NULL DEFAULT 0,
      last_event_at text,
      last_activated_at text NOT NULL DEFAULT '',
      incomplete_state text,
      incomplete_tool text,
      tokens bigint NOT NULL DEFAULT 0,
      damage text
    )`
    yield* sql`CREATE INDEX parley_conversations_listing ON parley_conversations (archived, last_activated_at DESC, id DESC)`
    yield* sql`CREATE TABLE parley_events (
      conversation_id text NOT NULL REFERENCES parley_conversations(id) ON DELETE CASCADE,
      seq integer NOT NULL,
      type text NOT NULL,
      json text NOT NULL,
      PRIMARY KEY (conversation_id, seq)
    )`
    yield* sql`CREATE TABLE parley_raw_files (
      conversation_id text NOT NULL REFERENCES parley_conversations(id) ON DELETE CASCADE,
      name text NOT NULL,
      bytes bytea NOT NULL,
      PRIMARY KEY (conversation_id, name)
    )`
    yield* sql`CREATE TABLE parley_locks (
      conversation_id text PRIMARY KEY,
      pid integer NOT NULL,
      host text NOT NULL,
      backend_pid integer NOT NULL,
      since timestamptz NOT NULL DEFAULT now()
    )`
  }),
  "0002_events_lz4": Effect.gen(function* () {
    const sql = yield* SqlClient
    // EXECUTE: older servers cannot even parse SET COMPRESSION; a server built without lz4 refuses it.
    yield* sql.unsafe(`DO $$ BEGIN
      IF current_setting('server_version_num')::int >= 140000 THEN
        BEGIN
          EXECUTE 'ALTER TABLE parley_events ALTER COLUMN json SET COMPRESSION lz4';
        EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN NULL;
        END;
      END IF;
    END $$`)
  }),
  // Messages sent to a running turn (`PgMessageQueue.ts`): a log beside the events, gone with its conversation.
  "0003_queue": Effect.gen(function* () {
    const sql = yield* SqlClient
    yield* sql`CREATE TABLE parley_queue (
      seq bigserial PRIMARY KEY,
      conversation_id text NOT NULL REFERENCES parley_conversations(id) ON DELETE CASCADE,
      record text NOT NULL
    )`
    yield* sql`CREATE INDEX parley_queue_conversation ON parley_queue (conversation_id, seq)`
  })
}
