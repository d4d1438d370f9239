/**
 * One tool question, from its recorded request to its recorded response
 * (RFD 082 "Recording lifecycle"; RFD 028). An open inquiry is a resource:
 * recording its `inquiry_request` acquires it, routing uses it, and an
 * interrupt while it is open (Ctrl-C, a parent's timeout) releases it by
 * recording `Cancelled{user}` — so every request gets exactly one response.
 *
 * Who answers is decided by the domain (`Route.decideRoute`); each route has
 * its step here: `Remembered`/`Static` → answered (redacted for a secret),
 * `Denied` → cancelled with the reason and a tool error, `Person` → the
 * person, from any answerer (`Person.ts`: the terminal prompt races every
 * other answerer; the first valid answer wins), `Backend` → the model's
 * structured side call on the conversation as it stands; with nobody to
 * ask, `Wait` keeps the question open for any answerer and `Defer` leaves
 * it open on disk (docs/decisions.md#detached-policy).
 *
 * Every question is published as it opens (`QuestionOpened`: who may answer
 * it) and as it closes (`QuestionClosed`: who answered — `you`, `assistant`,
 * `config`, `remembered`, `other`, or `parley` for a refusal or an
 * interrupt — and what, a secret only as `Redacted`).
 *
 * @example
 * ```ts
 * import * as Inquiry from "parley/programs/coordinator/Inquiry"
 * import type { InquiryId, InquirySource, Question, ToolCallRequest } from "parley"
 * declare const env: Inquiry.Env, call: ToolCallRequest, question: Question, id: InquiryId.InquiryId, source: InquirySource
 * const routed = Inquiry.ask(env, call, question, Inquiry.Opening.Record({ id, source })) // Effect<Routed, RecordError>
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Exit from "effect/Exit"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import type { StreamEntry } from "../../domain/event/ConversationEvent.ts"
import type { EventMetadata } from "../../domain/event/EventMetadata.ts"
import * as Events from "../../domain/event/Events.ts"
import type { InquiryId } from "../../domain/event/InquiryId.ts"
import type { InquiryQuestion } from "../../domain/event/InquiryQuestion.ts"
import type { JsonObject } from "effect/Schema"
import type { InquirySource } from "../../domain/event/InquirySource.ts"
import * as Timestamp from "../../domain/event/Timestamp.ts"
import type { ToolCallRequest } from "../../domain/event/ToolCallRequest.ts"
import * as RunEvent from "../../domain/run/RunEvent.ts"
import * as TurnState from "../../domain/stream/TurnState.ts"
import * as ConfigData from "../../domain/tool/Config.ts"
import type { Question } from "../../domain/tool/Question.ts"
import { type DenialReason, decideRoute, type Route } from "../../domain/tool/Route.ts"
import type { Snapshot } from "../../services/ConversationSession.ts"
import { appendThen, snapshotInStep } from "../../services/SessionInStep.ts"
import { type InquiryBackendRequest, type InquiryError, InquiryOtherError } from "../../services/InquiryBackend.ts"
import { describeDefect, type Env, record, type RecordError, Routed, Texts, traced } from "./Env.ts"
import { OpenInquiry } from "./Open.ts"
import * as Person from "./Person.ts"

export {
  atPrompt,
  describeDefect,
  type Env,
  positionOf,
  record,
  type RecordError,
  recordThen,
  Routed,
  Texts,
  traced
} from "./Env.ts"

/** How an inquiry opens: record its request now, or it was recorded by an earlier run (resume). */
export type Opening = Data.TaggedEnum<{
  /**
   * `metadata`: recorded with the request (the executor's state,
   * `EventMetadata.executorState`); `staticRejected`: the tool asks again
   * right after its configured answer (why, in its words).
   */
  Record: {
    readonly id: InquiryId
    readonly source: InquirySource
    readonly metadata?: EventMetadata
    readonly staticRejected?: string
    /** A person's approval to run the call (docs/decisions.md#person-only-questions): only a person answers it, see `Approval.ts`. */
    readonly approval?: boolean
    /** An approval the running tool asks (an MCP server's page or form): what it approves, shown as its arguments. */
    readonly approves?: JsonObject
    /** The call as run events show it, when the caller made it already: one object for all the call's events. */
    readonly shown?: RunEvent.ToolCall
  }
  Recorded: {
    readonly id: InquiryId
    readonly source: InquirySource
    readonly approval?: boolean
    readonly approves?: JsonObject
  }
}>
const OpeningEnum = Data.taggedEnum<Opening>()
/** Constructors of {@link Opening}: `Record({ id, source })` or `Recorded({ id, source })` (built as literals, as `Routed`'s). */
export const Opening: Data.TaggedEnum.Constructor<Opening> = {
  Record: ({ approval, approves, id, metadata, shown, source, staticRejected }) => ({
    _tag: "Record",
    id,
    source,
    ...(metadata !== undefined ? { metadata } : {}),
    ...(staticRejected !== undefined ? { staticRejected } : {}),
    ...(approval === true ? { approval } : {}),
    ...(approves !== undefined ? { approves } : {}),
    ...(shown !== undefined ? { shown } : {})
  }),
  Recorded: ({ approval, approves, id, source }) => ({
    _tag: "Recorded",
    id,
    source,
    ...(approval === true ? { approval } : {}),
    ...(approves !== undefined ? { approves } : {})
  }),
  $is: OpeningEnum.$is,
  $match: OpeningEnum.$match
}

/**
 * The backend's request. `entries` copies the snapshot only when the backend
 * reads it, through a getter on the prototype (an object literal with its
 * own getter costs far more to make, and every question makes one).
 */
class BackendRequest implements InquiryBackendRequest {
  readonly inquiryId: InquiryId
  readonly toolCallId: string
  readonly toolName: string
  readonly question: InquiryQuestion
  readonly assistant?: ConfigData.InquiryAssistant

  constructor(
    private readonly snapshot: Snapshot,
    open: OpenInquiry
  ) {
    this.inquiryId = open.id
    this.toolCallId = open.call.id
    this.toolName = open.call.name
    this.question = open.inquiryQuestion
    // RFD 034: the question's own target table, if it has one.
    const assistant = ConfigData.questionAssistant(open.env.config, open.call.name, open.question.id)
    if (assistant !== undefined) this.assistant = assistant
  }

  get entries(): ReadonlyArray<StreamEntry> {
    return this.snapshot.entries
  }
}

/**
 * Why a side call failed, from its cause: a crash counts as any other
 * failure (`InquiryOtherError`) and wins over a typed error; an interrupt
 * alone is no answer (the cause without its failures, to pass on).
 */
const backendFailure = (cause: Cause.Cause<InquiryError>): Result.Result<InquiryError, Cause.Cause<never>> => {
  const defect = Cause.findDefect(cause)
  return Result.isSuccess(defect)
    ? Result.succeed(new InquiryOtherError({ detail: describeDefect(defect.success) }))
    : Cause.findError(cause)
}

/** The model's structured side call, on the conversation as it stands right now. */
const fromBackend = (open: OpenInquiry) => {
  // The snapshot read where the session can, as this is called: in the step that routes the question (`route`,
  // `attended`), which runs what this returns right after (a step fewer per question than an effect reading it).
  const ask = (snapshot: Snapshot) =>
    Effect.matchCauseEffect(open.env.backend.inquire(new BackendRequest(snapshot, open)), {
      onSuccess: (answer) => open.answered("assistant", answer),
      onFailure: (cause) => {
        const failure = backendFailure(cause)
        if (Result.isFailure(failure)) return Effect.failCause(failure.failure)
        const error = failure.success
        return open.cancelled("assistant", error._tag === "InquiryCancelledError" ? "user" : "backend_error", {
          content: Texts.inquiryFailed(open.call.name, open.question.text, error.message),
          is_error: true
        })
      }
    })
  const snapshot = snapshotInStep(open.env.session)
  return snapshot === undefined ? Effect.flatMap(open.env.session.snapshot, ask) : ask(snapshot)
}

/** Who may answer, as published when the question opens. */
const audienceOf = (route: Route): RunEvent.Audience => {
  switch (route._tag) {
    case "Remembered":
      return "remembered"
    case "Static":
      return "config"
    case "Denied":
    case "InvalidStatic":
      return "parley"
    case "Backend":
      return "assistant"
    case "Defer":
      return "nobody"
    default:
      return "person"
  }
}

/** What {@link decide} reads besides the open question: whether a person can be asked now (default: a terminal or anyone attached). */
interface Decide {
  readonly open: OpenInquiry
  readonly reachable?: boolean
}

/** The route of an open question, decided by the domain from the turn's state as it is now. */
const decide = ({ open, reachable }: Decide): Route => {
  const { call, env, question } = open
  const canReach = reachable ?? (env.prompts.interactive || env.answers.present())
  const detached = ConfigData.detachedPolicy(env.config, env.prompts.detachedDefault)
  // An approval is a person's: never a config answer, never the assistant (`assistant` reads as `deny`);
  // the tool's Y/N (`always`/`never`) remembered this turn answers it — not one asked each time (an MCP page or form).
  if (open.approval) {
    return decideRoute({
      question,
      target: "user",
      reachable: canReach,
      detached: detached === "assistant" ? "deny" : detached,
      remembered: open.policy.rememberable
        ? Option.map(TurnState.rememberedPermission(Ref.getUnsafe(env.state), call.name), (d) => d === "y")
        : Option.none(),
      staticAnswer: undefined
    })
  }
  return decideRoute({
    // A question the model asks types its own answer: its static answer gets no form-field leniency.
    strictStatic: open.source.source === "assistant",
    ...(open.staticRejected !== undefined ? { staticRejected: open.staticRejected } : {}),
    question,
    target: ConfigData.questionTarget(env.config, call.name, question.id),
    reachable: canReach,
    detached,
    remembered: TurnState.rememberedAnswer(Ref.getUnsafe(env.state), call.name, question.id),
    staticAnswer: ConfigData.staticAnswer(env.config, call.name, question.id)
  })
}

/** The tool error of a refused question (JP's texts for a secret, RFD 083's for an exclusive one, parley's for an approval). */
const deniedText = (open: OpenInquiry, reason: DenialReason): string => {
  const { call, question } = open
  if (open.approval) {
    const detached = ConfigData.detachedPolicy(open.env.config, open.env.prompts.detachedDefault)
    return open.approves === undefined
      ? Texts.approvalNobody(call.name, detached)
      : Texts.askedApprovalNobody(call.name, question.text, detached)
  }
  if (reason === "assistant_routing_denied")
    return open.policy.redact
      ? Texts.secretToAssistant(call.name, question.text)
      : Texts.exclusiveToAssistant(call.name)
  if (open.policy.redact) return Texts.secretNoTty(call.name, question.text)
  return open.policy.personOnly ? Texts.exclusiveNoPerson(call.name) : Texts.nobodyToAsk(call.name, question.text)
}

/** Hands an open question to whoever `decided` says answers it. */
const dispatch = (open: OpenInquiry, decided: Route): Effect.Effect<Routed, RecordError> => {
  switch (decided._tag) {
    case "Remembered":
      return open.answered("remembered", decided.answer)
    case "Static":
      return Effect.map(open.answered("config", decided.answer), (routed) =>
        routed._tag === "Answer" ? Routed.Answer({ answer: routed.answer, fromConfig: true }) : routed
      )
    case "InvalidStatic":
      return open.cancelled("parley", "invalid_static_answer", {
        content: Texts.invalidStaticAnswer(open.call.name, open.question.id, decided.problem),
        is_error: true
      })
    case "Denied":
      return open.cancelled("parley", decided.reason, { content: deniedText(open, decided.reason), is_error: true })
    case "Person":
      // Registered with every answerer for as long as a person may still answer it.
      return Effect.scoped(open.env.prompts.interactive ? Person.ask(open) : attended(open))
    case "Backend":
      return fromBackend(open)
    case "Defer":
      return Effect.succeed(Routed.Deferred({ inquiryId: open.id }))
    case "Wait":
      return Effect.scoped(Person.wait(open))
  }
}

/**
 * Someone attached answers; when everyone attached left first, the question
 * follows the `detached` policy, as if nobody had been there when it opened
 * (`wait` keeps it open for any answerer; the others take it first, unless
 * an answer came in meanwhile). It stays registered throughout.
 */
const attended = (open: OpenInquiry) =>
  Effect.flatMap(Person.attend(open), (attended) => {
    if (attended._tag !== "Deserted") return Effect.succeed(attended)
    const decided = decide({ open, reachable: false })
    if (decided._tag === "Wait") return Person.wait(open)
    return Effect.flatMap(open.registered(), (waiting) =>
      Effect.flatMap(waiting.claim("parley"), (mine) =>
        mine
          ? dispatch(open, decided)
          : Effect.flatMap(waiting.answer, (offered) => open.accept(offered, offered.remember === true))
      )
    )
  })

/**
 * Routes a question to whoever answers it, and records the outcome. Called
 * as the question opens: the route is decided from the turn's state as it
 * is then.
 */
const route = (open: OpenInquiry) => {
  const decided = decide({ open })
  const label = Person.promptLabel(open.env, open.call.name, open.question.id)
  open.env.events.publishUnsafe(
    RunEvent.make.QuestionOpened({
      inquiry_id: open.id,
      kind: open.kind,
      call: open.shown,
      question: open.question,
      source: open.source,
      audience: audienceOf(decided),
      since: open.since,
      ...(label !== undefined ? { label } : {})
    })
  )
  return dispatch(open, decided)
}

/**
 * An interrupt while the question is open closes it as `Cancelled{user}`
 * (the turn stays resumable); otherwise there is nothing to do (`undefined`,
 * so the exit costs no extra step).
 */
const cancelIfOpen = (open: OpenInquiry, exit: Exit.Exit<unknown, unknown>) =>
  Exit.hasInterrupts(exit) && !open.done
    ? record(open.env, (at) => Events.cancelled(at, open.id, "user")).pipe(
        Effect.andThen(open.env.events.publish(open.closedEvent("parley", { _tag: "Cancelled", reason: "user" }))),
        Effect.ignore
      )
    : undefined

/**
 * Asks `question` for `call`: opens the inquiry (records its request, unless
 * an earlier run did), routes it, and closes it with the outcome — or with
 * `Cancelled{user}` when interrupted while open. A deferred question is left
 * open: its request stays on disk without a response.
 */
export const ask = (
  env: Env,
  call: ToolCallRequest,
  question: Question,
  opening: Opening
): Effect.Effect<Routed, RecordError> =>
  // Each inquiry is a span of its own, under its tool call's, so a consumer's tracer sees who asked (docs/library.md#programs).
  traced(env, askUntraced(env, call, question, opening), "ToolCoordinator.inquiry", () => ({
    "parley.conversation_id": env.session.id,
    "parley.inquiry_id": opening.id,
    "parley.tool_call_id": call.id,
    "parley.tool": call.name,
    "parley.question_id": question.id
  }))

const askUntraced = (
  env: Env,
  call: ToolCallRequest,
  question: Question,
  opening: Opening
): Effect.Effect<Routed, RecordError> =>
  // acquireUseRelease spelled out: the request is recorded uninterruptibly,
  // the routing is interruptible, and the exit handler may skip its step.
  // The mask's function runs as the step does, so it reads the clock: the
  // question is open since its request's time.
  Effect.uninterruptibleMask((restore) => {
    const open = new OpenInquiry(env, call, question, opening, Timestamp.fromClock(env.clock))
    const routed = () => Effect.onExitPrimitive(restore(route(open)), (exit) => cancelIfOpen(open, exit), true)
    if (opening._tag === "Recorded") return routed()
    const request = Events.inquiryRequest(open.since, open.id, opening.source, open.inquiryQuestion, opening.metadata)
    // Appended in this step (it is uninterruptible): an append that ended as it started routes here.
    return appendThen(env.session, [request], routed)
  })
