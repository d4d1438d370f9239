/**
 * One open question (RFD 082 "Recording lifecycle"): what is asked, for
 * which call, under which id, since when, and how it closes. The open
 * inquiry owns its registration with every answerer (`registered`) and its
 * closing (`answered`, `cancelled`, `accept`): the routes that wait for a
 * person (`Person.ts`) take it whole, and nothing else is passed around.
 *
 * @example
 * ```ts
 * import { OpenInquiry } from "parley/programs/coordinator/Open"
 * import type { Env } from "parley/programs/coordinator/Env"
 * import type { InquiryId, InquirySource, Question, Timestamp, ToolCallRequest } from "parley"
 * declare const env: Env, call: ToolCallRequest, question: Question, id: InquiryId.InquiryId, source: InquirySource, since: Timestamp.Timestamp
 * const open = new OpenInquiry(env, call, question, { id, source }, since)
 * const routed = open.answered("you", true) // Effect<Routed, RecordError>: recorded, announced, closed
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { CancellationReason } from "../../domain/event/CancellationReason.ts"
import type { StreamEntry } from "../../domain/event/ConversationEvent.ts"
import type { EventMetadata } from "../../domain/event/EventMetadata.ts"
import * as EventMetadataKeys from "../../domain/event/EventMetadata.ts"
import * as Events from "../../domain/event/Events.ts"
import * as PermissionInquiry from "../../domain/event/PermissionInquiry.ts"
import type { InquiryId } from "../../domain/event/InquiryId.ts"
import type { InquiryQuestion } from "../../domain/event/InquiryQuestion.ts"
import type { InquirySource } from "../../domain/event/InquirySource.ts"
import type * as Timestamp from "../../domain/event/Timestamp.ts"
import type { ToolCallRequest } from "../../domain/event/ToolCallRequest.ts"
import * as RunEvent from "../../domain/run/RunEvent.ts"
import * as TurnState from "../../domain/stream/TurnState.ts"
import { type Question, toInquiryQuestion } from "../../domain/tool/Question.ts"
import * as QuestionPolicy from "../../domain/tool/QuestionPolicy.ts"
import type { ToolResponse } from "../../services/Executor.ts"
import type { Offered, Waiting } from "../../services/PendingAnswers.ts"
import { type Env, type RecordError, Routed, recordThen } from "./Env.ts"

/** The metadata of an answer remembered for the turn (docs/decisions.md#remembered-answers-recorded: a resumed turn rebuilds its memory from it). */
const REMEMBERED: EventMetadata = { [EventMetadataKeys.rememberedAnswer]: true }

/** How a question opens: its id and who asked (an inquiry's `Opening` is one). */
export interface Opened {
  readonly id: InquiryId
  readonly source: InquirySource
  /** A person's approval to run the call: no config answer, no assistant (docs/decisions.md#person-only-questions). */
  readonly approval?: boolean
  /** An approval the running tool asks (an MCP server's page or form): what it approves, shown in place of the call's arguments. */
  readonly approves?: Schema.JsonObject
  /** The tool asked again right after its configured answer (why, in its words). */
  readonly staticRejected?: string | undefined
  /** The call as run events show it, when the caller made it already (one object for all the call's events, kept with them). */
  readonly shown?: RunEvent.ToolCall | undefined
}

/**
 * One open question. One object per question, its methods on the
 * prototype: every question the coordinator asks makes one.
 */
export class OpenInquiry {
  /** Set once the response is recorded; read by the interrupt handler (owned by the one fiber that asks). */
  done = false
  readonly id: InquiryId
  readonly source: InquirySource
  readonly since: Timestamp.Timestamp
  readonly approval: boolean
  /** What an approval the running tool asks approves (`undefined`: the call's own run permission, or a question). */
  readonly approves: Schema.JsonObject | undefined
  readonly staticRejected: string | undefined
  /** What the question's kind allows (secret, remembered, person only). */
  readonly policy: QuestionPolicy.QuestionPolicy
  /** The call as run events show it. */
  readonly shown: RunEvent.ToolCall
  /** The question as an inquiry records it (RFD 082), for the request and the backend alike. */
  readonly inquiryQuestion: InquiryQuestion
  /** What it asks: a tool's question, or an approval to run the call. */
  readonly kind: RunEvent.QuestionKind
  /** The registration with every answerer, once made (it lasts for the scope that made it). */
  private waiting: Waiting | undefined

  constructor(
    readonly env: Env,
    readonly call: ToolCallRequest,
    readonly question: Question,
    opened: Opened,
    /** The time of its request (the question is open since then). */
    since: Timestamp.Timestamp
  ) {
    this.id = opened.id
    this.source = opened.source
    this.since = since
    this.approval = opened.approval === true
    this.approves = opened.approves
    this.kind = this.approval ? "approval" : "question"
    this.staticRejected = opened.staticRejected
    this.policy = QuestionPolicy.of(question)
    // Every surface shows an approval with what it approves: the call's arguments, or what the tool asked about.
    this.shown =
      opened.approves === undefined
        ? (opened.shown ?? RunEvent.toolCall(call))
        : RunEvent.toolCall({ id: call.id, name: call.name, arguments: opened.approves })
    this.inquiryQuestion = toInquiryQuestion(question)
  }

  /**
   * Registers the question with every answerer while the caller's scope is
   * open; registered once, however many steps of its route wait on it (an
   * attended question whose people leave goes on waiting, still registered).
   */
  registered(): Effect.Effect<Waiting, never, Scope.Scope> {
    if (this.waiting !== undefined) return Effect.succeed(this.waiting)
    return Effect.map(
      this.env.answers.open({
        inquiryId: this.id,
        kind: this.kind,
        conversationId: this.env.session.id,
        call: this.shown,
        question: this.question,
        since: this.since
      }),
      (waiting) => {
        this.waiting = waiting
        return waiting
      }
    )
  }

  /** `remembered`: the person said to reuse it for the turn (`Y`/`N`), recorded with the answer so a resumed turn remembers too. */
  answered(
    by: RunEvent.Answerer,
    answer: Schema.Json,
    remembered?: boolean,
    via?: RunEvent.Via
  ): Effect.Effect<Routed, RecordError> {
    const { id } = this
    // An approval answered with edited arguments: a yes, recorded with them (the coordinator runs the call with them).
    const edit = this.approval ? PermissionInquiry.editOf(answer) : undefined
    if (edit !== undefined && "arguments" in edit)
      return this.close(
        (at) => Events.answered(at, id, true, PermissionInquiry.editedMetadata(edit.arguments)),
        by,
        { _tag: "Answered", answer: true },
        Routed.Answer({ answer }),
        via
      )
    return this.policy.redact
      ? this.close((at) => Events.redacted(at, id), by, { _tag: "Redacted" }, Routed.Answer({ answer }), via)
      : this.close(
          (at) => (remembered === true ? Events.answered(at, id, answer, REMEMBERED) : Events.answered(at, id, answer)),
          by,
          { _tag: "Answered", answer },
          Routed.Answer({ answer }),
          via
        )
  }

  /**
   * Records an answer that won, remembering it for the turn when the person
   * typed `Y`/`N` (here or at an attached terminal) or answered an approval
   * `always`/`never`: an approval is remembered as the permission prompt's
   * `Y`/`N` is (the tool's later calls this turn are not asked).
   */
  accept(offered: Offered, remember: boolean): Effect.Effect<Routed, RecordError> {
    // A secret, or a question with persistence = "none" (RFD 083), is never remembered.
    if (!(remember && this.policy.rememberable)) return this.answered(offered.by, offered.answer, false, offered.via)
    const { call, question } = this
    const approval = this.approval
    return Effect.andThen(
      Ref.update(this.env.state, (s) =>
        approval
          ? TurnState.rememberPermission(s, call.name, offered.answer === true ? "y" : "n")
          : TurnState.rememberAnswer(s, call.name, question.id, offered.answer)
      ),
      this.answered(offered.by, offered.answer, true, offered.via)
    ).pipe(approval ? Effect.tap(() => this.answerSiblings(offered.answer)) : (e) => e)
  }

  /**
   * An approval answered `always`/`never` answers the tool's other approvals
   * open in this turn now (calls run together), as remembered: the later ones
   * are not asked at all (`TurnState.rememberedPermission`). Not with a
   * terminal here: its prompt answers from memory by itself.
   */
  private answerSiblings(answer: Schema.Json): Effect.Effect<void> {
    const { env, call } = this
    if (env.prompts.interactive) return Effect.void
    return Effect.flatMap(env.answers.list, (open) =>
      Effect.forEach(
        open.filter(
          (q) =>
            q.kind === "approval" &&
            q.conversationId === env.session.id &&
            q.call.name === call.name &&
            q.inquiryId !== this.id
        ),
        (q) => Effect.ignore(env.answers.offer(q.inquiryId, answer, "remembered")),
        { discard: true }
      )
    )
  }

  cancelled(
    by: RunEvent.Answerer,
    reason: CancellationReason,
    response: ToolResponse
  ): Effect.Effect<Routed, RecordError> {
    const { id } = this
    return this.close(
      (at) => Events.cancelled(at, id, reason),
      by,
      { _tag: "Cancelled", reason },
      Routed.End({ response })
    )
  }

  /** What announces how the question closed. */
  closedEvent(by: RunEvent.Answerer, outcome: RunEvent.QuestionOutcome, via?: RunEvent.Via): RunEvent.RunEvent {
    const { id, kind, shown, question } = this
    // One literal per shape (no spread): every question closes once, and this is on its path.
    return via === undefined
      ? RunEvent.make.QuestionClosed({ inquiry_id: id, kind, call: shown, question, by, outcome })
      : RunEvent.make.QuestionClosed({ inquiry_id: id, kind, call: shown, question, by, via, outcome })
  }

  /**
   * Records the response, marks the question closed and announces it, in
   * the step that records it (nothing can come between the three).
   */
  private close(
    event: (at: Timestamp.Timestamp) => StreamEntry,
    by: RunEvent.Answerer,
    outcome: RunEvent.QuestionOutcome,
    routed: Routed,
    via?: RunEvent.Via
  ) {
    return recordThen(this.env, event, () => {
      this.done = true
      this.env.events.publishUnsafe(this.closedEvent(by, outcome, via))
      return Effect.succeed(routed)
    })
  }
}
