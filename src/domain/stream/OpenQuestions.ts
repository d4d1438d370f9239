/**
 * The open questions of a conversation's waiting turn (requests recorded
 * without a response, for tool calls without a response either: what
 * `conversation answer` lists), as plain data a listing can keep beside its
 * row: `parley inbox` then lists every waiting turn without reading its
 * event log again (docs/cli.md#parley-inbox).
 *
 * @example
 * ```ts
 * import * as OpenQuestions from "parley/domain/stream/OpenQuestions"
 * import type { StreamEntry } from "parley"
 * declare const entries: ReadonlyArray<StreamEntry>
 * OpenQuestions.ofEntries(entries) // [{ inquiryId: "call_1.confirm.1", tool: "deploy", question: { id: "confirm", … }, since: "…" }]
 * ```
 *
 * @since 0.1.0
 */
import type { JsonObject } from "effect/Schema"
import type { StreamEntry } from "../event/ConversationEvent.ts"
import * as PermissionInquiry from "../event/PermissionInquiry.ts"
import { fromInquiryQuestion, type Question } from "../tool/Question.ts"
import { analyze, type IncompleteTurn, splitIncompleteTurn } from "./IncompleteTurn.ts"

/** One open question of a waiting turn. */
export interface WaitingQuestion {
  readonly inquiryId: string
  readonly toolCallId: string
  readonly tool: string
  /** An approval (may this call run?) carries the call's arguments; absent: a question. */
  readonly kind?: "approval"
  readonly arguments?: JsonObject
  /** The question's fields as JSON (a listing's index keeps them as they are; decode with `Question`). */
  readonly question: typeof Question.Encoded
  /** When it was asked: its request's timestamp (JP's format). */
  readonly since: string
}

/** The open questions of `incomplete` (none when the last turn is complete), in the order they were asked. */
export const ofIncomplete = (incomplete: IncompleteTurn | null): ReadonlyArray<WaitingQuestion> =>
  incomplete === null
    ? []
    : analyze(incomplete).pendingInquiries.map((p) => {
        // An approval shows what it approves: the call's arguments, or what the tool asked about (an MCP page or form).
        const approves = PermissionInquiry.approves(p.request, p.toolCall.arguments)
        return {
          inquiryId: p.request.id,
          toolCallId: p.toolCall.id,
          tool: p.toolCall.name,
          ...(approves !== undefined ? { kind: "approval" as const, arguments: approves } : {}),
          // The class's own fields: plain data, as JSON keeps it.
          question: { ...fromInquiryQuestion(p.questionId ?? "answer", p.request.question) },
          since: p.request.timestamp
        }
      })

/** {@link ofIncomplete} of a whole stream's last turn. */
export const ofEntries = (entries: ReadonlyArray<StreamEntry>): ReadonlyArray<WaitingQuestion> =>
  ofIncomplete(splitIncompleteTurn(entries).incomplete)
