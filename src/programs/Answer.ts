/**
 * `parley conversation answer` as a program (docs/cli.md#commands): the open
 * questions of a conversation's incomplete turn — requests recorded without
 * a response, for tool calls that have no response either — and answering
 * one of them into the turn, so `query --continue-turn` hands the answer to
 * its tool without asking (RFD 023: answers already given are handed back).
 *
 * The answer is recorded as the `inquiry_response` of the open request (same
 * id, RFD 082's shape, JP-readable), under the conversation's lock like any
 * writer. It must fit the question (`AnswerFit`); a secret is never
 * recorded (only `redacted`), so it can only be given to a running turn.
 *
 * @example
 * ```ts
 * import * as Answer from "parley/programs/Answer"
 * import { ConversationId } from "parley"
 * const id = ConversationId.parse("17738399468")!
 * const recorded = Answer.answer(id, "call_1.overwrite.1", { text: "yes" }) // Effect<AnswerRecorded, …, ConversationStore>
 * const delivered = Answer.deliver(id, "call_1.overwrite.1", true) // to the running turn, else on disk; needs RunningTurns too
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import * as EventMetadata from "../domain/event/EventMetadata.ts"
import * as Events from "../domain/event/Events.ts"
import * as PermissionInquiry from "../domain/event/PermissionInquiry.ts"
import type { InquiryId } from "../domain/event/InquiryId.ts"
import type { InquiryResponse } from "../domain/event/InquiryResponse.ts"
import * as Timestamp from "../domain/event/Timestamp.ts"
import type { QuestionKind, Via } from "../domain/run/RunEvent.ts"
import type { ConversationId } from "../domain/storage/ConversationId.ts"
import type { NotPrivate } from "../domain/storage/NotPrivate.ts"
import type { HostProtocolMismatch } from "../domain/run/HostProtocol.ts"
import * as JsonText from "../domain/storage/JsonText.ts"
import * as IncompleteTurn from "../domain/stream/IncompleteTurn.ts"
import * as AnswerFit from "../domain/tool/AnswerFit.ts"
import { fromInquiryQuestion, type Question } from "../domain/tool/Question.ts"
import * as QuestionPolicy from "../domain/tool/QuestionPolicy.ts"
import type { ConversationSession } from "../services/ConversationSession.ts"
import { ConversationStore } from "../services/ConversationStore.ts"
import {
  AnswerDoesNotFit,
  AnswersDoNotFit,
  AnswersTaken,
  QuestionAlreadyAnswered,
  QuestionCancelled,
  QuestionNotOpen,
  SecretNeedsRunningTurn
} from "../services/Refusals.ts"
import { type OpenQuestion, type RunningTurn, RunningTurns } from "../services/RunningTurns.ts"

/** An open question of a waiting or running turn (one shape for both: `services/RunningTurns.ts`). */
export type { OpenQuestion } from "../services/RunningTurns.ts"

/** The metadata of an approval answered `always`/`never`: remembered for the turn, as a typed `Y`/`N` is. */
const REMEMBERED = { [EventMetadata.rememberedAnswer]: true }

/** What a value given for a question is: text (parsed by the question's answer type), or a JSON value (`--json`). */
export type AnswerInput = { readonly text: string } | { readonly value: Schema.Json }

/** What was recorded. */
export interface AnswerRecorded {
  readonly inquiryId: InquiryId
  readonly answer: Schema.Json
  /** The questions still open after this one. */
  readonly stillOpen: ReadonlyArray<OpenQuestion>
}

/**
 * The open questions of an incomplete turn, in the order they were asked, each
 * with when it was asked (its request's timestamp).
 */
export const openIn = (
  incomplete: IncompleteTurn.IncompleteTurn
): ReadonlyArray<{ readonly open: OpenQuestion; readonly asked: string }> =>
  IncompleteTurn.analyze(incomplete).pendingInquiries.map((p) => {
    // An approval shows what it approves: the call's arguments, or what the tool asked about (an MCP page or form).
    const approves = PermissionInquiry.approves(p.request, p.toolCall.arguments)
    return {
      open: {
        inquiryId: p.request.id,
        kind: approves !== undefined ? "approval" : "question",
        toolCallId: p.toolCall.id,
        tool: p.toolCall.name,
        arguments: approves ?? p.toolCall.arguments,
        question: fromInquiryQuestion(p.questionId ?? "answer", p.request.question)
      },
      asked: p.request.timestamp
    }
  })

/** The open questions of `session`'s incomplete turn, in the order they were asked. */
export const openQuestions = (session: ConversationSession): Effect.Effect<ReadonlyArray<OpenQuestion>> =>
  Effect.map(session.incompleteTurn, (incomplete) => (incomplete === null ? [] : openIn(incomplete).map((o) => o.open)))

/** The open questions of conversation `id` (read under its lock: a running turn holds it). */
export const list = (id: ConversationId) =>
  Effect.scoped(
    Effect.flatMap(
      ConversationStore.use((store) => store.open(id)),
      openQuestions
    )
  )

/** Where a turn is: running (its pid, and its open questions as its host has them) or waiting on disk (no pid). */
export interface TurnAt {
  readonly pid: number | undefined
  readonly open: ReadonlyArray<OpenQuestion>
}

/** Where the turn of `id` is ({@link TurnAt}). */
export const whereOpen = (id: ConversationId) =>
  Effect.gen(function* () {
    const running = yield* RunningTurns.use((turns) => turns.find(id))
    if (Option.isNone(running)) return { pid: undefined, open: yield* list(id) } satisfies TurnAt
    const info = yield* running.value.info
    return { pid: info.pid, open: info.open } satisfies TurnAt
  })

/**
 * `input` as an answer to `question`, or why it does not fit. An approval
 * (`kind`) takes `yes`/`no` (as `true`/`false`), `always`/`never` (kept as
 * those words: remembered for the turn wherever the answer goes) and
 * `{"edit": {…}}` (kept so: the call runs with those arguments).
 */
export const parse = (
  inquiryId: string,
  question: Question,
  input: AnswerInput,
  kind?: QuestionKind
): Result.Result<Schema.Json, AnswerDoesNotFit> =>
  kind === "approval"
    ? approval(
        inquiryId,
        "value" in input ? input.value : input.text,
        QuestionPolicy.of(question).rememberable,
        PermissionInquiry.isReviewQuestion(question.id)
      )
    : fit(inquiryId, question, input)

/** `text` as the answer to `q`: a JSON value when `json` (the command line's `--json`), else read as its type reads typed text (yes/no, an option). */
export const parseText = (
  q: OpenQuestion,
  text: string,
  json: boolean
): Result.Result<Schema.Json, AnswerDoesNotFit> => {
  if (!json) return parse(q.inquiryId, q.question, { text }, q.kind)
  let value: Schema.Json
  try {
    value = JsonText.parse(text)
  } catch {
    return Result.fail(
      new AnswerDoesNotFit({
        inquiry_id: q.inquiryId,
        reason: `${JSON.stringify(text)} is not JSON`,
        expected: AnswerFit.expected(q.question.answer_type)
      })
    )
  }
  return parse(q.inquiryId, q.question, { value }, q.kind)
}

/** An approval's answer: a boolean, or `always`/`never` for one remembered for the turn (not for one asked each time). */
const approval = (
  inquiryId: string,
  given: Schema.Json,
  rememberable: boolean,
  review: boolean
): Result.Result<Schema.Json, AnswerDoesNotFit> => {
  const read = PermissionInquiry.readApproval(given, rememberable, review)
  if (read._tag === "Misfit")
    return Result.fail(
      new AnswerDoesNotFit({
        inquiry_id: inquiryId,
        reason: read.reason,
        expected: PermissionInquiry.expectedOf(rememberable, review)
      })
    )
  if (read.arguments !== undefined) return Result.succeed({ edit: read.arguments })
  return Result.succeed(read.remember ? (read.answer ? "always" : "never") : read.answer)
}

const fit = (inquiryId: string, question: Question, input: AnswerInput): Result.Result<Schema.Json, AnswerDoesNotFit> =>
  Result.mapError(
    "value" in input
      ? AnswerFit.fit(question.answer_type, input.value)
      : AnswerFit.parse(question.answer_type, input.text),
    (reason) =>
      new AnswerDoesNotFit({ inquiry_id: inquiryId, reason, expected: AnswerFit.expected(question.answer_type) })
  )

/** How a recorded response reads in "already answered (by …)". */
const describeResponse = (r: InquiryResponse): string =>
  r.outcome === "answered"
    ? `an earlier answer: ${JSON.stringify(r.answer)}`
    : r.outcome === "redacted"
      ? "an earlier answer, redacted"
      : `a cancellation: ${r.reason}`

/** Why `inquiryId`, not among the `open` questions of `session`, cannot be answered: closed in the log, or never open. */
const closedOrUnknown = (session: ConversationSession, inquiryId: string, open: ReadonlyArray<OpenQuestion>) =>
  Effect.map(session.snapshot, (snapshot) => {
    const closed = snapshot.entries.findLast((e) => e.type === "inquiry_response" && e.id === inquiryId)
    if (closed?.type !== "inquiry_response")
      return new QuestionNotOpen({ inquiry_id: inquiryId, open: open.map((q) => q.inquiryId) })
    const by = describeResponse(closed)
    return closed.outcome === "cancelled"
      ? new QuestionCancelled({ inquiry_id: inquiryId, by })
      : new QuestionAlreadyAnswered({ inquiry_id: inquiryId, by })
  })

/** `input` for `target`, checked: a secret is never recorded in clear (it reaches a tool only through the running turn). */
const checked = (
  session: ConversationSession,
  target: OpenQuestion,
  input: AnswerInput
): Result.Result<Schema.Json, AnswerDoesNotFit | SecretNeedsRunningTurn> =>
  QuestionPolicy.of(target.question).redact
    ? Result.fail(new SecretNeedsRunningTurn({ id: session.id, inquiry_id: target.inquiryId }))
    : parse(target.inquiryId, target.question, input, target.kind)

/**
 * The response recording `value` (checked) for `target`. An approval is
 * recorded as the permission prompt records it: a boolean, remembered for the
 * turn (`parley_remembered`) when it was `always`/`never`.
 */
const responseOf = (at: Timestamp.Timestamp, target: OpenQuestion, value: Schema.Json) => {
  const read =
    target.kind !== "approval"
      ? undefined
      : PermissionInquiry.isReviewQuestion(target.question.id)
        ? reviewAnswer(value)
        : PermissionInquiry.approvalAnswer(value)
  if (read === undefined) return { answer: value, event: Events.answered(at, target.inquiryId, value) }
  // Edited arguments: a `true` decision with the arguments the call is to run with (the resumed turn runs it so).
  if (read.arguments !== undefined)
    return {
      answer: read.answer,
      event: Events.answered(at, target.inquiryId, true, PermissionInquiry.editedMetadata(read.arguments))
    }
  return {
    answer: read.answer,
    event: read.remember
      ? Events.answered(at, target.inquiryId, read.answer, REMEMBERED)
      : Events.answered(at, target.inquiryId, read.answer)
  }
}

/** A result review's checked answer, read as an approval's (deliver is a yes, an edit a yes with the edited result). */
const reviewAnswer = (value: Schema.Json) => {
  const read = PermissionInquiry.readReview(value)
  return read._tag === "Read" ? read : undefined
}

/** Records `answer` for the open question `inquiryId` of the open `session`. */
export const record = (session: ConversationSession, inquiryId: string, input: AnswerInput) =>
  Effect.gen(function* () {
    const open = yield* openQuestions(session)
    const target = open.find((q) => q.inquiryId === inquiryId)
    if (target === undefined) return yield* yield* closedOrUnknown(session, inquiryId, open)
    const parsed = checked(session, target, input)
    if (Result.isFailure(parsed)) return yield* parsed.failure
    const response = responseOf(yield* Timestamp.current, target, parsed.success)
    yield* session.append([response.event])
    return {
      inquiryId: target.inquiryId,
      answer: response.answer,
      stillOpen: open.filter((q) => q !== target)
    } satisfies AnswerRecorded
  })

/**
 * Records the `answers` (by inquiry id) into the open `session`, all or none:
 * every value is checked first; one that does not fit, a question another
 * answerer closed, or a secret refuses the lot, naming each. The responses
 * are appended in one batch (one write).
 */
export const recordAll = (session: ConversationSession, answers: Readonly<Record<string, Schema.Json>>) =>
  Effect.gen(function* () {
    const open = yield* openQuestions(session)
    const misfits: Array<AnswersDoNotFit["answers"][number]> = []
    const taken: Array<AnswersTaken["answers"][number]> = []
    const fitted: Array<readonly [OpenQuestion, Schema.Json]> = []
    for (const [inquiryId, value] of Object.entries(answers)) {
      const target = open.find((q) => q.inquiryId === inquiryId)
      if (target === undefined) {
        const why = yield* closedOrUnknown(session, inquiryId, open)
        if (why._tag === "QuestionNotOpen") return yield* why
        taken.push({ inquiry_id: inquiryId, by: why.by, cancelled: why._tag === "QuestionCancelled" })
        continue
      }
      const parsed = checked(session, target, { value })
      if (Result.isSuccess(parsed)) fitted.push([target, parsed.success])
      else if (parsed.failure._tag === "SecretNeedsRunningTurn") return yield* parsed.failure
      else misfits.push({ inquiry_id: inquiryId, reason: parsed.failure.reason, expected: parsed.failure.expected })
    }
    if (misfits.length > 0) return yield* new AnswersDoNotFit({ answers: misfits })
    if (taken.length > 0) return yield* new AnswersTaken({ answers: taken })
    const now = yield* Timestamp.current
    if (fitted.length > 0) yield* session.append(fitted.map(([target, value]) => responseOf(now, target, value).event))
    const given = new Set(fitted.map(([target]) => target))
    return { answered: fitted.map(([target]) => target.inquiryId), stillOpen: open.filter((q) => !given.has(q)) }
  })

/** Answers the open question `inquiryId` of conversation `id`, under its lock. */
export const answer = (id: ConversationId, inquiryId: string, input: AnswerInput) =>
  Effect.scoped(
    Effect.flatMap(
      ConversationStore.use((store) => store.open(id)),
      (session) => record(session, inquiryId, input)
    )
  ).pipe(Effect.catchTag("ConversationLocked", (locked) => closedInLog(id, inquiryId, locked)))

/**
 * Why an answer to `inquiryId` is refused when the run it raced is ending: a
 * run that took an earlier answer has it in the log, while its socket closes
 * (the offer is lost) and before it lets go of the conversation (it is
 * locked). A late answer is told the question was answered (or cancelled),
 * not that the run was lost or the conversation busy; a question not closed
 * in the log keeps the `refused` refusal.
 */
const closedInLog = <E>(
  id: ConversationId,
  inquiryId: string,
  refused: E
): Effect.Effect<never, E | QuestionAlreadyAnswered | QuestionCancelled, ConversationStore> =>
  Effect.gen(function* () {
    const conversation = yield* Effect.option(ConversationStore.use((store) => store.load(id)))
    const closed = Option.isSome(conversation)
      ? conversation.value.entries.findLast((e) => e.type === "inquiry_response" && e.id === inquiryId)
      : undefined
    if (closed?.type !== "inquiry_response") return yield* Effect.fail(refused)
    const by = describeResponse(closed)
    return yield* closed.outcome === "cancelled"
      ? new QuestionCancelled({ inquiry_id: inquiryId, by })
      : new QuestionAlreadyAnswered({ inquiry_id: inquiryId, by })
  })

/** One open question as `--format json` shows it (`answer ID`, the HTTP API). */
export const row = (q: OpenQuestion): Schema.JsonObject => ({
  id: q.inquiryId,
  inquiry_id: q.inquiryId,
  kind: q.kind ?? "question",
  tool: q.tool,
  arguments: q.arguments ?? null,
  tool_call_id: q.toolCallId,
  question: q.question.text,
  answer_type: q.question.answer_type.type,
  options: q.question.answer_type.type === "select" ? q.question.answer_type.options : null,
  default: q.question.default ?? null
})

/** Where an answer went: to the running turn, or into the waiting turn on disk. */
export type Delivered =
  | { readonly _tag: "Delivered"; readonly inquiryId: string }
  | ({ readonly _tag: "Recorded" } & AnswerRecorded)

/**
 * The one place that decides where an answer goes: to the running turn of
 * `conversation` when one runs (`RunningTurns`: the first answer that fits
 * wins, and the turn records it), else into its waiting turn on disk. Every
 * channel answers through here — the CLI, a run's socket, the HTTP API, a
 * cluster runner — so the choice is made once.
 */
const toTurn = <A, E, R, B, E2, R2>(
  conversation: ConversationId,
  running: (turn: RunningTurn) => Effect.Effect<A, E, R>,
  recorded: () => Effect.Effect<B, E2, R2>
): Effect.Effect<
  { readonly running: true; readonly a: A } | { readonly running: false; readonly b: B },
  E | E2 | NotPrivate | HostProtocolMismatch,
  R | R2 | RunningTurns
> =>
  Effect.scoped(
    Effect.gen(function* () {
      const turn = yield* RunningTurns.use((turns) => turns.find(conversation))
      if (Option.isSome(turn)) return { running: true as const, a: yield* running(turn.value) }
      return { running: false as const, b: yield* recorded() }
    })
  )

/**
 * The answer `value` to question `inquiry` of `conversation`, wherever the
 * turn is (`toTurn`). The value is JSON already: reading typed text is the
 * edge's job; `via` says which surface it came through (contract §8).
 */
export const deliver = (conversation: ConversationId, inquiry: string, value: Schema.Json, via?: Via) =>
  Effect.map(
    toTurn(
      conversation,
      (turn) =>
        turn
          .offer(inquiry, value, via)
          .pipe(Effect.catchTag("RunLost", (lost) => closedInLog(conversation, inquiry, lost))),
      () => answer(conversation, inquiry, { value })
    ),
    (r): Delivered => (r.running ? { _tag: "Delivered", inquiryId: inquiry } : { _tag: "Recorded", ...r.b })
  )

/** What a batch did: taken by the running turn, or recorded into the waiting turn on disk. */
export interface DeliveredAll {
  readonly outcome: "delivered" | "recorded"
  readonly answered: ReadonlyArray<string>
}

/**
 * The `answers` (by inquiry id) to questions of `conversation`, all or none,
 * wherever the turn is (`toTurn`): the running turn takes them in one step
 * (`RunningTurn.offerAll`), or they are checked and appended together on disk
 * (`recordAll`); `via` says which surface they came through, as for `deliver`.
 */
export const deliverAll = (conversation: ConversationId, answers: Readonly<Record<string, Schema.Json>>, via?: Via) =>
  Effect.map(
    toTurn(
      conversation,
      (turn) => turn.offerAll(answers, via),
      () =>
        Effect.scoped(
          Effect.flatMap(
            ConversationStore.use((store) => store.open(conversation)),
            (session) => recordAll(session, answers)
          )
        )
    ),
    (r): DeliveredAll =>
      r.running
        ? { outcome: "delivered", answered: Object.keys(answers) }
        : { outcome: "recorded", answered: r.b.answered }
  )
