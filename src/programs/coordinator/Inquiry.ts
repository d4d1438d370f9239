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
 * it open on disk (issue 21 §3).
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
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Ref from "effect/Ref"
import type { CancellationReason } from "../../domain/event/CancellationReason.ts"
import type { StreamEntry } from "../../domain/event/ConversationEvent.ts"
import type { EventMetadata } from "../../domain/event/EventMetadata.ts"
import * as Events from "../../domain/event/Events.ts"
import type { InquiryId } from "../../domain/event/InquiryId.ts"
import type { InquirySource } from "../../domain/event/InquirySource.ts"
import * as Timestamp from "../../domain/event/Timestamp.ts"
import type { ToolCallRequest } from "../../domain/event/ToolCallRequest.ts"
import * as RunEvent from "../../domain/run/RunEvent.ts"
import * as TurnState from "../../domain/stream/TurnState.ts"
import * as ConfigData from "../../domain/tool/Config.ts"
import { type Question, toInquiryQuestion } from "../../domain/tool/Question.ts"
import { decideRoute, Route } from "../../domain/tool/Route.ts"
import { InquiryOtherError } from "../../services/InquiryBackend.ts"
import { type Asked, type Closer, describeDefect, type Env, record, Routed, Texts } from "./Env.ts"
import * as Person from "./Person.ts"

export { type Asked, type Closer, describeDefect, type Env, positionOf, record, type RecordError, Routed, Texts } from "./Env.ts"

/** How an inquiry opens: record its request now, or it was recorded by an earlier run (resume). */
export type Opening = Data.TaggedEnum<{
  /** `metadata`: recorded with the request (the executor's state, `EventMetadata.executorState`). */
  Record: { readonly id: InquiryId; readonly source: InquirySource; readonly metadata?: EventMetadata }
  Recorded: { readonly id: InquiryId; readonly source: InquirySource }
}>
/** Constructors of {@link Opening}: `Record({ id, source })` or `Recorded({ id, source })`. */
export const Opening = Data.taggedEnum<Opening>()

/** Whether an open inquiry has its response yet (owned by the one fiber that asks it). */
interface Closed {
  done: boolean
}

/** Announces how a question closed. */
const announce = (env: Env, asked: Asked, by: RunEvent.Answerer, outcome: RunEvent.QuestionOutcome) =>
  env.events.publish(RunEvent.make.QuestionClosed({
    inquiry_id: asked.id,
    call: RunEvent.toolCall(asked.call),
    question: asked.question,
    by,
    outcome
  }))

/** The open inquiry's closing: record the response, mark it closed and announce it, atomically. */
const closer = (env: Env, asked: Asked, closed: Closed): Closer => {
  const secret = asked.question.answer_type.type === "secret"
  const { id } = asked
  const close = (event: (at: Timestamp.Timestamp) => StreamEntry, by: RunEvent.Answerer, outcome: RunEvent.QuestionOutcome) =>
    Effect.uninterruptible(
      record(env, event).pipe(
        Effect.tap(() => Effect.sync(() => void (closed.done = true))),
        Effect.tap(() => announce(env, asked, by, outcome))
      )
    )
  return {
    answered: (by, answer) =>
      close(
        (at) => (secret ? Events.redacted(at, id) : Events.answered(at, id, answer)),
        by,
        secret ? { _tag: "Redacted" } : { _tag: "Answered", answer }
      ).pipe(Effect.as(Routed.Answer({ answer }))),
    cancelled: (by: RunEvent.Answerer, reason: CancellationReason, response) =>
      close((at) => Events.cancelled(at, id, reason), by, { _tag: "Cancelled", reason }).pipe(Effect.as(Routed.End({ response })))
  }
}

/** The model's structured side call, on the conversation as it stands right now. */
const fromBackend = (env: Env, call: ToolCallRequest, question: Question, id: InquiryId, close: Closer) =>
  Effect.gen(function*() {
    const snapshot = yield* env.session.snapshot
    const result = yield* env.backend.inquire({
      get entries() {
        return snapshot.entries
      },
      inquiryId: id,
      toolCallId: call.id,
      toolName: call.name,
      question: toInquiryQuestion(question)
    }).pipe(Effect.catchDefect((d) => Effect.fail(new InquiryOtherError({ detail: describeDefect(d) }))), Effect.result)
    if (result._tag === "Success") return yield* close.answered("assistant", result.success)
    const response = { content: Texts.inquiryFailed(call.name, question.text, result.failure.message), is_error: true }
    return yield* close.cancelled("assistant", result.failure._tag === "InquiryCancelledError" ? "user" : "backend_error", response)
  })

/** Who may answer, as published when the question opens. */
const audienceOf = (route: Route): RunEvent.Audience => {
  switch (route._tag) {
    case "Remembered":
      return "remembered"
    case "Static":
      return "config"
    case "Denied":
      return "parley"
    case "Backend":
      return "assistant"
    case "Defer":
      return "nobody"
    default:
      return "person"
  }
}

/** The route of an open question, decided by the domain from what is known now. */
const decide = (env: Env, call: ToolCallRequest, question: Question) =>
  Effect.map(Ref.get(env.state), (state) =>
    decideRoute({
      question,
      target: ConfigData.questionTarget(env.config, call.name, question.id),
      reachable: env.prompts.interactive,
      detached: ConfigData.detachedPolicy(env.config),
      remembered: TurnState.rememberedAnswer(state, call.name, question.id),
      staticAnswer: ConfigData.staticAnswer(env.config, call.name, question.id)
    }))

/** Routes an open question to whoever answers it and records the outcome. */
const route = (env: Env, asked: Asked, source: InquirySource, close: Closer) =>
  Effect.gen(function*() {
    const { call, question, id } = asked
    const decided = yield* decide(env, call, question)
    const since = yield* Timestamp.current
    yield* env.events.publish(RunEvent.make.QuestionOpened({
      inquiry_id: id,
      call: RunEvent.toolCall(call),
      question,
      source,
      audience: audienceOf(decided),
      since
    }))
    return yield* Route.$match(decided, {
      Remembered: ({ answer }) => close.answered("remembered", answer),
      Static: ({ answer }) => close.answered("config", answer),
      Denied: ({ reason }) =>
        close.cancelled("parley", reason, {
          content: reason === "assistant_routing_denied"
            ? Texts.secretToAssistant(call.name, question.text)
            : question.answer_type.type === "secret"
            ? Texts.secretNoTty(call.name, question.text)
            : Texts.nobodyToAsk(call.name, question.text),
          is_error: true
        }),
      Person: () => Person.ask(env, asked, close, since),
      Backend: () => fromBackend(env, call, question, id, close),
      Defer: () => Effect.succeed(Routed.Deferred({ inquiryId: id })),
      Wait: () => Person.wait(env, asked, close, since)
    })
  })

/**
 * Asks `question` for `call`: opens the inquiry (records its request, unless
 * an earlier run did), routes it, and closes it with the outcome — or with
 * `Cancelled{user}` when interrupted while open. A deferred question is left
 * open: its request stays on disk without a response.
 */
export const ask = (env: Env, call: ToolCallRequest, question: Question, opening: Opening) =>
  Effect.suspend(() => {
    const closed: Closed = { done: false }
    const id = opening.id
    const asked: Asked = { call, question, id }
    return Effect.acquireUseRelease(
      Opening.$match(opening, {
        Record: ({ metadata, source }) => record(env, (at) => Events.inquiryRequest(at, id, source, toInquiryQuestion(question), metadata)),
        Recorded: () => Effect.void
      }),
      () => route(env, asked, opening.source, closer(env, asked, closed)),
      (_, exit) =>
        Exit.hasInterrupts(exit) && !closed.done
          ? record(env, (at) => Events.cancelled(at, id, "user")).pipe(
            Effect.andThen(announce(env, asked, "parley", { _tag: "Cancelled", reason: "user" })),
            Effect.ignore
          )
          : Effect.void
    )
  })
