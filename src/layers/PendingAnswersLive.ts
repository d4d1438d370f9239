/**
 * Open questions in this process (docs/decisions.md#answer-from-anywhere): a map from inquiry id to the
 * question and a `Deferred` for its answer. Taking a question (an offer that
 * fits, or a claim) and completing its `Deferred` happen in one synchronous
 * step, so of two answerers racing exactly one wins; the loser is told who
 * did. Closed questions are remembered for the process's life, so a late
 * offer is refused with who answered rather than "not open".
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as PendingAnswersLive from "parley/layers/PendingAnswersLive"
 * import { PendingAnswers } from "parley/services/PendingAnswers"
 * const open = PendingAnswers.use((p) => p.list).pipe(Effect.provide(PendingAnswersLive.layer))
 * ```
 *
 * @since 0.1.0
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import * as PermissionInquiry from "../domain/event/PermissionInquiry.ts"
import type { Answerer, Via } from "../domain/run/RunEvent.ts"
import * as AnswerFit from "../domain/tool/AnswerFit.ts"
import * as QuestionPolicy from "../domain/tool/QuestionPolicy.ts"
import { type Offered, type OpenQuestion, PendingAnswers } from "../services/PendingAnswers.ts"
import {
  AnswerDoesNotFit,
  AnswersDoNotFit,
  AnswersTaken,
  type OfferRefused,
  QuestionAlreadyAnswered,
  QuestionCancelled,
  QuestionNotOpen
} from "../services/Refusals.ts"

interface Entry {
  readonly question: OpenQuestion
  readonly deferred: Deferred.Deferred<Offered>
  takenBy: Answerer | undefined
  /** Taken without an answer (a claim). */
  claimed: boolean
}

/** Who closed a question, and whether with an answer. */
interface Closing {
  readonly by: Answerer
  readonly cancelled: boolean
}

/** How an offer came: `remember` (`Y`/`N`), `via` (the surface). */
type OfferOptions = { readonly remember?: boolean; readonly via?: Via }

/**
 * The offer as the question takes it, or why it does not fit. An approval
 * takes `yes`/`no`/`always`/`never` (`PermissionInquiry.approvalAnswer`:
 * the last two are remembered for the turn, as `Y`/`N` are), or
 * `{"edit": {…}}` (run the call with those arguments).
 */
const fitOf = (
  question: OpenQuestion,
  answer: Schema.Json,
  options: OfferOptions | undefined
): Result.Result<Omit<Offered, "by">, AnswerDoesNotFit> => {
  const via = options?.via !== undefined ? { via: options.via } : {}
  if (question.kind === "approval") {
    // An approval asked each time (an MCP server's page or form) takes no `always`/`never`.
    const rememberable = QuestionPolicy.of(question.question).rememberable
    // A result review takes deliver, skip or an edited result (docs/tools.md#reviewing-a-result-from-anywhere).
    const review = PermissionInquiry.isReviewQuestion(question.question.id)
    const read = PermissionInquiry.readApproval(answer, rememberable, review)
    if (read._tag === "Misfit")
      return Result.fail(
        new AnswerDoesNotFit({
          inquiry_id: question.inquiryId,
          reason: read.reason,
          expected: PermissionInquiry.expectedOf(rememberable, review)
        })
      )
    // An edit is this call's alone: taken as `{"edit": {…}}` (the coordinator runs the call with it), never remembered.
    if (read.arguments !== undefined) return Result.succeed({ answer: { edit: read.arguments }, ...via })
    const remember = read.remember || options?.remember === true
    return Result.succeed({ answer: read.answer, ...(remember ? { remember } : {}), ...via })
  }
  const fits = AnswerFit.fit(question.question.answer_type, answer)
  if (Result.isFailure(fits))
    return Result.fail(
      new AnswerDoesNotFit({
        inquiry_id: question.inquiryId,
        reason: fits.failure,
        expected: AnswerFit.expected(question.question.answer_type)
      })
    )
  return Result.succeed({ answer: fits.success, ...(options?.remember === true ? { remember: true } : {}), ...via })
}

/** An in-process registry. */
export const make: Effect.Effect<PendingAnswers["Service"]> = Effect.sync(() => {
  const open = new Map<string, Entry>()
  /** How many persons are present (attached terminals), and who waits for them all to leave. */
  let present = 0
  let deserted = new Set<() => void>()
  const leave = () => {
    present -= 1
    if (present > 0) return
    const waiting = deserted
    deserted = new Set()
    for (const resume of waiting) resume()
  }
  /** Who closed each question that is no longer open. */
  const closed = new Map<string, Closing>()
  const closingOf = (entry: Entry): Closing => ({
    by: entry.takenBy ?? "parley",
    cancelled: entry.takenBy === undefined || entry.claimed
  })
  const refuse = (id: string) => {
    const taken = open.get(id)
    const closing = closed.get(id) ?? (taken?.takenBy !== undefined ? closingOf(taken) : undefined)
    if (closing !== undefined)
      return closing.cancelled
        ? new QuestionCancelled({ inquiry_id: id, by: closing.by })
        : new QuestionAlreadyAnswered({ inquiry_id: id, by: closing.by })
    return new QuestionNotOpen({
      inquiry_id: id,
      open: [...open.values()].filter((e) => e.takenBy === undefined).map((e) => e.question.inquiryId)
    })
  }
  /** Every answer of a batch checked, none taken: what refuses it, if anything does. */
  const refuseAll = (answers: Readonly<Record<string, Schema.Json>>, options: OfferOptions | undefined) => {
    const misfits: Array<AnswersDoNotFit["answers"][number]> = []
    const taken: Array<AnswersTaken["answers"][number]> = []
    const fitted: Array<readonly [Entry, Omit<Offered, "by">]> = []
    for (const [id, answer] of Object.entries(answers)) {
      const entry = open.get(id)
      if (entry === undefined || entry.takenBy !== undefined) {
        const refused = refuse(id)
        if (refused._tag === "QuestionNotOpen") return { refused }
        taken.push({ inquiry_id: id, by: refused.by, cancelled: refused._tag === "QuestionCancelled" })
        continue
      }
      const fits = fitOf(entry.question, answer, options)
      if (Result.isFailure(fits))
        misfits.push({ inquiry_id: id, reason: fits.failure.reason, expected: fits.failure.expected })
      else fitted.push([entry, fits.success])
    }
    if (misfits.length > 0) return { refused: new AnswersDoNotFit({ answers: misfits }) }
    if (taken.length > 0) return { refused: new AnswersTaken({ answers: taken }) }
    return { fitted }
  }
  /** Takes `entry` for `by` and completes its answer (one synchronous step with the checks before it). */
  const take = (entry: Entry, offered: Offered) => {
    entry.takenBy = offered.by
    Deferred.doneUnsafe(entry.deferred, Effect.succeed(offered))
  }
  return PendingAnswers.of({
    open: (question) =>
      Effect.acquireRelease(
        Effect.map(Deferred.make<Offered>(), (deferred) => {
          const entry: Entry = { question, deferred, takenBy: undefined, claimed: false }
          open.set(question.inquiryId, entry)
          return entry
        }),
        (entry) =>
          Effect.sync(() => {
            open.delete(entry.question.inquiryId)
            closed.set(entry.question.inquiryId, closingOf(entry))
          })
      ).pipe(
        Effect.map((entry) => ({
          answer: Deferred.await(entry.deferred),
          claim: (by: Answerer) =>
            Effect.sync(() => {
              if (entry.takenBy !== undefined) return false
              entry.takenBy = by
              entry.claimed = true
              return true
            })
        }))
      ),
    offer: (inquiryId: string, answer: Schema.Json, by: Answerer, options?: OfferOptions) =>
      Effect.suspend((): Effect.Effect<void, OfferRefused> => {
        const entry = open.get(inquiryId)
        if (entry === undefined || entry.takenBy !== undefined) return Effect.fail(refuse(inquiryId))
        const fits = fitOf(entry.question, answer, options)
        if (Result.isFailure(fits)) return Effect.fail(fits.failure)
        // Taken and completed in one step: no other offer can slip in between.
        take(entry, { ...fits.success, by })
        return Effect.void
      }),
    offerAll: (answers, by, options) =>
      Effect.suspend(() => {
        // Checked and taken in one synchronous step: all or none, and no offer slips in between.
        const checked = refuseAll(answers, options)
        if ("refused" in checked) return Effect.fail(checked.refused)
        for (const [entry, offered] of checked.fitted) take(entry, { ...offered, by })
        return Effect.void
      }),
    list: Effect.sync(() => [...open.values()].filter((e) => e.takenBy === undefined).map((e) => e.question)),
    attend: Effect.acquireRelease(
      Effect.sync(() => {
        present += 1
      }),
      () => Effect.sync(leave)
    ),
    present: () => present > 0,
    deserted: Effect.callback<void>((resume) => {
      if (present === 0) return resume(Effect.void)
      const done = () => resume(Effect.void)
      deserted.add(done)
      return Effect.sync(() => void deserted.delete(done))
    })
  })
})

/** A fresh registry for each build of the layer. */
export const layer: Layer.Layer<PendingAnswers> = Layer.effect(PendingAnswers, make)
