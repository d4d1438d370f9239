/**
 * A client of a running turn's host
 * (docs/questions-and-approvals.md#runs-beyond-the-terminal): `conversation answer`,
 * `conversation kill` and `ls` connect to the socket and speak `HostRpcs`.
 * The connection lives as long as the scope. Whether a host runs at all is
 * asked first (`running`, `reachable`: after the same check as `connect`):
 * a socket file nobody answers on is a killed host's, and means "not running".
 *
 * The host is asked its protocol version first (`Hello`): one of another
 * version fails `connect` with `HostProtocolMismatch`, before any call
 * whose answer this parley could not read.
 *
 * Nothing is sent to a socket that is not this user's, or whose directory
 * is not this user's alone (`PrivateDir.socketProblem`): `connect` fails
 * with `NotPrivate` before it connects. Node cannot ask a unix socket for
 * its peer's uid, so this check of the path is what keeps another local
 * user's listener from being sent an answer (a secret) meant for the run.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as HostClient from "parley/layers/host/HostClient"
 * const info = Effect.scoped(Effect.flatMap(HostClient.connect("/tmp/x/run/17738399468.sock"), (client) => client.Info()))
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as RpcClient from "effect/rpc/RpcClient"
import * as Socket from "effect/socket/Socket"
import { type HostHello, type HostInfo, HostRpcs } from "../../services/RunHost.ts"
import { answers } from "./HostServer.ts"
import * as HostSerialization from "./HostSerialization.ts"
import * as PrivateDir from "../file/PrivateDir.ts"
import type { NotPrivate } from "../../domain/storage/NotPrivate.ts"
import * as HostProtocol from "../../domain/run/HostProtocol.ts"

/** The failure of a connection that never opened (as the socket layer reports one). */
const openError = (cause: unknown) =>
  new Socket.SocketError({ reason: new Socket.SocketOpenError({ kind: "Unknown", cause }) })

/** A connection to a host, for the scope's life (a lost host fails calls at once, without reconnecting). */
export const connect = (socketPath: string) =>
  Effect.gen(function* () {
    const problem = yield* Effect.try({
      try: () => PrivateDir.socketProblem(socketPath),
      catch: (cause) => openError(cause)
    })
    if (problem === "absent")
      return yield* openError(Object.assign(new Error(`no socket at ${socketPath}`), { code: "ENOENT" }))
    if (problem !== undefined) return yield* problem
    // Loaded here: @effect/platform-node is an optional peer of the library.
    const NodeSocket = yield* Effect.promise(() => import("@effect/platform-node/NodeSocket"))
    // Built in the caller's scope: the connection must outlive this effect (a provide would close it here).
    const protocol = yield* Layer.build(
      RpcClient.layerProtocolSocket({
        retryTransientErrors: false,
        pingInterval: "2 seconds",
        pingTimeout: "4 seconds"
      }).pipe(Layer.provide(NodeSocket.layerNet({ path: socketPath })), Layer.provide(HostSerialization.layer))
    )
    const client = yield* RpcClient.make(HostRpcs).pipe(Effect.provideContext(protocol))
    const refused = HostProtocol.mismatch(yield* hello(client.Hello()))
    if (refused !== undefined) return yield* refused
    return client
  })

/**
 * The host's `Hello`, asked before anything else: `undefined` from a host
 * that predates it (its server answers an unknown call with a defect),
 * which speaks protocol 1. A host lost meanwhile fails as a connection
 * that never opened.
 */
const hello = <E>(ask: Effect.Effect<HostHello, E>): Effect.Effect<HostHello | undefined, Socket.SocketError> =>
  ask.pipe(
    // Only a host without the call answers it with a defect (a host with it always succeeds).
    Effect.catchDefect(() => Effect.succeed(undefined)),
    Effect.mapError((e) => openError(e))
  )

/** The client type. */
export type Client = Effect.Success<ReturnType<typeof connect>>

/** What a host says about itself. */
export type Info = HostInfo

/**
 * Whether a host answers on `socketPath`, asked only when the socket and its
 * directories pass `PrivateDir.socketProblem` (the probe connects, and
 * another user's listener learns from it that we looked): a missing socket
 * is not running; one that may not be used fails with `NotPrivate`, as
 * `connect` would.
 */
export const reachable = (socketPath: string): Effect.Effect<boolean, NotPrivate> =>
  Effect.gen(function* () {
    const problem = yield* Effect.sync(() => {
      try {
        return PrivateDir.socketProblem(socketPath)
      } catch {
        // A path that cannot be read (EACCES, ENOTDIR) has no host of ours behind it.
        return "absent" as const
      }
    })
    if (problem === "absent") return false
    if (problem !== undefined) return yield* problem
    return yield* answers(socketPath)
  })

/** Whether a host answers on `socketPath`: {@link reachable}, with a socket that may not be used not running (`ls`, `serve`). */
export const running = (socketPath: string): Effect.Effect<boolean> =>
  reachable(socketPath).pipe(Effect.orElseSucceed(() => false))
