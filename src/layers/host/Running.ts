/**
 * Which conversations have a running turn, for `conversation ls` (docs/questions-and-approvals.md#runs-beyond-the-terminal):
 * the ones whose host socket exists and answers. Each is asked for its pid
 * and its open questions (`running: { pid, waiting: [inquiry ids] }`); a
 * socket that does not answer within three seconds is a killed host's and reads
 * as not running.
 *
 * @internal
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Running from "parley/layers/host/Running"
 * const program = Effect.gen(function* () {
 *   const running = yield* Running.of("/home/me/.parley", ["17738399468"])
 *   return running.get("17738399468")
 * }) // { pid: 4242, waiting: ["call_1.confirm.1"], tools: ["deploy"] } | undefined
 * ```
 */
import * as Effect from "effect/Effect"
import type { Running } from "../../domain/run/Running.ts"
import * as HostPath from "./HostPath.ts"

export { jsonOf, type Running, textOf } from "../../domain/run/Running.ts"

// Loaded only when a socket is there: a listing with no live run loads no RPC code (start-up).
// The import is outside the timeout: on a loaded machine loading the RPC code alone can take
// longer than a live host takes to answer, and a slow import must not read as a dead host.
const loadClient = () => Effect.promise(() => import("./HostClient.ts"))

type HostClientModule = Effect.Success<ReturnType<typeof loadClient>>

// A killed host's socket refuses at once (ECONNREFUSED); the timeout only bounds a host that
// accepts but hangs, so it can be generous enough for a loaded machine.
// A host of another protocol version runs (it answered its Hello): listed as running, in a word, not as
// not running.
const infoOf = (HostClient: HostClientModule, socket: string) =>
  Effect.scoped(Effect.flatMap(HostClient.connect(socket), (client) => client.Info())).pipe(
    Effect.timeout("3 seconds"),
    Effect.map(
      (info): Running => ({
        pid: info.pid,
        waiting: info.open.map((q) => q.inquiry_id),
        tools: [...new Set(info.open.map((q) => q.call.name))]
      })
    ),
    Effect.catchTag("HostProtocolMismatch", (e) =>
      Effect.succeed<Running>({
        pid: null,
        waiting: [],
        tools: [],
        other: { protocol: e.host, ...(e.host_parley !== undefined ? { parley: e.host_parley } : {}) }
      })
    ),
    Effect.option
  )

/** The running turns among conversations `ids` of the storage directory `storage`. */
export const of = (storage: string, ids: ReadonlyArray<string>): Effect.Effect<ReadonlyMap<string, Running>> =>
  Effect.gen(function* () {
    // One directory read each, not a stat per conversation: ls lists thousands.
    const files = new Map(HostPath.sockets(storage).map((s) => [s.id, s.path]))
    if (files.size === 0) return new Map()
    const sockets = ids.flatMap((id) => {
      const socket = files.get(id)
      return socket === undefined ? [] : [[id, socket] as const]
    })
    if (sockets.length === 0) return new Map()
    const HostClient = yield* loadClient()
    const found = yield* Effect.forEach(
      sockets,
      ([id, socket]) => Effect.map(infoOf(HostClient, socket), (info) => [id, info] as const),
      { concurrency: 8 }
    )
    const running = new Map<string, Running>()
    for (const [id, info] of found) if (info._tag === "Some") running.set(id, info.value)
    return running
  })
