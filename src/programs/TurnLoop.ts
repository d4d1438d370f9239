/**
 * One turn of a conversation: Idle → Streaming → Executing → Streaming … until
 * the assistant stops calling tools (RFD 023's turn loop).
 *
 * - A new turn appends `turn_start` + `chat_request`.
 * - Streaming: the provider request is built from the *sanitized* stream
 *   through `Thread.intoParts` every cycle (so no internal event ever reaches
 *   a model); text is handed to `onText` as it arrives; the reply's
 *   `chat_response`s and `tool_call_request`s are appended when the stream
 *   ends. Interrupted mid-stream, the text received so far is persisted as a
 *   (partial) `chat_response` (RFD 023 "Partial ChatResponse Persistence").
 * - Executing: the tool coordinator runs the calls, persisting every inquiry
 *   event and tool response as it happens.
 * - A resumed turn enters at the phase RFD 023's table gives, with the turn
 *   state rebuilt from its events: only pending calls run, answered inquiries
 *   restore the tools' answers, attempt counters continue.
 *
 * @example
 * ```ts
 * import * as TurnLoop from "./TurnLoop.ts"
 * yield* TurnLoop.runTurn({ conversationId, stream, model: "scripted", root, start: { _tag: "NewTurn", message: "hi" } })
 * ```
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { ChatRequest } from "../domain/event/ChatRequest.ts"
import type { StreamEntry } from "../domain/event/ConversationEvent.ts"
import type { ConversationId } from "../domain/storage/ConversationId.ts"
import type { TurnAnalysis } from "../domain/stream/IncompleteTurn.ts"
import { sanitize } from "../domain/stream/Sanitize.ts"
import { intoParts } from "../domain/stream/Thread.ts"
import * as Timestamp from "../domain/event/Timestamp.ts"
import type { ToolCallRequest } from "../domain/event/ToolCallRequest.ts"
import * as TurnState from "../domain/stream/TurnState.ts"
import { TurnStart } from "../domain/event/TurnStart.ts"
import { ConversationStore } from "../services/ConversationStore.ts"
import { Executor } from "../services/Executor.ts"
import { Provider, ReplyBuilder } from "../services/Provider.ts"
import { runTools, type StreamMirror } from "./ToolCoordinator.ts"

export type TurnStartMode =
  | { readonly _tag: "NewTurn"; readonly message: string }
  | { readonly _tag: "Resume"; readonly analysis: TurnAnalysis }

export interface TurnInput {
  readonly conversationId: ConversationId
  /** The conversation as loaded (with any incomplete turn merged back); appended to as the turn runs. */
  readonly stream: StreamMirror
  readonly model: string
  readonly systemPrompt?: string
  /** Where tools run. */
  readonly root: string
  readonly start: TurnStartMode
  /** Called with assistant text as it streams (stdout in the CLI). */
  readonly onText?: (text: string) => Effect.Effect<void>
  /** Called with `true` when a model call starts and `false` once its first output (or its end) arrives (a spinner in the CLI). */
  readonly onWaiting?: (waiting: boolean) => Effect.Effect<void>
  /** Called when the assistant calls tools (status line in the CLI). */
  readonly onToolCalls?: (calls: ReadonlyArray<ToolCallRequest>) => Effect.Effect<void>
  readonly now?: () => Timestamp.Timestamp
  /** Stops a runaway tool loop (each cycle is one model call). */
  readonly maxCycles?: number
}

export interface TurnResult {
  /** Model calls made in this run of the turn. */
  readonly cycles: number
}

export const runTurn = (input: TurnInput) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore
    const provider = yield* Provider
    const executor = yield* Executor
    const now = input.now ?? Timestamp.now
    const record = (...events: ReadonlyArray<StreamEntry>) =>
      store.append(input.conversationId, events).pipe(Effect.tap(() => Effect.sync(() => input.stream.entries.push(...events))))

    let state = TurnState.make()
    let pending: ReadonlyArray<ToolCallRequest> = []
    let resume: TurnAnalysis | undefined
    if (input.start._tag === "NewTurn") {
      yield* record(new TurnStart({ timestamp: now() }), new ChatRequest({ timestamp: now(), content: input.start.message }))
    } else {
      resume = input.start.analysis
      state = TurnState.make(resume.attemptCounters)
      if (resume.phase === "Executing") pending = resume.pendingToolCalls
    }

    const maxCycles = input.maxCycles ?? 100
    let cycles = 0
    for (;;) {
      if (pending.length > 0) {
        yield* runTools({
          conversationId: input.conversationId,
          calls: pending,
          stream: input.stream,
          state,
          root: input.root,
          ...(resume !== undefined ? { initialAnswers: resume.answeredInquiries, pendingInquiries: resume.pendingInquiries } : {}),
          now
        })
        resume = undefined
        pending = []
      }
      if (cycles >= maxCycles) return { cycles }
      cycles++

      // Streaming: the provider sees only the sanitized, provider-visible events.
      const parts = intoParts({
        ...(input.systemPrompt !== undefined ? { systemPrompt: input.systemPrompt } : {}),
        events: sanitize(input.stream.entries)
      })
      const builder = new ReplyBuilder(now)
      let persisted = false
      let waiting = input.onWaiting !== undefined
      const stopWaiting = Effect.suspend(() => {
        if (!waiting) return Effect.void
        waiting = false
        return input.onWaiting!(false)
      })
      if (waiting) yield* input.onWaiting!(true)
      yield* provider.stream({ model: input.model, systemParts: parts.systemParts, events: parts.events, tools: executor.definitions }).pipe(
        Stream.runForEach((delta) =>
          Effect.suspend(() => {
            builder.add(delta)
            return stopWaiting.pipe(
              Effect.andThen(delta._tag === "TextDelta" && input.onText !== undefined ? input.onText(delta.text) : Effect.void)
            )
          })
        ),
        Effect.ensuring(stopWaiting),
        // Ctrl-C mid-stream: keep what the user already saw.
        Effect.onInterrupt(() =>
          Effect.suspend(() => {
            if (persisted) return Effect.void
            persisted = true
            const partial = builder.finish().events.filter((e) => e.type === "chat_response")
            return partial.length === 0 ? Effect.void : record(...partial).pipe(Effect.ignore)
          })
        )
      )
      const reply = builder.finish()
      persisted = true
      if (reply.events.length > 0) yield* record(...reply.events)
      const calls = reply.events.filter((e): e is ToolCallRequest => e.type === "tool_call_request")
      if (calls.length === 0) return { cycles } satisfies TurnResult
      if (input.onToolCalls !== undefined) yield* input.onToolCalls(calls)
      pending = calls
    }
  })
