/**
 * The `parley` root command and the flags every subcommand shares, accepted
 * before or after the subcommand name: `--storage DIR` (its fallback is
 * `$PARLEY_STORAGE`, read here through effect/cli's config fallback and
 * nowhere else) and `--config FILE` (docs/postgres.md: the `config.toml` to read, for
 * a database storage above all; its fallback `$PARLEY_CONFIG` is read by
 * `StorageStore.configFileOf`).
 *
 * @example
 * ```ts
 * import { root, storage } from "./Root.ts"
 * const { dir, given, config } = yield* storage // resolved per contract §2; config: the config.toml to read
 * ```
 */
import * as path from "node:path"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Storage from "../domain/storage/Storage.ts"
import { databaseUrlProblem, resolveStorageDir } from "../programs/StorageDir.ts"
import * as Usage from "./Usage.ts"
import { configFileOf } from "../layers/store/StorageStore.ts"

export const root = Command.make("parley").pipe(
  Command.withSharedFlags({
    storage: Flag.String("storage").pipe(
      Flag.withDescription("Storage directory (default: $PARLEY_STORAGE, the nearest .parley/, or ./.parley)"),
      Flag.withFallbackConfig(Config.String("PARLEY_STORAGE")),
      Flag.optional
    ),
    config: Flag.String("config").pipe(
      Flag.withDescription(
        "The config.toml to read (default: $PARLEY_CONFIG, else the storage's: DIR/config.toml, or ./.parley/config.toml for a postgres:// storage)"
      ),
      Flag.optional
    )
  }),
  Command.withDescription("Tool inquiries for LLM agents: parallel tools that ask questions, recorded and resumable.")
)

/**
 * The storage directory for this invocation: `dir`, resolved (contract §2),
 * `where`, what kind of storage it is (decided here once), and `given`, the
 * directory as given by `--storage` or `$PARLEY_STORAGE` (`undefined` when
 * it was found by looking up from here), which hints repeat;
 * `config`, the `config.toml` to read, and `configGiven`, `--config` as given
 * (absolute), which hints of commands that read the config repeat.
 */
export const storage = Effect.gen(function* () {
  const flags = yield* root
  const flag = Option.getOrUndefined(flags.storage)
  const given = flag === undefined || flag === "" ? undefined : flag
  const problem = given === undefined ? undefined : databaseUrlProblem(given)
  if (problem !== undefined) return yield* Usage.failure(["parley"], `--storage ${problem}`)
  // The environment was read by the flag's fallback: do not read it again.
  const dir = resolveStorageDir({ flag: given, env: {}, cwd: process.cwd() })
  const configFlag = Option.getOrUndefined(flags.config)
  const configGiven = configFlag === undefined || configFlag === "" ? undefined : path.resolve(configFlag)
  return {
    dir,
    where: Storage.of(dir),
    given: given === undefined ? undefined : dir,
    config: configFileOf(dir, configGiven),
    configGiven
  }
})

/** The storage directory for this invocation. */
export const storageDir = Effect.map(storage, (s) => s.dir)
