/**
 * One tool question, from its recorded request to its recorded response
 * (RFD 082 "Recording lifecycle"; RFD 028). An open inquiry is a resource:
 * recording its `inquiry_request` acquires it, routing uses it, and an
 * interrupt while it is open (Ctrl-C, a parent's timeout) releases it by
 * recording `Cancelled{user}` — so every request gets exactly one response.
 *
 * Who answers is decided by the domain (`Route.decideRoute`); each route has
 * its step here: `Remembered`/`Static` → answered (redacted for a secret),
 * `Denied` → cancelled with the reason and a tool error, `Prompt` → the
 * person (one prompt on screen at a time), `Backend` → the model's
 * structured side call on the conversation as it stands.
 *
 * Every closing is announced (issue 14): a `QuestionClosed` notice says who
 * answered (`you`, `assistant`, `config`, `remembered`, or `parley` for a
 * refusal or an interrupt) and what — a secret only as `Redacted`.
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
import type * as Schema from "effect/Schema"
import type * as Semaphore from "effect/Semaphore"
import type { StreamEntry } from "../../domain/event/ConversationEvent.ts"
import type { CancellationReason } from "../../domain/event/CancellationReason.ts"
import * as Events from "../../domain/event/Events.ts"
import type { InquiryId } from "../../domain/event/InquiryId.ts"
import type { InquirySource } from "../../domain/event/InquirySource.ts"
import * as Timestamp from "../../domain/event/Timestamp.ts"
import type { ToolCallRequest } from "../../domain/event/ToolCallRequest.ts"
import * as TurnState from "../../domain/stream/TurnState.ts"
import * as ConfigData from "../../domain/tool/Config.ts"
import { type Question, toInquiryQuestion } from "../../domain/tool/Question.ts"
import { decideRoute, Route } from "../../domain/tool/Route.ts"
import type { ConversationSession } from "../../services/ConversationSession.ts"
import type { AppendRejected, StoreIoError } from "../../services/ConversationStore.ts"
import type { Executor, ToolResponse } from "../../services/Executor.ts"
import { type InquiryBackend, InquiryOtherError } from "../../services/InquiryBackend.ts"
import { type PromptBackend, PromptFailed, type CallPosition } from "../../services/PromptBackend.ts"
import { type Answerer, Notice, type OnNotice, QuestionOutcome } from "../Notice.ts"

// JP's wording for tool responses (jp-reference §5.2–§5.4, §5.9).
/** JP's wording of the tool responses the coordinator records (skipped, cancelled, failed inquiries). */
export const Texts = {
  skippedByUser: "Tool skipped by user.",
  skippedRemembered: "Tool skipped by user (remembered).",
  skippedByConfig: "Tool skipped by configuration.",
  inputCancelled: "Tool input cancelled by user.",
  promptFailed: "Tool input prompt failed.",
  permissionFailed: (e: string) => `Permission prompt failed: ${e}`,
  inquiryFailed: (tool: string, question: string, error: string) =>
    `The tool '${tool}' asked a follow-up question ("${question}") that was routed to a secondary assistant for resolution, but the secondary assistant failed to provide a valid answer. Error: ${error}. You may retry the tool call or end the turn.`,
  secretNoTty: (tool: string, question: string) =>
    `The tool '${tool}' asked for a secret value ("${question}"), but secret values can only be typed by a person at an interactive terminal and none is available. Run the query in a terminal to answer it.`,
  tooManyAttempts: (tool: string, id: string, question: string, max: number) =>
    `The tool '${tool}' asked "${question.split("\n")[0]}" (question '${id}') more than ${max} times in one call, so the call was stopped: the answers it got did not satisfy it. Raise max_attempts under [conversation.tools.${tool}.questions.${id}] to allow more.`,
  secretToAssistant: (tool: string, question: string) =>
    `The tool '${tool}' asked for a secret value ("${question}"), which is never routed to an assistant (its question target is "assistant"). Set the question's target to "user" to answer it at the prompt.`
} as const

/** What the steps of a turn's tool run share. */
export interface Env {
  readonly session: ConversationSession
  readonly executor: Executor["Service"]
  readonly prompts: PromptBackend["Service"]
  readonly backend: InquiryBackend["Service"]
  readonly config: ConfigData.Config
  readonly state: Ref.Ref<TurnState.TurnState>
  /** One prompt on screen at a time; waiters are served in order. */
  readonly promptLock: Semaphore.Semaphore
  readonly root: string
  /** The calls run together (to say which one a prompt belongs to). */
  readonly calls: ReadonlyArray<ToolCallRequest>
  /** Where notices go (a no-op when nobody watches). */
  readonly notify: OnNotice
}

/** Which of the calls run together `call` is (1-based), for the prompt. */
export const positionOf = (env: Env, call: ToolCallRequest): CallPosition => ({
  callId: call.id,
  index: env.calls.indexOf(call) + 1,
  total: env.calls.length
})

/** Why recording an event failed (the session's errors). */
export type RecordError = AppendRejected | StoreIoError

/** How a question ended for its tool. */
export type Routed = Data.TaggedEnum<{
  /** Run the tool again with this answer. */
  Answer: { readonly answer: Schema.Json }
  /** The call ends with this response. */
  End: { readonly response: ToolResponse }
}>
/** Constructors of {@link Routed}: `Answer({ answer })` or `End({ response })`. */
export const Routed = Data.taggedEnum<Routed>()

/** How an inquiry opens: record its request now, or it was recorded by an earlier run (resume). */
export type Opening = Data.TaggedEnum<{
  Record: { readonly id: InquiryId; readonly source: InquirySource }
  Recorded: { readonly id: InquiryId }
}>
/** Constructors of {@link Opening}: `Record({ id, source })` or `Recorded({ id })`. */
export const Opening = Data.taggedEnum<Opening>()

/** A defect as one line of text for a recorded tool error. */
export const describeDefect = (defect: unknown): string => (defect instanceof Error ? defect.message : String(defect))

/** Records an event stamped with the current time; returns it. */
export const record = <E extends StreamEntry>(env: Env, build: (at: Timestamp.Timestamp) => E): Effect.Effect<E, RecordError> =>
  Effect.flatMap(Timestamp.current, (at) => {
    const event = build(at)
    return Effect.as(env.session.append([event]), event)
  })

/** Whether an open inquiry has its response yet (owned by the one fiber that asks it). */
interface Closed {
  done: boolean
}

/** The question being asked, and for which call. */
interface Asked {
  readonly call: ToolCallRequest
  readonly question: Question
  readonly id: InquiryId
}

/** Announces how a question closed. */
const announce = (env: Env, asked: Asked, by: Answerer, outcome: QuestionOutcome) =>
  env.notify(Notice.QuestionClosed({ call: asked.call, inquiryId: asked.id, question: asked.question, by, outcome }))

/** The open inquiry's closing: record the response, mark it closed and announce it, atomically. */
const closer = (env: Env, asked: Asked, closed: Closed) => {
  const secret = asked.question.answer_type.type === "secret"
  const { id } = asked
  const close = (event: (at: Timestamp.Timestamp) => StreamEntry, by: Answerer, outcome: QuestionOutcome) =>
    Effect.uninterruptible(
      record(env, event).pipe(
        Effect.tap(() => Effect.sync(() => void (closed.done = true))),
        Effect.tap(() => announce(env, asked, by, outcome))
      )
    )
  return {
    answered: (by: Answerer, answer: Schema.Json) =>
      close(
        (at) => (secret ? Events.redacted(at, id) : Events.answered(at, id, answer)),
        by,
        secret ? QuestionOutcome.Redacted() : QuestionOutcome.Answered({ answer })
      ).pipe(Effect.as(Routed.Answer({ answer }))),
    cancelled: (by: Answerer, reason: CancellationReason, response: ToolResponse) =>
      close((at) => Events.cancelled(at, id, reason), by, QuestionOutcome.Cancelled({ reason })).pipe(Effect.as(Routed.End({ response })))
  }
}

type Closer = ReturnType<typeof closer>

/** The person at the prompt. */
const fromPrompt = (env: Env, call: ToolCallRequest, question: Question, close: Closer) =>
  Effect.gen(function*() {
    const secret = question.answer_type.type === "secret"
    let by: Answerer = "you"
    const reply = yield* Effect.suspend(() =>
      // Look again once the prompt is ours: a Y/N typed while this call waited counts too.
      Effect.flatMap(Ref.get(env.state), (s) => {
        const remembered = secret ? undefined : TurnState.rememberedAnswer(s, call.name, question.id)
        if (remembered !== undefined && remembered._tag === "Some") {
          by = "remembered"
          return Effect.succeed({ answer: remembered.value, remember: false })
        }
        return env.prompts.question({ toolName: call.name, question, arguments: call.arguments, position: positionOf(env, call) })
      })
    ).pipe(
      Effect.catchDefect((d) => Effect.fail(new PromptFailed({ reason: describeDefect(d) }))),
      env.promptLock.withPermits(1),
      Effect.result
    )
    if (reply._tag === "Failure") {
      return yield* (reply.failure._tag === "PromptCancelled"
        ? close.cancelled("you", "user", { content: Texts.inputCancelled, is_error: false })
        : close.cancelled("you", "backend_error", { content: Texts.promptFailed, is_error: true }))
    }
    const { answer, remember } = reply.success
    if (remember && !secret) yield* Ref.update(env.state, (s) => TurnState.rememberAnswer(s, call.name, question.id, answer))
    return yield* close.answered(by, answer)
  })

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

/** Routes an open question to whoever answers it and records the outcome. */
const route = (env: Env, call: ToolCallRequest, question: Question, id: InquiryId, close: Closer) =>
  Effect.flatMap(Ref.get(env.state), (state) => {
    const decided = decideRoute({
      question,
      target: ConfigData.questionTarget(env.config, call.name, question.id),
      interactive: env.prompts.interactive,
      remembered: TurnState.rememberedAnswer(state, call.name, question.id),
      staticAnswer: ConfigData.staticAnswer(env.config, call.name, question.id)
    })
    return Route.$match(decided, {
      Remembered: ({ answer }) => close.answered("remembered", answer),
      Static: ({ answer }) => close.answered("config", answer),
      Denied: ({ reason }) =>
        close.cancelled("parley", reason, {
          content: reason === "assistant_routing_denied"
            ? Texts.secretToAssistant(call.name, question.text)
            : Texts.secretNoTty(call.name, question.text),
          is_error: true
        }),
      Prompt: () => fromPrompt(env, call, question, close),
      Backend: () => fromBackend(env, call, question, id, close)
    })
  })

/**
 * Asks `question` for `call`: opens the inquiry (records its request, unless
 * an earlier run did), routes it, and closes it with the outcome — or with
 * `Cancelled{user}` when interrupted while open.
 */
export const ask = (env: Env, call: ToolCallRequest, question: Question, opening: Opening) =>
  Effect.suspend(() => {
    const closed: Closed = { done: false }
    const id = opening.id
    const asked: Asked = { call, question, id }
    return Effect.acquireUseRelease(
      Opening.$match(opening, {
        Record: ({ source }) => record(env, (at) => Events.inquiryRequest(at, id, source, toInquiryQuestion(question))),
        Recorded: () => Effect.void
      }),
      () => route(env, call, question, id, closer(env, asked, closed)),
      (_, exit) =>
        Exit.hasInterrupts(exit) && !closed.done
          ? record(env, (at) => Events.cancelled(at, id, "user")).pipe(
            Effect.andThen(announce(env, asked, "parley", QuestionOutcome.Cancelled({ reason: "user" }))),
            Effect.ignore
          )
          : Effect.void
    )
  })
