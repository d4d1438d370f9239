/**
 * `parley serve --storage postgres://… --cluster` (docs/cluster.md): what the
 * CLI decides for one runner of a cluster before the library runs it
 * (`layers/cluster/ClusterServer.ts`): `$PARLEY_TOKEN` (at least 32
 * characters), a PostgreSQL storage, `$PARLEY_SCRIPT` and `$PARLEY_PG_POOL`,
 * the model choice in the CLI's words, and the line of a failure.
 *
 * @example
 * ```ts
 * import * as Cluster from "./Cluster.ts"
 * Cluster.run({ storage: "postgres://127.0.0.1/parley", host: "127.0.0.1", port: 3141, runnerHost: "127.0.0.1", runnerPort: undefined })
 * ```
 */
import * as Effect from "effect/Effect"
import * as Storage from "../../domain/storage/Storage.ts"
import * as ClusterServer from "../../layers/cluster/ClusterServer.ts"
import * as RunnerChannel from "../../layers/cluster/RunnerChannel.ts"
import type * as Limits from "../../layers/serve/Limits.ts"
import * as StorageStore from "../../layers/store/StorageStore.ts"
import { CliFailure } from "../CliFailure.ts"
import * as ErrorLine from "../ErrorLine.ts"
import * as ModelChoice from "../ModelChoice.ts"
import * as NotifyHooks from "../NotifyHooks.ts"
import { VERSION } from "../Version.ts"

/** What the runner was asked. */
export interface Options {
  readonly storage: string
  /** `--config FILE` as given (absolute); else $PARLEY_CONFIG, else ./.parley/config.toml (StorageStore.configFileOf). */
  readonly config?: string | undefined
  readonly host: string
  readonly port: number
  readonly runnerHost: string
  readonly runnerPort: number | undefined
  readonly limits?: Limits.Limits | undefined
}

/** Connections of the store's pool (`$PARLEY_PG_POOL`); the running turns' locks share 4 of them. */
const storePool = (): number => {
  const n = Number(process.env["PARLEY_PG_POOL"] ?? "")
  return Number.isInteger(n) && n > 0 ? n : 40
}

/** Why this runner cannot start as asked (a usage error, exit 2), if it cannot. */
const refused = (token: string, storage: string): string | undefined => {
  if (token === "")
    return `serve --cluster needs $PARLEY_TOKEN: the runners of one cluster share one API token; make one with: ${RunnerChannel.MAKE_TOKEN}`
  // The runner port's keys come from the token: a short one could be guessed offline from one recorded handshake.
  if (token.length < RunnerChannel.MIN_TOKEN)
    return `serve --cluster: $PARLEY_TOKEN has ${token.length} characters, fewer than ${RunnerChannel.MIN_TOKEN}; make one with: ${RunnerChannel.MAKE_TOKEN}`
  if (Storage.of(storage)._tag === "Directory")
    return `serve --cluster needs a PostgreSQL storage (--storage postgres://…); ${storage} is a directory.`
  return undefined
}

/** Runs one runner until interrupted. */
export const run = (options: Options) => {
  const token = process.env["PARLEY_TOKEN"] ?? ""
  const usage = refused(token, options.storage)
  if (usage !== undefined) return Effect.fail(new CliFailure({ code: 2, message: usage }))
  const script = process.env["PARLEY_SCRIPT"] === "" ? undefined : process.env["PARLEY_SCRIPT"]
  return ClusterServer.run({
    ...options,
    configFile: StorageStore.configFileOf(options.storage, options.config),
    token,
    script,
    pool: storePool(),
    version: VERSION,
    chooseModel:
      ({ config, configFile, providers }) =>
      (asked, remembered) =>
        ModelChoice.make({ flag: asked, script, config, configFile, providers, command: ["parley", "serve"] })(
          remembered
        ),
    notify: ({ config, root }) =>
      NotifyHooks.settings({
        storage: options.storage,
        root,
        data: config,
        storageGiven: options.storage,
        config: options.config
      })
  }).pipe(Effect.mapError((e) => ErrorLine.failure(e, {})))
}
