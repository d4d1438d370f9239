/**
 * `parley serve --storage postgres://… --cluster` (docs/cluster.md): the flags
 * and the wiring of one runner of a cluster (`layers/cluster/Runner.ts` runs
 * it). Checked here: `$PARLEY_TOKEN` (at least 32 characters) and a
 * PostgreSQL storage. Chosen here: the store, config, executor, provider and
 * model choice every turn of the runner shares (as `parley query` chooses
 * them).
 *
 * The first stdout line is the URL with the web token (as `parley serve`),
 * the second this runner's address and the cluster's size.
 *
 * @example
 * ```ts
 * import * as ClusterServer from "./ClusterServer.ts"
 * ClusterServer.run({ storage: "postgres://127.0.0.1/parley", host: "127.0.0.1", port: 3141, runnerHost: "127.0.0.1", runnerPort: undefined })
 * ```
 */
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import * as Storage from "../../../domain/storage/Storage.ts"
import * as Hint from "../../Hint.ts"
import * as ConfigFile from "../../../layers/ConfigFile.ts"
import * as ExecutorLive from "../../../layers/executor/ExecutorLive.ts"
import * as ProviderLive from "../../../layers/provider/ProviderLive.ts"
import * as PgConversationStore from "../../../layers/store/pg/PgConversationStore.ts"
import { Config } from "../../../services/Config.ts"
import { ConversationStore } from "../../../services/ConversationStore.ts"
import { Executor } from "../../../services/Executor.ts"
import { Provider } from "../../../services/Provider.ts"
import { CliFailure } from "../../CliFailure.ts"
import * as ModelChoice from "../../ModelChoice.ts"
import * as ProviderOptions from "../../../layers/provider/ProviderOptions.ts"
import * as StorageStore from "../../../layers/store/StorageStore.ts"
import { VERSION } from "../../Version.ts"
import type * as Limits from "../../../layers/serve/Limits.ts"
import * as RunnerChannel from "../../../layers/cluster/RunnerChannel.ts"
import * as Runner from "../../../layers/cluster/Runner.ts"
import type * as Turns from "../../../layers/cluster/Turns.ts"
import * as RunnerLog from "./RunnerLog.ts"

/** What the runner was asked. */
export interface Options {
  readonly storage: string
  /** `--config FILE` as given (absolute); else $PARLEY_CONFIG, else ./.parley/config.toml (StorageStore.configFileOf). */
  readonly config?: string | undefined
  readonly host: string
  readonly port: number
  /** Where the runner protocol listens (`--runner-host`); other runners reach it there (its machine's name when 0.0.0.0 or ::). */
  readonly runnerHost: string
  /** The runner protocol's port (`--runner-port`); by default the HTTP port + 10000 when free, else any free port. */
  readonly runnerPort: number | undefined
  /** The HTTP API's connection cap and request timeouts (`parley serve`'s flags; `Limits.defaults` when not given). */
  readonly limits?: Limits.Limits | undefined
}

/** Connections of the store's pool: a running turn holds one (its advisory lock) until it ends. */
const storePool = (): number => {
  const n = Number(process.env["PARLEY_PG_POOL"] ?? "")
  return Number.isInteger(n) && n > 0 ? n : 40
}

const usage = (message: string) => new CliFailure({ code: 2, message })

/** The services every turn of this runner shares: store, config, executor, provider, model choice. */
const services = (storage: string, configFlag: string | undefined) =>
  Effect.gen(function* () {
    const configFile = StorageStore.configFileOf(storage, configFlag)
    const data = yield* ConfigFile.load(configFile).pipe(
      Effect.mapError((e) => new CliFailure({ code: 1, message: e.message }))
    )
    const script = process.env["PARLEY_SCRIPT"] === "" ? undefined : process.env["PARLEY_SCRIPT"]
    const providers = ProviderOptions.providerOptions(data, script)
    const config = Config.of({ file: configFile, data })
    const root = StorageStore.toolRoot(storage)
    const mcp = { root, interactive: false, clientInfo: { name: "parley", version: VERSION } }
    const executor = yield* Layer.build(
      ExecutorLive.layerWith({ mcp }).pipe(Layer.provide(Layer.succeed(Config, config)))
    ).pipe(Effect.mapError((e) => new CliFailure({ code: 1, message: Hint.withInstall(e) })))
    const provider = yield* Layer.build(ProviderLive.layer(providers))
    // The scripted model keeps its position in its steps: each turn gets one of its own (Turns.providerOfTurn).
    const providerOfTurn =
      script === undefined
        ? undefined
        : Effect.map(Layer.build(ProviderLive.layer(providers)), (built) => Context.get(built, Provider))
    const store = yield* Layer.build(PgConversationStore.layer({ url: storage, maxConnections: storePool() })).pipe(
      Effect.mapError((e) => new CliFailure({ code: 1, message: e.message }))
    )
    return {
      store: Context.get(store, ConversationStore),
      config,
      executor: Context.get(executor, Executor),
      provider: Context.get(provider, Provider),
      providerOfTurn,
      root,
      chooseModel: (asked: string | undefined, remembered: string | undefined) =>
        ModelChoice.make({ flag: asked, script, config: data, configFile, providers, command: ["parley", "serve"] })(
          remembered
        )
    } satisfies Turns.Services
  })

/** Runs one runner until interrupted. */
export const run = (options: Options) => {
  // Set as the runner begins to stop (its last finalizer runs first): the library's warnings about it are expected then.
  let stopping = false
  return Effect.scoped(
    Effect.gen(function* () {
      // The engine logs at INFO ("Listening on …"): stdout's first line is the URL, so only warnings and worse are shown.
      const token = process.env["PARLEY_TOKEN"] ?? ""
      if (token === "")
        return yield* usage(
          `serve --cluster needs $PARLEY_TOKEN: the runners of one cluster share one API token; make one with: ${RunnerChannel.MAKE_TOKEN}`
        )
      // The runner port's keys come from the token: a short one could be guessed offline from one recorded handshake.
      if (token.length < RunnerChannel.MIN_TOKEN)
        return yield* usage(
          `serve --cluster: $PARLEY_TOKEN has ${token.length} characters, fewer than ${RunnerChannel.MIN_TOKEN}; make one with: ${RunnerChannel.MAKE_TOKEN}`
        )
      if (Storage.of(options.storage)._tag === "Directory") {
        return yield* usage(
          `serve --cluster needs a PostgreSQL storage (--storage postgres://…); ${options.storage} is a directory.`
        )
      }
      const shared = yield* services(options.storage, options.config)
      const started = yield* Runner.start({ ...options, services: shared, token }).pipe(
        Effect.mapError((e) => new CliFailure({ code: 1, message: e.message }))
      )
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          stopping = true
        })
      )
      const shown = options.host.includes(":") ? `[${options.host}]` : options.host
      yield* Console.log(`http://${shown}:${started.port}/?token=${started.web}`)
      const n = started.size ?? 1
      yield* Console.log(`runner ${started.runner} (cluster of ${n} runner${n === 1 ? "" : "s"})`)
      return yield* Effect.never
    })
  ).pipe(
    Effect.provideService(References.MinimumLogLevel, "Warn"),
    // One line per warning in parley's words, not Effect's multi-line block (RunnerLog.ts).
    Effect.provideService(Logger.CurrentLoggers, new Set([RunnerLog.make(() => stopping)]))
  )
}
