/**
 * Which `ConversationStore` a storage names (issue 24): a directory is the
 * file store (JP's layout, the default); a `postgres://` url (from
 * `--storage` or `$PARLEY_STORAGE`) is the PostgreSQL store. The PostgreSQL
 * code (and its driver) is imported only when such a url is used, so the
 * other commands start as fast as before (issue 28).
 *
 * With a database there is no storage directory to hold `config.toml` or to
 * be the tools' working directory: `config.toml` is `$PARLEY_CONFIG`, else
 * `./.parley/config.toml` of the working directory, and tools run there.
 *
 * @example
 * ```ts
 * import * as StorageStore from "./StorageStore.ts"
 * StorageStore.configFileOf("postgres://db.internal/parley") // "<cwd>/.parley/config.toml"
 * ```
 */
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as FileConversationStore from "../layers/store/FileConversationStore.ts"
import { isDatabaseUrl } from "../programs/StorageDir.ts"
import type { ConversationStore } from "../services/ConversationStore.ts"
import { CliFailure } from "./CliFailure.ts"

export { isDatabaseUrl }

/** The store of `storage`: the file store of a directory, the PostgreSQL store of a url (loaded on demand). */
export const storeLayer = (storage: string): Layer.Layer<ConversationStore, CliFailure> =>
  isDatabaseUrl(storage)
    ? Layer.unwrap(Effect.map(
      Effect.promise(() => import("../layers/store/pg/PgConversationStore.ts")),
      (Pg) => Layer.catchTag(Pg.layer({ url: storage }), "StoreIoError", (e) => Layer.unwrap(Effect.fail(new CliFailure({ code: 1, message: e.message }))))
    ))
    : FileConversationStore.layer({ storageDir: storage })

/** The `config.toml` of `storage`: in the directory; for a database `$PARLEY_CONFIG`, else `./.parley/config.toml`. */
export const configFileOf = (storage: string, env: Readonly<Record<string, string | undefined>> = process.env, cwd = process.cwd()): string => {
  // ConfigFile.fileOf's rule, without importing ConfigFile (and its TOML parser) into ls and print.
  if (!isDatabaseUrl(storage)) return path.join(storage, "config.toml")
  const fromEnv = env["PARLEY_CONFIG"]
  return fromEnv !== undefined && fromEnv !== "" ? path.resolve(cwd, fromEnv) : path.join(cwd, ".parley", "config.toml")
}

/** Where tools run: the storage directory's parent; for a database, the working directory. */
export const toolRoot = (storage: string, cwd = process.cwd()): string => (isDatabaseUrl(storage) ? cwd : path.dirname(storage))
