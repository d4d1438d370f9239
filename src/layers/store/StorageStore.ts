/**
 * Which `ConversationStore` a storage names (docs/postgres.md): a directory is the
 * file store (JP's layout, the default); a `postgres://` url (from
 * `--storage` or `$PARLEY_STORAGE`) is the PostgreSQL store. The PostgreSQL
 * code (and its driver) is imported only when such a url is used, so the
 * other commands start as fast as before (docs/decisions.md#fast-start).
 *
 * `config.toml` is `--config FILE`, else `$PARLEY_CONFIG`, else the
 * storage's own: `<storage>/config.toml` for a directory; a database has no
 * directory to hold it, so `./.parley/config.toml` of the working directory
 * (where its tools run). What parley keeps for a database on this machine
 * beside the config — the serve token, MCP sign-ins — goes to a per-user
 * directory keyed by the database ({@link stateDirOf}), never into a folder
 * of the project.
 *
 * A database that cannot be reached fails the store's layer with the store's
 * own error (`StoreIoError`), which the edge renders (`cli/ErrorLine.ts`).
 *
 * @internal
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { ConversationStore } from "parley/services/ConversationStore"
 * import * as StorageStore from "parley/layers/store/StorageStore"
 * const program = Effect.gen(function* () {
 *   StorageStore.configFileOf("postgres://db.internal/parley", undefined) // "<cwd>/.parley/config.toml"
 *   const store = yield* ConversationStore
 *   return yield* store.list()
 * }).pipe(Effect.provide(StorageStore.storeLayer("/home/me/.parley")))
 * ```
 */
import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { MissingPackage } from "../../domain/package/MissingPackage.ts"
import * as Storage from "../../domain/storage/Storage.ts"
import { databaseKey } from "../../programs/StorageDir.ts"
import type { ConversationStore } from "../../services/ConversationStore.ts"
import type { StoreIoError } from "../../services/StoreErrors.ts"
import { sha256 } from "../../domain/storage/Sha256.ts"
import * as FileConversationStore from "./FileConversationStore.ts"

/**
 * The store of `storage`: the file store of a directory, the PostgreSQL store of a url (loaded on demand).
 * `blockingClose`: the file store's sessions close with blocking calls (a command that exits after them).
 */
export const storeLayer = (
  storage: string,
  options: { readonly blockingClose?: boolean } = {}
): Layer.Layer<ConversationStore, StoreIoError | MissingPackage> =>
  Storage.match(Storage.of(storage), {
    // MissingPackage only in theory for the CLI: its bundle carries @effect/sql-pg.
    Database: ({ url }): Layer.Layer<ConversationStore, StoreIoError | MissingPackage> =>
      Layer.unwrap(
        Effect.map(
          Effect.promise(() => import("./pg/PgConversationStore.ts")),
          (Pg) => Pg.layer({ url })
        )
      ),
    Directory: (dir): Layer.Layer<ConversationStore, StoreIoError | MissingPackage> =>
      FileConversationStore.layer({ storageDir: dir.path, blockingClose: options.blockingClose })
  })

/** The `config.toml` of `storage`: `--config FILE` (`flag`), else `$PARLEY_CONFIG`, else the storage's own (a database's: `./.parley/config.toml`). */
export const configFileOf = (
  storage: string,
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
  cwd = process.cwd()
): string => {
  // ConfigFile.fileOf's rule, without importing ConfigFile (and its TOML parser) into ls and print.
  if (flag !== undefined && flag !== "") return path.resolve(cwd, flag)
  const fromEnv = env["PARLEY_CONFIG"]
  if (fromEnv !== undefined && fromEnv !== "") return path.resolve(cwd, fromEnv)
  return Storage.match(Storage.of(storage), {
    Database: () => path.join(cwd, ".parley", "config.toml"),
    Directory: (dir) => path.join(dir.path, "config.toml")
  })
}

/** This user's configuration directory: `$XDG_CONFIG_HOME/parley`, else `~/.config/parley`. */
export const userConfigDir = (env: Readonly<Record<string, string | undefined>> = process.env): string =>
  path.join(env["XDG_CONFIG_HOME"] || path.join(os.homedir(), ".config"), "parley")

/**
 * Where parley keeps its own files for `storage` on this machine (the serve
 * token, MCP sign-ins): the storage directory; for a database, this user's
 * `<config dir>/postgres/<hash of the url without its password>`.
 */
export const stateDirOf = (storage: string, env: Readonly<Record<string, string | undefined>> = process.env): string =>
  Storage.match(Storage.of(storage), {
    Database: ({ url }) => path.join(userConfigDir(env), "postgres", sha256(databaseKey(url)).slice(0, 16)),
    Directory: (dir) => dir.path
  })

/** Where tools run: the storage directory's parent; for a database, the working directory. */
export const toolRoot = (storage: string, cwd = process.cwd()): string =>
  Storage.match(Storage.of(storage), { Database: () => cwd, Directory: (dir) => path.dirname(dir.path) })
