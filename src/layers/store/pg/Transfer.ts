/**
 * Import and export between JP's storage directory and the PostgreSQL store
 * (issue 24), byte for byte: a conversation that decodes and re-encodes to
 * its exact bytes is imported as rows (entries as their `events.json` text,
 * `metadata.json` and `base_config.json` as their text); any other one — a
 * legacy format, a damaged file, bytes a re-save would change — is kept as
 * its files (`parley_raw_files`) with `damage` saying why, so it is listed
 * as damaged and exported exactly as it came. Files beside JP's three are
 * kept the same way. Archived conversations stay archived and export back
 * under `conversations/.archive/`.
 *
 * @example
 * ```ts
 * import * as Transfer from "parley/layers/store/pg/Transfer"
 * const imported = Transfer.importDir("/home/me/project/.parley") // Effect<number, …, SqlClient>
 * ```
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as ConversationId from "../../../domain/storage/ConversationId.ts"
import { StoreIoError } from "../../../services/StoreErrors.ts"
import { checkOne } from "../Check.ts"
import * as ConversationDir from "../ConversationDir.ts"
import * as Rows from "./Rows.ts"

const JP_FILES = new Set(["metadata.json", "base_config.json", "events.json"])

const io = <A>(file: string, f: () => Promise<A>) =>
  Effect.tryPromise({ try: f, catch: (e) => new StoreIoError({ path: file, reason: e instanceof Error ? e.message : String(e) }) })

/** What one directory becomes: rows when it round-trips, else its files. */
const readOne = async (dir: string, name: string, archived: boolean) => {
  const id = ConversationId.fromDirname(name)!
  const loc = { dir, archived }
  const names = (await fs.readdir(dir, { withFileTypes: true })).filter((d) => d.isFile()).map((d) => d.name).sort()
  const checked = await checkOne(id, loc)
  const structured = checked?.ok === true && checked.roundtrip === "identical"
  const raw: Array<{ name: string; bytes: Buffer }> = []
  for (const n of names) if (!structured || !JP_FILES.has(n)) raw.push({ name: n, bytes: await fs.readFile(path.join(dir, n)) })
  if (!structured) {
    const damage = checked?.error ?? "a re-save would change its bytes: kept as its files"
    return { id, name, archived, conversation: undefined, raw, damage, metadata: undefined, baseConfig: undefined }
  }
  const conversation = await ConversationDir.read(id, loc)
  const metadata = await fs.readFile(path.join(dir, "metadata.json"), "utf8")
  const baseConfig = conversation.baseConfig._tag === "File" ? conversation.baseConfig.text : null
  return { id, name, archived, conversation, raw, damage: null, metadata, baseConfig }
}

/** Imports every conversation of a storage directory (live and archived); returns how many. Fails on an id already there. */
export const importDir = (storageDir: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const conversations = path.join(storageDir, "conversations")
    let count = 0
    for (const [parent, archived] of [[conversations, false], [path.join(conversations, ".archive"), true]] as const) {
      for (const name of (yield* io(parent, () => ConversationDir.dirsIn(parent))).sort()) {
        const one = yield* io(path.join(parent, name), () => readOne(path.join(parent, name), name, archived))
        // One transaction per conversation: a failed import leaves no half conversation.
        yield* sql.withTransaction(Effect.gen(function*() {
          const c = one.conversation
          const columns = c === undefined
            ? { title: null, dirname: name, entries: 0, events: 0, last_event_at: null, last_activated_at: "", incomplete_state: null, incomplete_tool: null, tokens: 0 }
            : { ...Rows.summaryColumns(c), dirname: name }
          yield* sql`INSERT INTO parley_conversations ${sql.insert({ id: one.id, archived, metadata: one.metadata ?? null, base_config: one.baseConfig ?? null, damage: one.damage, ...columns })}`
          if (c !== undefined) {
            const rows = Rows.eventRows(one.id, c.entries, 0)
            for (let i = 0; i < rows.length; i += 2000) yield* sql`INSERT INTO parley_events ${sql.insert(rows.slice(i, i + 2000) as unknown as [Record<string, unknown>])}`
          }
          for (const f of one.raw) yield* sql`INSERT INTO parley_raw_files ${sql.insert({ conversation_id: one.id, name: f.name, bytes: new Uint8Array(f.bytes) })}`
        })).pipe(Effect.mapError((e) => new StoreIoError({ path: path.join(parent, name), reason: `importing: ${e.message}` })))
        count++
      }
    }
    return count
  })

/** Exports conversations (all, or the one `id`) as a JP storage directory under `toDir`; returns how many. */
export const exportTo = (toDir: string, id?: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const rows = yield* sql<Rows.StoredConversation & { dirname: string }>`SELECT id, archived, dirname, metadata, base_config, damage FROM parley_conversations
      ${id === undefined ? sql`` : sql`WHERE id = ${id}`} ORDER BY id`.pipe(Effect.mapError((e) => new StoreIoError({ path: toDir, reason: e.message })))
    for (const r of rows) {
      const dir = path.join(toDir, "conversations", ...(r.archived ? [".archive"] : []), r.dirname)
      const jsons = r.damage === null
        ? (yield* sql<{ json: string }>`SELECT json FROM parley_events WHERE conversation_id = ${r.id} ORDER BY seq`).map((e) => e.json)
        : []
      const raw = yield* sql<{ name: string; bytes: Uint8Array }>`SELECT name, bytes FROM parley_raw_files WHERE conversation_id = ${r.id} ORDER BY name`
      yield* io(dir, async () => {
        await fs.mkdir(dir, { recursive: true })
        if (r.damage === null) {
          if (r.metadata !== null) await fs.writeFile(path.join(dir, "metadata.json"), r.metadata)
          if (r.base_config !== null) await fs.writeFile(path.join(dir, "base_config.json"), r.base_config)
          await fs.writeFile(path.join(dir, "events.json"), Rows.eventsText(jsons))
        }
        for (const f of raw) await fs.writeFile(path.join(dir, f.name), f.bytes)
      })
    }
    return rows.length
  }).pipe(Effect.catchTag("SqlError", (e) => Effect.fail(new StoreIoError({ path: toDir, reason: e.message }))))
