/**
 * One runner of an `effect/cluster` cluster over PostgreSQL (docs/cluster.md), once
 * its services are chosen: the cluster's tables (`Migrations.ts`), the HTTP
 * server, the engine (`Engine.ts`), the entity's handlers on this runner's
 * turns (`Handlers.ts`, `Turns.ts`), the HTTP API (`Api.ts`), the page and the
 * guard, and the sweep (`Sweep.ts`). The runners of one cluster share the
 * database (conversations, `SqlMessageStorage`, `SqlRunnerStorage`) and one
 * token, and reach each other over `SocketRunner` (TCP), so a message does
 * not wait for the storage poll.
 *
 * Failover: a runner killed with `kill -9` is marked unhealthy by its peers
 * as soon as its liveness lock is free (`Liveness.ts`), its shards move at
 * the next assignment refresh (every 250 ms), and the new owner's sweep
 * resumes its turns (`SHARDING` below).
 *
 * The runner port answers only other runners: each connection proves the
 * token and its frames are sealed (`RunnerChannel.ts`). The web token
 * (`RunnerChannel.webTokenOf`) is what the page's URL and cookie and the
 * relay between runners carry, never the token itself, from which the
 * runner port's keys come. The HTTP API takes either as a bearer.
 *
 * @example
 * ```ts
 * import * as Runner from "parley/layers/cluster/Runner"
 * import type * as Turns from "parley/layers/cluster/Turns"
 * declare const services: Turns.Services
 * const started = Runner.start({
 *   storage: "postgres://127.0.0.1/parley",
 *   services,
 *   token: "t".repeat(40),
 *   host: "127.0.0.1",
 *   port: 3141,
 *   runnerHost: "127.0.0.1",
 *   runnerPort: undefined
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as net from "node:net"
import * as os from "node:os"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as RunnerAddress from "effect/cluster/RunnerAddress"
import { Sharding } from "effect/cluster/Sharding"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import { SqlClient } from "effect/sql/SqlClient"
import type { ConversationStore } from "../../services/ConversationStore.ts"
import { ConversationStore as ConversationStoreTag } from "../../services/ConversationStore.ts"
import * as Guard from "../serve/Guard.ts"
import * as Limits from "../serve/Limits.ts"
import * as Pages from "../serve/Pages.ts"
import * as PgConversationStore from "../store/pg/PgConversationStore.ts"
import * as Api from "./Api.ts"
import * as Handlers from "./Handlers.ts"
import * as Liveness from "./Liveness.ts"
import * as Migrations from "./Migrations.ts"
import * as RunnerChannel from "./RunnerChannel.ts"
import * as Sweep from "./Sweep.ts"
import * as Turns from "./Turns.ts"

/** What the runner is started with. */
export interface Options {
  /** The PostgreSQL url the cluster shares. */
  readonly storage: string
  /** The store, config, executor, provider and model choice every turn of this runner shares. */
  readonly services: Turns.Services
  /** The cluster's token (at least `RunnerChannel.MIN_TOKEN` characters). */
  readonly token: string
  readonly host: string
  readonly port: number
  /** Where the runner protocol listens; other runners reach it there (its machine's name when 0.0.0.0 or ::). */
  readonly runnerHost: string
  /** The runner protocol's port; by default the HTTP port + 10000 when free, else any free port. */
  readonly runnerPort: number | undefined
  /** The HTTP API's connection cap and request timeouts (`Limits.defaults` when not given). */
  readonly limits?: Limits.Limits | undefined
}

/** Why a runner did not start: the database could not be used, or the engine did not start. */
export class RunnerNotStarted extends Schema.TaggedError<RunnerNotStarted>()("RunnerNotStarted", {
  message: Schema.String
}) {}

/** A runner that listens: the address of its HTTP API, its runner address, the web token, the cluster's size. */
export interface Started {
  readonly port: number
  readonly runner: string
  readonly web: string
  /** The runners registered when this one was (undefined when it could not be read in time). */
  readonly size: number | undefined
}

/**
 * Failover within a second or two instead of Effect's ~36 s (cookbook topic
 * 12). A dead runner is found by its liveness lock (`Liveness.ts`), not by a
 * lease running out: its shard locks (PostgreSQL advisory locks) are free as
 * soon as its connections close, and assignments are refreshed four times a
 * second, so its shards move soon after it is marked unhealthy. Every
 * shard-lock operation must finish within min(refresh interval, expiration
 * / 3) = 2 s or the runner drops every shard it holds: a machine at load
 * average 30 missed that every few seconds (16 times in one 100-conversation
 * run). A 4 s lease (expiration 12 s) missed it less (5 times at load 39),
 * but the kill -9 test then failed 3 runs of 4 (a request timed out), so the
 * lease stays until that is understood.
 */
export const SHARDING = {
  shardsPerGroup: 60,
  runnerHealthCheckInterval: "1 second",
  refreshAssignmentsInterval: "250 millis",
  entityMessagePollInterval: "500 millis",
  entityReplyPollInterval: "200 millis",
  // The refresh must finish within its interval or the runner drops every shard: 2 s leaves room on a loaded machine.
  shardLockRefreshInterval: "2 seconds",
  shardLockExpiration: "6 seconds",
  entityTerminationTimeout: "2 seconds",
  sendRetryInterval: "200 millis"
} as const

/** How often each runner sweeps for turns to resume or hand off. */
const SWEEP: Duration.Input = "1 second"

/**
 * How long a stopping runner waits for a turn's running tools before it hands the turn off. A tool
 * stopped after it acted but before its result was recorded acts again where the turn resumes, so
 * the sweep never hands a turn off while one runs; a stop cannot wait forever (a service manager's
 * SIGKILL follows), and a tool still running then runs again, as after a `kill -9`.
 */
const STOP_GRACE_MS = 5_000

/**
 * Waits until none of `turn`'s tools runs or the turn has ended (a turn that failed while a
 * tool ran never counts it finished), at most {@link STOP_GRACE_MS}.
 */
const toolsDone = (turn: Pick<Turns.Turn, "toolsRunning" | "ended">) =>
  Effect.gen(function* () {
    const deadline = Date.now() + STOP_GRACE_MS
    while (turn.toolsRunning() > 0 && !Deferred.isDoneUnsafe(turn.ended) && Date.now() < deadline)
      yield* Effect.sleep("50 millis")
  })

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

/** The runners registered once `me` is among them (bounded: undefined when it is not seen in time). */
const sizeOnceIn = (sql: SqlClient, me: string) =>
  sql<{
    n: number
    me: boolean
  }>`SELECT count(*)::int AS n, bool_or(address = ${me}) AS me FROM cluster_runners`.pipe(
    Effect.map((rows) => rows[0]),
    Effect.repeat({ until: (r) => r?.me === true, schedule: Schedule.spaced("100 millis"), times: 50 }),
    Effect.map((r) => r?.n),
    Effect.orElseSucceed(() => undefined)
  )

/** The HTTP server on `host:port` (0: any free port), and the port it got. */
const listen = (options: Options) =>
  Effect.gen(function* () {
    // Loaded here: @effect/platform-node is an optional peer of the library.
    const NodeHttpServer = yield* Effect.promise(() => import("@effect/platform-node/NodeHttpServer"))
    const listening = yield* Layer.build(
      NodeHttpServer.layer(Limits.httpServer(options.limits ?? Limits.defaults), {
        host: options.host,
        port: options.port
      })
    )
    const address = (yield* HttpServer.HttpServer.pipe(Effect.provideContext(listening))).address
    return { listening, port: address._tag === "UnixPathAddress" ? options.port : address.port }
  })

/** Starts one runner; it runs until the scope closes, and hands its turns off first. */
export const start = (options: Options) =>
  Effect.gen(function* () {
    const shared = options.services
    const pg = yield* Layer.build(
      // The store's client: a url without a password takes $PGPASSWORD or ~/.pgpass, as the store does.
      PgConversationStore.clientLayer({ url: options.storage, maxConnections: 20 })
    ).pipe(
      Effect.mapError((e) => new RunnerNotStarted({ message: `cannot use PostgreSQL for the cluster: ${e.message}` }))
    )
    const sql = Context.get(pg, SqlClient)
    yield* Migrations.migrate.pipe(Effect.retry({ times: 3 }), Effect.provideContext(pg), Effect.orDie)

    // HTTP first: its port decides the runner protocol's derived port.
    const { listening, port } = yield* listen(options)
    const runnerPort = yield* runnerPortFor(options.runnerHost, port, options.runnerPort)
    const runner = RunnerAddress.make(advertised(options.runnerHost), runnerPort)
    const me = `${runner.host}:${runner.port}`

    // Other runners relay a turn's events from this one's HTTP API at its advertised host; the Host they send is one this runner's guard takes.
    const wildcard = options.host === "0.0.0.0" || options.host === "::"
    const bound = options.host.includes(":") ? `[${options.host}]` : options.host
    const httpHost = advertised(options.host)
    const httpApi = {
      address: `${httpHost.includes(":") ? `[${httpHost}]` : httpHost}:${port}`,
      host: `${wildcard ? "localhost" : bound}:${port}`
    }
    const turns = yield* Turns.make({ runner: me, http: httpApi, services: shared, sql })
    // Stopping (SIGTERM, Ctrl-C) hands every turn off, and the next owner resumes it. Added now, this runs after
    // what is added below has closed (the sweeps, liveness, sharding, HTTP): the turns keep their conversations'
    // locks meanwhile, so no other runner runs them yet.
    yield* Effect.addFinalizer(() =>
      Effect.forEach(turns.running(), (t) => Effect.andThen(toolsDone(t), t.handOff), {
        concurrency: "unbounded",
        discard: true
      })
    )
    // The liveness lock first: this runner's row in cluster_runners never exists without it (Liveness.ts).
    yield* Liveness.hold(sql, me).pipe(
      Effect.mapError((e) => new RunnerNotStarted({ message: `cannot hold the runner's liveness lock: ${e.message}` }))
    )
    const Engine = yield* Effect.promise(() => import("./Engine.ts"))
    const cluster = Engine.layer(
      {
        ...SHARDING,
        runnerAddress: Option.some(runner),
        runnerListenAddress: Option.some(RunnerAddress.make(options.runnerHost, runnerPort))
      },
      RunnerChannel.keysOf(options.token)
    )
    // The HTTP side's token: whoever is shown or overhears it gets the HTTP API, not the runner port's keys.
    const web = RunnerChannel.webTokenOf(options.token)
    const sharded = yield* Layer.build(
      Layer.provideMerge(Handlers.layer(turns, shared.store, sql), cluster).pipe(
        Layer.provide(Layer.succeedContext(pg))
      )
    ).pipe(
      Effect.mapError(
        (e) =>
          new RunnerNotStarted({
            message: `cannot start the cluster runner on ${runner.host}:${runnerPort}: ${String(e)}`
          })
      )
    )
    const sharding = Context.get(sharded, Sharding)
    const routes = Layer.mergeAll(
      Api.layer({ turns, store: shared.store, sql, runner: me, token: web, chooseModel: shared.chooseModel }),
      // The page: any runner shows any conversation, live (its events are relayed from the runner that runs it).
      Pages.layer(options.storage, runningTurns(sql, shared.store)).pipe(
        Layer.provide(Layer.succeed(ConversationStoreTag, shared.store))
      ),
      Guard.layer({ token: web, bearers: [options.token], hosts: Guard.hostsFor(options.host, port) })
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
    const swept = { turns, sql, sharding, interval: SWEEP, runner: me, shardsPerGroup: SHARDING.shardsPerGroup }
    yield* Effect.forkScoped(Sweep.run(swept))
    // Stop requests as they come (one connection of the pool listens), besides every sweep.
    const { PgClient } = yield* Effect.promise(() => import("@effect/sql-pg"))
    yield* Effect.forkScoped(Sweep.stopsOnNotice(swept, Context.get(pg, PgClient.PgClient).listen))
    // Every runner watches the others' liveness locks: a dead one is marked unhealthy within a fraction of a second.
    yield* Effect.forkScoped(Liveness.watch(sql, me))
    // This runner registers as its sharding starts: counted once its row is there (bounded).
    const size = yield* sizeOnceIn(sql, me)
    return { port, runner: me, web, size } satisfies Started
  })
