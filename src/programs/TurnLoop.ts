/**
 * One turn of a conversation: Idle → Streaming → Executing → Streaming … until
 * the assistant stops calling tools (RFD 023's turn loop).
 *
 * - A new turn appends `turn_start` + `chat_request`.
 * - Streaming: the provider request is built from the *sanitized* stream
 *   through `Thread.intoParts` every cycle (so no internal event ever reaches
 *   a model, and compactions apply), checked against the model's context
 *   window first (`ContextWindow.fitRequest`); text is published
 *   (`RunEvents`) as it arrives; the reply's
 *   `chat_response`s and `tool_call_request`s are appended when the stream
 *   ends (all through the {@link ConversationSession}). Interrupted mid-stream, the text received so far is persisted as a
 *   (partial) `chat_response` (RFD 023 "Partial ChatResponse Persistence").
 * - Executing: the tool coordinator runs the calls, persisting every inquiry
 *   event and tool response as it happens. A question deferred (nobody to
 *   ask) ends the turn there, incomplete and waiting for input: no model call
 *   is made until it is answered and the turn resumed.
 * - A resumed turn enters at the phase RFD 023's table gives, with the turn
 *   state rebuilt from its events: only pending calls run, answered inquiries
 *   restore the tools' answers, attempt counters continue.
 * - Spans (docs/library.md), for a consumer's tracer: `TurnLoop.runTurn` around the
 *   turn and `TurnLoop.modelRequest` around each model call (attributes
 *   `parley.conversation_id`, `parley.model`, `parley.cycle`); the tool
 *   coordinator adds `ToolCoordinator.toolCall` and `ToolCoordinator.inquiry`.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { TurnLoop } from "parley"
 * import type { ConversationSession } from "parley"
 *
 * declare const session: ConversationSession.ConversationSession
 * const turn = TurnLoop.runTurn({ session, model: "scripted", root: process.cwd(), start: TurnLoop.TurnStartMode.NewTurn({ message: "hi" }) })
 * ```
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { StreamEntry as StreamEntrySchema, type StreamEntry } from "../domain/event/ConversationEvent.ts"
import * as ConversationId from "../domain/storage/ConversationId.ts"
import * as Events from "../domain/event/Events.ts"
import * as Timestamp from "../domain/event/Timestamp.ts"
import type { InquiryId } from "../domain/event/InquiryId.ts"
import type { ToolCallRequest } from "../domain/event/ToolCallRequest.ts"
import * as RunEvent from "../domain/run/RunEvent.ts"
import type { TurnAnalysis } from "../domain/stream/IncompleteTurn.ts"
import * as TurnState from "../domain/stream/TurnState.ts"
import type { EventMetadata } from "../domain/event/EventMetadata.ts"
import type { ConversationSession } from "../services/ConversationSession.ts"
import type { StoreError } from "../services/StoreErrors.ts"
import { Executor } from "../services/Executor.ts"
import { ReplyBuilder, replyWarning } from "../domain/model/Reply.ts"
import { Provider, type ProviderDelta } from "../services/Provider.ts"
import { RunEvents } from "../services/RunEvents.ts"
import { autoCompactionWarning, fitRequest } from "./ContextWindow.ts"
import { type ResumeInput, runTools } from "./ToolCoordinator.ts"

/** How the turn begins: a new message, or the incomplete turn resumed. */
export type TurnStartMode = Data.TaggedEnum<{
  NewTurn: { readonly message: string; readonly metadata?: EventMetadata }
  Resume: { readonly analysis: TurnAnalysis }
}>
/**
 * How `runTurn` begins: `NewTurn({ message })`, or `Resume({ analysis })` with the
 * analysis of the incomplete turn (`session.resumeIncompleteTurn`).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { TurnLoop } from "parley"
 * import type { ConversationSession } from "parley"
 *
 * declare const session: ConversationSession.ConversationSession
 * const start = Effect.map(session.resumeIncompleteTurn, (analysis) =>
 *   analysis === null ? TurnLoop.TurnStartMode.NewTurn({ message: "hi" }) : TurnLoop.TurnStartMode.Resume({ analysis }))
 * ```
 */
export const TurnStartMode = Data.taggedEnum<TurnStartMode>()

/** What `runTurn` needs: the open session, the model, where tools run and how the turn starts. What the turn shows goes to `RunEvents`. */
export interface TurnInput {
  /** The open conversation (with any incomplete turn already prepared for resuming). */
  readonly session: ConversationSession
  readonly model: string
  readonly systemPrompt?: string
  /** Where tools run. */
  readonly root: string
  readonly start: TurnStartMode
  /** Stops a runaway tool loop (each cycle is one model call). */
  readonly maxCycles?: number
  /**
   * Entries to record before a model request that follows tool results (or
   * opens a resumed turn): messages sent to the running turn for its next
   * request (`programs/Queued.ts`), recorded as JP records a reply typed
   * mid-turn — a `chat_request` that does not start a turn.
   */
  readonly between?: Effect.Effect<ReadonlyArray<StreamEntry>, StoreError>
}

/** How a run of a turn went: the number of model calls it made, and the questions left open when it stopped waiting for input. */
export interface TurnResult {
  /** Model calls made in this run of the turn. */
  readonly cycles: number
  /** Questions deferred (nobody to ask): the turn is incomplete, waiting for their answers. Empty when the turn completed. */
  readonly deferred: ReadonlyArray<InquiryId>
}

/** What whoever watches sees of a delta as it arrives: its text (reply or reasoning). */
const shown = (events: RunEvents["Service"], delta: ProviderDelta): Effect.Effect<void> =>
  delta._tag === "TextDelta"
    ? events.publish(RunEvent.make.TextDelta({ text: delta.text }))
    : delta._tag === "ReasoningDelta"
      ? events.publish(RunEvent.make.ReasoningDelta({ text: delta.text }))
      : Effect.void

/** One model call: streams the reply, records it, returns the tool calls it made. */
const streamReply = (input: TurnInput) =>
  Effect.gen(function* () {
    const provider = yield* Provider
    const executor = yield* Executor
    const events = yield* RunEvents
    const record = (entries: ReadonlyArray<StreamEntry>) =>
      entries.length === 0 ? Effect.void : input.session.append(entries)
    // Sanitized, compacted, provider-visible events that fit the model's window (docs/models.md#long-conversations-compactions-and-context-windows-rfd-064).
    const { parts, compacted } = yield* fitRequest({
      session: input.session,
      model: input.model,
      systemPrompt: input.systemPrompt,
      tools: executor.definitions
    })
    if (compacted !== undefined)
      yield* events.publish(RunEvent.make.Warning({ text: autoCompactionWarning(compacted) }))
    const clock = yield* Effect.clockWith(Effect.succeed)
    const builder = new ReplyBuilder(() => Timestamp.fromClock(clock))
    let persisted = false
    let waiting = true
    const stopWaiting = Effect.suspend(() => {
      if (!waiting) return Effect.void
      waiting = false
      return events.publish(RunEvent.make.Waiting({ waiting: false }))
    })
    yield* events.publish(RunEvent.make.Waiting({ waiting: true }))
    yield* provider
      .stream({ model: input.model, systemParts: parts.systemParts, events: parts.events, tools: executor.definitions })
      .pipe(
        Stream.runForEach((delta) =>
          Effect.suspend(() => {
            builder.add(delta)
            return Effect.andThen(stopWaiting, shown(events, delta))
          })
        ),
        Effect.ensuring(stopWaiting),
        // Ctrl-C mid-stream: keep what the user already saw.
        Effect.onInterrupt(() =>
          Effect.suspend(() => {
            if (persisted) return Effect.void
            persisted = true
            return record(builder.finish().events.filter((e) => e.type === "chat_response")).pipe(Effect.ignore)
          })
        )
      )
    const reply = builder.finish()
    persisted = true
    yield* record(reply.events)
    yield* events.publish(RunEvent.make.ReplyFinished({ stop_reason: reply.stopReason ?? null }))
    // Stored either way; the person is told when the reply is not the whole answer.
    const warning = replyWarning(input.model, reply.stopReason)
    if (warning !== undefined) yield* events.publish(RunEvent.make.Warning({ text: warning }))
    return reply.events.filter((e): e is ToolCallRequest => e.type === "tool_call_request")
  })

/**
 * A new turn was asked for on a conversation whose last turn is incomplete
 * (docs/decisions.md#new-turn-on-an-incomplete-one): starting it would abandon that turn's pending calls and
 * questions. Resume it (`TurnStartMode.Resume`) or discard it
 * (`session.discardIncompleteTurn`) first; `Query.query` asks the person.
 */
export class IncompleteTurnExists extends Schema.TaggedError<IncompleteTurnExists>()("IncompleteTurnExists", {
  /** The conversation's bare id. */
  id: Schema.String,
  /** The incomplete turn as it stands. */
  incomplete: Schema.Struct({ entries: Schema.Array(StreamEntrySchema) })
}) {
  override get message() {
    return `Conversation ${ConversationId.display(this.id as ConversationId.ConversationId)} has an incomplete turn: resume it or discard it before starting a new one.`
  }
}

/**
 * Runs one turn, new or resumed, until the assistant stops calling tools or
 * a question is deferred. A new turn over an incomplete one fails with
 * {@link IncompleteTurnExists} before anything is appended.
 */
export const runTurn = (input: TurnInput) =>
  runTurnUntraced(input).pipe(
    Effect.withSpan("TurnLoop.runTurn", {
      attributes: {
        "parley.conversation_id": input.session.id,
        "parley.model": input.model,
        "parley.start": input.start._tag
      }
    })
  )

/**
 * Where a turn starts: a new one is written (its `turn_start` and message; refused
 * while another is incomplete), a resumed one picks up the calls it left pending.
 */
const beginTurn = (input: TurnInput) =>
  Effect.gen(function* () {
    if (input.start._tag === "Resume")
      return input.start.analysis.phase === "Executing"
        ? { pending: input.start.analysis.pendingToolCalls, resume: input.start.analysis }
        : { pending: [], resume: undefined }
    const incomplete = yield* input.session.incompleteTurn
    if (incomplete !== null)
      return yield* new IncompleteTurnExists({
        id: input.session.id,
        incomplete: { entries: [...incomplete.entries] }
      })
    const started = yield* Timestamp.current
    const asked = yield* Timestamp.current
    yield* input.session.append([
      Events.turnStart(started),
      Events.chatRequest(asked, input.start.message, input.start.metadata)
    ])
    return { pending: [], resume: undefined }
  })

const runTurnUntraced = (input: TurnInput) =>
  Effect.gen(function* () {
    const events = yield* RunEvents
    const begun: { pending: ReadonlyArray<ToolCallRequest>; resume: ResumeInput | undefined } = yield* beginTurn(input)
    let { pending, resume } = begun
    const state = yield* Ref.make(
      input.start._tag === "Resume" ? TurnState.resumed(input.start.analysis) : TurnState.make()
    )
    const maxCycles = input.maxCycles ?? 100
    let cycles = 0
    for (;;) {
      if (pending.length > 0) {
        const ran = yield* runTools({
          session: input.session,
          calls: pending,
          state,
          root: input.root,
          ...(resume !== undefined ? { resume } : {})
        })
        // A deferred question ends the turn here: the model is not called until it is answered.
        if (ran.deferred.length > 0) return { cycles, deferred: ran.deferred } satisfies TurnResult
        resume = undefined
      }
      if (cycles >= maxCycles) return { cycles, deferred: [] } satisfies TurnResult
      if (input.between !== undefined && (cycles > 0 || input.start._tag === "Resume")) {
        const sent = yield* input.between
        if (sent.length > 0) yield* input.session.append(sent)
      }
      cycles++
      pending = yield* streamReply(input).pipe(
        Effect.withSpan("TurnLoop.modelRequest", {
          attributes: {
            "parley.conversation_id": input.session.id,
            "parley.model": input.model,
            "parley.cycle": cycles
          }
        })
      )
      if (pending.length === 0) return { cycles, deferred: [] } satisfies TurnResult
      yield* events.publish(RunEvent.make.ToolCallsAnnounced({ calls: pending.map(RunEvent.toolCall) }))
    }
  })
