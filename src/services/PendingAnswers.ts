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
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { Answerer, QuestionKind, ToolCall, Via } from "../domain/run/RunEvent.ts"
import type { Question } from "../domain/tool/Question.ts"
import type { AnswersDoNotFit, AnswersTaken, OfferRefused, QuestionNotOpen } from "./Refusals.ts"

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

/** Why an offer was refused (`services/Refusals.ts`). */
export type { OfferRefused } from "./Refusals.ts"

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
    /**
     * Offers answers to several questions at once, in one synchronous step:
     * every one is taken, or none is (the first id not open refuses the lot;
     * else every answer that does not fit; else every question another
     * answerer closed meanwhile). `via`: the surface the batch came through.
     */
    offerAll(
      answers: Readonly<Record<string, Schema.Json>>,
      by: Answerer,
      options?: { readonly via?: Via }
    ): Effect.Effect<void, QuestionNotOpen | AnswersDoNotFit | AnswersTaken>
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
