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
import * as fs from "node:fs"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as HostClient from "../host/HostClient.ts"
import * as HostPath from "../host/HostPath.ts"
import * as Pid from "../host/Pid.ts"

/** The ids of conversations of `storage` with a host socket file (a killed host's file too: ask before trusting it). */
export const socketIds = (storage: string): ReadonlyArray<string> => [
  ...new Set(HostPath.sockets(storage).map((s) => s.id))
]

/** What a live host says about itself, or none when nothing answers within `within` (a second). */
export const info = (
  storage: string,
  id: string,
  within: Duration.Input = "1 second"
): Effect.Effect<Option.Option<HostClient.Info>> =>
  Effect.scoped(Effect.flatMap(HostClient.connect(HostPath.of(storage, id)), (client) => client.Info())).pipe(
    Effect.timeout(within),
    Effect.option
  )

/**
 * Whether the host of conversation `id` says its run has ended (`ended` in its `Info`): it only sends
 * the end to its last followers before it exits. False when it says otherwise or does not answer
 * within three seconds (a busy host is not taken for an ended one).
 */
export const ended = (storage: string, id: string): Effect.Effect<boolean> =>
  Effect.map(info(storage, id, "3 seconds"), (host) => Option.isSome(host) && host.value.ended !== undefined)

/** How long an action waits for a host whose run ended to be gone: a follower that stopped reading keeps it 3 s, its socket's close 1 s more. */
const ENDING_MS = 6000

/**
 * The host of conversation `id` as an action (an answer, a message, Continue, Discard) finds it: none
 * when none answers. A host whose run ended still answers while it sends the end to its followers, and
 * takes no answer and reads no message any more: it is waited for, up to six seconds, until its socket
 * file is gone (its last act) or its process is; an action then goes to the conversation on disk or
 * starts a new turn. One still there then is returned (the conversation is busy). A host that ended and
 * then does not answer in time (busy with its followers) is not taken for gone: a run started then could
 * not listen on the socket it still holds.
 */
export const settled = (storage: string, id: string): Effect.Effect<Option.Option<HostClient.Info>> =>
  Effect.gen(function* () {
    const deadline = Date.now() + ENDING_MS
    const socket = HostPath.of(storage, id)
    let last: Option.Option<HostClient.Info> = Option.none()
    for (;;) {
      const host = yield* info(storage, id)
      if (Option.isSome(host)) {
        if (host.value.ended === undefined) return host
        last = host
      } else if (Option.isNone(last) || !Pid.alive(last.value.pid) || !fs.existsSync(socket)) return host
      if (Date.now() > deadline) return last
      yield* Effect.sleep("50 millis")
    }
  })

/** Every live host of `storage`, asked at most eight at a time. */
export const all = (storage: string): Effect.Effect<ReadonlyArray<HostClient.Info>> =>
  // Suspended: the sockets are those of when it runs (the page's routes keep one such effect for the server's life).
  Effect.suspend(() =>
    Effect.map(
      Effect.forEach(socketIds(storage), (id) => info(storage, id), { concurrency: 8 }),
      (found) => found.flatMap((o) => (Option.isSome(o) ? [o.value] : []))
    )
  )
