/**
 * `parley query` as a program over services: pick the conversation and open
 * it for the whole run (the session holds its lock and, on close, folds what
 * is on disk back into JP's format — also when interrupted), deal with an
 * incomplete turn (RFD 023: resume, discard, or ask), and run the turn.
 *
 * @example
 * ```ts
 * import { Query } from "parley"
 * const result = Query.query({ message: "hi", target: Query.Target.MostRecent(), model: "scripted", root: process.cwd(), interactive: false })
 * ```
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Timestamp from "../domain/event/Timestamp.ts"
import type { ToolCallRequest } from "../domain/event/ToolCallRequest.ts"
import * as Conversation from "../domain/storage/Conversation.ts"
import * as ConversationId from "../domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../domain/storage/ConversationMetadata.ts"
import * as IncompleteTurn from "../domain/stream/IncompleteTurn.ts"
import type { ConversationSession } from "../services/ConversationSession.ts"
import { ConversationStore } from "../services/ConversationStore.ts"
import { runTurn, TurnStartMode } from "./TurnLoop.ts"

/** Which conversation a query goes to. */
export type Target = Data.TaggedEnum<{
  Id: { readonly id: ConversationId.ConversationId }
  New: {}
  MostRecent: {}
}>
export const Target = Data.taggedEnum<Target>()

/** What to do with an incomplete turn when no flag said (the TTY prompt's keys). */
export type ResumeChoice = "resume" | "discard" | "quit" | "edit"

export interface IncompleteInfo {
  readonly conversationId: ConversationId.ConversationId
  readonly summary: IncompleteTurn.IncompleteSummary
  readonly analysis: IncompleteTurn.TurnAnalysis
}

export interface QueryOptions {
  readonly message: string | undefined
  readonly target: Target
  readonly model: string
  readonly systemPrompt?: string
  /** Where tools run (the storage directory's parent). */
  readonly root: string
  readonly continueTurn?: boolean
  readonly discardTurn?: boolean
  /** Both stdin and stdout are TTYs. */
  readonly interactive: boolean
  /** The inline incomplete-turn prompt (TTY only). */
  readonly askResume?: (info: IncompleteInfo) => Effect.Effect<ResumeChoice>
  /** Opens the pending query in `$EDITOR`; returns the edited text. */
  readonly editMessage?: (text: string) => Effect.Effect<string>
  readonly onText?: (text: string) => Effect.Effect<void>
  readonly onToolCalls?: (calls: ReadonlyArray<ToolCallRequest>) => Effect.Effect<void>
  readonly onWaiting?: (waiting: boolean) => Effect.Effect<void>
  readonly onWarning?: (text: string) => Effect.Effect<void>
  /** Called once the conversation is known (so an interrupt hint can name it). */
  readonly onConversation?: (id: ConversationId.ConversationId) => Effect.Effect<void>
}

/** How a query run ended. */
export type QueryOutcome = Data.TaggedEnum<{
  Completed: {}
  Resumed: {}
  Discarded: {}
  Quit: {}
  NothingToResume: {}
  NothingToDiscard: {}
}>
export const QueryOutcome = Data.taggedEnum<QueryOutcome>()

export interface QueryResult {
  readonly conversationId: ConversationId.ConversationId
  readonly outcome: QueryOutcome
}

/** The conversation has an incomplete turn and nobody said what to do with it. */
export class IncompleteTurnPending extends Schema.TaggedError<IncompleteTurnPending>()("IncompleteTurnPending", {
  id: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return [
      `Conversation ${ConversationId.display(this.id as ConversationId.ConversationId)} has an incomplete turn (${this.detail}).`,
      `    parley query --continue-turn --id ${this.id}    Resume the incomplete turn.`,
      `    parley query --discard-turn --id ${this.id}     Discard the incomplete turn and start fresh.`
    ].join("\n")
  }
}

/** There is nothing to send. */
export class NoMessage extends Schema.TaggedError<NoMessage>()("NoMessage", { hint: Schema.String }) {
  override get message() {
    return this.hint
  }
}

/** A one-line description of an incomplete turn, with the pending question when there is one. */
export const describeIncomplete = (summary: IncompleteTurn.IncompleteSummary, analysis: IncompleteTurn.TurnAnalysis): string => {
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

const noMessage = () => new NoMessage({ hint: "Nothing to send: give a message, e.g. parley query \"Hello\"." })

/** Opens the target conversation for the run (a new one is created with an id no other process can take). */
const openTarget = (options: QueryOptions, now: Timestamp.Timestamp) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore
    let target = options.target
    if (target._tag === "MostRecent") {
      const newest = (yield* store.list()).conversations[0]
      target = newest === undefined ? Target.New() : Target.Id({ id: newest.id })
    }
    if (target._tag === "Id") return yield* store.open(target.id)
    if (blank(options.message)) return yield* noMessage()
    const title = Conversation.titleFrom(options.message)
    return yield* store.create({ metadata: ConversationMetadata.make({ ...(title !== undefined ? { title } : {}), last_activated_at: now }) })
  })

/** What to do with the incomplete turn, if there is one (RFD 023). */
type Plan = Data.TaggedEnum<{
  Fresh: {}
  Resume: { readonly analysis: IncompleteTurn.TurnAnalysis }
  Done: { readonly outcome: QueryOutcome }
}>
const Plan = Data.taggedEnum<Plan>()

const planIncomplete = (session: ConversationSession, options: QueryOptions) =>
  Effect.gen(function*() {
    const incomplete = yield* session.incompleteTurn
    if (incomplete === null) {
      // RFD 023: both flags are no-ops without an incomplete turn.
      if ((options.continueTurn === true || options.discardTurn === true) && blank(options.message)) {
        return Plan.Done({ outcome: options.continueTurn === true ? QueryOutcome.NothingToResume() : QueryOutcome.NothingToDiscard() })
      }
      return Plan.Fresh()
    }
    const analysis = IncompleteTurn.analyze(incomplete)
    const summary = IncompleteTurn.summaryOf(incomplete) ?? { state: "pending-llm-response" as const }
    let choice: ResumeChoice
    if (options.discardTurn === true) choice = "discard"
    else if (options.continueTurn === true) choice = "resume"
    else if (options.interactive && options.askResume !== undefined) choice = yield* options.askResume({ conversationId: session.id, summary, analysis })
    else return yield* new IncompleteTurnPending({ id: session.id, detail: describeIncomplete(summary, analysis) })
    if (choice === "quit") return Plan.Done({ outcome: QueryOutcome.Quit() })
    if (choice === "discard") {
      yield* session.discardIncompleteTurn
      return blank(options.message) ? Plan.Done({ outcome: QueryOutcome.Discarded() }) : Plan.Fresh()
    }
    const prepared = (yield* session.resumeIncompleteTurn) ?? analysis
    if (choice === "edit" && options.editMessage !== undefined) {
      const pending = (yield* session.snapshot).entries.findLast((e) => e.type === "chat_request")
      if (pending !== undefined) yield* session.replacePendingQuery(yield* options.editMessage(pending.content))
    }
    return Plan.Resume({ analysis: prepared })
  })

/** Runs `parley query`: the conversation, its incomplete turn, and the new turn. */
export const query = (options: QueryOptions) =>
  Effect.scoped(Effect.gen(function*() {
    const now = yield* Timestamp.current
    const session = yield* openTarget(options, now)
    const done = (outcome: QueryOutcome): QueryResult => ({ conversationId: session.id, outcome })
    if (options.onConversation !== undefined) yield* options.onConversation(session.id)
    const plan = yield* planIncomplete(session, options)
    if (plan._tag === "Done") return done(plan.outcome)
    // From here on the conversation changes: record the activity (written when the session closes).
    yield* session.updateMetadata((m) => {
      const title = m.title ?? (options.message !== undefined ? Conversation.titleFrom(options.message) : undefined)
      return new ConversationMetadata.ConversationMetadata({ ...m, ...(title !== undefined ? { title } : {}), last_activated_at: now })
    })
    const common = {
      session,
      model: options.model,
      root: options.root,
      ...(options.systemPrompt !== undefined ? { systemPrompt: options.systemPrompt } : {}),
      ...(options.onText !== undefined ? { onText: options.onText } : {}),
      ...(options.onToolCalls !== undefined ? { onToolCalls: options.onToolCalls } : {}),
      ...(options.onWaiting !== undefined ? { onWaiting: options.onWaiting } : {}),
      ...(options.onWarning !== undefined ? { onWarning: options.onWarning } : {})
    }
    if (plan._tag === "Resume") {
      yield* runTurn({ ...common, start: TurnStartMode.Resume({ analysis: plan.analysis }) })
      // RFD 023: --continue-turn resumes without a new message.
      if (blank(options.message)) return done(QueryOutcome.Resumed())
    }
    if (blank(options.message)) return yield* noMessage()
    yield* runTurn({ ...common, start: TurnStartMode.NewTurn({ message: options.message }) })
    return done(plan._tag === "Resume" ? QueryOutcome.Resumed() : QueryOutcome.Completed())
  }))
