/**
 * What the steps of a turn's tool run share (the coordinator's environment),
 * JP's wording of the responses the coordinator records, and the two
 * primitives every step uses: record an event, publish a run event.
 *
 * @example
 * ```ts
 * import * as Env from "parley/programs/coordinator/Env"
 * Env.Texts.skippedByUser // "Tool skipped by user."
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import type * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Schema from "effect/Schema"
import type * as Semaphore from "effect/Semaphore"
import type { StreamEntry } from "../../domain/event/ConversationEvent.ts"
import type { InquiryId } from "../../domain/event/InquiryId.ts"
import * as Timestamp from "../../domain/event/Timestamp.ts"
import type { ToolCallRequest } from "../../domain/event/ToolCallRequest.ts"
import type * as TurnState from "../../domain/stream/TurnState.ts"
import type * as ConfigData from "../../domain/tool/Config.ts"
import { formatPath } from "../../domain/tool/Config.ts"
import type { ConversationSession } from "../../services/ConversationSession.ts"
import { appendThen } from "../../services/SessionInStep.ts"
import type { AppendRejected, StoreIoError } from "../../services/StoreErrors.ts"
import type { Executor, ToolResponse } from "../../services/Executor.ts"
import type { InquiryBackend } from "../../services/InquiryBackend.ts"
import type { PendingAnswers } from "../../services/PendingAnswers.ts"
import { type CallPosition, type PromptBackend, type PromptError, PromptFailed } from "../../services/PromptBackend.ts"
import type { RunEvents } from "../../services/RunEvents.ts"

// JP's wording for tool responses (jp-reference §5.2–§5.4, §5.9; RFD 083 for exclusive questions and static answers).
/** JP's wording of the tool responses the coordinator records (skipped, cancelled, failed inquiries). */
export const Texts = {
  skippedByUser: "Tool skipped by user.",
  skippedRemembered: "Tool skipped by user (remembered).",
  skippedByConfig: "Tool skipped by configuration.",
  inputCancelled: "Tool input cancelled by user.",
  promptFailed: "Tool input prompt failed.",
  permissionFailed: (e: string) => `Permission prompt failed: ${e}`,
  // JP's words (jp-reference: "Error: <e>. You may retry…"); an error that already ends a sentence
  // is not given a second period ("position.. You may retry").
  inquiryFailed: (tool: string, question: string, error: string) =>
    `The tool '${tool}' asked a follow-up question ("${question}") that was routed to a secondary assistant for resolution, but the secondary assistant failed to provide a valid answer. Error: ${error.replace(/[.\s]+$/, "")}. You may retry the tool call or end the turn.`,
  secretNoTty: (tool: string, question: string) =>
    `The tool '${tool}' asked for a secret value ("${question}"), but secret values can only be typed by a person at an interactive terminal and none is available. Run the query in a terminal to answer it.`,
  nobodyToAsk: (tool: string, question: string) =>
    `The tool '${tool}' asked "${question.split("\n")[0]}", which only a person may answer, and nobody could be asked (the detached policy is "deny"). You may end the turn or try another way.`,
  approvalNobody: (tool: string, detached: string) =>
    `The tool '${tool}' needs a person's approval to run, and nobody could be asked (the detached policy is "${detached}"; an approval never goes to an assistant), so it did not run. Do not retry this tool call in this turn.`,
  askedApprovalNobody: (tool: string, question: string, detached: string) =>
    `The tool '${tool}' asked for a person's approval ("${question.split("\n")[0]}"), and nobody could be asked (the detached policy is "${detached}"; an approval never goes to an assistant), so the call was stopped without it. Do not retry this tool call in this turn.`,
  tooManyAttempts: (tool: string, id: string, question: string, max: number) =>
    `The tool '${tool}' asked "${question.split("\n")[0]}" (question '${id}') more than ${max} times in one call, so the call was stopped: the answers it got did not satisfy it. Raise max_attempts under [conversation.tools.${tool}.questions.${id}] to allow more.`,
  exclusiveNoPerson: (tool: string) =>
    `${tool} cannot run because no interactive terminal is available. Do not retry this tool call in this turn; continue without user input or explain what information is missing.`,
  exclusiveToAssistant: (tool: string) =>
    `${tool} requires a human answer and cannot be routed to the assistant. Do not retry this tool call in this turn.`,
  invalidStaticAnswer: (tool: string, questionId: string, problem: string) =>
    `${tool}: the configured ${formatPath(["conversation", "tools", tool, "questions", questionId, "answer"])} value does not match the question's answer_type (${problem}). Update the configuration; do not retry.`,
  secretToAssistant: (tool: string, question: string) =>
    `The tool '${tool}' asked for a secret value ("${question}"), which is never routed to an assistant (its question target is "assistant"). Set the question's target to "user" to answer it at the prompt.`
} as const

/** What the steps of a turn's tool run share. */
export interface Env {
  readonly session: ConversationSession
  readonly executor: Executor["Service"]
  readonly prompts: PromptBackend["Service"]
  readonly backend: InquiryBackend["Service"]
  readonly answers: PendingAnswers["Service"]
  readonly events: RunEvents["Service"]
  readonly config: ConfigData.Config
  readonly state: Ref.Ref<TurnState.TurnState>
  /** One prompt on screen at a time; waiters are served in order. */
  readonly promptLock: Semaphore.Semaphore
  readonly root: string
  /** The run's clock (Effect's `Clock` when the run started; `TestClock` in tests), read for every event. */
  readonly clock: Clock.Clock
  /** The calls run together (to say which one a prompt belongs to). */
  readonly calls: ReadonlyArray<ToolCallRequest>
  /**
   * Whether a consumer's tracer is installed (any but Effect's native one,
   * which exports nowhere): only then are the per-call and per-question
   * spans opened ({@link traced}).
   */
  readonly traced: boolean
}

/**
 * `self` in a span named `name`, when a consumer's tracer would see it
 * (`env.traced`); as it is otherwise. With Effect's native tracer a span is
 * seen by nobody, and each cost two context changes and a clock reading: a
 * quarter of the coordinator's time for three spans per call.
 */
export const traced = <A, E, R>(
  env: Env,
  self: Effect.Effect<A, E, R>,
  name: string,
  attributes: () => Record<string, unknown>
): Effect.Effect<A, E, R> =>
  env.traced
    ? // No stack captured: a new Error each, a tenth of the coordinator bench; the span's name says where.
      Effect.withSpan(self, name, { attributes: attributes(), captureStackTrace: false })
    : self

/** Which of the calls run together `call` is (1-based), for the prompt. */
export const positionOf = (env: Env, call: ToolCallRequest): CallPosition => ({
  callId: call.id,
  // By id: a call whose arguments a person edited is a new object.
  index: env.calls.findIndex((c) => c.id === call.id) + 1,
  total: env.calls.length
})

/** Why recording an event failed (the session's errors). */
export type RecordError = AppendRejected | StoreIoError

/** How a question ended for its tool. */
export type Routed = Data.TaggedEnum<{
  /** Run the tool again with this answer. */
  Answer: {
    readonly answer: Schema.Json
    /** The answer configured for the question (a tool asking again for it rejected it). */
    readonly fromConfig?: boolean
  }
  /** The call ends with this response. */
  End: { readonly response: ToolResponse }
  /** Nobody answered: the question stays open on disk and the call stops here, without a response (the `detached` policy). */
  Deferred: { readonly inquiryId: InquiryId }
}>
const RoutedEnum = Data.taggedEnum<Routed>()
/**
 * Constructors of {@link Routed}: `Answer({ answer })`, `End({ response })` or
 * `Deferred({ inquiryId })`, each built as a literal (every question ends in
 * one; `Data.taggedEnum`'s shared, megamorphic constructor costs about half
 * a microsecond a value).
 */
export const Routed: Data.TaggedEnum.Constructor<Routed> = {
  Answer: ({ answer, fromConfig }) =>
    fromConfig === true ? { _tag: "Answer", answer, fromConfig } : { _tag: "Answer", answer },
  End: ({ response }) => ({ _tag: "End", response }),
  Deferred: ({ inquiryId }) => ({ _tag: "Deferred", inquiryId }),
  $is: RoutedEnum.$is,
  $match: RoutedEnum.$match
}

/** A defect as one line of text for a recorded tool error. */
export const describeDefect = (defect: unknown): string => (defect instanceof Error ? defect.message : String(defect))

/** Records an event stamped with the current time (the run's clock, read as the step runs). */
export const record = (env: Env, build: (at: Timestamp.Timestamp) => StreamEntry): Effect.Effect<void, RecordError> =>
  Effect.suspend(() => env.session.append([build(Timestamp.fromClock(env.clock))]))

/**
 * {@link record}, then `next` with the event recorded, uninterruptibly: an
 * interrupt cannot fall between an event and what announces it (a response
 * recorded but never shown). uninterruptibleMask calls its function as the
 * step runs, so the time is read then.
 */
export const recordThen = <E extends StreamEntry, A, E2, R>(
  env: Env,
  build: (at: Timestamp.Timestamp) => E,
  next: (event: E) => Effect.Effect<A, E2, R>
): Effect.Effect<A, RecordError | E2, R> =>
  Effect.uninterruptibleMask(() => {
    const event = build(Timestamp.fromClock(env.clock))
    // Appended in this step (it is uninterruptible): an append that ended as it started goes on to `next` here.
    return appendThen(env.session, [event], () => next(event))
  })

/** What the terminal's prompt step gives: an answer remembered meanwhile, what was typed, or why the prompt failed. */
export type Prompted<M, A> =
  | { readonly _tag: "Remembered"; readonly value: M }
  | { readonly _tag: "Typed"; readonly value: A }
  | { readonly _tag: "Failed"; readonly error: PromptError }

/**
 * The terminal's prompt, one on screen at a time, for a permission and a
 * question alike: once the prompt is ours, look again (a `Y`/`N` typed
 * while this call waited counts too), else prompt (a prompt that crashes
 * failed); `answered` runs while the prompt is still ours, so what it records is
 * on disk before the next prompt looks.
 */
export const atPrompt = <M, A, B, E>(
  env: Env,
  steps: {
    readonly look: (state: TurnState.TurnState) => Option.Option<M>
    readonly prompt: () => Effect.Effect<A, PromptError>
    readonly answered: (prompted: Prompted<M, A>) => Effect.Effect<B, E>
  }
): Effect.Effect<B, E> =>
  Effect.suspend(() => {
    const remembered = steps.look(Ref.getUnsafe(env.state))
    if (Option.isSome(remembered)) return steps.answered({ _tag: "Remembered", value: remembered.value })
    return steps.prompt().pipe(
      Effect.catchDefect((d) => Effect.fail(new PromptFailed({ reason: describeDefect(d) }))),
      Effect.matchEffect({
        onFailure: (error) => steps.answered({ _tag: "Failed", error }),
        onSuccess: (value) => steps.answered({ _tag: "Typed", value })
      })
    )
  }).pipe(env.promptLock.withPermits(1))
