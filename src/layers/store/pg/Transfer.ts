/**
 * Import and export between JP's storage directory and the PostgreSQL store
 * (docs/postgres.md#import-and-export), byte for byte: a conversation that decodes and re-encodes to
 * its exact bytes is imported as rows (entries as their `events.json` text,
 * `metadata.json` and `base_config.json` as their text); any other one — a
 * legacy format, a damaged file, bytes a re-save would change — is kept as
 * its files (`parley_raw_files`) with `damage` saying why, so it is listed
 * as damaged and exported exactly as it came. Files beside JP's three are
 * kept the same way. Archived conversations stay archived and export back
 * under `conversations/.archive/`. One conversation at a time
 * (`importOne`, `exportOne`: `parley conversation import` / `export`), so
 * memory holds one; an id already at the other end is never overwritten.
 *
 * @example
 * ```ts
 * import * as Transfer from "parley/layers/store/pg/Transfer"
 * const imported = Transfer.importDir("/home/me/project/.parley") // Effect<number, …, SqlClient>
 * const exported = Transfer.exportTo("/tmp/export") // a JP storage directory
 * ```
 *
 * @since 0.1.0
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as ConversationId from "../../../domain/storage/ConversationId.ts"
import { ConversationExists, ConversationNotFound, StoreIoError } from "../../../services/StoreErrors.ts"
import { checkOne } from "../Check.ts"
import * as ConversationRead from "../ConversationRead.ts"
import * as ConversationFiles from "../ConversationFiles.ts"
import * as Rows from "./Rows.ts"

const JP_FILES = new Set(["metadata.json", "base_config.json", "events.json"])

const io = <A>(file: string, f: () => Promise<A>) =>
  Effect.tryPromise({
    try: f,
    catch: (e) => new StoreIoError({ path: file, reason: e instanceof Error ? e.message : String(e) })
  })

/** What one directory becomes: rows when it round-trips, else its files. */
const readOne = async (dir: string, name: string, archived: boolean) => {
  const id = ConversationId.fromDirname(name)!
  const loc = { dir, archived }
  const names = (await fs.readdir(dir, { withFileTypes: true }))
    .filter((d) => d.isFile())
    .map((d) => d.name)
    .sort()
  const checked = await checkOne(id, loc)
  const structured = checked?.ok === true && checked.roundtrip === "identical"
  const raw: Array<{ name: string; bytes: Buffer }> = []
  for (const n of names)
    if (!structured || !JP_FILES.has(n)) raw.push({ name: n, bytes: await fs.readFile(path.join(dir, n)) })
  if (!structured) {
    const damage = checked?.error ?? "a re-save would change its bytes: kept as its files"
    return { id, name, archived, conversation: undefined, raw, damage, metadata: undefined, baseConfig: undefined }
  }
  const conversation = await ConversationRead.read(id, loc)
  const metadata = await fs.readFile(path.join(dir, "metadata.json"), "utf8")
  const baseConfig = conversation.baseConfig._tag === "File" ? conversation.baseConfig.text : null
  return { id, name, archived, conversation, raw, damage: null, metadata, baseConfig }
}

/** Where a conversation of a storage directory is (`ConversationFiles.ids`). */
export type Place = ConversationFiles.Place

/**
 * Imports the conversation at `place` of the storage directory `storageDir`
 * in one transaction (a failed import leaves no half conversation):
 * `"imported"` as rows, `"kept-as-files"` when parley cannot read it (or a
 * re-save would change it: listed as damaged, exported as it came), or
 * `"exists"` when the database has its id already, and then nothing is
 * written (the primary key decides, so a racing `query --new` is safe).
 */
export const importOne = (storageDir: string, place: Place) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient
    const dir = path.join(ConversationFiles.parentOf(storageDir, place.archived), place.dirname)
    const one = yield* io(dir, () => readOne(dir, place.dirname, place.archived))
    return yield* sql
      .withTransaction(
        Effect.gen(function* () {
          const c = one.conversation
          const columns =
            c === undefined
              ? {
                  title: null,
                  dirname: one.name,
                  entries: 0,
                  events: 0,
                  last_event_at: null,
                  last_activated_at: "",
                  incomplete_state: null,
                  incomplete_tool: null,
                  tokens: 0
                }
              : { ...Rows.summaryColumns(c), dirname: one.name }
          const inserted =
            yield* sql`INSERT INTO parley_conversations ${sql.insert({ id: one.id, archived: one.archived, metadata: one.metadata ?? null, base_config: one.baseConfig ?? null, damage: one.damage, ...columns })}
        ON CONFLICT (id) DO NOTHING RETURNING id`
          if (inserted.length === 0) return "exists" as const
          if (c !== undefined) {
            const rows = Rows.eventRows(one.id, c.entries, 0)
            for (let i = 0; i < rows.length; i += 2000) {
              const batch: ReadonlyArray<Rows.EventRow> = rows.slice(i, i + 2000)
              if (Arr.isReadonlyArrayNonEmpty(batch)) yield* sql`INSERT INTO parley_events ${sql.insert(batch)}`
            }
          }
          for (const f of one.raw)
            yield* sql`INSERT INTO parley_raw_files ${sql.insert({ conversation_id: one.id, name: f.name, bytes: new Uint8Array(f.bytes) })}`
          // A conversation parley cannot read (or would re-save differently) is kept as its files.
          return one.damage === null ? ("imported" as const) : ("kept-as-files" as const)
        })
      )
      .pipe(Effect.mapError((e) => new StoreIoError({ path: dir, reason: `importing: ${e.message}` })))
  })

/** Imports every conversation of a storage directory (live and archived); returns how many. Fails on an id already there. */
export const importDir = (storageDir: string) =>
  Effect.gen(function* () {
    let count = 0
    for (const place of yield* io(storageDir, () => ConversationFiles.ids(storageDir))) {
      if ((yield* importOne(storageDir, place)) === "exists") return yield* new ConversationExists({ id: place.id })
      count++
    }
    if (count > 0) yield* analyze
    return count
  })

/**
 * The planner's statistics of what an import wrote. Without them it takes a
 * conversation's events for a few rows and sorts them on disk (16 MB for the
 * bench's 94 MB conversation) instead of reading them in order through the
 * primary key, until autovacuum analyzes the tables: a `--continue-turn` on
 * that conversation 1.41× the file store's time, 1.38× analyzed (five
 * alternated runs each). Only a speed: a user who may not analyze them (not
 * their owner) gets PostgreSQL's warning, and the import stands.
 */
export const analyze = Effect.flatMap(SqlClient, (sql) =>
  sql`ANALYZE parley_conversations, parley_events`.pipe(Effect.ignore)
)

/** The conversations in the database (all, or the one `id`), by id. */
export const stored = (id?: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient
    const rows = yield* sql<{
      id: string
      archived: boolean
      dirname: string
    }>`SELECT id, archived, dirname FROM parley_conversations
      ${id === undefined ? sql`` : sql`WHERE id = ${id}`} ORDER BY id`
    return rows.map(
      (r): Place => ({ id: r.id as ConversationId.ConversationId, archived: r.archived, dirname: r.dirname })
    )
  }).pipe(
    Effect.catchTag("SqlError", (e) =>
      Effect.fail(new StoreIoError({ path: "parley_conversations", reason: e.message }))
    )
  )

/** One stored conversation as the files of its JP directory, byte for byte what was imported or what the file store writes. */
export const exportOne = (place: Place) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient
    const [r] =
      yield* sql<Rows.StoredConversation>`SELECT id, archived, metadata, base_config, damage FROM parley_conversations WHERE id = ${place.id}`
    if (r === undefined) return yield* new ConversationNotFound({ id: place.id })
    const files: Array<ConversationFiles.File> = []
    if (r.damage === null) {
      const jsons = (yield* sql<{
        json: string
      }>`SELECT json FROM parley_events WHERE conversation_id = ${r.id} ORDER BY seq`).map((e) => e.json)
      if (r.metadata !== null) files.push({ name: "metadata.json", bytes: Buffer.from(r.metadata, "utf8") })
      if (r.base_config !== null) files.push({ name: "base_config.json", bytes: Buffer.from(r.base_config, "utf8") })
      files.push({ name: "events.json", bytes: Buffer.from(Rows.eventsText(jsons), "utf8") })
    }
    const raw = yield* sql<{
      name: string
      bytes: Uint8Array
    }>`SELECT name, bytes FROM parley_raw_files WHERE conversation_id = ${r.id} ORDER BY name`
    for (const f of raw) files.push({ name: f.name, bytes: f.bytes })
    return {
      ...place,
      files: files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    } satisfies ConversationFiles.ConversationFiles
  }).pipe(
    Effect.catchTag("SqlError", (e) =>
      Effect.fail(new StoreIoError({ path: `parley_conversations#${place.id}`, reason: `exporting: ${e.message}` }))
    )
  )

/** Exports conversations (all, or the one `id`) as a JP storage directory under `toDir`; returns how many. Fails on an id already there. */
export const exportTo = (toDir: string, id?: string) =>
  Effect.gen(function* () {
    const places = yield* stored(id)
    for (const place of places) {
      const files = yield* exportOne(place)
      if ((yield* io(toDir, () => ConversationFiles.write(toDir, files))) === "exists")
        return yield* new ConversationExists({ id: place.id })
    }
    return places.length
  })
