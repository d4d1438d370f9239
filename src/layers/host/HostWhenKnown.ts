/**
 * A run served on its conversation's host socket once its events say which
 * conversation it is (docs/questions-and-approvals.md#runs-beyond-the-terminal):
 * `parley query` and `parley ask` publish `ConversationKnown` on the
 * process's run-event hub, and from then on other terminals, the inbox,
 * `conversation answer` and `serve` reach the run there (`HostServer`). A
 * host that cannot listen (an odd file system, a full disk) only costs
 * those clients: the run goes on, and says why through `unavailable`.
 *
 * The RPC and socket code is loaded only once the conversation is known, so
 * it stays off a command's start-up path.
 *
 * @internal
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as HostWhenKnown from "parley/layers/host/HostWhenKnown"
 * const hosted = HostWhenKnown.serve({
 *   storage: "/home/me/.parley",
 *   interrupt: Effect.sync(() => void process.kill(process.pid, "SIGTERM")),
 *   unavailable: (error) => Effect.logWarning(error)
 * })
 * ```
 */
import * as fs from "node:fs"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as RunEvent from "../../domain/run/RunEvent.ts"
import type { PendingAnswers } from "../../services/PendingAnswers.ts"
import { RunEvents } from "../../services/RunEvents.ts"
import type { ServeOptions } from "./HostServer.ts"
import * as HostPath from "./HostPath.ts"

/** Whether anything is at `file` (a socket, or whatever else took its name). */
const leftThere = (file: string): boolean => {
  try {
    return fs.lstatSync(file, { throwIfNoEntry: false }) !== undefined
  } catch {
    // Not even looked at (a directory on the way we may not read): the host's own check says what it is.
    return true
  }
}

/** What the host is told, and what to do when it cannot listen. */
export interface Options extends Omit<ServeOptions, "socketPath" | "conversationId"> {
  /** The storage whose `run/` directory holds the socket (`HostPath.of`). */
  readonly storage: string
  /** Said when the host cannot listen (the run goes on without it). */
  readonly unavailable: (error: unknown) => Effect.Effect<void>
  /** Asked once the conversation is known: whether to serve it (now, or when it completes); by default at once. */
  readonly due?: Effect.Effect<boolean>
}

/**
 * Waits for the run's `ConversationKnown`, then serves the run on that
 * conversation's socket for the caller's scope; the event, or none when the
 * run ended before it knew its conversation.
 */
export const serve = (
  options: Options
): Effect.Effect<Option.Option<RunEvent.Of<"ConversationKnown">>, never, Scope.Scope | RunEvents | PendingAnswers> =>
  Effect.gen(function* () {
    const hub = yield* RunEvents
    const known = yield* Stream.runHead(
      Stream.filter(hub.events, (e): e is RunEvent.Of<"ConversationKnown"> => e._tag === "ConversationKnown")
    )
    if (Option.isNone(known)) return known
    const { storage, unavailable, due, ...told } = options
    const id = known.value.conversation_id
    const socketPath = HostPath.of(storage, id)
    // A run that ends before its host listens (a short one) still clears what a killed host of its conversation
    // left there; after a host that served, its own finalizer has removed the file already. Where nothing is
    // left, the host's code (RPC, sockets, net) is never loaded.
    yield* Effect.addFinalizer(() =>
      leftThere(socketPath)
        ? Effect.flatMap(
            Effect.promise(() => import("./HostServer.ts")),
            (HostServer) => HostServer.clearStale(socketPath)
          )
        : Effect.void
    )
    // Not served after all (the run ended first): the caller is told the conversation was never served.
    if (due !== undefined && !(yield* due)) return Option.none()
    const HostServer = yield* Effect.promise(() => import("./HostServer.ts"))
    yield* HostServer.serve({ ...told, socketPath, conversationId: id }).pipe(Effect.catch(unavailable))
    return known
  })

/**
 * Whether the run got under way: its model chosen, or its work done without
 * one (a discard). A run that fails its model check or has nothing to do
 * ends without it (false).
 */
export const underway: Effect.Effect<boolean, never, RunEvents> = Effect.gen(function* () {
  const hub = yield* RunEvents
  const seen = yield* Stream.runHead(
    Stream.filter(hub.events, (e) => e._tag === "ModelChosen" || (e._tag === "Stopped" && e.ending === "discarded"))
  )
  return Option.isSome(seen)
})
