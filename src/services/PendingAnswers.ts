/**
 * Where an open question waits for whoever answers it first (docs/decisions.md#answer-from-anywhere,
 * RFD 027's prompt forwarding, past its one-client non-goal). A question a
 * person may answer is registered under its RFD 082 inquiry id while it is
 * open; any answerer — the terminal prompt, another terminal, the HTTP API —
 * offers an answer for that id. The first offer that fits the question
 * (type, options) wins; the coordinator records it exactly once; every later
 * offer is refused with who answered.
 *
 * Live: `PendingAnswersLive.layer` (in-process).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { PendingAnswers } from "parley/services/PendingAnswers"
 * const answerYes = PendingAnswers.use((p) => p.offer("call_1.confirm.1", true, "other"))
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { Answerer, QuestionKind, ToolCall, Via } from "../domain/run/RunEvent.ts"
import type { Question } from "../domain/tool/Question.ts"

/** An open question, as every answerer sees it. */
export interface OpenQuestion {
  readonly inquiryId: string
  /** A tool's question, or an approval (may the call run?: boolean, answered `yes`/`no`/`always`/`never`). */
  readonly kind?: QuestionKind
  readonly conversationId: string
  readonly call: ToolCall
  readonly question: Question
  /** When it opened (RFC 3339). */
  readonly since: string
}

/**
 * The winning offer (`remember`: `Y`/`N` typed at an attached terminal, or
 * an approval's `always`/`never` — keep it for the turn; `via`: the surface
 * it came through).
 */
export interface Offered {
  readonly answer: Schema.Json
  readonly by: Answerer
  readonly remember?: boolean
  readonly via?: Via
}

/** A registered question: wait for its answer, or close it without one (refused offers then name `by`). */
export interface Waiting {
  /** The first valid offer. */
  readonly answer: Effect.Effect<Offered>
  /** Takes the question for `by` (a cancelled prompt): later offers are refused. False when an offer came first. */
  readonly claim: (by: Answerer) => Effect.Effect<boolean>
}

/** No open question has this id. */
export class QuestionNotOpen extends Schema.TaggedError<QuestionNotOpen>()("QuestionNotOpen", {
  inquiry_id: Schema.String,
  open: Schema.Array(Schema.String)
}) {
  override get message() {
    return `No open question has the id ${this.inquiry_id}${this.open.length === 0 ? " (none is open)" : ` (open: ${this.open.join(", ")})`}.`
  }
}

/** The question was answered (or closed) already. */
export class QuestionAlreadyAnswered extends Schema.TaggedError<QuestionAlreadyAnswered>()("QuestionAlreadyAnswered", {
  inquiry_id: Schema.String,
  by: Schema.String,
  /** It was closed without an answer (a cancelled prompt, an interrupt, a deferral). */
  cancelled: Schema.optionalKey(Schema.Boolean)
}) {
  override get message() {
    return this.cancelled === true
      ? `Question ${this.inquiry_id} was already closed without an answer (by ${this.by}).`
      : `Question ${this.inquiry_id} was already answered (by ${this.by}).`
  }
}

/** The answer does not fit the question. */
export class AnswerDoesNotFit extends Schema.TaggedError<AnswerDoesNotFit>()("AnswerDoesNotFit", {
  inquiry_id: Schema.String,
  reason: Schema.String,
  expected: Schema.String
}) {
  override get message() {
    return `That answer does not fit question ${this.inquiry_id}: ${this.reason}; expected ${this.expected}.`
  }
}

/** Why an offer was refused. */
export type OfferRefused = QuestionNotOpen | QuestionAlreadyAnswered | AnswerDoesNotFit

export class PendingAnswers extends Context.Service<
  PendingAnswers,
  {
    /** Registers `question` while the scope is open. */
    open(question: OpenQuestion): Effect.Effect<Waiting, never, Scope.Scope>
    /** Offers an answer: it wins when it is the first that fits. */
    offer(
      inquiryId: string,
      answer: Schema.Json,
      by: Answerer,
      options?: { readonly remember?: boolean; readonly via?: Via }
    ): Effect.Effect<void, OfferRefused>
    /** The questions open now, in the order they opened. */
    readonly list: Effect.Effect<ReadonlyArray<OpenQuestion>>
    /**
     * A person is present to answer while the scope is open: a terminal
     * attached to the run (RFD 027 "client attached"). With one present, a
     * question for a person waits for them instead of following the
     * `detached` policy.
     */
    readonly attend: Effect.Effect<void, never, Scope.Scope>
    /** Whether a person is present now (a snapshot: read as a question is routed). */
    readonly present: () => boolean
    /** Completes once nobody is present (at once when nobody is). */
    readonly deserted: Effect.Effect<void>
  }
>()("parley/PendingAnswers") {}
