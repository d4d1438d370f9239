/**
 * Conversations between a storage — a PostgreSQL database or a directory —
 * and a JP storage directory, one at a time and byte for byte
 * (`ConversationFiles`, `pg/Transfer.ts`): the work of `parley conversation
 * export` and `import` (docs/postgres.md#import-and-export), whose command
 * renders the results. A conversation whose id is already at the other end is
 * skipped (`onSkipped` hears of it as it happens), never overwritten. The
 * PostgreSQL code is loaded only for a database.
 *
 * @internal
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Storage from "parley/domain/storage/Storage"
 * import * as StorageTransfer from "parley/layers/store/StorageTransfer"
 * StorageTransfer.exportTo(Storage.of("postgres://db/parley"), { id: undefined, to: "/tmp/export" }, () => Effect.void)
 * ```
 */
import type { Stats } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as Storage from "../../domain/storage/Storage.ts"
import { ConversationNotFound } from "../../services/StoreErrors.ts"
import * as ConversationFiles from "./ConversationFiles.ts"

/** A transfer that stopped: `message` is its one line for a person. */
export class TransferFailed extends Schema.TaggedError<TransferFailed>()("TransferFailed", {
  message: Schema.String
}) {}

/** The database's own error, kept whole so the edge's one renderer can name it. */
export class StoreFailed extends Schema.TaggedError<StoreFailed>()("StoreFailed", {
  cause: Schema.Unknown
}) {}

/** What became of one conversation at the receiving end. */
export type Outcome = "imported" | "kept-as-files" | "exists"

/** Hears of a conversation skipped because `where` has its id already. */
export type OnSkipped = (id: string, where: string) => Effect.Effect<void>

/** A storage as both ends of a transfer. */
interface Ends {
  /** Its conversations (all, or the one `id`). */
  readonly places: (
    id?: ConversationId.ConversationId
  ) => Effect.Effect<ReadonlyArray<ConversationFiles.Place>, TransferFailed | StoreFailed>
  /** One of them as its files. */
  readonly read: (
    place: ConversationFiles.Place
  ) => Effect.Effect<ConversationFiles.ConversationFiles, TransferFailed | StoreFailed>
  /** Takes in the conversation at `place` of the storage directory `dir`. */
  readonly take: (dir: string, place: ConversationFiles.Place) => Effect.Effect<Outcome, TransferFailed | StoreFailed>
  /** After conversations were taken in (a database's statistics of them). */
  readonly settle: Effect.Effect<void>
}

/** A file operation whose error is one line naming `what`. */
const io = <A>(what: string, f: () => Promise<A>) =>
  Effect.tryPromise({
    try: f,
    // Node's message names the call, the code and the path ("EACCES: permission denied, open '…'").
    catch: (e) => new TransferFailed({ message: `${what}: ${e instanceof Error ? e.message : String(e)}` })
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
    ),
  settle: Effect.void
})

/** A database's ends, on a connection pool that lives as long as the scope. */
const databaseEnds = (url: string): Effect.Effect<Ends, TransferFailed, Scope.Scope> =>
  Effect.gen(function* () {
    const [Pg, Transfer] = yield* Effect.promise(() =>
      Promise.all([import("./pg/PgConversationStore.ts"), import("./pg/Transfer.ts")])
    )
    const database = Layer.provideMerge(Layer.effectDiscard(Pg.migrate), Pg.clientLayer({ url }))
    const client = yield* Layer.build(database).pipe(
      Effect.mapError((e) => new TransferFailed({ message: Pg.connectionError(url, e).message }))
    )
    const run = <A, E>(effect: Effect.Effect<A, E, Layer.Success<typeof database>>) =>
      effect.pipe(
        Effect.provideContext(client),
        Effect.mapError((cause) => new StoreFailed({ cause }))
      )
    return {
      places: (id) => run(Transfer.stored(id)),
      read: (place) => run(Transfer.exportOne(place)),
      take: (dir, place) => run(Transfer.importOne(dir, place)),
      settle: Effect.provideContext(Transfer.analyze, client)
    }
  })

const endsOf = (storage: Storage.Storage): Effect.Effect<Ends, TransferFailed, Scope.Scope> =>
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

/** What an export did: `total` conversations were asked for. */
export interface Exported {
  readonly to: string
  readonly total: number
  readonly exported: ReadonlyArray<string>
  readonly skipped: ReadonlyArray<string>
}

/** Writes the storage's conversations (all, or the one `id`) into the storage directory `to` (made when missing). */
export const exportTo = (
  storage: Storage.Storage,
  options: { readonly id: ConversationId.ConversationId | undefined; readonly to: string },
  onSkipped: OnSkipped
): Effect.Effect<Exported, TransferFailed | StoreFailed | ConversationNotFound> =>
  Effect.scoped(
    Effect.gen(function* () {
      const to = path.resolve(options.to)
      const stat = yield* statOf(to)
      // Written into, never replaced (docs/security.md#other-users-on-the-machine): a directory, or a link to one; a new one is made.
      if (stat !== undefined && !stat.isDirectory()) {
        return yield* new TransferFailed({
          message: `--to: ${to} is ${kindOf(stat)}, not a directory; name a directory (it is made when missing).`
        })
      }
      const ends = yield* endsOf(storage)
      const places = yield* ends.places(options.id)
      if (options.id !== undefined && places.length === 0) return yield* new ConversationNotFound({ id: options.id })
      const exported: Array<string> = []
      const skipped: Array<string> = []
      for (const place of places) {
        const files = yield* ends.read(place)
        const outcome = yield* io(`writing ${place.dirname} into ${to}`, () => ConversationFiles.write(to, files))
        if (outcome === "exists") {
          skipped.push(place.id)
          yield* onSkipped(place.id, to)
        } else exported.push(place.id)
      }
      return { to, total: places.length, exported, skipped }
    })
  )

/** What an import did: `into` names the receiving storage for a person. */
export interface Imported {
  readonly from: string
  readonly into: string
  readonly total: number
  readonly done: Readonly<Record<Outcome, ReadonlyArray<string>>>
}

/** Reads every conversation of the storage directory `from` (live and archived) into the storage. */
export const importFrom = (
  storage: Storage.Storage,
  options: { readonly from: string },
  onSkipped: OnSkipped
): Effect.Effect<Imported, TransferFailed | StoreFailed> =>
  Effect.scoped(
    Effect.gen(function* () {
      const from = path.resolve(options.from)
      const stat = yield* statOf(from)
      if (stat === undefined)
        return yield* new TransferFailed({
          message: `${from} does not exist; name a storage directory (the folder holding conversations/, such as .jp or .parley).`
        })
      if (!stat.isDirectory())
        return yield* new TransferFailed({
          message: `${from} is ${kindOf(stat)}, not a directory; name a storage directory (the folder holding conversations/).`
        })
      const inner = yield* statOf(path.join(from, "conversations"))
      if (inner?.isDirectory() !== true) {
        return yield* new TransferFailed({
          message: `${from} has no conversations/ folder; name a storage directory (the folder holding conversations/, such as .jp or .parley).`
        })
      }
      const into = Storage.match(storage, { Database: () => "the database", Directory: (dir) => dir.path })
      const ends = yield* endsOf(storage)
      const places = yield* directoryEnds(from).places()
      const done: Record<Outcome, Array<string>> = { imported: [], "kept-as-files": [], exists: [] }
      for (const place of places) {
        const outcome = yield* ends.take(from, place)
        done[outcome].push(place.id)
        if (outcome === "exists") yield* onSkipped(place.id, into)
      }
      if (done.imported.length + done["kept-as-files"].length > 0) yield* ends.settle
      return { from, into, total: places.length, done }
    })
  )
