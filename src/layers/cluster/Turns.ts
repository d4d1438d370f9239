/**
 * The turns a cluster runner runs (docs/cluster.md#how-it-works): each is parley's own `query`
 * program (RFD 023: the conversation log is the one source of truth), run in
 * this process on the runner's services, with its own run events and its own
 * open questions (`PendingAnswers`), so the conversation entity's messages
 * reach it: an answer is offered to its open question, a stop interrupts it.
 *
 * Nobody is at a terminal: questions for a person follow the `detached`
 * policy of the config, else the one the resumed turn recorded, else `wait`.
 *
 * A turn that must move to another runner (its shard went elsewhere, the
 * runner stops) is **handed off**: its session is frozen first, so what an
 * interrupt would record (`Cancelled{user}` for open questions, a partial
 * reply) is not written, then it is interrupted. The log is left as a
 * `kill -9` leaves it, and the next owner resumes it with RFD 023.
 *
 * `parley_cluster_turns` has a row for every turn a runner has taken and not
 * finished; a runner that dies leaves its rows, and the sweep of the new
 * owner (`Sweep.ts`) resumes those conversations.
 *
 * @example
 * ```ts
 * import type { SqlClient } from "effect/sql/SqlClient"
 * import * as Effect from "effect/Effect"
 * import * as Turns from "parley/layers/cluster/Turns"
 * declare const services: Turns.Services
 * declare const sql: SqlClient
 * const program = Effect.gen(function* () {
 *   const turns = yield* Turns.make({ runner: "127.0.0.1:13141", http: { address: "127.0.0.1:3141", host: "127.0.0.1:3141" }, services, sql })
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { SqlClient } from "effect/sql/SqlClient"
import * as ContextWindow from "../../domain/model/ContextWindow.ts"
import type * as RunEvent from "../../domain/run/RunEvent.ts"
import * as LastError from "../../domain/run/LastError.ts"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import type * as ConfigData from "../../domain/tool/Config.ts"
import * as LlmInquiryBackend from "../LlmInquiryBackend.ts"
import * as PendingAnswersLive from "../PendingAnswersLive.ts"
import * as RunEventsLive from "../RunEventsLive.ts"
import * as Query from "../../programs/Query.ts"
import * as Queued from "../../programs/Queued.ts"
import { Config } from "../../services/Config.ts"
import type { ConversationSession } from "../../services/ConversationSession.ts"
import { ConversationStore } from "../../services/ConversationStore.ts"
import { Executor } from "../../services/Executor.ts"
import { InquiryBackend } from "../../services/InquiryBackend.ts"
import { PendingAnswers } from "../../services/PendingAnswers.ts"
import { PromptBackend, PromptFailed } from "../../services/PromptBackend.ts"
import { Provider } from "../../services/Provider.ts"
import type { Notifier } from "../../services/Notifier.ts"
import { RunEvents } from "../../services/RunEvents.ts"
import { type StoreError, StoreIoError } from "../../services/StoreErrors.ts"
import * as Trace from "./Trace.ts"

/** An answer offered to a turn here by the cluster (another runner took it: contract §8's `via`). */
const CLUSTER = { via: "cluster" } as const

/** What every turn of this runner shares. */
export interface Services {
  readonly store: ConversationStore["Service"]
  readonly config: Config["Service"]
  readonly executor: Executor["Service"]
  readonly provider: Provider["Service"]
  /**
   * A provider of its own for each turn, when the shared one keeps state a
   * turn must not share: the scripted model's position in its steps, so each
   * conversation's turn follows the script from its first step, as a `parley
   * query` process does (one runner's turns shared one position: a second
   * conversation got the first one's later steps).
   */
  readonly providerOfTurn?: Effect.Effect<Provider["Service"], never, Scope.Scope> | undefined
  /** Chooses a turn's model: the one asked for, else the remembered one, else `assistant.model`. */
  readonly chooseModel: (
    asked: string | undefined,
    remembered: string | undefined
  ) => Effect.Effect<string, { readonly message: string }>
  /** Where tools run. */
  readonly root: string
  /** Who is told of each turn's questions and end (`[notify]`): the runner that owns a turn tells. */
  readonly notifier?: Notifier["Service"] | undefined
}

/** What a turn is asked to do. */
export interface Request {
  readonly message?: string | undefined
  readonly model?: string | undefined
  readonly continueTurn?: boolean
  readonly discardTurn?: boolean
  /**
   * The sweep's resume of a turn another runner ran: only while that turn's
   * row is there. One that ended or was stopped meanwhile (its runner let go
   * of the conversation and removed the row) is left as it is.
   */
  readonly takeOver?: boolean
}

/** How starting a turn went: it runs (its outcome comes later), it ended at once, or it could not start. */
export type Started =
  | { readonly _tag: "Running" }
  | { readonly _tag: "Ended"; readonly outcome: Query.QueryOutcome }
  | { readonly _tag: "Failed"; readonly error: unknown }

/** A turn running here. */
export interface Turn {
  readonly id: ConversationId.ConversationId
  readonly pending: PendingAnswers["Service"]
  readonly events: RunEvents["Service"]
  /** Completes when the turn's fiber has ended. */
  readonly ended: Deferred.Deferred<Exit.Exit<Query.QueryResult, unknown>>
  /** Stops it as `conversation kill` does (open questions cancelled, recorded). */
  readonly stop: Effect.Effect<void>
  /** Stops it without writing anything more (another runner resumes it). */
  readonly handOff: Effect.Effect<void>
  /** How many of its tools run now (a hand-off waits for none: a tool stopped after it acted would act again). */
  readonly toolsRunning: () => number
}

/** Nobody at a terminal: the coordinator follows the `detached` policy (`wait` when none is set). */
const headless = PromptBackend.of({
  interactive: false,
  // A cluster's runs are meant to be watched (the page, the API): with no policy set, questions wait.
  detachedDefault: "wait",
  permission: () => Effect.fail(new PromptFailed({ reason: "no terminal on a cluster runner" })),
  question: () => Effect.fail(new PromptFailed({ reason: "no terminal on a cluster runner" })),
  review: () => Effect.fail(new PromptFailed({ reason: "no terminal on a cluster runner" })),
  resumeChoice: () => Effect.fail(new PromptFailed({ reason: "no terminal on a cluster runner" })),
  edit: () => Effect.fail(new PromptFailed({ reason: "no terminal on a cluster runner" }))
})

/**
 * A turn frozen (handed off, or left to the runner that runs it) once `after` is the number of the
 * last event it published before: what it publishes after is its interrupt's. Not frozen: infinite.
 */
interface Frozen {
  after: number
}

const isFrozen = (state: Frozen): boolean => state.after !== Number.POSITIVE_INFINITY

/** Freezes `state` now: its writes fail from here on, and its events after the latest are the interrupt's. */
const freeze = (state: Frozen, events: RunEvents["Service"]): Effect.Effect<void> =>
  Effect.map(events.latest, (latest) => {
    state.after = Math.min(state.after, latest)
  })

/**
 * Whether `e` is what a turn's hand-off made it say, not what happened to it: published after
 * it was frozen, its interrupt closing its open questions as cancelled and stopping the run, none
 * of which is recorded; the turn goes on elsewhere. Notifications do not tell them (the next owner
 * tells its own), so a hand-off is not a `run_ended` (docs/questions-and-approvals.md#notifications).
 * Told by number, not by whether it is frozen when the notifier reads it: a `Stopped` published just
 * before a hand-off is the turn's real end.
 */
const handedOff = (state: Frozen, e: RunEvent.Sequenced): boolean =>
  e.seq > state.after &&
  (e.event._tag === "Stopped" || (e.event._tag === "QuestionClosed" && e.event.outcome._tag === "Cancelled"))

/** A session whose writes fail once `frozen()` says so: a handed-off turn writes nothing more. */
const freezable = (s: ConversationSession, frozen: () => boolean): ConversationSession => {
  const gone = () => new StoreIoError({ path: s.id, reason: "the turn was handed to another runner" })
  const guard = <A, E>(write: () => Effect.Effect<A, E>): Effect.Effect<A, E | StoreIoError> =>
    Effect.suspend((): Effect.Effect<A, E | StoreIoError> => (frozen() ? Effect.fail(gone()) : write()))
  return {
    get id() {
      return s.id
    },
    get archived() {
      return s.archived
    },
    get baseConfig() {
      return s.baseConfig
    },
    get snapshot() {
      return s.snapshot
    },
    get metadata() {
      return s.metadata
    },
    get conversation() {
      return s.conversation
    },
    get incompleteTurn() {
      return s.incompleteTurn
    },
    append: (entries) => guard(() => s.append(entries)),
    resumeIncompleteTurn: guard(() => s.resumeIncompleteTurn),
    discardIncompleteTurn: guard(() => s.discardIncompleteTurn),
    replacePendingQuery: (content) => guard(() => s.replacePendingQuery(content)),
    removeCompactions: (which) => guard(() => s.removeCompactions(which)),
    updateMetadata: (f) => Effect.suspend(() => (frozen() ? Effect.void : s.updateMetadata(f)))
  }
}

/** Whether a turn's cause is that another process holds its conversation (a runner handing it off, say), or may. */
const lockedOut = (cause: Cause.Cause<unknown>): boolean => {
  const error = Cause.squash(cause)
  // The store could not be reached (a connection refused under load): whether another process holds the
  // conversation is not known, so its row is left as if it did (the next sweep tries again).
  return Predicate.isTagged(error, "ConversationLocked") || Predicate.isTagged(error, "StoreIoError")
}

/**
 * The store as one turn sees it: its sessions freeze with the turn, and
 * `opened` runs once an open of a conversation returned anything but
 * "locked" (its lock was free: whoever ran its turn before has let go).
 */
const freezableStore = (
  store: ConversationStore["Service"],
  frozen: () => boolean,
  opened: (id: ConversationId.ConversationId) => Effect.Effect<void>
): ConversationStore["Service"] => ({
  ...store,
  list: store.list,
  load: store.load,
  check: store.check,
  remove: store.remove,
  create: (init) => Effect.map(store.create(init), (s) => freezable(s, frozen)),
  open: (id) =>
    store.open(id).pipe(
      Effect.onExit((exit) => (Exit.isFailure(exit) && lockedOut(exit.cause) ? Effect.void : opened(id))),
      Effect.map((s) => freezable(s, frozen))
    )
})

/** What a failed turn's cause says, on one line: its error's message (errors carry data and say themselves). */
const failureLine = (cause: Cause.Cause<unknown>): string => LastError.messageOf(Cause.squash(cause))

/** The inquiry backend of one turn, on the model it chose. */
const inquiryOf = (
  services: Services,
  provider: Provider["Service"],
  config: ConfigData.Config,
  chosen: Deferred.Deferred<string>
) =>
  Effect.gen(function* () {
    const inquiry = config.conversation?.inquiry?.assistant
    const get = yield* Effect.cached(
      Effect.flatMap(Deferred.await(chosen), (model) =>
        LlmInquiryBackend.make({
          model,
          ...(inquiry !== undefined ? { inquiry } : {}),
          ...(config.assistant?.system_prompt !== undefined ? { systemPrompt: config.assistant.system_prompt } : {}),
          tools: services.executor.definitions,
          contextWindow: (m) => ContextWindow.windowOf(m, config)
        }).pipe(Effect.provideService(Provider, provider))
      )
    )
    return InquiryBackend.of({ inquire: (request) => Effect.flatMap(get, (b) => b.inquire(request)) })
  })

/** The first event that says the turn got going (the conversation is open and its model chosen), or its end. */
const firstSign = (events: RunEvents["Service"]) =>
  Stream.runHead(
    Stream.filter(events.events, (e: RunEvent.RunEvent) => e._tag === "ModelChosen" || e._tag === "Stopped")
  )

/** The runner's turns. */
export const make = (options: {
  readonly runner: string
  /** Where other runners reach this one's HTTP API (`host:port`), and the `Host` it expects: for its turns' live events. */
  readonly http: { readonly address: string; readonly host: string }
  readonly services: Services
  readonly sql: SqlClient
}) =>
  Effect.gen(function* () {
    const { services, sql, runner, http } = options
    const turns = new Map<string, Turn>()
    // The starts under way, each with how it went once it is known.
    const starting = new Map<string, Deferred.Deferred<Started>>()
    // The conversations a message was queued for while their turn ran on another runner, since when: that turn
    // may have read its queue for the last time already, so the sweep starts a run here once it is gone.
    const queuedElsewhere = new Map<ConversationId.ConversationId, number>()
    // The turns' own scope, a child of the caller's made now: each turn's fiber is forked into it, and a
    // fork adds its interrupt as the scope's newest finalizer. In the caller's scope those ran before the
    // runner's hand-off (added once, after this), so SIGTERM interrupted every turn started since without
    // freezing it: its row released, its stop told as `run_ended`, nobody resuming it. This scope closes
    // after the hand-off.
    const scope = yield* Scope.fork(yield* Effect.scope)

    /**
     * The row of a turn taken here: `over` another runner's only once the
     * conversation's lock was free. Taken over before, a start that then
     * found the lock held (the other runner still runs the turn, about to
     * hand it off) left the row naming this runner while the turn ran there;
     * when the shard came back to that runner it kept running the turn and
     * nobody resumed the row: killed, this runner left it unmoved for good.
     */
    const claim = (id: string, over: boolean) =>
      (over
        ? sql`INSERT INTO parley_cluster_turns (conversation_id, runner, pid, since, http, http_host)
        VALUES (${id}, ${runner}, ${process.pid}, now(), ${http.address}, ${http.host})
        ON CONFLICT (conversation_id) DO UPDATE SET runner = EXCLUDED.runner, pid = EXCLUDED.pid, since = now(),
          http = EXCLUDED.http, http_host = EXCLUDED.http_host`
        : sql`INSERT INTO parley_cluster_turns (conversation_id, runner, pid, since, http, http_host)
        VALUES (${id}, ${runner}, ${process.pid}, now(), ${http.address}, ${http.host})
        ON CONFLICT (conversation_id) DO NOTHING RETURNING conversation_id`
      ).pipe(
        Effect.orDie,
        // Whether the row is this start's own (made now): another's was there already.
        Effect.map((rows) => rows.length > 0)
      )
    /**
     * The sweep's resume, as the conversation opens: the row is this runner's
     * now, if it is still there; else the turn ended or was stopped where it
     * ran, and this one leaves it (frozen: nothing written, no row to remove).
     */
    const takeOver = (id: string, turn: Frozen, events: RunEvents["Service"]) =>
      sql`UPDATE parley_cluster_turns SET runner = ${runner}, pid = ${process.pid}, since = now(), http = ${http.address},
        http_host = ${http.host} WHERE conversation_id = ${id} RETURNING conversation_id`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) =>
          rows.length > 0 ? Effect.void : Effect.andThen(freeze(turn, events), Effect.interrupt)
        )
      )
    const release = (id: string) =>
      sql`DELETE FROM parley_cluster_turns WHERE conversation_id = ${id} AND runner = ${runner}`.pipe(Effect.ignore)

    /** Runs one turn to its end; the row of `parley_cluster_turns` goes when it ends (not when it is handed off). */
    const body = (
      id: ConversationId.ConversationId,
      request: Request,
      turn: Frozen,
      pending: PendingAnswers["Service"],
      events: RunEvents["Service"]
    ) =>
      Effect.scoped(
        Effect.gen(function* () {
          const chosen = yield* Deferred.make<string>()
          const config = services.config.data
          const provider = services.providerOfTurn !== undefined ? yield* services.providerOfTurn : services.provider
          const inquiry = yield* inquiryOf(services, provider, config, chosen)
          const context = Layer.mergeAll(
            Layer.succeed(
              ConversationStore,
              freezableStore(
                services.store,
                () => isFrozen(turn),
                (opened) =>
                  opened !== id ? Effect.void : request.takeOver === true ? takeOver(id, turn, events) : claim(id, true)
              )
            ),
            Layer.succeed(Config, services.config),
            Layer.succeed(Executor, services.executor),
            Layer.succeed(Provider, provider),
            Layer.succeed(InquiryBackend, inquiry),
            Layer.succeed(PendingAnswers, pending),
            Layer.succeed(RunEvents, events),
            Layer.succeed(PromptBackend, headless)
          )
          return yield* Query.query({
            message: request.message,
            target: Query.Target.Id({ id }),
            ...(request.continueTurn === true ? { continueTurn: true } : {}),
            ...(request.discardTurn === true ? { discardTurn: true } : {}),
            model: (remembered) =>
              Effect.tap(services.chooseModel(request.model, remembered), (m) => Deferred.succeed(chosen, m)),
            ...(config.assistant?.system_prompt !== undefined ? { systemPrompt: config.assistant.system_prompt } : {}),
            root: services.root,
            interactive: false
          }).pipe(Effect.provide(context))
        })
      )

    /**
     * Starts a turn of `id` here (none may run here already) and waits until
     * it got going, or ended at once (nothing to resume, a busy
     * conversation, a model that cannot be called).
     */
    const start = (id: ConversationId.ConversationId, request: Request): Effect.Effect<Started> =>
      Effect.gen(function* () {
        // Taken at once, before anything waits: two deliveries of one message here cannot both start a turn.
        if (turns.has(id) || starting.has(id)) return { _tag: "Failed", error: { _tag: "RunningHere" } } as const
        const outcome = Deferred.makeUnsafe<Started>()
        starting.set(id, outcome)
        return yield* launchPatiently(id, request).pipe(
          Effect.tap((started) => Deferred.succeed(outcome, started)),
          Effect.ensuring(
            Effect.sync(() => {
              starting.delete(id)
              // Interrupted: whoever waits on it is told it did not start.
              Deferred.doneUnsafe(outcome, Exit.succeed({ _tag: "Failed", error: { _tag: "Interrupted" } }))
            })
          )
        )
      })

    /**
     * {@link launch}, tried again for a second when the conversation's lock is
     * taken: another runner creating a conversation tries fresh ids under
     * their lock, and may hold an existing one's for a moment.
     */
    const launchPatiently = (id: ConversationId.ConversationId, request: Request): Effect.Effect<Started> =>
      Effect.gen(function* () {
        for (let i = 0; ; i++) {
          const started = yield* launch(id, request)
          const locked =
            started._tag === "Failed" &&
            (started.error as { _tag?: unknown } | undefined)?._tag === "ConversationLocked"
          if (!locked || i >= 5) return started
          yield* Effect.sleep("200 millis")
        }
      })

    /**
     * {@link launchIn} in a scope of the turn's own, closed when the turn ends:
     * its event hub (in the runner's scope, every turn's hub and the events it
     * kept stayed until the runner stopped) and the notifications that follow
     * it. Until the turn's fiber has taken the scope over, it is closed here
     * whatever ends the launch (a row that could not be written, an interrupt).
     */
    const launch = (id: ConversationId.ConversationId, request: Request): Effect.Effect<Started> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(Scope.fork(scope), (toldIn) => {
          const owner = { taken: false }
          return restore(launchIn(id, request, toldIn, owner)).pipe(
            Effect.onExit(() => (owner.taken ? Effect.void : Scope.close(toldIn, Exit.void)))
          )
        })
      )

    const launchIn = (
      id: ConversationId.ConversationId,
      request: Request,
      toldIn: Scope.Closeable,
      owner: { taken: boolean }
    ): Effect.Effect<Started> =>
      Effect.gen(function* () {
        const pending = yield* PendingAnswersLive.make
        const events = yield* RunEventsLive.make.pipe(Scope.provide(toldIn))
        const state: Frozen = { after: Number.POSITIVE_INFINITY }
        if (services.notifier !== undefined) {
          const told = Stream.map(
            Stream.filter(events.sequenced, (e) => !handedOff(state, e)),
            (e) => e.event
          )
          yield* services.notifier.attach(told).pipe(Scope.provide(toldIn))
        }
        const ended = yield* Deferred.make<Exit.Exit<Query.QueryResult, unknown>>()
        // A row at once (a turn whose start finds the lock held is tried again by the sweep), but not another runner's yet.
        // The sweep's take-over has its row already, and must not make one for a turn that ended meanwhile.
        const made = request.takeOver !== true && (yield* claim(id, false))
        // The calls whose tool process runs now: from its start or an answer to its question, until it asks or finishes.
        const active = new Set<string>()
        const tools = {
          get running() {
            return active.size
          }
        }
        yield* Stream.runForEach(events.events, (e) =>
          Effect.andThen(
            Effect.sync(() => {
              if (e._tag === "ToolStarted" || e._tag === "QuestionClosed") active.add(e.call.id)
              else if (e._tag === "QuestionOpened" || e._tag === "ToolFinished") active.delete(e.call.id)
            }),
            Trace.line(`event.${e._tag}`, id)
          )
        ).pipe(Effect.forkIn(scope))
        // The turn as others see it (stop, hand off), listed once its fiber runs. The fiber starts at once: one
        // forked to start later and interrupted before it did (a hand-off right after the listing) never ran its
        // onExit, so the turn stayed listed, its scope open, and its start waited for an end that never came.
        // Started at once, it may end before it is listed: then it is not listed.
        let over = false
        const listed = (fiber: Fiber.Fiber<Query.QueryResult, unknown>): Turn => ({
          toolsRunning: () => tools.running,
          id,
          pending,
          events,
          ended,
          // The row goes first, while the turn still holds the conversation: a take-over that opens it once the
          // stop lets go finds no row and leaves the turn (stopped is not resumed).
          stop: Effect.andThen(release(id), Fiber.interrupt(fiber)),
          handOff: Effect.suspend(() => {
            if (process.env["PARLEY_CLUSTER_DEBUG"] !== undefined)
              process.stderr.write(`parley[${process.pid}]: hand off ${id}\n`)
            return Effect.andThen(freeze(state, events), Effect.asVoid(Fiber.interrupt(fiber)))
          })
        })
        const ending = (exit: Exit.Exit<Query.QueryResult, unknown>) =>
          Effect.gen(function* () {
            over = true
            // This launch's turn only (its `ended` is its own): another start's listing is not this one's to drop.
            if (turns.get(id)?.ended === ended) turns.delete(id)
            // A handed-off turn keeps its row: the next owner resumes it. So does one that found the
            // conversation held by another process (a runner handing it off): the next sweep tries again.
            const locked = Exit.isFailure(exit) && lockedOut(exit.cause)
            // A turn that fails is said in the runner's log, not only to whoever waits for it (nobody may). A new
            // turn refused because one is incomplete never ran: its starter says so, or resumes it (a message
            // delivered again after its shard moved), so the log does not call that a failed turn. Nor does it
            // remove a row it did not make: the incomplete turn's (one handed off, which its new owner's sweep
            // resumes). One it made goes: an incomplete turn nobody ran in the cluster waits to be asked for.
            const refused = Exit.isFailure(exit) && Cause.squash(exit.cause) instanceof Query.IncompleteTurnPending
            if (!isFrozen(state) && !locked && (!refused || made)) yield* release(id)
            if (!isFrozen(state) && !locked && !refused && Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause))
              yield* Console.error(
                `parley serve --cluster: ${ConversationId.display(id)}: the turn failed: ${failureLine(exit.cause)}`
              )
            yield* Scope.close(toldIn, Exit.void)
            yield* Deferred.succeed(ended, exit)
          })
        // Taken over, forked and listed in one step: an interrupt between them (Effect may yield between any two
        // steps) would leave the scope to nobody, or a turn running unlisted, out of reach of stop and hand-off.
        const running = yield* Effect.uninterruptible(
          Effect.suspend(() => {
            owner.taken = true
            return body(id, request, state, pending, events).pipe(
              Effect.onExit(ending),
              Effect.forkIn(scope, { startImmediately: true }),
              Effect.tap((fiber) =>
                Effect.sync(() => {
                  if (!over) turns.set(id, listed(fiber))
                })
              )
            )
          })
        )
        // The fiber's end, not `ended`: a fiber forked into a scope already closed (the runner stopping) never
        // runs, nor its onExit, and `ended` is never completed.
        const sign = yield* Effect.raceFirst(firstSign(events), Effect.as(Fiber.await(running), Option.none()))
        if (Option.isSome(sign) && sign.value._tag === "ModelChosen") return { _tag: "Running" } as const
        const exit = yield* Fiber.await(running)
        return Exit.isSuccess(exit)
          ? ({ _tag: "Ended", outcome: exit.value.outcome } as const)
          : ({ _tag: "Failed", error: Cause.squash(exit.cause) } as const)
      })

    return {
      /** This runner's address, as `parley_cluster_turns` names it. */
      runner,
      start,
      get: (id: string): Turn | undefined => turns.get(id),
      /** How the start of `id` under way here goes, once it is known (undefined: none is under way). */
      starting: (id: string): Effect.Effect<Started> | undefined => {
        const outcome = starting.get(id)
        return outcome === undefined ? undefined : Deferred.await(outcome)
      },
      running: (): ReadonlyArray<Turn> => [...turns.values()],
      /** A message was queued for `id` while its turn ran on another runner: delivered here once that turn is gone. */
      watchQueue: (id: ConversationId.ConversationId): void => void queuedElsewhere.set(id, Date.now()),
      /** The conversations `watchQueue` named, with when; the sweep forgets each it has dealt with. */
      queueWatched: (): ReadonlyMap<ConversationId.ConversationId, number> => queuedElsewhere,
      unwatchQueue: (id: ConversationId.ConversationId): void => void queuedElsewhere.delete(id),
      /** How many messages wait in `id`'s queue, not yet delivered. */
      queued: (id: ConversationId.ConversationId): Effect.Effect<number, StoreError> =>
        Queued.pendingCount(id).pipe(Effect.provideService(ConversationStore, services.store)),
      /** Offers an answer to the open question of the turn of `id` running here. */
      offer: (turn: Turn, inquiryId: string, answer: Schema.Json) =>
        turn.pending.offer(inquiryId, answer, "other", CLUSTER)
    }
  })

/** The runner's turns' type. */
export type Turns = Effect.Success<ReturnType<typeof make>>
