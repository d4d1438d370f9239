/**
 * One connection to a run's host per conversation, shared by every SSE
 * client and every answer of `parley serve` (docs/serve.md#live-view: 100 clients on
 * one run; an answer POST → the tool's re-run p99 ≤ 50 ms). The first client of
 * a running turn opens it: a subscription to the run's events (what the
 * host keeps, then live), republished with the host's numbers into a hub of
 * the server's own (`RunEventsLive.makeHub`), from which each SSE client is
 * served after its `Last-Event-ID`; answers and stops are calls on the same
 * connection, so they cost one round trip, not a probe, a connection and an
 * `Info` each. A hundred watchers cost the host one connection and the
 * server one bounded copy of the run's last events (`LiveView.REPLAY`),
 * not a hundred; each watcher may fall `LiveView.BEHIND` behind before it
 * is closed. The connection is dropped when the run ends (its `Stopped`)
 * or the host goes away; a subscription the host closed for falling behind
 * is taken again after the last event it got, without a gap.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Relay from "parley/layers/serve/Relay"
 * const program = Effect.gen(function* () {
 *   const relay = yield* Relay.make
 *   const frames = relay.since("/home/me/.parley/run/17738399468.sock", 0)
 *   const client = yield* relay.client("/home/me/.parley/run/17738399468.sock") // Option: none when no run
 * })
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as LiveView from "../../domain/run/LiveView.ts"
import type * as RunEvent from "../../domain/run/RunEvent.ts"
import * as HostClient from "../host/HostClient.ts"
import * as RunEventsLive from "../RunEventsLive.ts"

/** A run as the server follows it. */
interface Feed {
  readonly hub: RunEventsLive.Hub
  /** Settled once the hub holds what the host kept (its first events arrived) or the subscription ended. */
  readonly ready: Deferred.Deferred<void>
  /** The first connection the events came over; none when it could not be made. */
  readonly client: Deferred.Deferred<Option.Option<HostClient.Client>>
  /** The connection they come over now, if one is open. */
  current: HostClient.Client | undefined
}

/** What the relay of one server offers. */
export interface Relay {
  /** Whether the server follows the run on `socket` now (it is running: no need to ask its host). */
  readonly following: (socket: string) => boolean
  /** The run's events after `after`, then live, to its end; bounded per follower (`LiveView.BEHIND`). */
  readonly since: (
    socket: string,
    after: number,
    onLost?: () => void
  ) => Stream.Stream<RunEvent.Sequenced, LiveView.Lost>
  /**
   * For a client resuming after `after` a run on `socket` that ended: the
   * rest, for a minute after the end (what the server kept of it), then
   * only where it ended (`LiveViewGone`); undefined when the server did not
   * see it end.
   */
  readonly ended: (socket: string, after: number) => Stream.Stream<RunEvent.Sequenced, LiveView.Lost> | undefined
  /** The connection to the run on `socket`, opened if a host answers there; none when no run is there. */
  readonly client: (socket: string) => Effect.Effect<Option.Option<HostClient.Client>>
}

/** How many ended runs the relay remembers the end of (a number each), for clients that resume late. */
const ENDED_KEPT = 1000
/** How many ended runs it keeps the events of (`LiveView.REPLAY` each), and for how long after their end. */
const ENDED_REPLAYS = 8
const ENDED_REPLAY_MS = 60_000

/** A run the server saw end: where, and for a while what it kept of it. */
interface Ended {
  readonly seq: number
  hub: RunEventsLive.Hub | undefined
  readonly until: number
}

/**
 * Follows the host's events into `feed.hub` until the run's `Stopped`: a
 * subscription closed for falling behind is taken again after the last
 * event the hub has; one the host no longer keeps events for ends the hub's
 * followers with `LiveViewGone`.
 */
const follow = (client: HostClient.Client, feed: Feed) =>
  Effect.gen(function* () {
    for (;;) {
      const lost = yield* Stream.runForEachArray(client.Subscribe({ after: feed.hub.latest() }), (chunk) =>
        Effect.sync(() => {
          for (const e of chunk) feed.hub.publishAt(e)
          Deferred.doneUnsafe(feed.ready, Effect.void)
        })
      ).pipe(
        Effect.as(undefined),
        Effect.catchTags({
          LiveViewLagged: (e) => Effect.succeed(e),
          LiveViewGone: (e) => Effect.succeed(e)
        })
      )
      if (lost === undefined || feed.hub.ended() !== null) return
      if (lost._tag === "LiveViewGone") {
        return feed.hub.close(
          ({ last }) => new LiveView.LiveViewGone({ after: last, latest: lost.latest, ended: lost.ended })
        )
      }
    }
  })

/** How many times in a row a broken connection to a running host is made again. */
const RECONNECTS = 3

/**
 * `connected` (a connection, followed to the run's end) again while the run
 * goes on: a connection can break under load (the host or this server too
 * busy to answer a ping in time), and the run's clients lose nothing for it,
 * the subscription resumes after the last event the hub has.
 */
const reconnecting = (socket: string, feed: Feed, connected: Effect.Effect<void, unknown>) =>
  Effect.gen(function* () {
    for (let attempt = 1; ; attempt++) {
      const exit = yield* Effect.exit(connected)
      feed.current = undefined
      if (exit._tag === "Success" || feed.hub.ended() !== null || attempt > RECONNECTS) return
      if (!(yield* HostClient.running(socket))) return
      yield* Effect.sleep("100 millis")
    }
  })

/** The relay of one server: feeds live in the server's scope. */
export const make: Effect.Effect<Relay, never, Scope.Scope> = Effect.gen(function* () {
  const scope = yield* Effect.scope
  const feeds = new Map<string, Feed>()
  const ended = new Map<string, Ended>()
  const remember = (socket: string, run: Ended) => {
    ended.delete(socket)
    ended.set(socket, run)
    // Newest last: only the newest few keep their events, only the newest thousand their end.
    let i = ended.size
    for (const [key, old] of ended) {
      if (i > ENDED_KEPT) ended.delete(key)
      else if (i > ENDED_REPLAYS) old.hub = undefined
      i--
    }
  }

  // Registered before anything is awaited: two requests at once share one feed.
  const open = (socket: string) =>
    Effect.gen(function* () {
      const feed: Feed = {
        hub: RunEventsLive.makeHub(),
        ready: Deferred.makeUnsafe(),
        client: Deferred.makeUnsafe(),
        current: undefined
      }
      feeds.set(socket, feed)
      ended.delete(socket)
      const end = Effect.sync(() => {
        if (feeds.get(socket) === feed) feeds.delete(socket)
        const stopped = feed.hub.ended()
        // A client that fell behind near the end reconnects after the run: it still gets the rest.
        if (stopped !== null) remember(socket, { seq: stopped, hub: feed.hub, until: Date.now() + ENDED_REPLAY_MS })
        // Followers get what they were handed, then their streams end.
        feed.hub.close()
        Deferred.doneUnsafe(feed.ready, Effect.void)
      })
      const connected = Effect.scoped(
        Effect.flatMap(HostClient.connect(socket), (client) => {
          feed.current = client
          Deferred.doneUnsafe(feed.client, Effect.succeed(Option.some(client)))
          return follow(client, feed)
        })
      )
      yield* reconnecting(socket, feed, connected).pipe(
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

  const since = (socket: string, after: number, onLost?: () => void) =>
    Stream.unwrap(
      Effect.gen(function* () {
        const feed = yield* feedOf(socket)
        // A new feed holds nothing until the host's first events arrive: a cursor would look past them.
        yield* Deferred.await(feed.ready)
        return feed.hub.follow(after, { bound: LiveView.BEHIND, onLost })
      })
    )

  const client = (socket: string): Effect.Effect<Option.Option<HostClient.Client>> =>
    Effect.gen(function* () {
      const feed = feeds.get(socket)
      if (feed?.current !== undefined) return Option.some(feed.current)
      if (feed !== undefined) return yield* Deferred.await(feed.client)
      // No run followed: a socket file nobody answers on is a killed host's (not running).
      if (!(yield* HostClient.running(socket))) return Option.none()
      return yield* Deferred.await((yield* feedOf(socket)).client)
    })

  return {
    since,
    client,
    ended: (socket: string, after: number) => {
      const run = ended.get(socket)
      if (run === undefined) return undefined
      if (run.hub !== undefined && Date.now() < run.until) return run.hub.follow(after, { bound: LiveView.BEHIND })
      return Stream.fail(new LiveView.LiveViewGone({ after, latest: run.seq, ended: run.seq }))
    },
    following: (socket: string) => feeds.has(socket)
  }
})
