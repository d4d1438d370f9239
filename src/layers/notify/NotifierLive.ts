/**
 * The live notifier (docs/questions-and-approvals.md#notifications): `[notify]`'s command and
 * webhook told of a run's questions and its end, at least once, never
 * holding the run.
 *
 * Attaching follows a run's events through the pure fold
 * (`domain/notify/Notification`) and writes each notification to the spool
 * (`Spool`) first, one entry per target. A delivery fiber per target (the
 * command, the webhook) — started with the layer, so it also delivers what
 * earlier processes of the storage left — claims the oldest entry, tries it
 * (`Send`), retries a webhook with backoff for `retry_for` from the entry's
 * creation, and deletes it once delivered or given up (a failure is logged
 * in the spool's `notify.log`, and on stderr when stderr is a log rather
 * than a terminal). When the process ends, the entry being tried is given
 * back to the spool: the run's output and exit code never wait for a
 * receiver (a command that ends with its run gives its last notifications'
 * first try up to a second, `firstTriesBeforeEnd`).
 *
 * The webhook's backoff is the receiver's, not one entry's, and the spool
 * keeps it for every process of the storage (`Spool.readBackoff`): a try
 * refused, timed out, answered 5xx, or still unanswered 250 ms in when its
 * process ended, makes the next one wait (250 ms, doubling, at most 30 s),
 * in this process and in the next; any answer ends it. Before it, a
 * receiver that was down was tried again by every short run, and one that
 * hung (accepted the connection, never answered) held each run's end for
 * the whole second (measured: 1.2 s a `query`).
 *
 * @example
 * ```ts
 * import * as Layer from "effect/Layer"
 * import * as NotifierLive from "parley/layers/notify/NotifierLive"
 * import * as RunLive from "parley/layers/RunLive"
 *
 * // A run's layers plus notifications: the run's events are followed while the run's scope lasts.
 * const notified = NotifierLive.attachRun.pipe(
 *   Layer.provideMerge(NotifierLive.layer({
 *     storage: "/home/me/project/.parley",
 *     notify: { webhook: { url: "http://127.0.0.1:8080/hook", secret: "${env:HOOK_SECRET}" } },
 *     cwd: "/home/me/project",
 *     answerCommand: (id, inquiry) => `parley conversation answer ${id} ${inquiry}`,
 *     url: () => null
 *   })),
 *   Layer.provideMerge(RunLive.layer)
 * )
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Delivery from "../../domain/notify/Delivery.ts"
import * as Notification from "../../domain/notify/Notification.ts"
import { sha256 } from "../../domain/storage/Sha256.ts"
import type * as RunEvent from "../../domain/run/RunEvent.ts"
import * as ConfigData from "../../domain/tool/Config.ts"
import * as EnvReference from "../../domain/tool/EnvReference.ts"
import * as ToolEnv from "../../domain/tool/ToolEnv.ts"
import { Notifier } from "../../services/Notifier.ts"
import { RunEvents } from "../../services/RunEvents.ts"
import * as Send from "./Send.ts"
import * as Spool from "./Spool.ts"

/** What a notifier needs from the process that runs it. */
export interface Settings {
  /** The storage (directory or database url): where the spool is. */
  readonly storage: string
  /** `[notify]` from config (none: nothing is told). */
  readonly notify: ConfigData.NotifyConfig | undefined
  /** Where the command runs (the tools' directory). */
  readonly cwd: string
  readonly answerCommand: Notification.Context["answerCommand"]
  readonly url: Notification.Context["url"]
  /** Where `${env:NAME}` in the secret is looked up (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /** How often a delivery fiber looks for entries other processes left (default 2 s). */
  readonly pollMs?: number | undefined
  /**
   * A command that ends with its run (`query`, `ask`): its scope's end waits up to a second for the first try
   * of what it spooled. A long-lived process (a cluster runner) leaves it off: its delivery fibers go on.
   */
  readonly firstTriesBeforeEnd?: boolean | undefined
}

/** One target's delivery: how to try an entry, and how long to keep trying. */
interface Lane {
  readonly target: Delivery.Target
  readonly events: ReadonlyArray<ConfigData.NotifyEventName> | undefined
  readonly send: (m: Send.Message, signal: AbortSignal) => Promise<Send.Attempt>
  readonly retryForMs: number
  wake: (() => void) | undefined
  /** The delivery ids this process spooled for the lane whose first try has not ended yet. */
  readonly untried: Set<string>
  /** Waiting to try an entry again (the receiver did not take it). */
  backingOff: boolean
  /** Found nothing to claim (another process took what is left), until this process spools again. */
  idle: boolean
  /** Whether the receiver's backoff is kept (the webhook's; a command is run once, never retried). */
  readonly backsOff: boolean
}

/** How long a closing scope waits for the events already published to be spooled. */
const SPOOL_GRACE_MS = 500

/**
 * How long a closing scope then waits for the first try of what this process
 * spooled (a run's last events: `question_closed`, `run_ended`). A short
 * command ends milliseconds after its last event, before a webhook's reply;
 * what is not delivered by then, or waits to be tried again, stays in the
 * spool for the storage's next process.
 */
const FIRST_TRY_MS = 1000

const report = (dir: string, line: string): void => {
  Spool.log(dir, line)
  // A detached run's stderr is its log; at a terminal the line would tear the run's own screen.
  if (process.stderr.isTTY !== true) process.stderr.write(`parley: ${line}\n`)
}

const webhookLane = (
  hook: NonNullable<ConfigData.NotifyConfig["webhook"]>,
  env: Readonly<Record<string, string | undefined>>,
  dir: string
): Lane | undefined => {
  // `${env:PARLEY_…}` names parley's own variables: never a secret handed to a receiver.
  const lookup = (name: string) => (ToolEnv.isParleys(name) ? undefined : env[name])
  const secret = hook.secret === undefined ? undefined : EnvReference.expand(hook.secret, lookup)
  if (secret !== undefined && Result.isFailure(secret)) {
    report(dir, `notify: webhook.secret names \${env:${secret.failure}}, which is not set: the webhook is not called`)
    return undefined
  }
  const webhook: Send.Webhook = {
    url: hook.url,
    secret: secret === undefined ? undefined : secret.success,
    timeoutMs: hook.timeout === undefined ? Delivery.DEFAULT_TIMEOUT_MS : ConfigData.durationMs(hook.timeout)
  }
  return {
    target: "webhook",
    events: hook.events,
    send: (m, signal) => Send.post(webhook, m, signal),
    retryForMs: hook.retry_for === undefined ? Delivery.DEFAULT_RETRY_FOR_MS : ConfigData.durationMs(hook.retry_for),
    wake: undefined,
    untried: new Set(),
    backingOff: false,
    idle: false,
    backsOff: true
  }
}

const commandLane = (argv: ReadonlyArray<string>, cwd: string): Lane => ({
  target: "command",
  events: undefined,
  send: (m, signal) => Send.run({ argv, cwd, timeoutMs: 60_000 }, m, signal),
  retryForMs: 0,
  wake: undefined,
  untried: new Set(),
  backingOff: false,
  idle: false,
  backsOff: false
})

const lanesOf = (settings: Settings, dir: string): Array<Lane> => {
  const notify = settings.notify
  const lanes: Array<Lane> = []
  if (notify?.command !== undefined) lanes.push(commandLane(notify.command, settings.cwd))
  const hook = notify?.webhook && webhookLane(notify.webhook, settings.env ?? process.env, dir)
  if (hook) lanes.push(hook)
  return lanes
}

/** A try still unanswered after this long when its process ends counts as one the receiver did not take (it hangs). */
const SLOW_TRY_MS = Delivery.backoffMs(0)

/** One more try the receiver did not take: the target's backoff, longer, kept for every process of the storage. */
const failed = (dir: string, lane: Lane): Delivery.Backoff | undefined => {
  if (!lane.backsOff) return undefined
  const backoff = Delivery.afterFailure(Spool.readBackoff(dir, lane.target), Date.now())
  Spool.writeBackoff(dir, lane.target, backoff)
  return backoff
}

/** The receiver answered: its backoff ends (whichever process kept it). */
const answered = (dir: string, lane: Lane): void => {
  if (lane.backsOff) Spool.clearBackoff(dir, lane.target)
}

/** Runs `effect` backing off: a run's end does not wait for the lane meanwhile. */
const backingOff = (lane: Lane, effect: Effect.Effect<void>): Effect.Effect<void> =>
  Effect.andThen(
    Effect.sync(() => {
      lane.backingOff = true
    }),
    Effect.ensuring(
      effect,
      Effect.sync(() => {
        lane.backingOff = false
      })
    )
  )

/** One try of `entry`; cut short by the process's end after {@link SLOW_TRY_MS}, it counts as failed. */
const tryOnce = (dir: string, lane: Lane, entry: Delivery.Entry): Effect.Effect<Send.Attempt> =>
  Effect.suspend(() => {
    const started = performance.now()
    return Effect.promise((signal) => lane.send(entry, signal)).pipe(
      Effect.onInterrupt(() =>
        Effect.sync(() => {
          if (performance.now() - started >= SLOW_TRY_MS) failed(dir, lane)
        })
      )
    )
  })

/** Tries a claimed entry until it is delivered, refused, or out of time; gives it back when interrupted. */
const deliver = (dir: string, lane: Lane, claimed: Spool.Claimed): Effect.Effect<void> => {
  const entry = claimed.entry
  const giveUp = (detail: string) =>
    Effect.sync(() => {
      const line = `${lane.target} ${entry.event} ${entry.delivery_id} failed: ${detail}`
      report(dir, `notify: ${line} (conversation ${entry.conversation_id})`)
      // Shown once on the conversation's row (`notify_error`), where a person looks.
      Spool.recordError(dir, entry.conversation_id, line)
      Spool.done(dir, claimed)
    })
  const attempt: Effect.Effect<void> = Effect.flatMap(tryOnce(dir, lane, entry), (tried) => {
    lane.untried.delete(entry.delivery_id)
    if (tried.outcome !== "retry") answered(dir, lane)
    if (tried.outcome === "delivered") return Effect.sync(() => Spool.done(dir, claimed))
    if (tried.outcome === "failed") return giveUp(tried.detail)
    const backoff = failed(dir, lane)
    const now = Date.now()
    if (!Delivery.withinBound(entry.created, now, lane.retryForMs)) return giveUp(tried.detail)
    // The last try is at the bound however far the receiver's backoff reaches (other entries may have grown it).
    const wait = Math.min(Delivery.waitMs(backoff, now), entry.created + lane.retryForMs - now)
    // Retried entries are not waited for at the run's end: the backoff and the tries after it.
    return backingOff(lane, Effect.andThen(Effect.sleep(wait), attempt))
  })
  return attempt.pipe(Effect.onInterrupt(() => Effect.sync(() => Spool.release(dir, claimed))))
}

/** How long the lane's receiver is backing off (kept by any process of the storage). */
const backoffWait = (dir: string, lane: Lane): number =>
  lane.backsOff ? Delivery.waitMs(Spool.readBackoff(dir, lane.target), Date.now()) : 0

/**
 * A lane's fiber: nothing while its receiver backs off (looked at again every `pollMs`, as another process may
 * end it), then the oldest entry for it, else a wait for this process's next one (or another's, polled).
 */
const deliveries = (dir: string, lane: Lane, pollMs: number): Effect.Effect<never> => {
  const idle = Effect.raceFirst(
    Effect.callback<void>((resume) => {
      // Spooled between the claim that found nothing and this wait (the race's fibers start later): no sleep.
      if (!lane.idle) return resume(Effect.void)
      lane.wake = () => resume(Effect.void)
      return Effect.sync(() => {
        lane.wake = undefined
      })
    }),
    Effect.sleep(pollMs)
  )
  return Effect.forever(
    Effect.suspend(() => {
      const wait = backoffWait(dir, lane)
      if (wait > 0) return backingOff(lane, Effect.sleep(Math.min(wait, pollMs)))
      const claimed = Spool.claimNext(dir, lane.target)
      lane.idle = claimed === undefined
      // Nothing claimable now (tried, here or by another process, or behind an entry another holds): not waited
      // for (`idle`), so forgotten here, and a server's set stays small.
      if (claimed === undefined) lane.untried.clear()
      return claimed === undefined ? idle : deliver(dir, lane, claimed)
    })
  )
}

/** Spools `n` for every lane that wants it, and wakes those lanes. */
const spooler = (dir: string, lanes: ReadonlyArray<Lane>) => {
  let count = 0
  return (n: Notification.Notification): void => {
    const body = JSON.stringify(n.body)
    const conversation_id = String(n.body["conversation_id"])
    for (const lane of lanes) {
      if (!Notification.wanted(n, lane.events)) continue
      const entry = { target: lane.target, event: n.event, delivery_id: n.delivery_id, conversation_id, body }
      Spool.append(dir, { ...entry, created: Date.now(), n: count++ })
      lane.untried.add(n.delivery_id)
      lane.idle = false
      lane.wake?.()
    }
  }
}

/**
 * Until no lane has a first try of this process's entries to make, or `ms`: a lane backing off is not waited
 * for, nor one that found nothing to claim (another process claimed what this one spooled).
 */
const firstTries = (lanes: ReadonlyArray<Lane>, ms: number): Effect.Effect<void> =>
  Effect.gen(function* () {
    const deadline = Date.now() + ms
    const waiting = () => lanes.some((lane) => lane.untried.size > 0 && !lane.backingOff && !lane.idle)
    while (waiting() && Date.now() < deadline) yield* Effect.sleep("2 millis")
  })

/**
 * Follows one run's events, spooling what they tell; the scope's end waits
 * briefly for what was published to be spooled, then for its first tries.
 */
const attacher =
  (settings: Settings, spool: (n: Notification.Notification) => void, lanes: ReadonlyArray<Lane>) =>
  (events: Stream.Stream<RunEvent.RunEvent>): Effect.Effect<void, never, Scope.Scope> =>
    Effect.gen(function* () {
      const context: Notification.Context = {
        run: `${Date.now()}-${process.pid}`,
        // In plain code: node:crypto (and node:stream with it) is ~5 ms of a short run that notifies.
        hash: sha256,
        answerCommand: settings.answerCommand,
        url: settings.url
      }
      let state = Notification.initial
      const follow = Stream.runForEach(events, (event) =>
        Effect.sync(() => {
          const [next, told] = Notification.step(context, state, event)
          state = next
          for (const n of told) spool(n)
        })
      )
      const fiber = yield* Effect.forkScoped(follow)
      yield* Effect.addFinalizer(() =>
        Effect.andThen(
          Effect.timeoutOption(Fiber.await(fiber), SPOOL_GRACE_MS),
          settings.firstTriesBeforeEnd === true ? firstTries(lanes, FIRST_TRY_MS) : Effect.void
        )
      )
    })

const silent = Notifier.of({ attach: () => Effect.void })

/** The spool directory made and checked, or why not (logged once: notifications are off for this process). */
const spoolDir = (storage: string): string | undefined => {
  const dir = Spool.dirOf(storage)
  try {
    Spool.ensure(dir)
    return dir
  } catch (error) {
    process.stderr.write(`parley: notify: ${error instanceof Error ? error.message : String(error)}\n`)
    return undefined
  }
}

/** The spool and the lanes of `settings`, or none when `[notify]` names nobody (or the spool is unusable). */
const setUp = (settings: Settings): { readonly dir: string; readonly lanes: Array<Lane> } | undefined => {
  if (settings.notify?.command === undefined && settings.notify?.webhook === undefined) return undefined
  const dir = spoolDir(settings.storage)
  return dir === undefined ? undefined : { dir, lanes: lanesOf(settings, dir) }
}

/** A notifier for `settings`; its delivery fibers live as long as the scope. */
export const make = (settings: Settings): Effect.Effect<Notifier["Service"], never, Scope.Scope> =>
  Effect.gen(function* () {
    const set = setUp(settings)
    if (set === undefined) return silent
    for (const lane of set.lanes) yield* Effect.forkScoped(deliveries(set.dir, lane, settings.pollMs ?? 2000))
    return Notifier.of({ attach: attacher(settings, spooler(set.dir, set.lanes), set.lanes) })
  })

/**
 * A lane's entries delivered one by one until it has none left (another live process's claim ends it too),
 * or until `deadline` when its receiver backs off past it.
 */
const drain = (dir: string, lane: Lane, deadline: number): Effect.Effect<void> =>
  Effect.suspend(() => {
    const wait = backoffWait(dir, lane)
    if (wait > 0)
      return Date.now() + wait < deadline ? Effect.andThen(Effect.sleep(wait), drain(dir, lane, deadline)) : Effect.void
    const claimed = Spool.claimNext(dir, lane.target)
    return claimed === undefined ? Effect.void : Effect.andThen(deliver(dir, lane, claimed), drain(dir, lane, deadline))
  })

/**
 * Delivers what earlier processes of the storage left in the spool, for at
 * most `boundMs`: done as soon as every lane found nothing left, else the
 * entry being tried at the bound is given back for the next process. For a
 * short command (`parley inbox`) that runs no turn of its own.
 */
export const flush = (settings: Settings, boundMs: number): Effect.Effect<void> =>
  Effect.suspend(() => {
    const set = setUp(settings)
    if (set === undefined) return Effect.void
    const deadline = Date.now() + boundMs
    const all = Effect.all(
      set.lanes.map((lane) => drain(set.dir, lane, deadline)),
      { concurrency: "unbounded", discard: true }
    )
    return Effect.asVoid(Effect.timeoutOption(all, boundMs))
  })

/** The notifier of `settings`: it also delivers what earlier processes of the storage left in the spool. */
export const layer = (settings: Settings): Layer.Layer<Notifier> => Layer.effect(Notifier, make(settings))

/** Attaches the notifier to the process's run-event hub for as long as the layer lasts. */
export const attachRun: Layer.Layer<never, never, Notifier | RunEvents> = Layer.effectDiscard(
  Effect.gen(function* () {
    const notifier = yield* Notifier
    const hub = yield* RunEvents
    yield* notifier.attach(hub.events)
  })
)
