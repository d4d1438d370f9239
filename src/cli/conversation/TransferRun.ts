/**
 * What `parley conversation export` and `import` do (docs/postgres.md#import-and-export), once their
 * command lines are read: conversations go between the storage — a
 * PostgreSQL database or a directory — and a JP storage directory, one at a
 * time and byte for byte (`ConversationFiles`, `pg/Transfer.ts`). A
 * conversation whose id is already at the other end is skipped with a line
 * naming it, never overwritten, and the command then exits 1. The
 * PostgreSQL code is loaded only for a database.
 *
 * @example
 * ```ts
 * import { exportConversations } from "./TransferRun.ts"
 * exportConversations({ id: undefined, to: "/tmp/export", format: "text" }, { dir: "postgres://db/parley", given: undefined })
 * ```
 */
import type { Stats } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as ConversationFiles from "../../layers/store/ConversationFiles.ts"
import * as Storage from "../../domain/storage/Storage.ts"
import { ConversationNotFound } from "../../services/StoreErrors.ts"
import { CliFailure } from "../CliFailure.ts"
import * as ErrorLine from "../ErrorLine.ts"
import type { StorageAt } from "./Store.ts"

/** What became of one conversation at the receiving end. */
type Outcome = "imported" | "kept-as-files" | "exists"

/** A storage as both ends of a transfer. */
interface Ends {
  /** Its conversations (all, or the one `id`). */
  readonly places: (
    id?: ConversationId.ConversationId
  ) => Effect.Effect<ReadonlyArray<ConversationFiles.Place>, CliFailure>
  /** One of them as its files. */
  readonly read: (place: ConversationFiles.Place) => Effect.Effect<ConversationFiles.ConversationFiles, CliFailure>
  /** Takes in the conversation at `place` of the storage directory `dir`. */
  readonly take: (dir: string, place: ConversationFiles.Place) => Effect.Effect<Outcome, CliFailure>
}

const failed = (e: unknown) => new CliFailure({ code: 1, message: ErrorLine.line(e, {}) })

/** A file operation whose error is one line naming `what`. */
const io = <A>(what: string, f: () => Promise<A>) =>
  Effect.tryPromise({
    try: f,
    // Node's message names the call, the code and the path ("EACCES: permission denied, open '…'").
    catch: (e) => new CliFailure({ code: 1, message: `${what}: ${e instanceof Error ? e.message : String(e)}` })
  })

/** A storage directory's ends: its conversation directories, copied as they are. */
const directoryEnds = (storageDir: string): Ends => ({
  places: (id) => io(`reading ${storageDir}`, () => ConversationFiles.ids(storageDir, id)),
  read: (place) => io(`reading ${place.dirname} in ${storageDir}`, () => ConversationFiles.read(storageDir, place)),
  take: (dir, place) =>
    io(`copying ${place.dirname} into ${storageDir}`, async () =>
      (await ConversationFiles.write(storageDir, await ConversationFiles.read(dir, place))) === "exists"
        ? "exists"
        : "imported"
    )
})

/** A database's ends, on a connection pool that lives as long as the scope. */
const databaseEnds = (url: string): Effect.Effect<Ends, CliFailure, Scope.Scope> =>
  Effect.gen(function* () {
    const [Pg, Transfer] = yield* Effect.promise(() =>
      Promise.all([import("../../layers/store/pg/PgConversationStore.ts"), import("../../layers/store/pg/Transfer.ts")])
    )
    const database = Layer.provideMerge(Layer.effectDiscard(Pg.migrate), Pg.clientLayer({ url }))
    const client = yield* Layer.build(database).pipe(
      Effect.mapError((e) => new CliFailure({ code: 1, message: Pg.connectionError(url, e).message }))
    )
    const run = <A, E>(effect: Effect.Effect<A, E, Layer.Success<typeof database>>) =>
      effect.pipe(Effect.provideContext(client), Effect.mapError(failed))
    return {
      places: (id) => run(Transfer.stored(id)),
      read: (place) => run(Transfer.exportOne(place)),
      take: (dir, place) => run(Transfer.importOne(dir, place))
    }
  })

const endsOf = (storage: Storage.Storage): Effect.Effect<Ends, CliFailure, Scope.Scope> =>
  Storage.match(storage, {
    Database: ({ url }) => databaseEnds(url),
    Directory: (dir) => Effect.succeed(directoryEnds(dir.path))
  })

/** What a path is, for a person: "a file", "a FIFO", … */
const kindOf = (stat: Stats): string =>
  stat.isFile()
    ? "a file"
    : stat.isFIFO()
      ? "a FIFO"
      : stat.isSocket()
        ? "a socket"
        : stat.isCharacterDevice()
          ? "a character device"
          : stat.isBlockDevice()
            ? "a block device"
            : "not a directory"

/** `dir`'s stat (through symlinks), or undefined when nothing is there. */
const statOf = (dir: string) =>
  io(dir, () => fs.stat(dir).catch((e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? undefined : Promise.reject(e))))

/** What the commands were asked. */
export interface ExportOptions {
  readonly id: ConversationId.ConversationId | undefined
  readonly to: string
  readonly format: "text" | "json"
}

export interface ImportOptions {
  readonly from: string
  readonly format: "text" | "json"
}

const plural = (n: number) => `${n} conversation${n === 1 ? "" : "s"}`

const skippedLine = (id: string, where: string) =>
  Console.error(
    `parley: skipped ${ConversationId.display(id as ConversationId.ConversationId)}: ${where} has a conversation with this id already; it was not overwritten.`
  )

/** Writes the storage's conversations (all, or one) into the storage directory `to` (created when missing). */
export const exportConversations = (options: ExportOptions, storage: StorageAt) =>
  Effect.scoped(
    Effect.gen(function* () {
      const to = path.resolve(options.to)
      const stat = yield* statOf(to)
      // Written into, never replaced (docs/security.md#other-users-on-the-machine): a directory, or a link to one; a new one is made.
      if (stat !== undefined && !stat.isDirectory()) {
        return yield* new CliFailure({
          code: 1,
          message: `--to: ${to} is ${kindOf(stat)}, not a directory; name a directory (it is made when missing).`
        })
      }
      const ends = yield* endsOf(Storage.of(storage.dir))
      const places = yield* ends.places(options.id)
      if (options.id !== undefined && places.length === 0) {
        return yield* new CliFailure({
          code: 1,
          message: ErrorLine.line(new ConversationNotFound({ id: options.id }), {
            storage: storage.given,
            config: storage.configGiven
          })
        })
      }
      const exported: Array<string> = []
      const skipped: Array<string> = []
      for (const place of places) {
        const files = yield* ends.read(place)
        const outcome = yield* io(`writing ${place.dirname} into ${to}`, () => ConversationFiles.write(to, files))
        if (outcome === "exists") {
          skipped.push(place.id)
          yield* skippedLine(place.id, to)
        } else exported.push(place.id)
      }
      if (options.format === "json") yield* Console.log(JSON.stringify({ to, exported, skipped }, null, 2))
      else
        yield* Console.log(
          places.length === 0 ? "No conversations to export." : `Exported ${plural(exported.length)} to ${to}.`
        )
      if (skipped.length > 0)
        return yield* new CliFailure({
          code: 1,
          message: `${plural(skipped.length)} not exported: ${to} has ${skipped.length === 1 ? "it" : "them"} already.`
        })
    })
  )

/** Reads every conversation of the storage directory `from` (live and archived) into the storage. */
export const importConversations = (options: ImportOptions, storage: StorageAt) =>
  Effect.scoped(
    Effect.gen(function* () {
      const from = path.resolve(options.from)
      const stat = yield* statOf(from)
      if (stat === undefined)
        return yield* new CliFailure({
          code: 1,
          message: `${from} does not exist; name a storage directory (the folder holding conversations/, such as .jp or .parley).`
        })
      if (!stat.isDirectory())
        return yield* new CliFailure({
          code: 1,
          message: `${from} is ${kindOf(stat)}, not a directory; name a storage directory (the folder holding conversations/).`
        })
      const inner = yield* statOf(path.join(from, "conversations"))
      if (inner?.isDirectory() !== true) {
        return yield* new CliFailure({
          code: 1,
          message: `${from} has no conversations/ folder; name a storage directory (the folder holding conversations/, such as .jp or .parley).`
        })
      }
      const where = Storage.of(storage.dir)
      const into = Storage.match(where, { Database: () => "the database", Directory: (dir) => dir.path })
      const ends = yield* endsOf(where)
      const places = yield* directoryEnds(from).places()
      const done: Record<Outcome, Array<string>> = { imported: [], "kept-as-files": [], exists: [] }
      for (const place of places) {
        const outcome = yield* ends.take(from, place)
        done[outcome].push(place.id)
        if (outcome === "exists") yield* skippedLine(place.id, into)
      }
      if (options.format === "json") {
        yield* Console.log(
          JSON.stringify(
            { from, imported: done.imported, kept_as_files: done["kept-as-files"], skipped: done.exists },
            null,
            2
          )
        )
      } else {
        const kept = done["kept-as-files"].length
        yield* Console.log(
          places.length === 0
            ? `${from} holds no conversations.`
            : `Imported ${plural(done.imported.length + kept)} from ${from}.` +
                (kept > 0
                  ? ` ${plural(kept)} parley cannot read (or would re-save differently) ${kept === 1 ? "is" : "are"} kept as ${kept === 1 ? "its" : "their"} files: listed as damaged, exported as they came.`
                  : "")
        )
      }
      if (done.exists.length > 0)
        return yield* new CliFailure({
          code: 1,
          message: `${plural(done.exists.length)} not imported: ${into} has ${done.exists.length === 1 ? "it" : "them"} already.`
        })
    })
  )
