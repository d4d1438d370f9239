/**
 * A running turn's host (docs/questions-and-approvals.md#runs-beyond-the-terminal): serves `HostRpcs` on a unix socket
 * (mode 0600 in a 0700 directory of this user's alone, checked before it
 * listens: `PrivateDir`) for as long as the scope lives, over
 * `effect/rpc` with newline-delimited JSON framing. A socket file left by a
 * killed host (nothing answers on it) is replaced; one a live host answers on
 * is refused. The file is removed when the scope closes.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as HostServer from "parley/layers/host/HostServer"
 * declare const interrupt: Effect.Effect<void>
 * const hosting = HostServer.serve({ socketPath: "/tmp/x/run/17738399468.sock", conversationId: "17738399468", interrupt })
 * ```
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import * as Scope from "effect/Scope"
import * as RpcServer from "effect/rpc/RpcServer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { PendingAnswers } from "../../services/PendingAnswers.ts"
import { RunEvents } from "../../services/RunEvents.ts"
import { HostRpcs } from "../../services/RunHost.ts"
import * as Following from "./Following.ts"
import * as HostSerialization from "./HostSerialization.ts"
import * as PrivateDir from "../file/PrivateDir.ts"
import { NotPrivate } from "../../domain/storage/NotPrivate.ts"
import * as HostProtocol from "../../domain/run/HostProtocol.ts"

/** The host could not listen (another live host has the socket, or the directory is not ours to use). */
export class HostUnavailable extends Schema.TaggedError<HostUnavailable>()("HostUnavailable", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `Could not serve the run on ${this.path}: ${this.reason}.`
  }
}

/** What a host needs: where to listen, which conversation it runs, how to stop the run. */
export interface ServeOptions {
  readonly socketPath: string
  readonly conversationId: string
  /** Stops the run as SIGTERM would (the host's `Interrupt`). */
  readonly interrupt: Effect.Effect<void>
  /** The scripted model's steps file, for clients' resume commands. */
  readonly script?: string | undefined
  /** `--detached-policy` as the run was given it, for clients' resume commands. */
  readonly detachedPolicy?: string | undefined
  /** The parley version running the host, said in `Hello` (a client of another protocol names it). */
  readonly parley?: string | undefined
}

/** Whether a host answers on `socketPath` (a connection is accepted within `timeoutMs`). */
export const answers = (socketPath: string, timeoutMs = 1000): Effect.Effect<boolean> =>
  Effect.callback<boolean>((resume) => {
    const socket = net.connect({ path: socketPath })
    const done = (alive: boolean) => {
      clearTimeout(timer)
      socket.destroy()
      resume(Effect.succeed(alive))
    }
    const timer = setTimeout(() => done(false), timeoutMs)
    socket.once("connect", () => done(true))
    socket.once("error", () => done(false))
    return Effect.sync(() => {
      clearTimeout(timer)
      socket.destroy()
    })
  })

/**
 * Makes the socket's directories (0700) or finds them this user's alone
 * (`PrivateDir.ensure`: else {@link NotPrivate}, and nothing is changed),
 * and clears a stale socket file of ours; fails when a live host answers there.
 */
const prepare = (socketPath: string) =>
  Effect.gen(function* () {
    yield* Effect.try({
      try: () => PrivateDir.ensure(path.dirname(socketPath)),
      catch: (e) => (e instanceof NotPrivate ? e : new HostUnavailable({ path: socketPath, reason: String(e) }))
    })
    const found = yield* Effect.try({
      try: () => PrivateDir.socketProblem(socketPath),
      catch: (e) => new HostUnavailable({ path: socketPath, reason: String(e) })
    })
    if (found === "absent") return
    // Another user's file (or a link) where our socket goes is not ours to remove.
    if (found !== undefined) return yield* found
    if (yield* answers(socketPath))
      return yield* new HostUnavailable({ path: socketPath, reason: "another parley process serves this conversation" })
    // Left by a host that was killed: nothing listens on it any more.
    yield* Effect.sync(() => fs.rmSync(socketPath, { force: true }))
  })

/**
 * Removes the socket file a killed host of this conversation left, when it is this user's own and
 * nothing answers there (as `prepare` does), for a run that ended before its host listened.
 * Never fails: what is not ours, or answers, stays.
 */
export const clearStale = (socketPath: string): Effect.Effect<void> =>
  Effect.gen(function* () {
    const found = yield* Effect.try({ try: () => PrivateDir.socketProblem(socketPath), catch: (e) => e })
    if (found !== undefined) return
    if (yield* answers(socketPath)) return
    yield* Effect.sync(() => fs.rmSync(socketPath, { force: true }))
  }).pipe(Effect.ignore)

/** The handlers, over the run's event hub and open questions. */
const handlers = (options: ServeOptions, following: Following.Following) =>
  HostRpcs.toLayer(
    Effect.gen(function* () {
      const hub = yield* RunEvents
      const pending = yield* PendingAnswers
      return HostRpcs.of({
        Subscribe: ({ after, attend }) => {
          // Bounded (`LiveView.BEHIND`): a client that stopped reading is closed with `LiveViewLagged`.
          const events = following.track(hub.since(after))
          // An attached person is present for as long as they follow the run.
          return attend === true ? Stream.unwrap(Effect.as(pending.attend, events)) : events
        },
        Answer: ({ inquiry_id, answer, remember, via }) =>
          pending.offer(
            inquiry_id,
            answer,
            "other",
            remember === true ? { remember, via: via ?? "attach" } : { via: via ?? "attach" }
          ),
        AnswerAll: ({ answers, via }) => pending.offerAll(answers, "other", { via: via ?? "attach" }),
        Interrupt: () => options.interrupt,
        Hello: () =>
          Effect.succeed({
            protocol: HostProtocol.PROTOCOL,
            conversation_id: options.conversationId,
            ...(options.parley !== undefined ? { parley: options.parley } : {})
          }),
        Info: () =>
          Effect.map(Effect.all([pending.list, hub.latest, hub.ended]), ([open, latest, ended]) => ({
            pid: process.pid,
            conversation_id: options.conversationId,
            latest,
            ...(ended !== null ? { ended } : {}),
            open: open.map((q) => ({
              inquiry_id: q.inquiryId,
              kind: q.kind ?? "question",
              call: q.call,
              question: q.question,
              since: q.since
            })),
            ...(options.script !== undefined ? { script: options.script } : {}),
            ...(options.detachedPolicy !== undefined ? { detached_policy: options.detachedPolicy } : {})
          }))
      })
    })
  )

/** Serves the run while the scope lives; the socket file is removed when it closes. */
export const serve = (options: ServeOptions) =>
  Effect.gen(function* () {
    yield* prepare(options.socketPath)
    // Loaded here: @effect/platform-node is an optional peer of the library (a consumer may never host a run).
    const NodeSocketServer = yield* Effect.promise(() => import("@effect/platform-node/NodeSocketServer"))
    const subscriptions = Following.make()
    const server = RpcServer.layer(HostRpcs, { disableTracing: true }).pipe(
      Layer.provide(handlers(options, subscriptions)),
      Layer.provide(RpcServer.layerProtocolSocketServer),
      Layer.provide(NodeSocketServer.layer({ path: options.socketPath })),
      Layer.provide(HostSerialization.layer),
      // A client that leaves mid-read is not an error of the run: the socket server would log
      // it (with a stack) on the terminal the run is drawing on, or into a detached run's log.
      Layer.provide(Layer.succeed(References.MinimumLogLevel, "None"))
    )
    // Removed last (finalizers run in reverse): after the server has stopped listening.
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(options.socketPath, { force: true })))
    // The server closes once its connections have ended, and a client that stopped reading (stopped,
    // stalled) never lets its last write end: the run does not wait more than a second for that.
    const serverScope = yield* Scope.make()
    yield* Effect.addFinalizer((exit) => Scope.close(serverScope, exit).pipe(Effect.timeout("1 second"), Effect.ignore))
    yield* Layer.buildWithScope(server, serverScope).pipe(
      Effect.mapError((e) => new HostUnavailable({ path: options.socketPath, reason: String(e) }))
    )
    // First of all (finalizers run in reverse): every subscriber is sent the run's end before the server stops.
    yield* Effect.addFinalizer(() => subscriptions.drained)
    yield* Effect.sync(() => fs.chmodSync(options.socketPath, 0o600))
  })
