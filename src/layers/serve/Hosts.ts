/**
 * The running turns of a storage directory, as `parley serve` reaches them
 * (one host protocol, docs/decisions.md#one-run-event-stream): every `parley query` — in a terminal or
 * `--detach`ed — serves its run on its socket (docs/decisions.md#ctrl-z-detaches), and the server is
 * one more client of it. Nothing here opens a conversation.
 *
 * @example
 * ```ts
 * import * as Hosts from "parley/layers/serve/Hosts"
 * const ids = Hosts.socketIds("/home/me/.parley") // ids with a socket file, alive or not
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as HostClient from "../host/HostClient.ts"
import * as HostPath from "../host/HostPath.ts"

/** The ids of conversations of `storage` with a host socket file (a killed host's file too: ask before trusting it). */
export const socketIds = (storage: string): ReadonlyArray<string> => [
  ...new Set(HostPath.sockets(storage).map((s) => s.id))
]

/** What a live host says about itself, or none when nothing answers within a second. */
export const info = (storage: string, id: string): Effect.Effect<Option.Option<HostClient.Info>> =>
  Effect.scoped(Effect.flatMap(HostClient.connect(HostPath.of(storage, id)), (client) => client.Info())).pipe(
    Effect.timeout("1 second"),
    Effect.option
  )

/**
 * Every host of `storage` running its turn, asked at most eight at a time. A host whose run ended
 * (`ended`) is left out: it only sends the end to its last followers before it exits, and a page drawn
 * then would say the turn runs and follow its end again.
 */
export const all = (storage: string): Effect.Effect<ReadonlyArray<HostClient.Info>> =>
  // Suspended: the sockets are those of when it runs (the page's routes keep one such effect for the server's life).
  Effect.suspend(() =>
    Effect.map(
      Effect.forEach(socketIds(storage), (id) => info(storage, id), { concurrency: 8 }),
      (found) => found.flatMap((o) => (Option.isSome(o) && o.value.ended === undefined ? [o.value] : []))
    )
  )
