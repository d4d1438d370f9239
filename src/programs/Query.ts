/**
 * `parley query` as a program over services: pick the conversation and open
 * it for the whole run (the session holds its lock and, on close, folds what
 * is on disk back into JP's format — also when interrupted), deal with an
 * incomplete turn (RFD 023: resume, discard, or ask), and run the turn.
 *
 * What the run shows goes to `RunEvents` (docs/decisions.md#one-run-event-stream): the conversation once
 * known, the model once chosen, everything the turn does, and a last
 * `Stopped` that says how the run ended and how it left the turn. The menu
 * for an incomplete turn and the editor are the `PromptBackend`'s.
 *
 * @example
 * ```ts
 * import { Query } from "parley"
 * const result = Query.query({ message: "hi", target: Query.Target.MostRecent(), model: "scripted", root: process.cwd(), interactive: false })
 * ```
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as Timestamp from "../domain/event/Timestamp.ts"
import * as Conversation from "../domain/storage/Conversation.ts"
import * as ConversationId from "../domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../domain/storage/ConversationMetadata.ts"
import * as LastError from "../domain/run/LastError.ts"
import * as RunEvent from "../domain/run/RunEvent.ts"
import * as Compact from "../domain/stream/Compact.ts"
import * as IncompleteTurn from "../domain/stream/IncompleteTurn.ts"
import type { StreamEntry } from "../domain/event/ConversationEvent.ts"
import * as ConfigData from "../domain/tool/Config.ts"
import type { DetachedPolicy } from "../domain/tool/Config.ts"
import { Config } from "../services/Config.ts"
import type { ConversationSession } from "../services/ConversationSession.ts"
import { ConversationStore } from "../services/ConversationStore.ts"
import { type IncompleteInfo, PromptBackend, type ResumeChoice } from "../services/PromptBackend.ts"
import { RunEvents } from "../services/RunEvents.ts"
import { compact as compactConversation } from "./CompactConversation.ts"
import * as Queued from "./Queued.ts"
import { runTurn, TurnStartMode } from "./TurnLoop.ts"

export type { IncompleteInfo, ResumeChoice } from "../services/PromptBackend.ts"

/** Which conversation a query goes to. */
export type Target = Data.TaggedEnum<{
  Id: { readonly id: ConversationId.ConversationId }
  New: {}
  MostRecent: {}
}>
/**
 * Which conversation `query` writes to: `Id({ id })`, `New()`, or `MostRecent()` (or a new one when there is none).
 *
 * @example
 * ```ts
 * import { ConversationId, Query } from "parley"
 * const target = Query.Target.Id({ id: ConversationId.parse("17738399468")! })
 * ```
 */
export const Target = Data.taggedEnum<Target>()

/**
 * Chooses the run's model once the conversation is known, from the model it
 * remembers (`undefined` for a new conversation, or one that names none);
 * fails when no model can be called (the CLI: `--model`, then the remembered
 * model, then `assistant.model`, each checked for its key).
 */
export type ModelChooser<E> = (remembered: string | undefined) => Effect.Effect<string, E>

/** What `query` needs: the target conversation, the message, the model and what to do with an incomplete turn. */
export interface QueryOptions<E = never> {
  readonly message: string | undefined
  readonly target: Target
  /**
   * The model: a fixed one, or a {@link ModelChooser}. It is chosen only when
   * a model will be called, and before a new conversation is created.
   */
  readonly model: string | ModelChooser<E>
  readonly systemPrompt?: string
  /** Where tools run (the storage directory's parent). */
  readonly root: string
  readonly continueTurn?: boolean
  readonly discardTurn?: boolean
  /** A person can be asked (the incomplete-turn menu, through the `PromptBackend`). */
  readonly interactive: boolean
  /**
   * `--compact[=SPEC]` (RFD 064): compact the conversation before the turn,
   * with the configured rules (bare) and/or inline ones; a summary rule
   * without a model is written by the run's model.
   */
  readonly compact?: Compact.CompactFlag
}

/** How a query run ended. */
export type QueryOutcome = Data.TaggedEnum<{
  Completed: {}
  Resumed: {}
  Discarded: {}
  Quit: {}
  NothingToResume: {}
  NothingToDiscard: {}
  /** The editor gave nothing to send: the pending query was kept as it was, and nothing ran. */
  EditAbandoned: {}
  /**
   * Nobody could answer these questions: they are recorded unanswered and the
   * turn waits for input (exit 3). `unsent`: the new message given with
   * `--continue-turn`, not sent because the resumed turn is still waiting.
   */
  Deferred: { readonly questions: ReadonlyArray<string>; readonly unsent: string | undefined }
}>
/** How a `query` ended (see the variants). */
export const QueryOutcome = Data.taggedEnum<QueryOutcome>()

/** The conversation `query` wrote to and how the query ended. */
export interface QueryResult {
  readonly conversationId: ConversationId.ConversationId
  readonly outcome: QueryOutcome
  /** The model the run called (none when nothing was sent). */
  readonly model: string | undefined
}

/** The conversation has an incomplete turn and nobody said what to do with it. */
export class IncompleteTurnPending extends Schema.TaggedError<IncompleteTurnPending>()("IncompleteTurnPending", {
  id: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    // The commands that resume or discard it are the edge's to render (they repeat its flags).
    return `Conversation ${ConversationId.display(this.id as ConversationId.ConversationId)} has an incomplete turn (${this.detail}): resume it or discard it.`
  }
}

/** There is nothing to send. */
export class NoMessage extends Schema.TaggedError<NoMessage>()("NoMessage", {}) {
  override get message() {
    // The example command is the edge's to render.
    return "Nothing to send: give a message (an argument, or on stdin)."
  }
}

/** A one-line description of an incomplete turn, with the pending question when there is one. */
export const describeIncomplete = (
  summary: IncompleteTurn.IncompleteSummary,
  analysis: IncompleteTurn.TurnAnalysis
): string => {
  const q = analysis.pendingInquiry
  switch (summary.state) {
    case "waiting-for-input":
      return `waiting for input: ${summary.tool ?? "a tool"}${q !== null ? ` — "${q.question.text.split("\n")[0]}"` : ""}`
    case "pending-tool-execution":
      return `pending tool execution: ${analysis.pendingToolCalls.map((c) => c.name).join(", ")}`
    case "pending-follow-up":
      return "tool results not yet sent to the assistant"
    case "pending-llm-response":
      return "waiting for the assistant's reply"
  }
}

const blank = (message: string | undefined): message is undefined => message === undefined || message.trim() === ""

const noMessage = () => new NoMessage()

/** The run's model, chosen at most once, when first needed. */
interface ModelCell<E> {
  readonly get: (remembered: string | undefined) => Effect.Effect<string, E>
  readonly chosen: () => string | undefined
}

const modelCell = <E>(model: string | ModelChooser<E>, events: RunEvents["Service"]): ModelCell<E> => {
  let chosen: string | undefined
  return {
    get: (remembered) =>
      chosen !== undefined
        ? Effect.succeed(chosen)
        : Effect.flatMap(typeof model === "string" ? Effect.succeed(model) : model(remembered), (m) => {
            chosen = m
            return Effect.as(events.publish(RunEvent.make.ModelChosen({ model: m })), m)
          }),
    chosen: () => chosen
  }
}

/**
 * Opens the target conversation for the run. A new one is created with an id
 * no other process can take, its model chosen first (a missing key stops the
 * run before anything is written) and remembered in its base config.
 */
const openTarget = <E>(options: QueryOptions<E>, model: ModelCell<E>, now: Timestamp.Timestamp) =>
  Effect.gen(function* () {
    const store = yield* ConversationStore
    let target = options.target
    if (target._tag === "MostRecent") {
      const newest = (yield* store.list()).conversations[0]
      target = newest === undefined ? Target.New() : Target.Id({ id: newest.id })
    }
    if (target._tag === "Id") return { session: yield* store.open(target.id), created: false }
    if (blank(options.message)) return yield* noMessage()
    const chosen = yield* model.get(undefined)
    const title = Conversation.titleFrom(options.message)
    const session = yield* store.create({
      metadata: ConversationMetadata.make({ ...(title !== undefined ? { title } : {}), last_activated_at: now }),
      baseConfig: Conversation.baseConfigFor(chosen)
    })
    return { session, created: true }
  })

/** What to do with the incomplete turn, if there is one (RFD 023). */
type Plan = Data.TaggedEnum<{
  Fresh: {}
  Resume: { readonly analysis: IncompleteTurn.TurnAnalysis }
  Done: { readonly outcome: QueryOutcome }
}>
const Plan = Data.taggedEnum<Plan>()

/**
 * What to do with the incomplete turn: the flag's choice, else the person's.
 * The model is checked before anything that will call it (before the menu,
 * too: resuming is its likely answer).
 */
const decide = <E, E2, R>(
  options: QueryOptions<E>,
  needModel: Effect.Effect<string, E>,
  ask: Effect.Effect<ResumeChoice, E2, R>
) =>
  Effect.gen(function* () {
    if (options.discardTurn === true) {
      if (!blank(options.message)) yield* needModel
      return "discard" as const
    }
    yield* needModel
    return options.continueTurn === true ? ("resume" as const) : yield* ask
  })

/** The person's choice at the incomplete-turn menu (a cancelled menu quits). */
const askMenu = (info: IncompleteInfo) =>
  Effect.flatMap(PromptBackend, (prompts) =>
    prompts.resumeChoice(info).pipe(Effect.catchTag("PromptCancelled", () => Effect.succeed<ResumeChoice>("quit")))
  )

/** The pending query as the person edited it (`undefined`: abandoned, nothing is sent). */
const editPending = (text: string) =>
  Effect.flatMap(PromptBackend, (prompts) =>
    prompts.edit(text).pipe(Effect.catchTag("PromptCancelled", () => Effect.succeed(undefined)))
  )

const planIncomplete = <E>(
  session: ConversationSession,
  options: QueryOptions<E>,
  needModel: Effect.Effect<string, E>
) =>
  Effect.gen(function* () {
    const incomplete = yield* session.incompleteTurn
    if (incomplete === null) {
      // RFD 023: both flags are no-ops without an incomplete turn.
      if ((options.continueTurn === true || options.discardTurn === true) && blank(options.message)) {
        return Plan.Done({
          outcome: options.continueTurn === true ? QueryOutcome.NothingToResume() : QueryOutcome.NothingToDiscard()
        })
      }
      if (blank(options.message)) return yield* noMessage()
      return Plan.Fresh()
    }
    const analysis = IncompleteTurn.analyze(incomplete)
    const summary = IncompleteTurn.summaryOf(incomplete) ?? { state: "pending-llm-response" as const }
    const flagged = options.continueTurn === true || options.discardTurn === true
    if (!flagged && !options.interactive) {
      return yield* new IncompleteTurnPending({ id: session.id, detail: describeIncomplete(summary, analysis) })
    }
    const choice = yield* decide(options, needModel, askMenu({ conversationId: session.id, summary, analysis }))
    if (choice === "quit") return Plan.Done({ outcome: QueryOutcome.Quit() })
    if (choice === "discard") {
      yield* session.discardIncompleteTurn
      return blank(options.message) ? Plan.Done({ outcome: QueryOutcome.Discarded() }) : Plan.Fresh()
    }
    if (choice === "edit") {
      // Edit first: an abandoned edit leaves the turn exactly as it was.
      const pending = (yield* session.snapshot).entries.findLast((e) => e.type === "chat_request")
      if (pending !== undefined) {
        const edited = yield* editPending(pending.content)
        if (edited === undefined) return Plan.Done({ outcome: QueryOutcome.EditAbandoned() })
        const prepared = (yield* session.resumeIncompleteTurn) ?? analysis
        yield* session.replacePendingQuery(edited)
        return Plan.Resume({ analysis: prepared })
      }
    }
    // A message sent with `--when now` stopped this turn: it goes on without the calls the stop cut short.
    yield* Queued.closeForNow(session, analysis)
    return Plan.Resume({ analysis: (yield* session.resumeIncompleteTurn) ?? analysis })
  })

/** The turn options every run of `runTurn` shares. */
const turnOptions = <E>(
  session: ConversationSession,
  options: QueryOptions<E>,
  model: string,
  store: ConversationStore["Service"]
) => ({
  session,
  model,
  root: options.root,
  between: Effect.provideService(Queued.between(session), ConversationStore, store),
  ...(options.systemPrompt !== undefined ? { systemPrompt: options.systemPrompt } : {})
})

/**
 * The messages sent while the turn ran, each its own turn in id order
 * (`programs/Queued.ts`); the outcome of the last one that ran, or `outcome`.
 */
const deliverQueued = <E>(
  session: ConversationSession,
  options: QueryOptions<E>,
  model: string,
  outcome: QueryOutcome
) =>
  Effect.gen(function* () {
    const store = yield* ConversationStore
    let last = outcome
    yield* Queued.drain(session, (message, metadata) =>
      Effect.map(
        runTurn({
          ...turnOptions(session, options, model, store),
          start: TurnStartMode.NewTurn({ message, metadata })
        }),
        (ran) => {
          last = ran.deferred.length > 0 ? QueryOutcome.Deferred({ questions: ran.deferred, unsent: undefined }) : last
          return ran.deferred.length > 0
        }
      )
    )
    return last
  })

/** Runs the planned turns; the conversation remembers the model they run on (a `config_delta` when it changed). */
const runPlan = <E>(
  session: ConversationSession,
  options: QueryOptions<E>,
  plan: Exclude<Plan, { _tag: "Done" }>,
  model: string,
  remembered: string | undefined,
  now: Timestamp.Timestamp
) =>
  Effect.gen(function* () {
    // From here on the conversation changes: record the activity (written when the session closes).
    yield* session.updateMetadata((m) => {
      const title = m.title ?? (options.message !== undefined ? Conversation.titleFrom(options.message) : undefined)
      return new ConversationMetadata.ConversationMetadata({
        ...m,
        ...(title !== undefined ? { title } : {}),
        last_activated_at: now
      })
    })
    if (model !== remembered) yield* session.append([Conversation.modelDelta(yield* Timestamp.current, model)])
    const common = turnOptions(session, options, model, yield* ConversationStore)
    if (plan._tag === "Resume") {
      const resumed = yield* runTurn({ ...common, start: TurnStartMode.Resume({ analysis: plan.analysis }) })
      // Still waiting for input: the new message is not sent into an unfinished turn (the edge says so).
      if (resumed.deferred.length > 0) {
        return QueryOutcome.Deferred({
          questions: resumed.deferred,
          unsent: blank(options.message) ? undefined : options.message
        })
      }
      // RFD 023: --continue-turn resumes without a new message.
      if (blank(options.message)) return QueryOutcome.Resumed()
    }
    if (blank(options.message)) return yield* noMessage()
    const ran = yield* runTurn({ ...common, start: TurnStartMode.NewTurn({ message: options.message }) })
    if (ran.deferred.length > 0) return QueryOutcome.Deferred({ questions: ran.deferred, unsent: undefined })
    return plan._tag === "Resume" ? QueryOutcome.Resumed() : QueryOutcome.Completed()
  })

/** The `query --format json` name of an outcome. */
export const endingOf = (outcome: QueryOutcome): RunEvent.Ending =>
  outcome._tag.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase() as RunEvent.Ending

/** Publishes how the run ended and how it left the turn, however it ended: always the run's last event. */
const reportStop =
  (session: ConversationSession, events: RunEvents["Service"]) =>
  <A extends QueryResult, E, R>(self: Effect.Effect<A, E, R>) =>
    self.pipe(
      Effect.onExit((exit) =>
        Effect.flatMap(session.incompleteTurn, (incomplete) =>
          events.publish(
            RunEvent.make.Stopped({
              ending: Exit.isSuccess(exit)
                ? endingOf(exit.value.outcome)
                : Exit.hasInterrupts(exit)
                  ? "interrupted"
                  : "failed",
              incomplete:
                incomplete === null ? null : (IncompleteTurn.summaryOf(incomplete) ?? { state: "pending-llm-response" })
            })
          )
        )
      )
    )

/**
 * Keeps the error a run ended in with its conversation (`last_error` of its
 * row, docs/cli.md#a-run-that-failed), written when the session closes: a run
 * nobody watches says it where a person looks. An interruption (a stop, a
 * hand-off, Ctrl-C) is not a failure.
 */
const recordFailure =
  (session: ConversationSession) =>
  <A, E, R>(self: Effect.Effect<A, E, R>) =>
    self.pipe(
      Effect.onExit((exit) =>
        Exit.isFailure(exit) && LastError.isFailure(exit.cause)
          ? Effect.flatMap(Clock.currentTimeMillis, (ms) =>
              session.updateMetadata((m) =>
                ConversationMetadata.withLastError(m, LastError.fromCause(exit.cause, new Date(ms).toISOString()))
              )
            )
          : Effect.void
      )
    )

/**
 * The `detached` policy the turn follows whatever its prompter says: config's
 * (or `--detached-policy`), else the policy the run that left the
 * incomplete turn recorded (docs/questions-and-approvals.md#when-nobody-is-there-the-detached-policy),
 * when this run may resume that turn (not `--discard-turn`).
 */
const fixedPolicy = <E>(session: ConversationSession, options: QueryOptions<E>) =>
  Effect.gen(function* () {
    const configured = ConfigData.configuredDetachedPolicy((yield* Config).data)
    if (configured !== undefined) return { policy: configured, recorded: false }
    if (options.discardTurn === true || (yield* session.incompleteTurn) === null) return undefined
    const recorded = ConversationMetadata.recordedPolicy(yield* session.metadata)
    return recorded !== undefined && recorded.turn === turnOf((yield* session.snapshot).entries)
      ? { policy: recorded.policy, recorded: true }
      : undefined
  })

/** Which turn the stream's last turn is: its `turn_start`'s timestamp (empty when it has none). */
const turnOf = (entries: ReadonlyArray<StreamEntry>): string => {
  const start = entries[IncompleteTurn.lastTurnStart(entries)]
  return start?.type === "turn_start" ? start.timestamp : ""
}

/**
 * Records the policy the run used (the fixed one, else its prompter's
 * default once nobody was at the terminal), or none when it fell back to
 * `assistant`: a later watched resume then waits. Written when the session
 * closes, as the run's other metadata.
 */
const recordPolicy = (session: ConversationSession, fixed: DetachedPolicy | undefined) =>
  Effect.gen(function* () {
    const used = fixed ?? (yield* PromptBackend).detachedDefault
    const turn = turnOf((yield* session.snapshot).entries)
    yield* session.updateMetadata((m) =>
      ConversationMetadata.withRecordedPolicy(m, used === undefined ? undefined : { policy: used, turn })
    )
  })

/** JP's pre-query compaction: the flag's rules (with or instead of config's), appended silently before the turn. */
const compactFirst = (session: ConversationSession, flag: Compact.CompactFlag, model: string) =>
  Effect.gen(function* () {
    const { data: config } = yield* Config
    const configured = Compact.configRules(config.conversation?.compaction?.rules)
    const rules = Compact.combineRules(configured, flag.useConfigRules, flag.specs).map((rule) =>
      rule.summary === undefined || rule.summary.model !== undefined
        ? rule
        : { ...rule, summary: { ...rule.summary, model } }
    )
    yield* compactConversation({ session, rules, dryRun: false })
  })

/** `self` with `policy` as the config's `detached` policy. */
const withPolicy = <A, E, R>(self: Effect.Effect<A, E, R>, policy: DetachedPolicy) =>
  Effect.flatMap(Config, (config) =>
    Effect.provideService(
      self,
      Config,
      Config.of({ file: config.file, data: ConfigData.withDetachedPolicy(config.data, policy) })
    )
  )

/** Runs `parley query`: the conversation, its incomplete turn, and the new turn. */
export const query = <E = never>(options: QueryOptions<E>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const events = yield* RunEvents
      const now = yield* Timestamp.current
      const model = modelCell(options.model, events)
      const { session, created } = yield* openTarget(options, model, now)
      const fixed = yield* fixedPolicy(session, options)
      // The last run's error is kept until this run: this run says its own (or none).
      yield* session.updateMetadata((m) => ConversationMetadata.withLastError(m, null))
      // The title this run leaves (an untitled conversation takes its message's, as `runPlan` records).
      const title =
        (yield* session.metadata).title ??
        (options.message !== undefined ? Conversation.titleFrom(options.message) : undefined)
      yield* events.publish(
        RunEvent.make.ConversationKnown({
          conversation_id: session.id,
          created,
          ...(fixed !== undefined ? { detached_policy: fixed.policy } : {}),
          ...(title !== undefined ? { title } : {})
        })
      )
      const remembered = Conversation.rememberedModel(session.baseConfig, (yield* session.snapshot).entries)
      const done = (outcome: QueryOutcome): QueryResult => ({
        conversationId: session.id,
        outcome,
        model: model.chosen()
      })
      return yield* Effect.gen(function* () {
        const plan = yield* planIncomplete(session, options, model.get(remembered))
        if (plan._tag === "Done") {
          // `--continue-turn` with nothing to resume still delivers the messages sent meanwhile (`conversation send`).
          if (plan.outcome._tag !== "NothingToResume" || (yield* Queued.pendingFor(session)).length === 0)
            return done(plan.outcome)
          return done(yield* deliverQueued(session, options, yield* model.get(remembered), QueryOutcome.Completed()))
        }
        const chosen = yield* model.get(remembered)
        if (options.compact !== undefined) yield* compactFirst(session, options.compact, chosen)
        const ran = runPlan(session, options, plan, chosen, remembered, now).pipe(
          Effect.flatMap((outcome) =>
            outcome._tag === "Deferred" ? Effect.succeed(outcome) : deliverQueued(session, options, chosen, outcome)
          ),
          Effect.onExit(() => recordPolicy(session, fixed?.policy))
        )
        // A recorded policy is the turn's for this run: the coordinator reads it as config.
        return done(yield* fixed?.recorded === true ? withPolicy(ran, fixed.policy) : ran)
      }).pipe(recordFailure(session), reportStop(session, events))
    })
  )
