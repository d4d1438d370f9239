/**
 * `parley serve --storage postgres://… --cluster` (docs/cluster.md): one runner of
 * an `effect/cluster` cluster over PostgreSQL. The runners of one cluster
 * share the database (conversations, `SqlMessageStorage`,
 * `SqlRunnerStorage`) and one API token (`$PARLEY_TOKEN`), and reach each
 * other over `SocketRunner` (TCP), so a message does not wait for the
 * storage poll (`Engine.ts`). Each serves the whole HTTP API (`Api.ts`) and runs the turns
 * of the conversations whose shards it holds (`Turns.ts`, `Handlers.ts`).
 *
 * Failover: the sharding settings below are short (shard locks expire after
 * 6 s, health checks and polls every second or faster), so a runner killed
 * with `kill -9` loses its shards to the others within a few seconds
 * (3.5–5.3 s in the cookbook's topic 12, against ~36 s with Effect's
 * defaults); the new owner's sweep (`Sweep.ts`) resumes its turns.
 *
 * The runner port answers only other runners: each connection proves
 * `$PARLEY_TOKEN` (at least 32 characters) and its frames are sealed
 * (`RunnerChannel.ts`). It listens on `--runner-host` (127.0.0.1 unless a
 * cluster spans machines), and that is the address the runner announces.
 *
 * The first stdout line is the URL with the web token (as `parley serve`),
 * the second this runner's address and the cluster's size. The web token
 * (`RunnerChannel.webTokenOf`) is what the page's URL and cookie and the
 * relay between runners carry: never `$PARLEY_TOKEN`, from which the runner
 * port's keys come, so a page's URL or a relayed request seen on the network
 * does not open the runner port. The HTTP API takes either as a bearer.
 *
 * @example
 * ```ts
 * import * as ClusterServer from "./ClusterServer.ts"
 * ClusterServer.run({ storage: "postgres://127.0.0.1/parley", host: "127.0.0.1", port: 3141, runnerHost: "127.0.0.1", runnerPort: undefined })
 * ```
 */
import * as net from "node:net"
import * as os from "node:os"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Schedule from "effect/Schedule"
import * as RunnerAddress from "effect/cluster/RunnerAddress"
import { Sharding } from "effect/cluster/Sharding"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import { SqlClient } from "effect/sql/SqlClient"
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
import * as ProviderOptions from "../../ProviderOptions.ts"
import * as StorageStore from "../../StorageStore.ts"
import { VERSION } from "../../Version.ts"
import * as Guard from "../../../layers/serve/Guard.ts"
import * as Limits from "../../../layers/serve/Limits.ts"
import * as Pages from "../../../layers/serve/Pages.ts"
import * as Api from "../../../layers/cluster/Api.ts"
import * as Handlers from "../../../layers/cluster/Handlers.ts"
import * as RunnerChannel from "../../../layers/cluster/RunnerChannel.ts"
import * as Sweep from "../../../layers/cluster/Sweep.ts"
import * as Turns from "../../../layers/cluster/Turns.ts"

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

/**
 * Failover within seconds instead of Effect's ~36 s (cookbook topic 12):
 * a dead runner's shard locks expire after 6 s, runners are checked every
 * second, assignments refreshed and messages polled twice a second.
 */
export const SHARDING = {
  shardsPerGroup: 60,
  runnerHealthCheckInterval: "1 second",
  refreshAssignmentsInterval: "500 millis",
  entityMessagePollInterval: "500 millis",
  entityReplyPollInterval: "200 millis",
  // The refresh must finish within its interval or the runner drops every shard: 2 s leaves room on a loaded machine.
  shardLockRefreshInterval: "2 seconds",
  shardLockExpiration: "6 seconds",
  entityTerminationTimeout: "2 seconds",
  sendRetryInterval: "200 millis"
} as const

/** How often each runner sweeps for turns to resume or hand off. */
const SWEEP = "1 second"

/** Connections of the store's pool: a running turn holds one (its advisory lock) until it ends. */
const storePool = (): number => {
  const n = Number(process.env["PARLEY_PG_POOL"] ?? "")
  return Number.isInteger(n) && n > 0 ? n : 40
}

const usage = (message: string) => new CliFailure({ code: 2, message })

/** Whether nothing listens on `port` of `host` now. */
const isFree = (host: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = net.createServer()
    s.once("error", () => resolve(false))
    s.listen(port, host, () => s.close(() => resolve(true)))
  })

/** A port nothing listens on now. */
const anyFree = (host: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once("error", reject)
    s.listen(0, host, () => {
      const port = (s.address() as net.AddressInfo).port
      s.close(() => resolve(port))
    })
  })

/** The runner protocol's port: asked for, else derived from the HTTP port, else free. */
const runnerPortFor = (host: string, httpPort: number, asked: number | undefined) =>
  Effect.promise(async () => {
    if (asked !== undefined) return asked
    const derived = httpPort + 10000
    return derived <= 65535 && (await isFree(host, derived)) ? derived : anyFree(host)
  })

/** The host other runners reach this one on: the listening host, or this machine's name when it listens everywhere. */
const advertised = (host: string): string => (host === "0.0.0.0" || host === "::" ? os.hostname() : host)

/** Which runner runs which turn (`Turns.ts`), how many shards each holds (`Sweep.ts`), which message answered what (`Handlers.ts`). */
const TABLES = [
  `CREATE TABLE IF NOT EXISTS parley_cluster_turns (
  conversation_id TEXT PRIMARY KEY,
  runner TEXT NOT NULL,
  pid INT NOT NULL,
  since TIMESTAMPTZ NOT NULL DEFAULT now()
)`,
  // Where the runner's HTTP API is, so another runner relays the turn's live events (`Events.ts`).
  `ALTER TABLE parley_cluster_turns ADD COLUMN IF NOT EXISTS http TEXT, ADD COLUMN IF NOT EXISTS http_host TEXT`,
  `CREATE TABLE IF NOT EXISTS parley_cluster_shards (runner TEXT PRIMARY KEY, shards INT NOT NULL, at TIMESTAMPTZ NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS parley_cluster_answers (
  conversation_id TEXT NOT NULL,
  inquiry_id TEXT NOT NULL,
  request_id TEXT NOT NULL,
  PRIMARY KEY (conversation_id, inquiry_id)
)`
]

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
    const store = yield* Layer.build(PgConversationStore.layer({ url: storage, maxConnections: storePool() })).pipe(
      Effect.mapError((e) => new CliFailure({ code: 1, message: e.message }))
    )
    return {
      store: Context.get(store, ConversationStore),
      config,
      executor: Context.get(executor, Executor),
      provider: Context.get(provider, Provider),
      root,
      chooseModel: (asked: string | undefined, remembered: string | undefined) =>
        ModelChoice.make({ flag: asked, script, config: data, configFile, providers, command: ["parley", "serve"] })(
          remembered
        )
    } satisfies Turns.Services
  })

/** The turns running on any runner, for the list page: waiting for input when the log says so. */
const runningTurns = (
  sql: SqlClient,
  store: ConversationStore["Service"]
): Effect.Effect<ReadonlyArray<Pages.Running>> =>
  Effect.gen(function* () {
    const rows = yield* sql<{ conversation_id: string }>`SELECT conversation_id FROM parley_cluster_turns`
    const { conversations } = yield* store.list({ archived: false })
    const waiting = new Set(
      conversations.filter((c) => c.incomplete?.state === "waiting-for-input").map((c) => c.id as string)
    )
    return rows.map((r) => ({ conversation_id: r.conversation_id, open: waiting.has(r.conversation_id) ? [r] : [] }))
  }).pipe(Effect.orElseSucceed(() => []))

/** Runs one runner until interrupted. */
export const run = (options: Options) =>
  Effect.scoped(
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
      if (!StorageStore.isDatabaseUrl(options.storage)) {
        return yield* usage(
          `serve --cluster needs a PostgreSQL storage (--storage postgres://…); ${options.storage} is a directory.`
        )
      }
      const shared = yield* services(options.storage, options.config)
      const pg = yield* Layer.build(
        // The store's client: a url without a password takes $PGPASSWORD or ~/.pgpass, as the store does.
        PgConversationStore.clientLayer({ url: options.storage, maxConnections: 20 })
      ).pipe(
        Effect.mapError(
          (e) => new CliFailure({ code: 1, message: `cannot use PostgreSQL for the cluster: ${e.message}` })
        )
      )
      const sql = Context.get(pg, SqlClient)
      yield* Effect.forEach(TABLES, (t) => sql.unsafe(t).pipe(Effect.retry({ times: 3 })), { discard: true }).pipe(
        Effect.orDie
      )

      // HTTP first: its port decides the runner protocol's derived port.
      const NodeHttpServer = yield* Effect.promise(() => import("@effect/platform-node/NodeHttpServer"))
      const listening = yield* Layer.build(
        NodeHttpServer.layer(Limits.httpServer(options.limits ?? Limits.defaults), {
          host: options.host,
          port: options.port
        })
      )
      const address = (yield* HttpServer.HttpServer.pipe(Effect.provideContext(listening))).address
      const port = address._tag === "UnixPathAddress" ? options.port : address.port
      const runnerPort = yield* runnerPortFor(options.runnerHost, port, options.runnerPort)
      const runner = RunnerAddress.make(advertised(options.runnerHost), runnerPort)

      // Other runners relay a turn's events from this one's HTTP API at its advertised host; the Host they send is one this runner's guard takes.
      const wildcard = options.host === "0.0.0.0" || options.host === "::"
      const bound = options.host.includes(":") ? `[${options.host}]` : options.host
      const httpHost = advertised(options.host)
      const httpApi = {
        address: `${httpHost.includes(":") ? `[${httpHost}]` : httpHost}:${port}`,
        host: `${wildcard ? "localhost" : bound}:${port}`
      }
      const turns = yield* Turns.make({
        runner: `${runner.host}:${runner.port}`,
        http: httpApi,
        services: shared,
        sql
      })
      // Stopping (SIGTERM, Ctrl-C) hands every turn off before anything else closes: the next owner resumes it.
      yield* Effect.addFinalizer(() => Effect.forEach(turns.running(), (t) => t.handOff, { discard: true }))
      const Engine = yield* Effect.promise(() => import("../../../layers/cluster/Engine.ts"))
      const cluster = Engine.layer(
        {
          ...SHARDING,
          runnerAddress: Option.some(runner),
          runnerListenAddress: Option.some(RunnerAddress.make(options.runnerHost, runnerPort))
        },
        RunnerChannel.keysOf(token)
      )
      // The HTTP side's token: whoever is shown or overhears it gets the HTTP API, not the runner port's keys.
      const web = RunnerChannel.webTokenOf(token)
      const sharded = yield* Layer.build(
        Layer.provideMerge(Handlers.layer(turns, shared.store, sql), cluster).pipe(
          Layer.provide(Layer.succeedContext(pg))
        )
      ).pipe(
        Effect.mapError(
          (e) =>
            new CliFailure({
              code: 1,
              message: `cannot start the cluster runner on ${runner.host}:${runnerPort}: ${String(e)}`
            })
        )
      )
      const sharding = Context.get(sharded, Sharding)
      const routes = Layer.mergeAll(
        Api.layer({
          turns,
          store: shared.store,
          sql,
          runner: `${runner.host}:${runner.port}`,
          token: web,
          chooseModel: shared.chooseModel
        }),
        // The page: any runner shows any conversation, live (its events are relayed from the runner that runs it).
        Pages.layer(options.storage, runningTurns(sql, shared.store)).pipe(
          Layer.provide(Layer.succeed(ConversationStore, shared.store))
        ),
        Guard.layer({ token: web, bearers: [token], hosts: Guard.hostsFor(options.host, port) })
      ).pipe(Layer.provide(Layer.succeedContext(sharded)))
      yield* Layer.build(
        Layer.provide(
          HttpRouter.serve(routes, {
            disableLogger: process.env["PARLEY_CLUSTER_DEBUG"] === undefined,
            disableListenLog: true
          }),
          Layer.succeedContext(listening)
        )
      )
      yield* Effect.forkScoped(
        Sweep.run({
          turns,
          sql,
          sharding,
          interval: SWEEP,
          runner: `${runner.host}:${runner.port}`,
          shardsPerGroup: SHARDING.shardsPerGroup
        })
      )

      const shown = options.host.includes(":") ? `[${options.host}]` : options.host
      // This runner registers as its sharding starts: counted once its row is there (bounded).
      const me = `${runner.host}:${runner.port}`
      const size = yield* sql<{
        n: number
        me: boolean
      }>`SELECT count(*)::int AS n, bool_or(address = ${me}) AS me FROM cluster_runners`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.repeat({ until: (r) => r?.me === true, schedule: Schedule.spaced("100 millis"), times: 50 }),
        Effect.orElseSucceed(() => undefined)
      )
      yield* Console.log(`http://${shown}:${port}/?token=${web}`)
      yield* Console.log(
        `runner ${runner.host}:${runner.port} (cluster of ${size?.n ?? 1} runner${(size?.n ?? 1) === 1 ? "" : "s"})`
      )
      return yield* Effect.never
    })
  ).pipe(Effect.provideService(References.MinimumLogLevel, "Warn"))
