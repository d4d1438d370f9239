/**
 * The cluster's runner transport over the secure channel (`RunnerChannel.ts`):
 * what `NodeClusterSocket.layerSocketServer` and `layerClientProtocol` are,
 * with the handshake before the first protocol byte and every frame sealed.
 * A connection that does not prove the cluster's key never reaches the
 * cluster's RPC server: it is closed, and the runner says so on stderr (one
 * line, then at most one a minute with the count in between, so a port scan
 * does not flood the log). At most {@link MAX_HANDSHAKES} handshakes are in
 * progress at once, {@link MAX_HANDSHAKES_PER_ADDRESS} from one remote
 * address: a connection beyond either is closed at once (and counted as a
 * refusal), so peers that connect and say nothing — each held up to
 * `RunnerChannel.HANDSHAKE_MS` — cannot take every file descriptor of the
 * runner, and one address cannot take every slot.
 *
 * @example
 * ```ts
 * import * as RunnerChannel from "parley/layers/cluster/RunnerChannel"
 * import * as RunnerTransport from "parley/layers/cluster/RunnerTransport"
 * const keys = RunnerChannel.keysOf("t".repeat(40))
 * const transport = [RunnerTransport.layerSocketServer(keys), RunnerTransport.layerClientProtocol(keys)]
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as net from "node:net"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as Runners from "effect/cluster/Runners"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as NetAddress from "effect/net/NetAddress"
import * as RpcClient from "effect/rpc/RpcClient"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import * as Socket from "effect/socket/Socket"
import * as SocketServer from "effect/socket/SocketServer"
import * as RunnerChannel from "./RunnerChannel.ts"

/** How long a connection to another runner may take, handshake included. */
const OPEN_MS = 5_000
/** Refusals after a logged one are counted, not logged, for this long. */
const QUIET_MS = 60_000
/** Handshakes in progress at once on a runner port: a cluster's runners finish theirs in milliseconds. */
export const MAX_HANDSHAKES = 64
/** Handshakes in progress at once from one remote address (a machine runs a few runners, not dozens). */
export const MAX_HANDSHAKES_PER_ADDRESS = 8

/**
 * Counts the handshakes in progress, in total and per remote address:
 * `enter` says whether one more may start (and counts it), `leave` ends it.
 */
export const handshakeSlots = (total = MAX_HANDSHAKES, perAddress = MAX_HANDSHAKES_PER_ADDRESS) => {
  let inProgress = 0
  const byAddress = new Map<string, number>()
  return {
    enter: (address: string): boolean => {
      const mine = byAddress.get(address) ?? 0
      if (inProgress >= total || mine >= perAddress) return false
      inProgress += 1
      byAddress.set(address, mine + 1)
      return true
    },
    leave: (address: string): void => {
      inProgress -= 1
      const mine = (byAddress.get(address) ?? 1) - 1
      if (mine === 0) byAddress.delete(address)
      else byAddress.set(address, mine)
    }
  }
}

/** Logs a refused peer: the first at once, then at most one line per {@link QUIET_MS}. */
export const refusalLog = (where: string, write: (line: string) => void = (l) => void process.stderr.write(l)) => {
  let last = 0
  let quiet = 0
  return (peer: string, why: string) => {
    const now = Date.now()
    if (last !== 0 && now - last < QUIET_MS) {
      quiet += 1
      return
    }
    const more = quiet === 0 ? "" : ` (and ${quiet} more refused since the last line)`
    write(`parley[${process.pid}]: runner port ${where} refused ${peer}: ${why}${more}\n`)
    last = now
    quiet = 0
  }
}

const openError = (cause: unknown) =>
  new Socket.SocketError({ reason: new Socket.SocketOpenError({ kind: "Unknown", cause }) })

/** Ends a sealed connection after its last frames are written; destroys it if that takes long. */
const release = (sealed: RunnerChannel.Sealed) =>
  Effect.sync(() => {
    if (sealed.destroyed) return
    sealed.end()
    setTimeout(() => sealed.destroy(), 1_000).unref()
  })

/** A connection to the runner at `address`, after the handshake (interrupting it closes the socket). */
const openSealed = (address: { host: string; port: number }, keys: RunnerChannel.Keys) =>
  Effect.gen(function* () {
    let raw: net.Socket | undefined
    let sealed: RunnerChannel.Sealed | undefined
    yield* Effect.addFinalizer(() => (sealed === undefined ? Effect.sync(() => raw?.destroy()) : release(sealed)))
    return yield* Effect.callback<RunnerChannel.Sealed, Socket.SocketError>((resume) => {
      raw = net.createConnection({ host: address.host, port: address.port })
      const c = raw
      c.on("error", (e) => resume(Effect.fail(openError(e))))
      c.once("connect", () =>
        RunnerChannel.offer(c, keys).then(
          (s) => {
            sealed = s
            resume(Effect.succeed(s))
          },
          (e) => resume(Effect.fail(openError(e)))
        )
      )
    })
  })

/** Reaches other runners over the secure channel (as `NodeClusterSocket.layerClientProtocol` does over plain TCP). */
export const layerClientProtocol = (
  keys: RunnerChannel.Keys
): Layer.Layer<Runners.RpcClientProtocol, never, RpcSerialization.RpcSerialization> =>
  Layer.effect(Runners.RpcClientProtocol)(
    Effect.gen(function* () {
      const serialization = yield* RpcSerialization.RpcSerialization
      return {
        codecFor: serialization.codecFor,
        make: Effect.fnUntraced(function* (address) {
          const socket = yield* NodeSocket.fromDuplex(openSealed(address, keys), { openTimeout: OPEN_MS })
          return yield* RpcClient.makeProtocolSocket().pipe(
            Effect.provideService(Socket.Socket, socket),
            Effect.provideService(RpcSerialization.RpcSerialization, serialization)
          )
        }, Effect.orDie)
      }
    })
  )

/** Listens on `listen`; each connection that passes the handshake goes to `onSealed`. */
const listen = (
  where: { host: string; port: number },
  keys: RunnerChannel.Keys,
  onSealed: (s: RunnerChannel.Sealed) => void
) => {
  const open = new Set<net.Socket>()
  return Effect.acquireRelease(
    Effect.callback<net.Server, SocketServer.SocketServerError>((resume) => {
      const refused = refusalLog(`${where.host}:${where.port}`)
      const slots = handshakeSlots()
      const server = net.createServer((raw) => {
        // A peer's reset after a refusal must not crash the runner.
        raw.on("error", () => {})
        const address = raw.remoteAddress ?? ""
        const peer = `${address}:${raw.remotePort}`
        if (!slots.enter(address)) {
          raw.destroy()
          return refused(
            peer,
            `too many handshakes in progress (at most ${MAX_HANDSHAKES}, ${MAX_HANDSHAKES_PER_ADDRESS} from one address)`
          )
        }
        // Closing the port closes its connections too (`server.close` alone waits for them).
        raw.once("close", () => open.delete(raw))
        open.add(raw)
        RunnerChannel.accept(raw, keys).then(
          (sealed) => {
            slots.leave(address)
            onSealed(sealed)
          },
          (e: Error) => {
            slots.leave(address)
            refused(peer, e.message)
          }
        )
      })
      server.once("error", (cause) =>
        resume(
          Effect.fail(new SocketServer.SocketServerError({ reason: new SocketServer.SocketServerOpenError({ cause }) }))
        )
      )
      server.listen({ host: where.host, port: where.port }, () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.callback<void>((resume) => {
        server.close(() => resume(Effect.void))
        for (const raw of open) raw.destroy()
      })
  )
}

/** Runs `handler` on each sealed connection, in fibers of `scope` (the service's `run`). */
const serve = <R, E, _>(
  sealed: RunnerChannel.Sealed,
  handler: (socket: Socket.Socket) => Effect.Effect<_, E, R>,
  services: Context.Context<R>,
  scope: Scope.Scope
) =>
  NodeSocket.fromDuplex(Effect.acquireRelease(Effect.succeed(sealed), release)).pipe(
    Effect.flatMap(handler),
    Effect.ignoreCause({ log: "Debug", message: "a runner connection ended" }),
    Effect.runForkWith(services),
    Fiber.runIn(scope)
  )

/**
 * The runner port (`ShardingConfig.runnerListenAddress`), taking only
 * connections that pass the handshake (as `NodeClusterSocket.layerSocketServer`
 * takes any).
 */
export const layerSocketServer = (
  keys: RunnerChannel.Keys
): Layer.Layer<SocketServer.SocketServer, SocketServer.SocketServerError, ShardingConfig.ShardingConfig> =>
  Layer.effect(SocketServer.SocketServer)(
    Effect.gen(function* () {
      const config = yield* ShardingConfig.ShardingConfig
      const where = Option.getOrUndefined(Option.orElse(config.runnerListenAddress, () => config.runnerAddress))
      if (where === undefined) return yield* Effect.die("the runner port needs ShardingConfig.runnerListenAddress")
      // Connections sealed before the RPC server runs wait for it.
      const waiting: Array<RunnerChannel.Sealed> = []
      let onSealed: (s: RunnerChannel.Sealed) => void = (s) => void waiting.push(s)
      const server = yield* listen(where, keys, (s) => onSealed(s))
      const bound = server.address() as net.AddressInfo
      const address = Result.getOrElse(NetAddress.inetAddressFromIpString(bound.address, bound.port), () =>
        NetAddress.unixPathAddress(`${bound.address}:${bound.port}`)
      )
      const run = <R, E, _>(handler: (socket: Socket.Socket) => Effect.Effect<_, E, R>) =>
        Effect.gen(function* () {
          const scope = yield* Scope.make()
          const services = Context.omit(Scope.Scope)(yield* Effect.context<R>()) as Context.Context<R>
          const previous = onSealed
          onSealed = (s) => void serve(s, handler, services, scope)
          for (const s of waiting.splice(0)) onSealed(s)
          return yield* Effect.callback<never>(() =>
            Effect.suspend(() => {
              onSealed = previous
              return Scope.close(scope, Exit.void)
            })
          )
        })
      return SocketServer.SocketServer.of({ address, run })
    })
  )
