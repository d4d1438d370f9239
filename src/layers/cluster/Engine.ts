/**
 * The `effect/cluster` engine of a runner (docs/cluster.md#how-it-works): what
 * `NodeClusterSocket.layer({ storage: "sql" })` builds — `SocketRunner`
 * (runners reach each other over TCP), `SqlMessageStorage`,
 * `SqlRunnerStorage` — with two changes: the runner transport proves the
 * cluster's key and seals its frames (`RunnerTransport.ts`), and the health
 * check of the other runners.
 *
 * Effect's ping check gives a runner 6 pings, each bounded by 10 s, 500 ms
 * apart: a ping to a runner killed with `kill -9` does not fail at once (the
 * connection is retried until the ping's bound), so the check never found
 * a dead runner before its heartbeat expired (`shardLockExpiration`, 6 s):
 * failover took 6.3 s every time (6 kills, `npm run bench -- cluster
 * failover`). A dead runner is now found by its liveness lock
 * (`Liveness.ts`: every runner watches the others', no singleton, no
 * timeout), so the pings are left to find a runner that lives but does not
 * answer: 3 pings, each bounded by 5 s, 500 ms apart. Bounded by 1 s, as
 * they were, a live runner whose event loop lagged on a loaded machine
 * (1–1.5 s at load 12) missed three in a row and was called unhealthy; then
 * its shards move and come back,
 * and its turns are handed off (`Sweep.ts`), never run twice at once.
 *
 * @example
 * ```ts
 * import * as Engine from "parley/layers/cluster/Engine"
 * import * as RunnerChannel from "parley/layers/cluster/RunnerChannel"
 * const cluster = Engine.layer({ shardsPerGroup: 60 }, RunnerChannel.keysOf("t".repeat(40))) // needs an SqlClient
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Semaphore from "effect/Semaphore"
import * as RunnerHealth from "effect/cluster/RunnerHealth"
import * as Runners from "effect/cluster/Runners"
import { RunnerStorage } from "effect/cluster/RunnerStorage"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as SocketRunner from "effect/cluster/SocketRunner"
import * as SqlMessageStorage from "effect/cluster/SqlMessageStorage"
import * as SqlRunnerStorage from "effect/cluster/SqlRunnerStorage"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import type * as RunnerChannel from "./RunnerChannel.ts"
import * as RunnerTransport from "./RunnerTransport.ts"
import * as Trace from "./Trace.ts"

/**
 * A runner that does not answer within this is tried again. A dead runner
 * is found by its liveness lock (`Liveness.ts`) within 200 ms, without a
 * ping, so the pings only find a runner that lives but does not answer (its
 * event loop stuck, the network between cut): they can wait. At 1 s, a
 * runner whose event loop lagged 1–1.5 s on a loaded machine (seen with
 * 100 conversations at load 12) missed three pings in a row, was called
 * unhealthy, and its shards moved away and back: 57 of 100 waiting turns
 * handed off and resumed in a steady run, each answer to one of them
 * waiting seconds for it.
 */
const PING_TIMEOUT_MS = 5_000
/** Pings after the first, and how far apart. */
const PING_RETRIES = 2
const PING_SPACING_MS = 500

/** Whether a runner answers a ping (bounded, retried briefly). */
const health = (keys: RunnerChannel.Keys) =>
  Layer.effect(
    RunnerHealth.RunnerHealth,
    Effect.gen(function* () {
      const runners = yield* Runners.Runners
      return RunnerHealth.RunnerHealth.of({
        isAlive: (address) =>
          runners.ping(address).pipe(
            Effect.timeout(PING_TIMEOUT_MS),
            Effect.retry({ times: PING_RETRIES, schedule: Schedule.spaced(PING_SPACING_MS) }),
            Effect.isSuccess,
            Effect.tap((alive) => (alive ? Effect.void : Trace.line("health: no reply", address.toString())))
          )
      })
    })
  ).pipe(Layer.provide(Runners.layerRpc), Layer.provide(RunnerTransport.layerClientProtocol(keys)))

/**
 * `SqlRunnerStorage` with its shard releases made one at a time. Every
 * shard-lock statement of a runner runs on one reserved connection, and each
 * release is bounded by the lock interval (2 s) from the moment it is asked,
 * not from the moment the connection gets to it. The engine asks for all its
 * shards' releases at once (a runner stopping, or giving shards to one that
 * joined: 20–60 of them, two statements each), so on a loaded machine the
 * last ones timed out while still queued behind the others (load average 28
 * on 2 cores: 20–32 "Could not release shards" warnings per runner on
 * SIGTERM, each a TimeoutError after 2 s), and each timeout also replaced the
 * lock connection. Queued here, each release's bound covers its own
 * statements only; the connection does the same work in the same order, and
 * the lock refresh waits behind one release at most, not all of them. A stop
 * whose releases do not all finish within the engine's hand-off bound ends
 * with its `releaseAll`, one statement.
 */
const oneReleaseAtATime = Layer.effect(
  RunnerStorage,
  Effect.gen(function* () {
    const storage = yield* RunnerStorage
    const one = Semaphore.makeUnsafe(1)
    return RunnerStorage.of({
      ...storage,
      release: (address, shardId) => one.withPermits(1)(storage.release(address, shardId))
    })
  })
).pipe(Layer.provide(Layer.orDie(SqlRunnerStorage.layer)))

/** The engine of one runner with `config` and the cluster's `keys`, over the `SqlClient` it is given. */
export const layer = (config: Partial<ShardingConfig.ShardingConfig["Service"]>, keys: RunnerChannel.Keys) =>
  Layer.provide(SocketRunner.layer, [
    RunnerTransport.layerSocketServer(keys),
    RunnerTransport.layerClientProtocol(keys)
  ]).pipe(
    Layer.provide(health(keys)),
    Layer.provideMerge(SqlMessageStorage.layer.pipe(Layer.provide(NodeCrypto.layerDigest))),
    Layer.provide(oneReleaseAtATime),
    Layer.provide(ShardingConfig.layerFromEnv(config)),
    Layer.provide(RpcSerialization.layerSchemaBinary({}))
  )
