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
import * as HostPath from "./HostPath.ts"

/**
 * A running turn: the host's pid, its open questions and the tools that asked them; or, for a host of
 * another protocol version (a run of another parley version, which this parley may not ask more),
 * `other` with what it said of itself (`pid` is then `null`: it was not asked).
 */
export interface Running {
  readonly pid: number | null
  readonly waiting: ReadonlyArray<string>
  readonly tools: ReadonlyArray<string>
  readonly other?: { readonly protocol: number; readonly parley?: string | undefined } | undefined
}

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

/** The JSON `running` field of an `ls` row (a run of another parley version adds `host_protocol` and `parley`). */
export const jsonOf = (running: Running | undefined) =>
  running === undefined
    ? null
    : {
        pid: running.pid,
        waiting: running.waiting,
        ...(running.other !== undefined
          ? { host_protocol: running.other.protocol, parley: running.other.parley ?? null }
          : {})
      }

/** What a run of another parley version is called: its version, when it said, and its protocol's. */
const otherText = (other: NonNullable<Running["other"]>): string =>
  `other parley version (${other.parley !== undefined ? `parley ${other.parley}, ` : ""}host protocol ${other.protocol})`

/** The text suffix of an `ls` row. */
export const textOf = (running: Running | undefined): string =>
  running === undefined
    ? ""
    : running.other !== undefined
      ? `  [running: ${otherText(running.other)}]`
      : running.waiting.length > 0
        ? `  [running, waiting for input: ${running.tools.join(", ")}]`
        : `  [running pid ${running.pid}]`
