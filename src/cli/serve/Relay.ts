/**
 * One subscription to a run's host per conversation, shared by every SSE
 * client of `parley serve` (issue 23: 100 clients on one run). The first
 * client of a running turn opens it (all the run's events, replayed, then
 * live); the events are kept while the run lasts, and each client is served
 * from them after its `Last-Event-ID`, then live, to the run's end. A
 * hundred watchers cost the host one connection and the server one copy of
 * the run, not a hundred.
 *
 * @example
 * ```ts
 * import * as Relay from "./Relay.ts"
 * const relay = yield* Relay.make
 * const frames = relay.since("/home/me/.parley/run/17738399468.sock", 0)
 * ```
 */
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as RunEvent from "../../domain/run/RunEvent.ts"
import * as HostClient from "../../layers/host/HostClient.ts"

/** A run's events as the server has them so far; `done` once the host's stream ended (the run, or the host, is gone). */
interface Feed {
  readonly events: Array<RunEvent.Sequenced>
  done: boolean
  readonly pubsub: PubSub.PubSub<RunEvent.Sequenced | "end">
}

/** The relay of one server: feeds live in the server's scope. */
export const make: Effect.Effect<{
  /** Whether the server follows the run on `socket` now (it is running: no need to ask its host). */
  readonly following: (socket: string) => boolean
  readonly since: (socket: string, after: number) => Stream.Stream<RunEvent.Sequenced>
}, never, Scope.Scope> =
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const feeds = new Map<string, Feed>()

    const open = (socket: string) =>
      Effect.gen(function*() {
        const feed: Feed = { events: [], done: false, pubsub: yield* PubSub.unbounded<RunEvent.Sequenced | "end">() }
        feeds.set(socket, feed)
        const follow = Effect.scoped(Effect.flatMap(HostClient.connect(socket), (client) =>
          Stream.runForEach(client.Subscribe({ after: 0 }), (e) =>
            Effect.sync(() => {
              feed.events.push(e)
              PubSub.publishUnsafe(feed.pubsub, e)
            }))))
        yield* follow.pipe(
          Effect.ignore,
          Effect.ensuring(Effect.sync(() => {
            feed.done = true
            feeds.delete(socket)
            PubSub.publishUnsafe(feed.pubsub, "end")
          })),
          Effect.forkIn(scope)
        )
        return feed
      })

    const since = (socket: string, after: number): Stream.Stream<RunEvent.Sequenced> =>
      Stream.unwrap(Effect.gen(function*() {
        const feed = feeds.get(socket) ?? (yield* open(socket))
        const live = yield* PubSub.subscribe(feed.pubsub)
        const past = feed.events.filter((e) => e.seq > after)
        const last = past.length > 0 ? past[past.length - 1]!.seq : after
        const replay = Stream.fromIterable(past)
        if (feed.done) return replay
        const rest = Stream.fromSubscription(live).pipe(
          Stream.takeWhile((e): e is RunEvent.Sequenced => e !== "end"),
          Stream.filter((e) => e.seq > last)
        )
        return Stream.concat(replay, rest)
      }))

    return { since, following: (socket: string) => feeds.has(socket) }
  })
