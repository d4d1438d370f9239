/**
 * What a `parley query` run did, collected from the programs' notices, and
 * `query --format json`'s one document (issue 14 item 3):
 *
 * ```json
 * { "conversation_id": "17953588145", "created": true, "model": "openai/gpt-5",
 *   "outcome": "completed", "reply": "I'll write it.\nDone.", "stop_reason": "end_turn",
 *   "tool_calls": [ { "id": "call_1", "name": "write_note", "arguments": { "path": "a.txt" },
 *                     "outcome": "success", "content": "Wrote a.txt." } ],
 *   "questions": [ { "id": "call_1.overwrite.1", "tool_call_id": "call_1", "tool": "write_note",
 *                    "question": "Overwrite a.txt?", "answer_type": "boolean",
 *                    "answered_by": "assistant", "outcome": "answered", "answer": true } ],
 *   "incomplete": null }
 * ```
 *
 * `outcome` is `completed`, `resumed`, `discarded`, `quit`,
 * `nothing_to_resume`, `nothing_to_discard`, `edit_abandoned`, `interrupted`
 * or `failed` (then `error` holds the message); `incomplete` is how a run that
 * stopped early left the turn, with `resume` the command that resumes it. A
 * tool call's `outcome` is `success`, `error`, `skipped` (it never ran) or
 * `unfinished`; a secret answer is never in the document (`redacted`).
 *
 * @example
 * ```ts
 * import { Report } from "./Report.ts"
 * const report = new Report()
 * report.notice(notice)
 * JSON.stringify(report.toJson({ outcome: "completed" }))
 * ```
 */
import type * as Schema from "effect/Schema"
import type { IncompleteSummary } from "../domain/stream/IncompleteTurn.ts"
import type { Notice } from "../programs/Notice.ts"
import type { QueryOutcome } from "../programs/Query.ts"

interface ToolCallRow {
  id: string
  name: string
  arguments: Schema.JsonObject
  outcome: "success" | "error" | "skipped" | "unfinished"
  content?: string
}

interface QuestionRow {
  id: string
  tool_call_id: string
  tool: string
  question: string
  answer_type: string
  answered_by: string
  outcome: "answered" | "redacted" | "cancelled"
  answer?: Schema.Json
  reason?: string
}

/** The outcome names of the document. */
export const outcomeName = (outcome: QueryOutcome): string =>
  outcome._tag.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase()

export class Report {
  conversationId: string | undefined
  created = false
  model: string | undefined
  /** Text of each model reply, in order. */
  private readonly replies: Array<string> = []
  private replyOpen = false
  stopReason: string | null = null
  /** How the turn was left when the run stopped early (`undefined`: it did not). */
  stopped: IncompleteSummary | null | undefined = undefined
  private readonly calls = new Map<string, ToolCallRow>()
  private readonly questions: Array<QuestionRow> = []

  /** A model request started: until it finishes, the last reply's stop reason is not this one's. */
  replyStarted(): void {
    this.replyOpen = false
    this.stopReason = null
  }

  /** Streamed text of the current reply. */
  text(chunk: string): void {
    if (!this.replyOpen) this.replies.push("")
    this.replyOpen = true
    this.replies[this.replies.length - 1] += chunk
  }

  notice(n: Notice): void {
    switch (n._tag) {
      case "ToolStarted":
        this.calls.set(n.call.id, { id: n.call.id, name: n.call.name, arguments: n.call.arguments, outcome: "unfinished" })
        return
      case "ToolFinished":
        this.calls.set(n.call.id, {
          id: n.call.id,
          name: n.call.name,
          arguments: n.call.arguments,
          outcome: !n.ran ? "skipped" : n.response.is_error ? "error" : "success",
          content: n.response.content
        })
        return
      case "QuestionClosed": {
        const o = n.outcome
        this.questions.push({
          id: n.inquiryId,
          tool_call_id: n.call.id,
          tool: n.call.name,
          question: n.question.text,
          answer_type: n.question.answer_type.type,
          answered_by: n.by,
          outcome: o._tag === "Answered" ? "answered" : o._tag === "Redacted" ? "redacted" : "cancelled",
          ...(o._tag === "Answered" ? { answer: o.answer } : {}),
          ...(o._tag === "Cancelled" ? { reason: o.reason } : {})
        })
        return
      }
      case "ReplyFinished":
        this.replyOpen = false
        this.stopReason = n.stopReason ?? null
        return
      case "Stopped":
        this.stopped = n.incomplete
        return
    }
  }

  /** The reply text as the text format prints it (replies on their own lines). */
  get reply(): string {
    return this.replies.filter((r) => r !== "").join("\n")
  }

  /** The document, for an outcome name and, when the run failed, its error and the resume command. */
  toJson(end: { readonly outcome: string; readonly error?: string; readonly resume?: string }): Schema.JsonObject {
    return {
      conversation_id: this.conversationId ?? null,
      created: this.created,
      model: this.model ?? null,
      outcome: end.outcome,
      reply: this.reply,
      stop_reason: this.stopReason,
      tool_calls: [...this.calls.values()] as unknown as Schema.JsonArray,
      questions: this.questions as unknown as Schema.JsonArray,
      incomplete: (this.stopped ?? null) as Schema.Json,
      ...(end.error !== undefined ? { error: end.error } : {}),
      ...(end.resume !== undefined ? { resume: end.resume } : {})
    }
  }
}
