/**
 * One runner of a cluster (docs/cluster.md) once its flags are read: the
 * store, config, executor, provider and model choice every turn of the
 * runner shares (as `parley query` chooses them), then `Runner.ts`. The
 * first stdout line is the URL with the web token (as `parley serve`), the
 * second this runner's address and the cluster's size. The cluster
 * library's own warnings are printed one line each (`RunnerLog.ts`).
 *
 * What the caller checks first (`cli/serve/Cluster.ts`): the token (at
 * least `RunnerChannel.MIN_TOKEN` characters) and a PostgreSQL storage.
 * Failures are data (the config's, the executor's, the store's,
 * `RunnerNotStarted`): the CLI renders them.
 *
 * @internal
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as ClusterServer from "parley/layers/cluster/ClusterServer"
 * const program = Effect.gen(function* () {
 *   yield* ClusterServer.run({
 *     storage: "postgres://127.0.0.1/parley",
 *     configFile: "/srv/parley/.parley/config.toml",
 *     host: "127.0.0.1",
 *     port: 3141,
 *     runnerHost: "127.0.0.1",
 *     runnerPort: undefined,
 *     token: "a shared secret of at least 32 characters",
 *     script: undefined,
 *     version: "0.1.0",
 *     chooseModel: () => (asked) => Effect.succeed(asked ?? "anthropic/claude-sonnet-4-5")
 *   })
 * })
 * ```
 */
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import type * as ConfigData from "../../domain/tool/Config.ts"
import { Config } from "../../services/Config.ts"
import { ConversationStore } from "../../services/ConversationStore.ts"
import { Executor } from "../../services/Executor.ts"
import { Provider } from "../../services/Provider.ts"
import * as ConfigFile from "../ConfigFile.ts"
import * as ExecutorLive from "../executor/ExecutorLive.ts"
import * as NotifierLive from "../notify/NotifierLive.ts"
import * as ProviderLive from "../provider/ProviderLive.ts"
import * as ProviderOptions from "../provider/ProviderOptions.ts"
import type * as Limits from "../serve/Limits.ts"
import * as PgConversationStore from "../store/pg/PgConversationStore.ts"
import * as StorageStore from "../store/StorageStore.ts"
import * as Runner from "./Runner.ts"
import * as RunnerLog from "./RunnerLog.ts"
import type * as Turns from "./Turns.ts"

/** What the config says, for the caller's model choice. */
export interface ModelInputs {
  readonly config: ConfigData.Config
  readonly configFile: string
  readonly providers: ProviderLive.ProviderLiveOptions
  readonly script: string | undefined
}

/** What the runner was asked. */
export interface Options {
  /** The PostgreSQL url the cluster shares. */
  readonly storage: string
  /** The `config.toml` every turn reads (`StorageStore.configFileOf`). */
  readonly configFile: string
  readonly host: string
  readonly port: number
  /** Where the runner protocol listens (`--runner-host`); other runners reach it there (its machine's name when 0.0.0.0 or ::). */
  readonly runnerHost: string
  /** The runner protocol's port (`--runner-port`); by default the HTTP port + 10000 when free, else any free port. */
  readonly runnerPort: number | undefined
  /** The HTTP API's connection cap and request timeouts (`Limits.defaults` when not given). */
  readonly limits?: Limits.Limits | undefined
  /** The cluster's token, checked by the caller. */
  readonly token: string
  /** The scripted model's steps, when its turns run on it. */
  readonly script: string | undefined
  /** Connections of the store's pool (default 40), 4 of them keeping every running turn's lock (`LOCK_CONNECTIONS`). */
  readonly pool?: number | undefined
  /** parley's version, as MCP servers are told. */
  readonly version: string
  /** The model choice of a turn over the config (the CLI's, which words its refusals). */
  readonly chooseModel: (inputs: ModelInputs) => Turns.Services["chooseModel"]
  /** `[notify]`'s settings over the config (the CLI's: its answer commands repeat what the runner was told); none: nobody is told. */
  readonly notify?:
    | ((inputs: { readonly config: ConfigData.Config; readonly root: string }) => NotifierLive.Settings)
    | undefined
}

/**
 * The connections a runner keeps its turns' conversation locks on (`PgLock.shared`). One per
 * turn made each waiting turn a PostgreSQL server process, woken for its turn's writes: five
 * of an answer's nine statements then cost the server about six times what they cost on a
 * connection used back to back (docs/cluster.md#figures). More than one, so a long write
 * (a rewrite's transaction) holds up a quarter of the turns, not all.
 */
export const LOCK_CONNECTIONS = 4

/** The services every turn of this runner shares: store, config, executor, provider, model choice. */
const services = (options: Options) =>
  Effect.gen(function* () {
    const { configFile, script } = options
    const data = yield* ConfigFile.load(configFile)
    const providers = ProviderOptions.providerOptions(data, script)
    const config = Config.of({ file: configFile, data })
    const root = StorageStore.toolRoot(options.storage)
    const mcp = { root, interactive: false, clientInfo: { name: "parley", version: options.version } }
    const executor = yield* Layer.build(
      ExecutorLive.layerWith({ mcp }).pipe(Layer.provide(Layer.succeed(Config, config)))
    )
    const provider = yield* Layer.build(ProviderLive.layer(providers))
    // The scripted model keeps its position in its steps: each turn gets one of its own (Turns.providerOfTurn).
    const providerOfTurn =
      script === undefined
        ? undefined
        : Effect.map(Layer.build(ProviderLive.layer(providers)), (built) => Context.get(built, Provider))
    const store = yield* Layer.build(
      PgConversationStore.layer({
        url: options.storage,
        maxConnections: options.pool ?? 40,
        lockConnections: LOCK_CONNECTIONS
      })
    )
    return {
      store: Context.get(store, ConversationStore),
      config,
      executor: Context.get(executor, Executor),
      provider: Context.get(provider, Provider),
      providerOfTurn,
      root,
      // The runner owning a turn follows its events: each notification is sent by one runner.
      ...(options.notify !== undefined
        ? { notifier: yield* NotifierLive.make(options.notify({ config: data, root })) }
        : {}),
      chooseModel: options.chooseModel({ config: data, configFile, providers, script })
    } satisfies Turns.Services
  })

/** Runs one runner until interrupted. */
export const run = (options: Options) => {
  // Set as the runner begins to stop (its last finalizer runs first): the library's warnings about it are expected then.
  let stopping = false
  return Effect.scoped(
    Effect.gen(function* () {
      const shared = yield* services(options)
      const started = yield* Runner.start({ ...options, services: shared })
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
    // The engine logs at INFO ("Listening on …"): stdout's first line is the URL, so only warnings and worse are shown.
    Effect.provideService(References.MinimumLogLevel, "Warn"),
    // One line per warning in parley's words, not Effect's multi-line block (RunnerLog.ts).
    Effect.provideService(Logger.CurrentLoggers, new Set([RunnerLog.make(() => stopping)]))
  )
}
