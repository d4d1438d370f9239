/**
 * The cluster's own tables (docs/cluster.md), versioned for effect/sql's
 * `Migrator` as the PostgreSQL store's are (`layers/store/pg/Migrations.ts`),
 * recorded in `parley_cluster_migrations`. Never edit a released migration:
 * add the next one.
 *
 * - `parley_cluster_turns`: which runner runs which turn (`Turns.ts`), and
 *   where that runner's HTTP API is, so another runner relays the turn's
 *   live events (`Events.ts`);
 * - `parley_cluster_shards`: how many shards each runner holds (`Sweep.ts`);
 * - `parley_cluster_answers`: which message answered which question
 *   (`Handlers.ts`), so a redelivered answer is told from a second one;
 * - `parley_cluster_stops`: a stop asked of the runner a turn runs on
 *   (`Handlers.ts`, `Sweep.ts`);
 * - `parley_cluster_stopped`: which process a stop message stopped, so its
 *   redelivery gets the same reply (`Handlers.ts`).
 *
 * The first migration keeps `IF NOT EXISTS`: a database whose runners made
 * these tables before they were versioned is taken as it is.
 *
 * @example
 * ```ts
 * import { migrations } from "parley/layers/cluster/Migrations"
 * Object.keys(migrations) // ["0001_cluster", "0002_health_check", "0003_stops", "0004_stopped"]
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Migrator from "effect/sql/Migrator"
import { SqlClient } from "effect/sql/SqlClient"

/** The table effect/sql's Migrator records the cluster's applied versions in (the store's are in `parley_migrations`). */
export const MIGRATIONS_TABLE = "parley_cluster_migrations"

/** The cluster's migrations, by `<version>_<name>`. */
export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient>> = {
  "0001_cluster": Effect.gen(function* () {
    const sql = yield* SqlClient
    yield* sql`CREATE TABLE IF NOT EXISTS parley_cluster_turns (
      conversation_id TEXT PRIMARY KEY,
      runner TEXT NOT NULL,
      pid INT NOT NULL,
      since TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
    yield* sql`ALTER TABLE parley_cluster_turns ADD COLUMN IF NOT EXISTS http TEXT, ADD COLUMN IF NOT EXISTS http_host TEXT`
    yield* sql`CREATE TABLE IF NOT EXISTS parley_cluster_shards (runner TEXT PRIMARY KEY, shards INT NOT NULL, at TIMESTAMPTZ NOT NULL)`
    yield* sql`CREATE TABLE IF NOT EXISTS parley_cluster_answers (
      conversation_id TEXT NOT NULL,
      inquiry_id TEXT NOT NULL,
      request_id TEXT NOT NULL,
      PRIMARY KEY (conversation_id, inquiry_id)
    )`
  }),
  // Which runner runs the engine's health check (a singleton): what the failover bench kills for its worst case.
  "0002_health_check": Effect.gen(function* () {
    const sql = yield* SqlClient
    yield* sql`ALTER TABLE parley_cluster_shards ADD COLUMN IF NOT EXISTS health_check BOOLEAN NOT NULL DEFAULT false`
  }),
  // A stop (or a `now` message) for a turn that runs on another runner than its conversation's owner: that
  // runner's sweep takes the request (Handlers.ts, Sweep.ts).
  "0003_stops": Effect.gen(function* () {
    const sql = yield* SqlClient
    yield* sql`CREATE TABLE IF NOT EXISTS parley_cluster_stops (
      conversation_id TEXT PRIMARY KEY,
      runner TEXT NOT NULL,
      at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  }),
  // A stop message's outcome by its request id (the same on every delivery): delivered again after it stopped the
  // turn (its entity interrupted before the reply was stored, as shards move), it answers the same pid, not 404.
  "0004_stopped": Effect.gen(function* () {
    const sql = yield* SqlClient
    yield* sql`CREATE TABLE IF NOT EXISTS parley_cluster_stopped (
      request_id TEXT PRIMARY KEY,
      conversation_id TEXT NOT NULL,
      pid INT NOT NULL,
      at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  })
}

/** Applies the cluster's migrations (the Migrator takes a table lock: runners starting together are safe). */
export const migrate = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: MIGRATIONS_TABLE })
