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
import * as fs from "node:fs"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as RpcClient from "effect/rpc/RpcClient"
import * as Socket from "effect/socket/Socket"
import { type HostHello, type HostInfo, HostRpcs } from "../../services/RunHost.ts"
import { answers } from "./HostServer.ts"
import * as HostSerialization from "./HostSerialization.ts"
import * as PrivateDir from "../file/PrivateDir.ts"
import * as HostPath from "./HostPath.ts"
import * as Pid from "./Pid.ts"
import type { NotPrivate } from "../../domain/storage/NotPrivate.ts"
import * as HostProtocol from "../../domain/run/HostProtocol.ts"

/** The failure of a connection that never opened (as the socket layer reports one). */
const openError = (cause: unknown) =>
  new Socket.SocketError({ reason: new Socket.SocketOpenError({ kind: "Unknown", cause }) })

/** A connection's client before its `Hello`, for the scope's life (a lost host fails calls at once, without reconnecting). */
const open = (socketPath: string) =>
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
    return yield* RpcClient.make(HostRpcs).pipe(Effect.provideContext(protocol))
  })

/** A connection to a host, for the scope's life (a lost host fails calls at once, without reconnecting). */
export const connect = (socketPath: string) =>
  Effect.gen(function* () {
    const client = yield* open(socketPath)
    const refused = HostProtocol.mismatch(yield* hello(client.Hello()))
    if (refused !== undefined) return yield* refused
    return client
  })

/** A connection's outcome as some, none when no host answers on its socket (a `SocketError`: gone, or never there). */
const whenRunning = <A, E, R>(connection: Effect.Effect<A, E | Socket.SocketError, R>) =>
  connection.pipe(
    Effect.map(Option.some),
    Effect.catchTag("SocketError", () => Effect.succeed(Option.none<A>()))
  )

/**
 * {@link connectRunning} with the host's `Info` asked beside its `Hello`,
 * not after it: one round trip to a host where there were two (an answer
 * POSTed for a run nobody watches). The info is none when the host did not
 * give it `within`, or failed it in any way; a host of another protocol is
 * refused as by {@link connect}, whatever its `Info` did. `Info` only reads,
 * so a host of another protocol may be asked it: its reply, which this
 * client may not be able to read (a defect), is dropped.
 */
export const connectRunningWithInfo = (socketPath: string, within: Duration.Input) =>
  whenRunning(
    Effect.gen(function* () {
      const client = yield* open(socketPath)
      // Total: a reply this client cannot decode is a defect of the RPC client, which `option` would let through.
      const info = Effect.map(Effect.exit(Effect.timeout(client.Info(), within)), (exit) =>
        Exit.isSuccess(exit) ? Option.some(exit.value) : Option.none<Info>()
      )
      const [said, known] = yield* Effect.all([hello(client.Hello()), info], { concurrency: 2 })
      const refused = HostProtocol.mismatch(said)
      if (refused !== undefined) return yield* refused
      return { client, info: known }
    })
  )

/**
 * {@link connect}, none when no host answers on `socketPath` (gone, or never
 * there). A socket parley will not trust (`NotPrivate`) or a host of another
 * protocol still fails: taken for "no run", an answer would go past a run
 * that may be holding its question.
 */
export const connectRunning = (socketPath: string) => whenRunning(connect(socketPath))

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

/** The running conversation of `storage` whose run started last (its socket is the newest), if any. */
export const mostRecent = (storage: string): Effect.Effect<string | undefined> =>
  Effect.gen(function* () {
    const sockets = HostPath.sockets(storage).flatMap((s) => {
      const stat = fs.statSync(s.path, { throwIfNoEntry: false })
      return stat === undefined ? [] : [{ id: s.id, socket: s.path, mtime: stat.mtimeMs }]
    })
    for (const s of sockets.sort((a, b) => b.mtime - a.mtime)) {
      if (yield* running(s.socket)) return s.id
    }
    return undefined
  })

/** Waits until the host no longer answers and its process is gone, up to `ms`; whether it stopped. */
const stopped = (socketPath: string, pid: number, ms: number) =>
  Effect.gen(function* () {
    const deadline = Date.now() + ms
    while (Date.now() < deadline) {
      if (!Pid.alive(pid) && !(yield* running(socketPath))) return true
      yield* Effect.sleep("50 millis")
    }
    return !Pid.alive(pid)
  })

/**
 * Stops the run of the host on `socketPath` as SIGTERM stops it, and waits
 * up to `graceMs` until it has (its host no longer answers, its process is
 * gone); with `force`, a run still there then is killed (SIGKILL) and
 * waited for 2 s more. The host's info, and whether the run stopped.
 */
export const stop = (socketPath: string, options: { readonly graceMs: number; readonly force: boolean }) =>
  Effect.gen(function* () {
    const info = yield* Effect.scoped(
      Effect.flatMap(connect(socketPath), (client) =>
        Effect.tap(client.Info(), () =>
          // The host stops as SIGTERM stops it; its reply may not make it out before it exits.
          client.Interrupt().pipe(Effect.timeout("2 seconds"), Effect.ignore)
        )
      )
    )
    let done = yield* stopped(socketPath, info.pid, options.graceMs)
    if (!done && options.force) {
      yield* Effect.sync(() => process.kill(info.pid, "SIGKILL"))
      done = yield* stopped(socketPath, info.pid, 2000)
    }
    return { info, stopped: done }
  })
