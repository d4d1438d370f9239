/**
 * A host's subscriptions still sending (`HostServer.ts`): a run that ends
 * waits until each has sent its last event, the `Stopped`, before the socket
 * closes — with many subscribers, the slowest ones were still being sent the
 * run's middle when the process exited, and their streams ended without it
 * (100 SSE clients of one run, docs/serve.md#live-view). It waits while they
 * make progress (up to {@link DRAIN_MAX_MS}), and no longer than
 * {@link STALL_MS} when none does (a client that stopped reading). A
 * subscriber that fell `LiveView.BEHIND` behind was closed already: what is
 * left to send is at most that much each.
 *
 * The wait ends as soon as the last subscription has: a subscription's start,
 * end or fall behind wakes it. Polled every 20 ms before, a watched run's end
 * (the page, `attach`, `serve`'s relay) cost its process about 20 ms more
 * before it exited (a watched `parley ask`: 22 ms of its 43 ms from answer
 * to exit).
 *
 * @internal
 * @example
 * ```ts
 * import * as Following from "parley/layers/host/Following"
 * const following = Following.make()
 * // each subscription's stream: following.track(stream); the run's end: yield* following.drained
 * ```
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

/** A host's subscriptions, tracked as they send. */
export interface Following {
  readonly track: <A, E, R>(stream: Stream.Stream<A, E, R>) => Stream.Stream<A, E, R>
  /** Waits until every subscription has ended (or stalled, or the drain's limit), then succeeds. */
  readonly drained: Effect.Effect<void>
}

// One second was too short on a loaded machine: with two busy loops and other test files running, the
// `serve` process relaying one run to 50 SSE clients went a second without reading, and its clients missed
// the run's end (seen under load). A client that stopped reading costs the run's exit this much at most, and
// up to one look more (`PROGRESS_LOOK_MS`: progress is seen at a look).
export const STALL_MS = 3000
// A reader that keeps reading gets the run's end: ten seconds cut the server's one subscription to a run of
// 100,000 events (it relays to its own clients) 79,000 events before the end. A reader gets at most
// `LiveView.BEHIND` after the run's end; a minute is that much at 200 events a second.
export const DRAIN_MAX_MS = 60_000

/** How long a run that ended waits for a subscriber closed for falling behind to subscribe again (it does at once). */
export const RESUME_GRACE_MS = 1000

/** How often a drain looks whether its subscriptions still make progress (nothing wakes it for that). */
const PROGRESS_LOOK_MS = 250

export const make = (): Following => {
  let open = 0
  let sent = 0
  let lagged = Number.NEGATIVE_INFINITY
  const waiters = new Set<() => void>()
  const changed = () => {
    // Taken out first: a drain woken may wait again at once, and a Set's loop would visit it again.
    const woken = [...waiters]
    waiters.clear()
    for (const wake of woken) wake()
  }
  /** Resumes at a subscription's start, end or fall behind. */
  const change = Effect.callback<void>((resume) => {
    const wake = () => resume(Effect.void)
    waiters.add(wake)
    return Effect.sync(() => void waiters.delete(wake))
  })
  return {
    track: (stream) =>
      Stream.unwrap(
        Effect.sync(() => {
          open++
          changed()
          return stream.pipe(
            Stream.mapArray((chunk) => {
              sent += chunk.length
              return chunk
            }),
            Stream.tapError(() =>
              Effect.map(Clock.currentTimeMillis, (now) => {
                lagged = now
                changed()
              })
            ),
            Stream.ensuring(
              Effect.sync(() => {
                open--
                changed()
              })
            )
          )
        })
      ),
    drained: Effect.gen(function* () {
      const started = yield* Clock.currentTimeMillis
      let seen = sent
      let progressAt = started
      for (;;) {
        const now = yield* Clock.currentTimeMillis
        if (sent !== seen) {
          seen = sent
          progressAt = now
        }
        // Until when it waits: the drain's limit, a stall's, and (no subscription open) a resume's grace.
        const until = Math.min(
          started + DRAIN_MAX_MS,
          progressAt + STALL_MS,
          open > 0 ? Number.POSITIVE_INFINITY : lagged + RESUME_GRACE_MS
        )
        if (now >= until) return
        yield* Effect.timeoutOption(change, Math.min(until - now, PROGRESS_LOOK_MS))
      }
    })
  }
}
