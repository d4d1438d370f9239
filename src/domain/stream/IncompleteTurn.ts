/**
 * The incomplete last turn of a conversation (RFD 023): detection, the split
 * that keeps it out of the complete stream, the analysis that tells a resumed
 * turn where to re-enter, and the cheap summary `conversation ls` shows.
 *
 * The last turn (from the last `turn_start`, or the whole implicit turn when
 * there is none; trailing bare `turn_start`s do not count as a turn here) is
 * complete when all three of RFD 023's structural
 * conditions hold:
 * 1. it holds a `chat_request` and, after the first one, a `chat_response`
 *    (RFD 023: "No `ChatResponse` after `ChatRequest`");
 * 2. every `tool_call_request` has its `tool_call_response`;
 * 3. when there are tool call responses, a `chat_response` follows the last.
 * Other kinds (inquiries, unknown entries, config deltas) do not count.
 * A last turn with no `chat_request` at all (a stray `turn_start`, or
 * leftovers of a damaged stream) is not reported as incomplete: resuming it
 * would have no request to answer, and `sanitize` repairs or trims it.
 *
 * Pairing is `Pairing`'s rule, the one `sanitize` and validated append use:
 * per id, first in first out, within the turn, so a reused tool-call id needs
 * as many responses as requests. Where the last turn starts is
 * `Turns.currentTurnStart` (skipping trailing bare `turn_start`s).
 *
 * An inquiry belongs to the tool call whose id, followed by `.`, begins the
 * inquiry id (both JP's two-segment and RFD 082's three-segment writers
 * build ids that way; the latest such call before the inquiry wins). When no
 * call id matches, it belongs to the latest call still running at that point
 * whose name is the inquiry's tool source, else to the only call running
 * there. Ids are never split for this.
 *
 * @example
 * ```ts
 * import * as IncompleteTurn from "parley/domain/stream/IncompleteTurn"
 * import type { Conversation } from "parley"
 * declare const conversation: Conversation.Conversation
 * const { complete, incomplete } = IncompleteTurn.splitIncompleteTurn(conversation.entries)
 * if (incomplete !== null) IncompleteTurn.analyze(incomplete).phase // "Executing"
 * ```
 *
 * @since 0.1.0
 */
import type { Json, JsonObject } from "effect/Schema"
import type { StreamEntry } from "../event/ConversationEvent.ts"
import { isConversationEvent } from "../event/ConversationEvent.ts"
import * as EventMetadata from "../event/EventMetadata.ts"
import * as PermissionInquiry from "../event/PermissionInquiry.ts"
import type { InquiryRequest } from "../event/InquiryRequest.ts"
import type { InquiryResponse } from "../event/InquiryResponse.ts"
import type { ToolCallRequest } from "../event/ToolCallRequest.ts"
import type { ToolCallResponse } from "../event/ToolCallResponse.ts"
import * as Pairing from "./Pairing.ts"
import { retainCompactions } from "./Retain.ts"
import { currentTurnStart, trimTrailingTurnStarts, turnCount } from "./Turns.ts"

/** The residual events of an unfinished last turn, starting at its first event (normally its `turn_start`). */
export interface IncompleteTurn {
  readonly entries: ReadonlyArray<StreamEntry>
}

/** What resuming an incomplete turn would do (contract §3, RFD 023 "conversation ls"). */
export type IncompleteState =
  | "waiting-for-input"
  | "pending-tool-execution"
  | "pending-follow-up"
  | "pending-llm-response"

/** The `incomplete` field of a `conversation ls` row. */
export interface IncompleteSummary {
  readonly state: IncompleteState
  readonly tool?: string
}

/** One tool call of a turn and how far it got. */
export interface ToolCallStatus {
  readonly request: ToolCallRequest
  /** Its response, or `null` while it has none. */
  readonly response: ToolCallResponse | null
  /** Its inquiries, in order, each with its closing response when there is one. */
  readonly inquiries: ReadonlyArray<{ readonly request: InquiryRequest; readonly response: InquiryResponse | null }>
  readonly status: "completed" | "failed" | "waiting-for-input" | "pending"
}

/** An unanswered inquiry whose tool call is still running. */
export interface PendingInquiry {
  readonly request: InquiryRequest
  readonly toolCall: ToolCallRequest
  /** The question id, for ids in the writer's `<call>.<question>.<attempt>` form. */
  readonly questionId: string | undefined
}

/** How to resume an incomplete turn (RFD 023's resume-phase table). */
export interface TurnAnalysis {
  /** `Executing` when tool calls are unanswered (run them, answering pending inquiries); else `Streaming`. */
  readonly phase: "Streaming" | "Executing"
  /** Requests with fewer responses than requests of their id, the unanswered ones, in order. */
  readonly pendingToolCalls: ReadonlyArray<ToolCallRequest>
  /** The first unanswered inquiry whose tool call has no response. */
  readonly pendingInquiry: InquiryRequest | null
  /** Every such inquiry, in order, with its tool call. */
  readonly pendingInquiries: ReadonlyArray<PendingInquiry>
  /**
   * Answers already given to pending tool calls: tool call id → question id →
   * answer (latest wins), to restore the answers a re-run tool receives.
   */
  readonly answeredInquiries: ReadonlyMap<string, Readonly<Record<string, Json>>>
  /** Highest attempt recorded per {@link attemptKey}, so new inquiry ids stay unique in the turn. */
  readonly attemptCounters: ReadonlyMap<string, number>
  /**
   * Answers the person said to remember for the turn (`Y`/`N`, recorded
   * with `EventMetadata.rememberedAnswer`), by tool and question id, the
   * latest winning: a resumed turn remembers them too
   * (docs/decisions.md#remembered-answers-recorded).
   */
  readonly rememberedAnswers: ReadonlyArray<{
    readonly tool: string
    readonly questionId: string
    readonly answer: Json
  }>
  /**
   * Permission decisions remembered for the turn (`Y`/`N`, recorded as a
   * `PermissionInquiry`; or, from earlier parley, `EventMetadata.rememberedPermission`
   * on a call's response), by tool, in order.
   */
  readonly rememberedPermissions: ReadonlyArray<{ readonly tool: string; readonly decision: "y" | "n" }>
  /**
   * The permission decision recorded for each pending tool call (`y` run,
   * `n` skip; the latest wins): a resumed call that was decided is not asked
   * again (`PermissionInquiry`, docs/decisions.md#permission-decisions-recorded).
   */
  readonly permissionDecisions: ReadonlyMap<string, "y" | "n">
  /**
   * The arguments a person edited a pending call to when approving it
   * (`EventMetadata.editedArguments`, docs/tools.md#editing-a-calls-arguments):
   * the resumed call runs with these, not the request's.
   */
  readonly permissionArguments?: ReadonlyMap<string, JsonObject>
  /**
   * Per pending tool call, the latest review of its result asked from
   * anywhere (`<call>.__result__.<n>`, docs/tools.md#reviewing-a-result-from-anywhere):
   * its request records the result, so the resumed call is not run again —
   * the answer ends the review, or it is asked again while open.
   */
  readonly reviews?: ReadonlyMap<
    string,
    { readonly request: InquiryRequest; readonly response: InquiryResponse | null }
  >
  /**
   * Per pending tool call, the executor state recorded with its latest
   * question that carries one (`EventMetadata.executorState`; docs/mcp.md#rounds-2026-07-28):
   * what the executor needs to retry the call instead of starting it over.
   */
  readonly executorStates: ReadonlyMap<string, Json>
  /** Every tool call of the turn with its state, in order (for display). */
  readonly toolCalls: ReadonlyArray<ToolCallStatus>
  /** Inquiries that belong to no tool call of the turn, in order, each with its closing response (for display). */
  readonly unattachedInquiries: ReadonlyArray<{
    readonly request: InquiryRequest
    readonly response: InquiryResponse | null
  }>
}

/** The key of {@link TurnAnalysis.attemptCounters}. */
export const attemptKey = (toolCallId: string, questionId: string): string => `${toolCallId}\u0000${questionId}`

const WRITER_SUFFIX = /^([^.]+)\.([1-9][0-9]*)$/

/**
 * The question id and attempt of an inquiry id written by RFD 082's writer
 * for `toolCallId` (`<toolCallId>.<question>.<attempt>`); `undefined` for any
 * other id (legacy two-segment ids, other writers). Only parley's own resume
 * uses this: readers otherwise treat inquiry ids as opaque.
 *
 * @example
 * ```ts
 * import { writerQuestionId } from "parley/domain/stream/IncompleteTurn"
 * writerQuestionId("call_1", "call_1.overwrite.2") // { questionId: "overwrite", attempt: 2 }
 * writerQuestionId("call_1", "call_1.overwrite")   // undefined
 * ```
 */
export const writerQuestionId = (
  toolCallId: string,
  inquiryId: string
): { readonly questionId: string; readonly attempt: number } | undefined => {
  if (!inquiryId.startsWith(toolCallId + ".")) return undefined
  const m = WRITER_SUFFIX.exec(inquiryId.slice(toolCallId.length + 1))
  return m === null ? undefined : { questionId: m[1]!, attempt: Number(m[2]) }
}

/**
 * Index of the first event of the last turn that holds more than a
 * `turn_start`: its `turn_start`, or the first event when there is none; -1
 * when the stream has no such event. Trailing bare `turn_start`s (which
 * `sanitize` trims) are skipped, so they cannot hide an unfinished turn; they
 * stay at the end of that turn's entries. This is `Turns.currentTurnStart`
 * with `skipTrailingBareTurnStarts`.
 */
export const lastTurnStart = (entries: ReadonlyArray<StreamEntry>): number =>
  currentTurnStart(entries, { skipTrailingBareTurnStarts: true })

/**
 * The entries to merge back when resuming: the incomplete turn without its
 * trailing bare `turn_start`s, so appends land in the resumed turn.
 *
 * @example
 * ```ts
 * import { resumableEntries } from "parley/domain/stream/IncompleteTurn"
 * import type { ChatRequest, ChatResponse, ConfigDelta, InquiryRequest, InquiryResponse, StreamEntry, ToolCallRequest, ToolCallResponse, TurnStart } from "parley"
 * declare const ts: TurnStart, ts2: TurnStart, q: ChatRequest, q2: ChatRequest, a: ChatResponse, call: ToolCallRequest
 * resumableEntries({ entries: [ts, q, call, ts2] }) // [ts, q, call]
 * ```
 */
export const resumableEntries = (incomplete: IncompleteTurn): Array<StreamEntry> =>
  trimTrailingTurnStarts(incomplete.entries.slice())

/** One tool call of a turn as the inspection sees it: where it was asked, where answered (-1: not yet). */
interface InspectedCall {
  readonly at: number
  readonly request: ToolCallRequest
  closedAt: number
  response: ToolCallResponse | null
}

/** One inquiry of a turn: where asked and answered, and its tool call (an index of `calls`, -1: none). */
interface InspectedInquiry {
  readonly at: number
  readonly request: InquiryRequest
  closedAt: number
  response: InquiryResponse | null
  readonly call: number
}

/**
 * The request/response structure of one turn, built forwards one entry at a
 * time, so the same inspection serves a whole turn read at once
 * ({@link inspect}) and a turn that grows by appends ({@link LastTurn}).
 * Every question it answers is decided when an entry arrives: a call is
 * "running at" an inquiry exactly when it is still open as the inquiry
 * arrives. Pairing is `Pairing`'s rule over the turn (one turn, so no reset;
 * trailing bare `turn_start`s hold no response). Indices are those the
 * caller gives; only their order matters.
 */
class TurnInspector {
  firstChatRequest = -1
  lastChatResponse = -1
  lastToolResponse = -1
  readonly calls: Array<InspectedCall> = []
  readonly inquiries: Array<InspectedInquiry> = []
  /** Indices of `calls` still open, in order (few: the summary and the inquiry rules read only these). */
  readonly openCalls: Array<number> = []
  /** Indices of `inquiries` still open, in order. */
  readonly openInquiries: Array<number> = []
  /** The pairer's values are indices of `calls` or `inquiries`, by kind. */
  private readonly pairer = Pairing.make<number>()
  /** The latest call of each id, for inquiries whose id begins with a call's id and `.`. */
  private readonly latestCall = new Map<string, number>()

  get hasChatRequest(): boolean {
    return this.firstChatRequest >= 0
  }

  get complete(): boolean {
    return (
      this.hasChatRequest &&
      this.lastChatResponse > this.firstChatRequest &&
      this.openCalls.length === 0 &&
      (this.lastToolResponse < 0 || this.lastChatResponse > this.lastToolResponse)
    )
  }

  push(e: StreamEntry, i: number): void {
    if (e.type === "chat_request") this.firstChatRequest = this.firstChatRequest < 0 ? i : this.firstChatRequest
    else if (e.type === "chat_response") this.lastChatResponse = i
    else if (e.type === "tool_call_response") this.lastToolResponse = i
    const n = e.type === "tool_call_request" ? this.calls.length : this.inquiries.length
    const step = this.pairer.step(e, n)
    // The pairer's kind is the event's: told by its type, so each branch has its event typed.
    if (step._tag === "Opened") {
      if (e.type === "tool_call_request") {
        this.calls.push({ at: i, request: e, closedAt: -1, response: null })
        this.openCalls.push(n)
        this.latestCall.set(e.id, n)
      } else if (e.type === "inquiry_request") {
        this.inquiries.push({ at: i, request: e, closedAt: -1, response: null, call: this.callOf(e) })
        this.openInquiries.push(n)
      }
    } else if (step._tag === "Closed") {
      if (e.type === "tool_call_response") {
        const call = this.calls[step.request]!
        call.closedAt = i
        call.response = e
        this.openCalls.splice(this.openCalls.indexOf(step.request), 1)
      } else if (e.type === "inquiry_response") {
        const inquiry = this.inquiries[step.request]!
        inquiry.closedAt = i
        inquiry.response = e
        this.openInquiries.splice(this.openInquiries.indexOf(step.request), 1)
      }
    }
  }

  /**
   * The call an arriving inquiry belongs to: the latest call whose id and
   * `.` begin the inquiry id (the longest such id); else the latest running
   * call named as the inquiry's tool source; else the only running call.
   */
  private callOf(request: InquiryRequest): number {
    const id = request.id
    for (let dot = id.lastIndexOf("."); dot >= 0; dot = dot === 0 ? -1 : id.lastIndexOf(".", dot - 1)) {
      const call = this.latestCall.get(id.slice(0, dot))
      if (call !== undefined) return call
    }
    if (request.source.source === "tool") {
      const name = request.source.name
      for (let k = this.openCalls.length - 1; k >= 0; k--) {
        if (this.calls[this.openCalls[k]!]!.request.name === name) return this.openCalls[k]!
      }
    }
    return this.openCalls.length === 1 ? this.openCalls[0]! : -1
  }
}

/** The inspection of one turn read whole. */
const inspect = (entries: ReadonlyArray<StreamEntry>): TurnInspector => {
  const t = new TurnInspector()
  for (let i = 0; i < entries.length; i++) t.push(entries[i]!, i)
  return t
}

/** True when the turn is unfinished and resumable (fails a structural condition but has a `chat_request`). */
const isIncomplete = (t: TurnInspector): boolean => t.hasChatRequest && !t.complete

/**
 * Splits a stream at the last complete turn boundary. Re-joining
 * `[...complete, ...incomplete.entries]` gives back the input exactly (same
 * objects, same order); config deltas inside the incomplete turn stay in it,
 * in order.
 *
 * @example
 * ```ts
 * import { splitIncompleteTurn } from "parley/domain/stream/IncompleteTurn"
 * import type { ChatRequest, ChatResponse, ConfigDelta, InquiryRequest, InquiryResponse, StreamEntry, ToolCallRequest, ToolCallResponse, TurnStart } from "parley"
 * declare const ts: TurnStart, ts2: TurnStart, q: ChatRequest, q2: ChatRequest, a: ChatResponse, call: ToolCallRequest
 * splitIncompleteTurn([ts, q, a, ts2, q2]) // { complete: [ts, q, a], incomplete: { entries: [ts2, q2] } }
 * ```
 */
export const splitIncompleteTurn = (
  entries: ReadonlyArray<StreamEntry>
): { readonly complete: Array<StreamEntry>; readonly incomplete: IncompleteTurn | null } => {
  const start = lastTurnStart(entries)
  if (start < 0 || !isIncomplete(inspect(entries.slice(start)))) return { complete: entries.slice(), incomplete: null }
  return { complete: entries.slice(0, start), incomplete: { entries: entries.slice(start) } }
}

/**
 * The stream once its incomplete turn is discarded (RFD 023 `--discard-turn`),
 * or `null` when the last turn is complete. The turn's events go; a
 * compaction recorded during it (by `conversation compact`, or automatically
 * before a request that then failed) is global, as in JP, and stays unless
 * its range reaches the discarded turn (`Retain.retainCompactions`).
 *
 * @example
 * ```ts
 * import { discardIncompleteTurn } from "parley/domain/stream/IncompleteTurn"
 * import type { StreamEntry } from "parley"
 * declare const entries: ReadonlyArray<StreamEntry>
 * discardIncompleteTurn(entries) // null, or the complete turns (and surviving compactions)
 * ```
 */
export const discardIncompleteTurn = (entries: ReadonlyArray<StreamEntry>): Array<StreamEntry> | null => {
  const { complete, incomplete } = splitIncompleteTurn(entries)
  if (incomplete === null) return null
  const compactions = incomplete.entries.filter((e) => e.type === "compaction")
  const turn = turnCount(complete)
  return retainCompactions(compactions.length === 0 ? complete : [...complete, ...compactions], turn)
}

/**
 * What a resumed turn must do (RFD 023's resume-phase table):
 * unanswered tool calls or inquiries → `Executing`; a request without a
 * reply, or tool results without a follow-up → `Streaming`.
 *
 * `answeredInquiries` and `attemptCounters` take the question id from the
 * inquiry id only when the id is the writer's own `<call>.<question>.<attempt>`
 * for its tool call; other ids (legacy two-segment ones) cannot be mapped to a
 * question, so those answers are not restored (the tool asks again) and they
 * need no counter (new ids have three segments and cannot collide with them).
 *
 * @example
 * ```ts
 * import { analyze } from "parley/domain/stream/IncompleteTurn"
 * import type { ChatRequest, ChatResponse, ConfigDelta, InquiryRequest, InquiryResponse, StreamEntry, ToolCallRequest, ToolCallResponse, TurnStart } from "parley"
 * declare const ts: TurnStart, ts2: TurnStart, q: ChatRequest, q2: ChatRequest, a: ChatResponse, call: ToolCallRequest
 * analyze({ entries: [ts, q, call] }).pendingToolCalls // [call]
 * ```
 */
export const analyze = (incomplete: IncompleteTurn): TurnAnalysis => {
  const t = inspect(incomplete.entries)
  const toolCalls: Array<ToolCallStatus> = t.calls.map((c, index) => {
    const inquiries = t.inquiries
      .filter((q) => q.call === index)
      .map((q) => ({ request: q.request, response: q.response }))
    const status =
      c.response !== null
        ? c.response.is_error
          ? "failed"
          : "completed"
        : inquiries.some((q) => q.response === null)
          ? "waiting-for-input"
          : "pending"
    return { request: c.request, response: c.response, inquiries, status }
  })
  const pendingToolCalls = t.calls.filter((c) => c.response === null).map((c) => c.request)
  const pendingInquiries: Array<PendingInquiry> = []
  const answered = new Map<string, Record<string, Json>>()
  const attemptCounters = new Map<string, number>()
  const executorStates = new Map<string, Json>()
  const reviews = new Map<string, { request: InquiryRequest; response: InquiryResponse | null }>()
  // Answers in the order they were given, so the latest answer to a question wins.
  const byResponse = t.inquiries.filter((q) => q.response !== null).sort((a, b) => a.closedAt - b.closedAt)
  for (const q of t.inquiries) {
    if (q.call < 0) continue
    const call = t.calls[q.call]!
    const parsed = writerQuestionId(call.request.id, q.request.id)
    if (parsed !== undefined) {
      const key = attemptKey(call.request.id, parsed.questionId)
      attemptCounters.set(key, Math.max(attemptCounters.get(key) ?? 0, parsed.attempt))
    }
    if (parsed !== undefined && PermissionInquiry.isReviewQuestion(parsed.questionId) && call.response === null) {
      // Still listed as open below while unanswered (an approval, answered from anywhere).
      reviews.set(call.request.id, { request: q.request, response: q.response })
    }
    // A permission is recorded with its answer, except an approval deferred with nobody to ask
    // (`defer`, docs/decisions.md#detached-policy):
    // that one is open like any question (answered with `conversation answer`, or asked again on resume).
    if (PermissionInquiry.isPermission(q.request) && q.response !== null) continue
    if (q.response === null && call.response === null) {
      pendingInquiries.push({ request: q.request, toolCall: call.request, questionId: parsed?.questionId })
    }
    const state = q.request.metadata[EventMetadata.executorState]
    if (state !== undefined && call.response === null) executorStates.set(call.request.id, state)
  }
  const rememberedAnswers: Array<{ tool: string; questionId: string; answer: Json }> = []
  const rememberedPermissions = legacyPermissions(t)
  const permissionDecisions = new Map<string, "y" | "n">()
  const permissionArguments = new Map<string, JsonObject>()
  for (const q of byResponse) {
    if (q.call < 0 || q.response === null || q.response.outcome !== "answered") continue
    const call = t.calls[q.call]!
    if (PermissionInquiry.isPermission(q.request)) {
      const d = PermissionInquiry.decisionOf(q.request, q.response)
      if (d?.remembered === true) rememberedPermissions.push({ tool: call.request.name, decision: d.decision })
      if (d !== undefined && call.response === null) {
        permissionDecisions.set(call.request.id, d.decision)
        if (d.arguments !== undefined) permissionArguments.set(call.request.id, d.arguments)
        else permissionArguments.delete(call.request.id)
      }
      continue
    }
    const parsed = writerQuestionId(call.request.id, q.request.id)
    if (parsed === undefined || PermissionInquiry.isReviewQuestion(parsed.questionId)) continue
    if (q.response.metadata[EventMetadata.rememberedAnswer] === true) {
      rememberedAnswers.push({ tool: call.request.name, questionId: parsed.questionId, answer: q.response.answer })
    }
    if (call.response !== null) continue
    const answers = answered.get(call.request.id) ?? {}
    answers[parsed.questionId] = q.response.answer
    answered.set(call.request.id, answers)
  }
  return {
    phase: pendingToolCalls.length > 0 ? "Executing" : "Streaming",
    pendingToolCalls,
    pendingInquiry: pendingInquiries[0]?.request ?? null,
    pendingInquiries,
    answeredInquiries: answered,
    attemptCounters,
    rememberedAnswers,
    rememberedPermissions,
    permissionDecisions,
    ...(permissionArguments.size > 0 ? { permissionArguments } : {}),
    ...(reviews.size > 0 ? { reviews } : {}),
    executorStates,
    toolCalls,
    unattachedInquiries: t.inquiries
      .filter((q) => q.call < 0)
      .map((q) => ({ request: q.request, response: q.response }))
  }
}

/** Decisions remembered by parley before permission inquiries: `"y"`/`"n"` on the call's response. */
const legacyPermissions = (t: TurnInspector): Array<{ tool: string; decision: "y" | "n" }> =>
  t.calls.flatMap((c) => {
    const decision = c.response?.metadata[EventMetadata.rememberedPermission]
    return decision === "y" || decision === "n" ? [{ tool: c.request.name, decision }] : []
  })

/** Reads only what is still open, so a long turn grown by appends costs nothing per append. */
const summarize = (t: TurnInspector): IncompleteSummary | null => {
  if (!isIncomplete(t)) return null
  for (const k of t.openInquiries) {
    const q = t.inquiries[k]!
    // An open permission is an approval deferred with nobody to ask (docs/decisions.md#detached-policy): a question waiting.
    if (q.call < 0) continue
    const call = t.calls[q.call]!
    if (call.response === null) return { state: "waiting-for-input", tool: call.request.name }
  }
  if (t.openCalls.length > 0) return { state: "pending-tool-execution" }
  if (t.lastToolResponse >= 0 && t.lastChatResponse < t.lastToolResponse) return { state: "pending-follow-up" }
  return { state: "pending-llm-response" }
}

/**
 * The incomplete state of the last turn, or `null` when it is complete
 * (contract §3 order: waiting-for-input with the tool's name, then
 * pending-tool-execution, pending-follow-up, pending-llm-response). Reads
 * only the last turn: it scans backwards to the last `turn_start`.
 *
 * @example
 * ```ts
 * import { incompleteSummary } from "parley/domain/stream/IncompleteTurn"
 * import type { ChatRequest, ChatResponse, ConfigDelta, InquiryRequest, InquiryResponse, StreamEntry, ToolCallRequest, ToolCallResponse, TurnStart } from "parley"
 * declare const ts: TurnStart, ts2: TurnStart, q: ChatRequest, q2: ChatRequest, a: ChatResponse, call: ToolCallRequest
 * declare const inquiry: InquiryRequest
 * incompleteSummary([ts, q, call, inquiry]) // { state: "waiting-for-input", tool: "write_note" }
 * ```
 */
export const incompleteSummary = (entries: ReadonlyArray<StreamEntry>): IncompleteSummary | null => {
  const start = lastTurnStart(entries)
  return start < 0 ? null : summarize(inspect(entries.slice(start)))
}

/** {@link incompleteSummary} of a turn already split off. */
export const summaryOf = (incomplete: IncompleteTurn): IncompleteSummary | null =>
  summarize(inspect(incomplete.entries))

/**
 * {@link incompleteSummary} kept up to date as a stream grows, for a store
 * that keeps the listing's incomplete state beside its appends (PostgreSQL, docs/postgres.md#tables):
 * each appended entry is inspected once, so an append into a long open turn
 * costs what the appended entries cost. Where the last turn starts is
 * `lastTurnStart`'s rule read forwards: a `turn_start` followed by another
 * event begins a new turn; trailing bare `turn_start`s leave the last turn
 * as it was. `summary` equals `incompleteSummary` of the entries pushed so
 * far (test/domain/stream/IncompleteTurn.test.ts checks it at every prefix).
 *
 * @example
 * ```ts
 * import { LastTurn } from "parley/domain/stream/IncompleteTurn"
 * import type { StreamEntry, ToolCallResponse } from "parley"
 * declare const entries: ReadonlyArray<StreamEntry>, result: ToolCallResponse
 * const last = LastTurn.of(entries)
 * last.push([result])
 * last.summary // what incompleteSummary([...entries, result]) says
 * ```
 */
export class LastTurn {
  private turn: TurnInspector | undefined
  /** A `turn_start` came after the current turn's last other event: the next such event begins a new turn. */
  private opening = false
  private length = 0

  /** Inspects the last turn of `entries` only (the turns before it cannot change the summary). */
  static of(entries: ReadonlyArray<StreamEntry>): LastTurn {
    const last = new LastTurn()
    const start = lastTurnStart(entries)
    last.length = Math.max(0, start)
    last.push(start < 0 ? entries : entries.slice(start))
    return last
  }

  /** Folds in entries appended after those pushed so far. */
  push(entries: ReadonlyArray<StreamEntry>): void {
    for (const e of entries) {
      const i = this.length++
      if (!isConversationEvent(e)) continue // config deltas, compactions and unknown entries play no part
      if (e.type === "turn_start") {
        this.opening = true
        continue
      }
      if (this.opening || this.turn === undefined) this.turn = new TurnInspector()
      this.opening = false
      this.turn.push(e, i)
    }
  }

  /** The incomplete state of the last turn, or `null` (see {@link incompleteSummary}). */
  get summary(): IncompleteSummary | null {
    return this.turn === undefined ? null : summarize(this.turn)
  }
}
