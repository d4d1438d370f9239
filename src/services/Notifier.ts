/**
 * Who is told when a question waits (docs/questions-and-approvals.md#notifications, contract §8
 * "Notifications"): a notifier follows a run's events and tells the
 * `[notify]` command and webhook of each question opened and closed and of
 * the run's end, without ever holding the run: it spools what it has to
 * tell and delivers it from a fiber of its own.
 *
 * Any process that runs a turn attaches it to that turn's events —
 * `parley query`, a cluster runner's turn, `parley ask` — by providing
 * `NotifierLive.layer` and attaching (`NotifierLive.attachRun` does both
 * halves for a process with one `RunEvents` hub).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { Notifier } from "parley/services/Notifier"
 * import { RunEvents } from "parley/services/RunEvents"
 *
 * const follow = Effect.gen(function*() {
 *   const hub = yield* RunEvents
 *   const notifier = yield* Notifier
 *   yield* notifier.attach(hub.events) // in the run's scope: spools as the run goes
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as RunEvent from "../domain/run/RunEvent.ts"

export class Notifier extends Context.Service<
  Notifier,
  {
    /**
     * Follows `events` (one run's) until they end or the scope closes, and
     * spools every notification they make. When the scope closes the
     * events published so far are spooled first (briefly waited for), never
     * delivered first.
     */
    attach(events: Stream.Stream<RunEvent.RunEvent>): Effect.Effect<void, never, Scope.Scope>
  }
>()("parley/Notifier") {}
