/**
 * A turn's live events (`GET /api/conversations/:id/events`) from any
 * runner of a cluster (docs/cluster.md#live-from-any-runner). The runner that runs the turn streams
 * them from its own `RunEvents`; another runner relays that runner's
 * stream: `parley_cluster_turns` says who runs the turn and where its HTTP
 * API is, and the relay is the owner's SSE bytes as they come, asked for with
 * the cluster's web token (`RunnerChannel.webTokenOf`; plain HTTP, so never
 * `$PARLEY_TOKEN`, whose runner-port keys the network must not get). A turn that is moving (its runner died, its shard went
 * elsewhere) is waited for while the next owner takes it, for a bounded
 * time; a conversation with no running turn answers 204, as `parley serve`
 * does, so an `EventSource` stops. When the owner goes away mid-stream the
 * relay ends, and the browser's `EventSource` reconnects and is relayed
 * from the next one.
 *
 * @example
 * ```ts
 * import type { SqlClient } from "effect/sql/SqlClient"
 * import * as Events from "parley/layers/cluster/Events"
 * declare const sql: SqlClient
 * const response = Events.relay({ sql, token: "t", runner: "127.0.0.1:13141" }, "17738399468", 0, () => false)
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as http from "node:http"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type { SqlClient } from "effect/sql/SqlClient"

/** What the relay works with. */
export interface Options {
  readonly sql: SqlClient
  /** The cluster's web token (never `$PARLEY_TOKEN`: the relay is plain HTTP). */
  readonly token: string
  /** This runner's address (as `parley_cluster_turns.runner` names it). */
  readonly runner: string
}

/** Who runs a conversation's turn now, and where its HTTP API is. */
interface Owner {
  readonly runner: string
  readonly http: string | null
  readonly http_host: string | null
}

/** How long a request waits for a moving turn to have its next owner (failover takes a few seconds). */
const MOVING_MS = 15_000
/** How long connecting to the owner may take. */
const CONNECT_MS = 2_000

const ownerOf = (sql: SqlClient, id: string) =>
  sql<Owner>`SELECT runner, http, http_host FROM parley_cluster_turns WHERE conversation_id = ${id}`.pipe(
    Effect.map((rows) => Option.fromNullishOr(rows[0])),
    Effect.orElseSucceed(() => Option.none<Owner>())
  )

/** The owner's event stream, once it answered 200; none when it cannot be reached or runs no turn of `id`. */
const connect = (owner: Owner, id: string, token: string, lastEventId: number) =>
  Effect.callback<Option.Option<http.IncomingMessage>>((resume) => {
    const url = new URL(`http://${owner.http}`)
    const req = http.get({
      hostname: url.hostname.replace(/^\[|\]$/g, ""),
      port: url.port,
      path: `/api/conversations/${encodeURIComponent(id)}/events`,
      headers: {
        host: owner.http_host ?? owner.http ?? "",
        authorization: `Bearer ${token}`,
        accept: "text/event-stream",
        ...(lastEventId > 0 ? { "last-event-id": String(lastEventId) } : {})
      }
    })
    // Only the connection is bounded: a relayed stream may be quiet for hours (a question waiting for its answer).
    const timer = setTimeout(() => req.destroy(), CONNECT_MS)
    req.once("response", (res) => {
      clearTimeout(timer)
      if (res.statusCode === 200) return resume(Effect.succeed(Option.some(res)))
      res.resume()
      resume(Effect.succeed(Option.none()))
    })
    req.once("error", () => {
      clearTimeout(timer)
      resume(Effect.succeed(Option.none()))
    })
    return Effect.sync(() => {
      clearTimeout(timer)
      req.destroy()
    })
  })

/** The owner's SSE bytes, passed on as they come; the upstream request is closed with the client's. */
const relayed = (res: http.IncomingMessage) =>
  HttpServerResponse.stream(
    Stream.fromAsyncIterable(res as AsyncIterable<Uint8Array>, (e) => e).pipe(
      Stream.ensuring(Effect.sync(() => res.destroy()))
    ),
    { contentType: "text/event-stream", headers: { "cache-control": "no-cache" } }
  )

/**
 * The events of `id`'s turn when another runner runs it (relayed), `here`
 * when this runner does (the caller streams them itself), or 204 when no
 * turn runs (after waiting a bounded time for one that is moving).
 */
export const relay = (o: Options, id: string, lastEventId: number, runsHere: () => boolean) =>
  Effect.gen(function* () {
    const deadline = Date.now() + MOVING_MS
    while (Date.now() < deadline) {
      if (runsHere()) return "here" as const
      const owner = yield* ownerOf(o.sql, id)
      if (Option.isNone(owner)) return runsHere() ? ("here" as const) : HttpServerResponse.empty({ status: 204 })
      if (owner.value.runner !== o.runner && owner.value.http !== null) {
        const res = yield* connect(owner.value, id, o.token, lastEventId)
        if (Option.isSome(res)) return relayed(res.value)
      }
      // Ours but not started yet (the sweep resumes it), or its runner is gone and the next one takes it over.
      yield* Effect.sleep("250 millis")
    }
    return HttpServerResponse.empty({ status: 204 })
  })
