/**
 * What a storage is (contract §2, docs/postgres.md): a directory (JP's
 * layout) or a PostgreSQL database, decided once from the text of
 * `--storage` / `$PARLEY_STORAGE` (or a resolved directory) by {@link of};
 * each rule that differs by kind is one {@link match}.
 *
 * @example
 * ```ts
 * import * as Storage from "parley/domain/storage/Storage"
 * const where = Storage.of("postgres://db.internal/parley") // Database { url: "postgres://db.internal/parley" }
 * Storage.match(where, { Directory: ({ path }) => path, Database: () => "the database" }) // "the database"
 * Storage.text(Storage.of("/home/me/.parley")) // "/home/me/.parley"
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Data from "effect/Data"

/** A storage directory (absolute once resolved), or a PostgreSQL database named by its url (kept as given). */
export type Storage = Data.TaggedEnum<{
  Directory: { readonly path: string }
  Database: { readonly url: string }
}>

const Enum = Data.taggedEnum<Storage>()

/** A storage directory. */
export const Directory = Enum.Directory

/** A PostgreSQL database. */
export const Database = Enum.Database

/** Calls the case of `storage`'s kind. */
export const match = Enum.$match

/** Whether `text` is written as a PostgreSQL url (`postgres://` or `postgresql://`, any case). */
const isUrl = (text: string): boolean => /^postgres(ql)?:\/\//i.test(text)

/** The storage `text` names: a `postgres://` url is a database, anything else a directory. The one place the kind is read from text. */
export const of = (text: string): Storage => (isUrl(text) ? Database({ url: text }) : Directory({ path: text }))

/** The storage as text again: the directory's path, or the database's url (what a child is given in `$PARLEY_STORAGE`). */
export const text = (storage: Storage): string => (storage._tag === "Directory" ? storage.path : storage.url)
