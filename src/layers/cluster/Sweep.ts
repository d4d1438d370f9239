/**
 * The reconciliation sweep of a cluster runner (docs/cluster.md#failover). The engine
 * redelivers persisted messages, but a turn is not a message: a runner that
 * dies mid-turn leaves its row in `parley_cluster_turns` and the turn
 * incomplete in the log. Every `interval`, each runner:
 *
 * - resumes (RFD 023) the conversations of its shards that have such a row
 *   and no turn running here — the new owner picks up a dead runner's turns
 *   without waiting for a message, and a lost wake-up of the engine
 *   (Effect issues #8238, #8312) cannot leave a turn stuck; the row is
 *   taken over as the conversation opens, and a turn whose row went
 *   meanwhile (it ended, or was stopped, where it ran) is left as it is;
 * - hands off the turns running here whose shard went to another runner
 *   (a runner joined) for three sweeps in a row: frozen, so nothing more is
 *   written, and stopped; the new owner's sweep resumes them;
 * - stops the turns running here whose new owner was asked to stop them (a
 *   stop, or a `now` message: `parley_cluster_stops`, `Handlers.ts`), which
 *   {@link stopsOnNotice} also does as the owner's notice comes;
 * - delivers the messages queued for a turn that ran elsewhere and ended
 *   without them ({@link deliverStranded}).
 *
 * A conversation another process still holds (its advisory lock) is left
 * for the next sweep.
 *
 * @example
 * ```ts
 * import type { Sharding } from "effect/cluster/Sharding"
 * import type { SqlClient } from "effect/sql/SqlClient"
 * import * as Effect from "effect/Effect"
 * import * as Sweep from "parley/layers/cluster/Sweep"
 * import type * as Turns from "parley/layers/cluster/Turns"
 * declare const turns: Turns.Turns
 * declare const sql: SqlClient
 * declare const sharding: Sharding["Service"]
 * const sweeping = Effect.forkScoped(Sweep.run({ turns, sql, sharding, interval: "1 second", runner: "127.0.0.1:13141", shardsPerGroup: 60 }))
 * ```
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as EntityId from "effect/cluster/EntityId"
import * as ShardId from "effect/cluster/ShardId"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type { Sharding } from "effect/cluster/Sharding"
import type { SqlClient } from "effect/sql/SqlClient"
import type * as ConversationId from "../../domain/storage/ConversationId.ts"
import { Conversation } from "./ConversationEntity.ts"
import * as Trace from "./Trace.ts"
import type * as Turns from "./Turns.ts"

/** What the sweep works with. */
export interface Options {
  readonly turns: Turns.Turns
  readonly sql: SqlClient
  readonly sharding: Sharding["Service"]
  readonly interval: Duration.Input
  /** This runner's address, as `parley_cluster_shards` names it. */
  readonly runner: string
  readonly shardsPerGroup: number
  /** Sweeps in a row that found each running turn's shard elsewhere. */
  readonly misses: Map<string, number>
}

/** How many turns one sweep resumes at once (each holds a store connection while it opens its conversation). */
const RESUME_AT_ONCE = 16

/** Sweeps in a row a turn's shard must be elsewhere before the turn is handed off. */
const HAND_OFF_AFTER = 3

/** Whether this runner owns the conversation's shard now. */
export const owns = (sharding: Sharding["Service"], id: string): boolean =>
  sharding.hasShardId(sharding.getShardId(EntityId.make(id), Conversation.getShardGroup(EntityId.make(id))))

/** The engine's health check: a singleton, run by the runner holding its shard. */
const HEALTH_CHECK = "effect/cluster/Sharding/RunnerHealth"

/** Whether this runner holds the shard of the engine's health check (so runs it). */
export const runsHealthCheck = (sharding: Sharding["Service"]): boolean =>
  sharding.hasShardId(sharding.getShardId(EntityId.make(HEALTH_CHECK), "default"))

/** How many shards of `group` this runner holds now (shard ids run from 1). */
export const heldShards = (sharding: Sharding["Service"], group: string, perGroup: number): number => {
  let n = 0
  for (let i = 1; i <= perGroup; i++) if (sharding.hasShardId(ShardId.make(group, i))) n++
  return n
}

/** How long a stop request is good for: its sender waits that long (`Handlers.ts`), then takes it back. */
export const STOP_REQUEST_S = 15

/**
 * Stops the turns running here that the owner of their conversation asked
 * to stop (`parley_cluster_stops`): their shard went to it, and they run here
 * until handed off. Every request to this runner is taken; one older than
 * its sender waits for is dropped (it must not stop a later turn).
 */
const stopsAsked = (o: Pick<Options, "sql" | "runner" | "turns">) =>
  Effect.gen(function* () {
    const asked = yield* o.sql<{ conversation_id: string; fresh: boolean }>`DELETE FROM parley_cluster_stops
      WHERE runner = ${o.runner} RETURNING conversation_id, at > now() - make_interval(secs => ${STOP_REQUEST_S}) AS fresh`.pipe(
      Effect.orElseSucceed(() => [])
    )
    yield* Effect.forEach(asked, (r) => (r.fresh ? stopAsked(o, r.conversation_id) : Effect.void), {
      concurrency: "unbounded",
      discard: true
    })
  })

/** Stops the turn of `id` here, as asked; a start of it under way (its lock held a moment) is waited for first. */
const stopAsked = (o: Pick<Options, "sql" | "runner" | "turns">, id: string) =>
  Effect.gen(function* () {
    const starting = o.turns.starting(id)
    // Else that start, retrying, would claim a row again after this stop removed it, and the turn run on.
    if (starting !== undefined) yield* Effect.timeoutOption(starting, Duration.seconds(STOP_REQUEST_S))
    const turn = o.turns.get(id)
    // Not running here (handed off a moment ago, frozen; a start that did not get going): its row goes, so no
    // take-over resumes it.
    if (turn === undefined)
      return yield* o.sql`DELETE FROM parley_cluster_turns WHERE conversation_id = ${id} AND runner = ${o.runner}`.pipe(
        Effect.ignore
      )
    yield* Trace.line("stopped as asked", id)
    yield* turn.stop
  })

/** How long the sweep looks after a message queued for a turn running elsewhere (its tool may run that long). */
const QUEUE_WATCH_MS = 60 * 60_000

/**
 * Delivers the messages queued for a turn that ran on another runner
 * (`Handlers.ts`) once that turn is gone: it may have read its queue for the
 * last time before the message came, and no run would take it until the
 * next message. A run here with nothing to resume delivers what is queued
 * (`query --continue-turn`); it is started only while something is, so an
 * incomplete turn the other runner left (a failed model call) is not
 * resumed unasked. `rows`: who runs which turn now, by `parley_cluster_turns`.
 *
 * A conversation stays watched while its turn runs elsewhere, while its
 * shard is not this runner's for a moment (shard locks refreshed late),
 * while another start of it is under way here, and while a start of ours
 * did not get going: for an hour at most. The watch lives in this runner's
 * memory (docs/cluster.md#how-it-works says what that leaves).
 *
 * @internal
 */
export const deliverStranded = (
  turns: Turns.Turns,
  rows: ReadonlyMap<string, string>,
  owned: (id: string) => boolean
) =>
  Effect.forEach(
    [...turns.queueWatched()],
    ([id, since]) => {
      const runner = rows.get(id)
      const expired = Date.now() - since >= QUEUE_WATCH_MS
      const elsewhere = runner !== undefined && runner !== turns.runner
      if (!expired && (elsewhere || !owned(id) || turns.starting(id) !== undefined)) return Effect.void
      // Expired, or a turn of it runs here (taken over by this sweep): that run takes the messages.
      if (expired || runner !== undefined || turns.get(id) !== undefined)
        return Effect.sync(() => turns.unwatchQueue(id))
      return deliver(turns, id)
    },
    { concurrency: RESUME_AT_ONCE, discard: true }
  )

/** One watched conversation's run, when anything is still queued for it; watched still when it did not start. */
const deliver = (turns: Turns.Turns, id: ConversationId.ConversationId) =>
  Effect.gen(function* () {
    // A conversation removed meanwhile has nothing to deliver either.
    const waiting = yield* turns.queued(id).pipe(Effect.catchTag("ConversationNotFound", () => Effect.succeed(0)))
    if (waiting === 0) return turns.unwatchQueue(id)
    yield* Trace.line("deliver stranded", id)
    const started = yield* turns.start(id, { continueTurn: true })
    if (started._tag !== "Failed") turns.unwatchQueue(id)
  }).pipe(warned(`${id}: queued messages not delivered`))

/**
 * Nothing of `self` fails the sweep, a defect neither (a store connection
 * refused as a turn starts): said as a warning, one line (`RunnerLog.ts`).
 * An interrupt (the runner stops) is not.
 */
const warned =
  (message: string) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<void, never, R> =>
    Effect.catchCause(Effect.asVoid(self), (cause) =>
      Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.logWarning(message, cause)
    )

/** The channel a stop request's sender notifies, the runner asked as its payload (`Handlers.ts`). */
export const STOPS_CHANNEL = "parley_cluster_stops"

/** How long the stop listener waits for a notice before it checks its connection with one of its own. */
const LISTEN_CHECK = Duration.seconds(30)

/**
 * Takes this runner's stop requests as their notices come on
 * {@link STOPS_CHANNEL}: a stop through the conversation's owner then takes
 * a moment, not up to a sweep's second more. The sweep still takes them
 * every second, so a notice missed costs only that second. The listening
 * connection is one of the runner's pool; lost, it is listened to again a
 * second later. One that dies without closing (a network gone) is found by
 * a notice of the listener's own, sent after 30 s without any, that does
 * not come back within 5 s.
 */
export const stopsOnNotice = (
  o: Pick<Options, "sql" | "runner" | "turns">,
  listen: (channel: string) => Effect.Effect<Queue.Dequeue<{ readonly payload: string }, unknown>, unknown, Scope.Scope>
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const notices = yield* listen(STOPS_CHANNEL)
      const ping = `ping ${o.runner} ${process.pid}`
      let pinged = false
      for (;;) {
        const notice = yield* Effect.timeoutOption(Queue.take(notices), pinged ? Duration.seconds(5) : LISTEN_CHECK)
        if (notice._tag === "None") {
          if (pinged) return // Its own notice did not come back: the connection is gone.
          pinged = true
          yield* o.sql`SELECT pg_notify(${STOPS_CHANNEL}, ${ping})`
          continue
        }
        pinged = false
        if (notice.value.payload !== o.runner) continue
        // Notices that came meanwhile: one look takes all their requests.
        yield* Queue.clear(notices)
        yield* warned("stop requests not taken")(stopsAsked(o))
      }
    })
  ).pipe(
    // Silent: a database away would say it every second. The runner's own stop does not come here.
    Effect.catchCause(() => Effect.void),
    Effect.andThen(Effect.sleep("1 second")),
    Effect.forever
  )

/** One pass: say how many shards we hold, resume what is ours and runs nowhere, hand off what is no longer ours. */
export const once = (o: Options) =>
  Effect.gen(function* () {
    const shards = heldShards(o.sharding, "default", o.shardsPerGroup)
    const check = runsHealthCheck(o.sharding)
    yield* o.sql`INSERT INTO parley_cluster_shards (runner, shards, at, health_check) VALUES (${o.runner}, ${shards}, now(), ${check})
      ON CONFLICT (runner) DO UPDATE SET shards = EXCLUDED.shards, at = now(), health_check = EXCLUDED.health_check`.pipe(
      Effect.ignore
    )
    // Stops first: a turn asked to stop is not handed off (and resumed by the new owner) on the way.
    yield* stopsAsked(o)
    for (const turn of o.turns.running()) {
      // Three sweeps in a row: a runner whose shard-lock refresh was slow drops its shards for a moment, then takes them back.
      const misses = owns(o.sharding, turn.id) ? 0 : (o.misses.get(turn.id) ?? 0) + 1
      if (misses === 0) o.misses.delete(turn.id)
      else o.misses.set(turn.id, misses)
      // Not while a tool runs: stopped after it acted but before its result is recorded, it would act again.
      if (misses >= HAND_OFF_AFTER && turn.toolsRunning() === 0) {
        o.misses.delete(turn.id)
        yield* turn.handOff
      }
    }
    const read = yield* o.sql<{ conversation_id: string; runner: string }>`SELECT conversation_id, runner
      FROM parley_cluster_turns`.pipe(Effect.option)
    // Unread, no turn is taken for gone.
    if (read._tag === "None") return 0
    const rows = read.value
    yield* deliverStranded(o.turns, new Map(rows.map((r) => [r.conversation_id, r.runner])), (id) =>
      owns(o.sharding, id)
    )
    const ours = rows.filter((r) => owns(o.sharding, r.conversation_id) && o.turns.get(r.conversation_id) === undefined)
    // A dead runner's turns all at once: each start waits for its turn to get going (a load, a lock, the model
    // chosen), and four at a time made the last of 15 wait for three rounds of that (1–3 s on a loaded machine).
    yield* Effect.forEach(
      ours,
      (r) =>
        Effect.ignore(
          o.turns.start(r.conversation_id as ConversationId.ConversationId, { continueTurn: true, takeOver: true })
        ),
      {
        concurrency: RESUME_AT_ONCE,
        discard: true
      }
    )
    return ours.length
  })

/** How often the runner looks whether it gained shards (in memory, no query). */
const WATCH = Duration.millis(100)

/**
 * Sweeps every `interval` for as long as the runner lives, and at once when
 * it gains shards: a dead runner's turns are resumed as soon as its shards
 * arrive here, not up to an interval later.
 */
export const run = (o: Omit<Options, "misses">) =>
  Effect.suspend(() => {
    const misses = new Map<string, number>()
    const every = Duration.toMillis(Duration.fromInputUnsafe(o.interval))
    let held = heldShards(o.sharding, "default", o.shardsPerGroup)
    let last = Date.now()
    const tick = Effect.suspend(() => {
      const now = heldShards(o.sharding, "default", o.shardsPerGroup)
      const gained = now > held
      held = now
      if (!gained && Date.now() - last < every) return Effect.void
      last = Date.now()
      return Effect.andThen(
        gained ? Trace.line(`shards ${now}`, o.runner) : Effect.void,
        // Whatever fails, the sweep goes on at the next tick.
        warned("the sweep failed")(once({ ...o, misses }))
      )
    })
    return Effect.forever(Effect.andThen(Effect.sleep(WATCH), tick))
  })
