/**
 * `query --format json`'s one document, as a pure fold over a run's events
 * (docs/decisions.md#one-run-event-stream: the report is a consumer of the run-event stream, so the
 * live run and a replay of its events give the same document):
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
 * `outcome` is the run's {@link RunEvent.Ending} (`failed` when the run
 * never got to a conversation); a tool call's `outcome` is `success`,
 * `error`, `skipped` (it never ran) or `unfinished`; a question's is
 * `answered`, `redacted` (a secret: never in the document), `cancelled`
 * (with `reason`) or `open` (still waiting: a deferred run, exit 3 — with
 * `options` and `default` so a script can answer it). `incomplete` is how
 * the run left the turn; the edge adds `error` and `resume` (a command).
 *
 * @example
 * ```ts
 * import * as RunEvent from "parley/domain/run/RunEvent"
 * import * as RunReport from "parley/domain/run/RunReport"
 * const report = RunReport.fold([RunEvent.make.TextDelta({ text: "Hi" })])
 * RunReport.toJson(report, {}).reply // "Hi"
 * ```
 *
 * @since 0.1.0
 */
import type * as Schema from "effect/Schema"
import type { AnswerType } from "../tool/AnswerType.ts"
import type * as RunEvent from "./RunEvent.ts"

/** One tool call of the run (a type, not an interface: a row is JSON as it is, in {@link toJson}). */
export type ToolCallRow = {
  readonly id: string
  readonly name: string
  readonly arguments: Schema.JsonObject
  readonly outcome: "success" | "error" | "skipped" | "unfinished"
  readonly content?: string
}

/** One question of the run: closed (who answered, how) or still open (a type: JSON as it is). */
export type QuestionRow = {
  readonly id: string
  /** The same as `id` (contract §8's name). */
  readonly inquiry_id: string
  /** `approval`: may the call run? (answered yes/no/always/never); else a tool's `question`. */
  readonly kind: RunEvent.QuestionKind
  readonly tool_call_id: string
  readonly tool: string
  readonly question: string
  readonly answer_type: string
  readonly answered_by: RunEvent.Answerer | null
  /** The surface a person's answer came through (`terminal`, `attach`, `api`, …), when one did. */
  readonly via?: RunEvent.Via
  readonly outcome: "answered" | "redacted" | "cancelled" | "open"
  readonly answer?: Schema.Json
  readonly reason?: string
  readonly options?: ReadonlyArray<string>
  readonly default?: Schema.Json
  /** `none`: asked each time (an MCP server's page or form), answered yes or no only, never remembered. */
  readonly persistence?: "none"
}

/** What a run did, folded from its events. */
export interface RunReport {
  readonly conversationId: string | null
  readonly created: boolean
  readonly model: string | null
  /** Text of each model reply, in order (a reply with no text is left out). */
  readonly replies: ReadonlyArray<string>
  readonly stopReason: string | null
  readonly toolCalls: ReadonlyArray<ToolCallRow>
  /** Closed questions in the order they closed, then the open ones in the order they opened. */
  readonly questions: ReadonlyArray<QuestionRow>
  /** How the run ended; `null` while it runs (or when it never reached a conversation). */
  readonly ending: RunEvent.Ending | null
  readonly incomplete: RunEvent.Incomplete
}

const openRow = (e: RunEvent.Of<"QuestionOpened">): QuestionRow => ({
  id: e.inquiry_id,
  inquiry_id: e.inquiry_id,
  kind: e.kind,
  tool_call_id: e.call.id,
  tool: e.call.name,
  question: e.question.text,
  answer_type: e.question.answer_type.type,
  answered_by: null,
  outcome: "open",
  ...(e.question.answer_type.type === "select" ? { options: e.question.answer_type.options } : {}),
  ...(e.question.default !== undefined ? { default: e.question.default } : {}),
  ...(e.question.persistence === "none" ? { persistence: "none" } : {})
})

const closedRow = (e: RunEvent.Of<"QuestionClosed">): QuestionRow => {
  const o = e.outcome
  return {
    id: e.inquiry_id,
    inquiry_id: e.inquiry_id,
    kind: e.kind,
    tool_call_id: e.call.id,
    tool: e.call.name,
    question: e.question.text,
    answer_type: e.question.answer_type.type,
    answered_by: e.by,
    ...(e.via !== undefined ? { via: e.via } : {}),
    outcome: o._tag === "Answered" ? "answered" : o._tag === "Redacted" ? "redacted" : "cancelled",
    ...(o._tag === "Answered" ? { answer: o.answer } : {}),
    ...(o._tag === "Cancelled" ? { reason: o.reason } : {}),
    ...(e.question.persistence === "none" ? { persistence: "none" } : {})
  }
}

const toolRow = (call: RunEvent.ToolCall, outcome: ToolCallRow["outcome"], content?: string): ToolCallRow => ({
  id: call.id,
  name: call.name,
  arguments: call.arguments,
  outcome,
  ...(content !== undefined ? { content } : {})
})

/** The fold's state while it reads the events. */
interface Acc {
  conversationId: string | null
  created: boolean
  model: string | null
  stopReason: string | null
  ending: RunEvent.Ending | null
  incomplete: RunEvent.Incomplete
  readonly replies: Array<string>
  replyOpen: boolean
  readonly calls: Map<string, ToolCallRow>
  readonly closed: Array<QuestionRow>
  readonly open: Map<string, QuestionRow>
}

/** The reply text and its stop reason. */
const reply = (acc: Acc, e: RunEvent.RunEvent): void => {
  if (e._tag === "Waiting" && e.waiting) {
    // A new model request: until it finishes, the last reply's stop reason is not this one's.
    acc.replyOpen = false
    acc.stopReason = null
  } else if (e._tag === "TextDelta") {
    if (!acc.replyOpen) acc.replies.push("")
    acc.replyOpen = true
    acc.replies[acc.replies.length - 1] += e.text
  } else if (e._tag === "ReplyFinished") {
    acc.replyOpen = false
    acc.stopReason = e.stop_reason
  }
}

/** One event into the state. */
const step = (acc: Acc, e: RunEvent.RunEvent): void => {
  switch (e._tag) {
    case "ConversationKnown":
      acc.conversationId = e.conversation_id
      acc.created = e.created
      return
    case "ModelChosen":
      acc.model = e.model
      return
    case "ToolStarted":
      acc.calls.set(e.call.id, toolRow(e.call, "unfinished"))
      return
    case "ToolFinished":
      acc.calls.set(
        e.call.id,
        toolRow(e.call, !e.ran ? "skipped" : e.response.is_error ? "error" : "success", e.response.content)
      )
      return
    case "QuestionOpened":
      acc.open.set(e.inquiry_id, openRow(e))
      return
    case "QuestionClosed":
      acc.open.delete(e.inquiry_id)
      acc.closed.push(closedRow(e))
      return
    case "Stopped":
      acc.ending = e.ending
      acc.incomplete = e.incomplete
      return
    default:
      return reply(acc, e)
  }
}

/** The run's report: every event of the run, in order. */
export const fold = (events: Iterable<RunEvent.RunEvent>): RunReport => {
  const acc: Acc = {
    conversationId: null,
    created: false,
    model: null,
    stopReason: null,
    ending: null,
    incomplete: null,
    replies: [],
    replyOpen: false,
    calls: new Map(),
    closed: [],
    open: new Map()
  }
  for (const e of events) step(acc, e)
  return {
    conversationId: acc.conversationId,
    created: acc.created,
    model: acc.model,
    replies: acc.replies.filter((r) => r !== ""),
    stopReason: acc.stopReason,
    toolCalls: [...acc.calls.values()],
    questions: [...acc.closed, ...acc.open.values()],
    ending: acc.ending,
    incomplete: acc.incomplete
  }
}

/** The questions still waiting for an answer when the run ended. */
export const openQuestions = (report: RunReport): ReadonlyArray<QuestionRow> =>
  report.questions.filter((q) => q.outcome === "open")

/** The answer type of a question row, as its question had it (a select with its options). */
export const answerTypeOf = (q: QuestionRow): AnswerType =>
  q.answer_type === "select" ? { type: "select", options: q.options ?? [] } : ({ type: q.answer_type } as AnswerType)

/** The reply text as the text format prints it (replies on their own lines). */
export const replyText = (report: RunReport): string => report.replies.join("\n")

/** What the edge adds: an outcome when the run never reached a conversation, the error, the resume command. */
export interface Ending {
  readonly outcome?: string
  readonly error?: string
  readonly resume?: string
}

/** The document. */
export const toJson = (report: RunReport, end: Ending): Schema.JsonObject => ({
  conversation_id: report.conversationId,
  created: report.created,
  model: report.model,
  outcome: end.outcome ?? report.ending ?? "failed",
  reply: replyText(report),
  stop_reason: report.stopReason,
  tool_calls: report.toolCalls,
  questions: report.questions,
  incomplete: report.incomplete,
  ...(end.error !== undefined ? { error: end.error } : {}),
  ...(end.resume !== undefined ? { resume: end.resume } : {})
})
