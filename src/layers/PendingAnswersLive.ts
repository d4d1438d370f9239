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
import {
  AnswerDoesNotFit,
  type Offered,
  type OfferRefused,
  type OpenQuestion,
  PendingAnswers,
  QuestionAlreadyAnswered,
  QuestionNotOpen
} from "../services/PendingAnswers.ts"

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
 * the last two are remembered for the turn, as `Y`/`N` are).
 */
const fitOf = (
  question: OpenQuestion,
  answer: Schema.Json,
  options: OfferOptions | undefined
): Result.Result<Omit<Offered, "by">, AnswerDoesNotFit> => {
  const via = options?.via !== undefined ? { via: options.via } : {}
  if (question.kind === "approval") {
    const read = PermissionInquiry.approvalAnswer(answer)
    if (read === undefined)
      return Result.fail(
        new AnswerDoesNotFit({
          inquiry_id: question.inquiryId,
          reason: `${JSON.stringify(answer)} is not an approval's answer`,
          expected: PermissionInquiry.approvalExpected
        })
      )
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
    return closing !== undefined
      ? new QuestionAlreadyAnswered({
          inquiry_id: id,
          by: closing.by,
          ...(closing.cancelled ? { cancelled: true } : {})
        })
      : new QuestionNotOpen({
          inquiry_id: id,
          open: [...open.values()].filter((e) => e.takenBy === undefined).map((e) => e.question.inquiryId)
        })
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
        entry.takenBy = by
        Deferred.doneUnsafe(entry.deferred, Effect.succeed({ ...fits.success, by }))
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
