/**
 * One connection to a run's host per conversation, shared by every SSE
 * client and every answer of `parley serve` (issue 23: 100 clients on one
 * run; an answer POST → the tool's re-run p99 ≤ 50 ms). The first client of
 * a running turn opens it: a subscription to all the run's events (replayed,
 * then live), kept while the run lasts, from which each SSE client is served
 * after its `Last-Event-ID`; answers and stops are calls on the same
 * connection, so they cost one round trip, not a probe, a connection and an
 * `Info` each. A hundred watchers cost the host one connection and the
 * server one copy of the run, not a hundred. The connection is dropped when
 * the run ends (its `Stopped`) or the host goes away.
 *
 * @example
 * ```ts
 * import * as Relay from "./Relay.ts"
 * const relay = yield* Relay.make
 * const frames = relay.since("/home/me/.parley/run/17738399468.sock", 0)
 * const client = yield* relay.client("/home/me/.parley/run/17738399468.sock") // Option: none when no run
 * ```
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as RunEvent from "../../domain/run/RunEvent.ts"
import * as HostClient from "../../layers/host/HostClient.ts"

/** A run's events as the server has them so far; `done` once the run stopped or its host's stream ended. */
interface Feed {
  readonly events: Array<RunEvent.Sequenced>
  done: boolean
  readonly pubsub: PubSub.PubSub<RunEvent.Sequenced | "end">
  /** The connection the events come over; none when it could not be made. */
  readonly client: Deferred.Deferred<Option.Option<HostClient.Client>>
}

/** What the relay of one server offers. */
export interface Relay {
  /** Whether the server follows the run on `socket` now (it is running: no need to ask its host). */
  readonly following: (socket: string) => boolean
  /** The run's events after `after`, then live, to its end. */
  readonly since: (socket: string, after: number) => Stream.Stream<RunEvent.Sequenced>
  /** The connection to the run on `socket`, opened if a host answers there; none when no run is there. */
  readonly client: (socket: string) => Effect.Effect<Option.Option<HostClient.Client>>
  /** The question `inquiryId` as the run opened it, if the server has seen it open. */
  readonly opened: (socket: string, inquiryId: string) => RunEvent.Of<"QuestionOpened"> | undefined
}

/** The relay of one server: feeds live in the server's scope. */
export const make: Effect.Effect<Relay, never, Scope.Scope> = Effect.gen(function* () {
  const scope = yield* Effect.scope
  const feeds = new Map<string, Feed>()

  // Registered before anything is awaited: two requests at once share one feed.
  const open = (socket: string) =>
    Effect.gen(function* () {
      const feed: Feed = {
        events: [],
        done: false,
        pubsub: yield* PubSub.unbounded<RunEvent.Sequenced | "end">(),
        client: Deferred.makeUnsafe()
      }
      feeds.set(socket, feed)
      const end = Effect.sync(() => {
        if (feeds.get(socket) === feed) feeds.delete(socket)
        if (feed.done) return
        feed.done = true
        PubSub.publishUnsafe(feed.pubsub, "end")
      })
      const follow = Effect.scoped(
        Effect.flatMap(HostClient.connect(socket), (client) =>
          Effect.andThen(
            Deferred.succeed(feed.client, Option.some(client)),
            Stream.runForEach(client.Subscribe({ after: 0 }), (e) =>
              Effect.sync(() => {
                feed.events.push(e)
                PubSub.publishUnsafe(feed.pubsub, e)
              }).pipe(Effect.andThen(e.event._tag === "Stopped" ? end : Effect.void))
            )
          )
        )
      )
      yield* follow.pipe(
        Effect.ignore,
        Effect.ensuring(Effect.andThen(Deferred.succeed(feed.client, Option.none()), end)),
        Effect.forkIn(scope)
      )
      return feed
    })

  const feedOf = (socket: string) =>
    Effect.suspend(() => {
      const feed = feeds.get(socket)
      return feed !== undefined ? Effect.succeed(feed) : open(socket)
    })

  const since = (socket: string, after: number): Stream.Stream<RunEvent.Sequenced> =>
    Stream.unwrap(
      Effect.gen(function* () {
        const feed = yield* feedOf(socket)
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
      })
    )

  const client = (socket: string): Effect.Effect<Option.Option<HostClient.Client>> =>
    Effect.gen(function* () {
      const feed = feeds.get(socket)
      if (feed !== undefined) return yield* Deferred.await(feed.client)
      // No run followed: a socket file nobody answers on is a killed host's (not running).
      if (!(yield* HostClient.running(socket))) return Option.none()
      return yield* Deferred.await((yield* feedOf(socket)).client)
    })

  const opened = (socket: string, inquiryId: string) =>
    feeds
      .get(socket)
      ?.events.find(
        (e): e is RunEvent.Sequenced & { event: RunEvent.Of<"QuestionOpened"> } =>
          e.event._tag === "QuestionOpened" && e.event.inquiry_id === inquiryId
      )?.event

  return { since, client, opened, following: (socket: string) => feeds.has(socket) }
})
