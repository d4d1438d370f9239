/**
 * The run host's protocol (docs/questions-and-approvals.md#runs-beyond-the-terminal; RFD 027 "client-server query
 * architecture", past its one-client non-goal): while `parley query` runs a
 * turn it serves the run on a local socket, and any number of clients —
 * another terminal, `conversation answer`, `conversation kill`, `ls`, the
 * server — speak this typed `effect/rpc` group to it:
 *
 * - `Subscribe({ after, attend })`: the run's events after a sequence number
 *   (0: the whole current run, replayed), then live, ending with `Stopped`;
 *   `attend`: a person follows at a terminal (`conversation attach`), so
 *   questions for a person wait for them while subscribed; a subscriber
 *   that falls `LiveView.BEHIND` behind fails with `LiveViewLagged` (it
 *   subscribes again after the last event it got), one whose cursor is no
 *   longer kept with `LiveViewGone`;
 * - `Answer({ inquiry_id, answer, remember })`: offers an answer to an open
 *   question — the first that fits wins (`PendingAnswers`), later ones are
 *   refused with who answered; a secret is sent here and never written;
 *   `remember`: `Y`/`N` typed, kept for the rest of the turn; `via`: the
 *   surface the answer came through (`attach` when not said);
 * - `Interrupt()`: stops the run as SIGTERM does (open questions
 *   `Cancelled{user}`, the turn resumable);
 * - `Info()`: the host's pid, the conversation, the open questions, the
 *   scripted model's script (what a resume command repeats);
 * - `Hello()`: the host's protocol version (`domain/run/HostProtocol.ts`),
 *   asked first by every client; its shape never changes, so a client of
 *   another version can always read it and refuse with one line. A host
 *   that predates it answers with a defect: version 1.
 *
 * Nothing new lands in the conversation files: the socket is the only trace.
 *
 * @example
 * ```ts
 * import { HostRpcs } from "parley/services/RunHost"
 * HostRpcs.requests.size // 6
 * ```
 *
 * @since 0.1.0
 */
import * as Rpc from "effect/rpc/Rpc"
import * as RpcGroup from "effect/rpc/RpcGroup"
import * as Schema from "effect/Schema"
import { Question } from "../domain/tool/Question.ts"
import { LostSchema } from "../domain/run/LiveView.ts"
import { QuestionKind, RunEvent, ToolCall, Via } from "../domain/run/RunEvent.ts"
import {
  AnswerDoesNotFit,
  AnswersDoNotFit,
  AnswersTaken,
  QuestionAlreadyAnswered,
  QuestionCancelled,
  QuestionNotOpen
} from "./Refusals.ts"

/** An event of the run with its sequence number, as it crosses the socket. */
export const SequencedEvent = Schema.Struct({ seq: Schema.Number, event: RunEvent })

/** A question open in the running turn, as clients see it. */
export const OpenQuestionInfo = Schema.Struct({
  inquiry_id: Schema.String,
  kind: Schema.optionalKey(QuestionKind),
  call: ToolCall,
  question: Question,
  since: Schema.String
})
export type OpenQuestionInfo = typeof OpenQuestionInfo.Type

/** What a host says about itself. */
export const HostInfo = Schema.Struct({
  pid: Schema.Number,
  conversation_id: Schema.String,
  open: Schema.Array(OpenQuestionInfo),
  /** The sequence number of the latest event published: a subscriber's replay ends there. */
  latest: Schema.Number,
  /**
   * The sequence number of the run's `Stopped`, once the run has ended: the
   * host is then only sending the end to its followers before it exits (it
   * still holds the conversation, and still lists as running; `parley
   * serve` draws its page ended). Absent while the run goes on (and from a
   * parley that predates it).
   */
  ended: Schema.optionalKey(Schema.Number),
  /** The scripted model's steps file, when the run was given one. */
  script: Schema.optionalKey(Schema.String),
  /** `--detached-policy` as the run was given it, when it was. */
  detached_policy: Schema.optionalKey(Schema.String)
})
export type HostInfo = typeof HostInfo.Type

/** What a host says first: its protocol version, and the parley version and conversation it runs. Never changes shape. */
export const HostHello = Schema.Struct({
  protocol: Schema.Number,
  parley: Schema.optionalKey(Schema.String),
  conversation_id: Schema.optionalKey(Schema.String)
})
export type HostHello = typeof HostHello.Type

/** The group every host serves and every client speaks. */
export class HostRpcs extends RpcGroup.make(
  Rpc.make("Subscribe", {
    payload: { after: Schema.Number, attend: Schema.optionalKey(Schema.Boolean) },
    success: SequencedEvent,
    // A follower that fell too far behind, or whose cursor the run no longer keeps (`domain/run/LiveView.ts`).
    error: LostSchema,
    stream: true
  }),
  Rpc.make("Answer", {
    payload: {
      inquiry_id: Schema.String,
      answer: Schema.Json,
      remember: Schema.optionalKey(Schema.Boolean),
      via: Schema.optionalKey(Via)
    },
    error: Schema.Union([QuestionNotOpen, QuestionAlreadyAnswered, QuestionCancelled, AnswerDoesNotFit])
  }),
  // Several answers, taken all or none (`PendingAnswers.offerAll`).
  Rpc.make("AnswerAll", {
    payload: { answers: Schema.Record(Schema.String, Schema.Json), via: Schema.optionalKey(Via) },
    error: Schema.Union([QuestionNotOpen, AnswersDoNotFit, AnswersTaken])
  }),
  Rpc.make("Interrupt", {}),
  Rpc.make("Info", { success: HostInfo }),
  Rpc.make("Hello", { success: HostHello })
) {}
