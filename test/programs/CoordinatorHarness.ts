/**
 * Shared setup for coordinator tests: a conversation whose current turn
 * holds the given tool calls, mock layers for every service, and what was
 * persisted, read back through the store.
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import type * as Schema from "effect/Schema"
import { ChatRequest } from "../../src/domain/event/ChatRequest.ts"
import * as Conversation from "../../src/domain/storage/Conversation.ts"
import type { StreamEntry } from "../../src/domain/event/ConversationEvent.ts"
import * as ConversationId from "../../src/domain/storage/ConversationId.ts"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
import { ToolCallRequest } from "../../src/domain/event/ToolCallRequest.ts"
import type { ToolCallResponse } from "../../src/domain/event/ToolCallResponse.ts"
import type * as ConversationSession from "../../src/services/ConversationSession.ts"
import * as TurnState from "../../src/domain/stream/TurnState.ts"
import { TurnStart } from "../../src/domain/event/TurnStart.ts"
import * as ExecutorScripted from "../../src/layers/executor/ExecutorScripted.ts"
import * as MockInquiryBackend from "../../src/layers/MockInquiryBackend.ts"
import * as MockPromptBackend from "../../src/layers/prompt/MockPromptBackend.ts"
import * as FileConversationStore from "../../src/layers/store/FileConversationStore.ts"
import * as MemoryConversationStore from "../../src/layers/store/MemoryConversationStore.ts"
import * as ToolCoordinator from "../../src/programs/ToolCoordinator.ts"
import { Config } from "../../src/services/Config.ts"
import { ConversationStore } from "../../src/services/ConversationStore.ts"
import { Executor } from "../../src/services/Executor.ts"
import { InquiryBackend, type InquiryBackendRequest } from "../../src/services/InquiryBackend.ts"
import { PromptBackend } from "../../src/services/PromptBackend.ts"
import type * as RunEvent from "../../src/domain/run/RunEvent.ts"
import * as PendingAnswersLive from "../../src/layers/PendingAnswersLive.ts"
import { PendingAnswers } from "../../src/services/PendingAnswers.ts"
import { RunEvents } from "../../src/services/RunEvents.ts"

export const conversationId = ConversationId.parse("17000000100")!
let tick = 0
/** A deterministic clock: every reading is 1 ms after the previous one. */
export const clock = () => Timestamp.fromEpochNanos(1_772_000_000_000_000_000n + BigInt(tick++) * 1_000_000n)

export const call = (id: string, name: string, args: Schema.JsonObject = {}) =>
  new ToolCallRequest({ timestamp: clock(), id, name, arguments: args })

/** A stream with one open turn: turn_start, chat_request, then the calls. */
export const turnWith = (calls: ReadonlyArray<ToolCallRequest>): Array<StreamEntry> => [
  new TurnStart({ timestamp: clock() }),
  new ChatRequest({ timestamp: clock(), content: "do it" }),
  ...calls
]

export interface Setup {
  readonly tools: Readonly<Record<string, ExecutorScripted.ScriptedTool>>
  readonly prompts?: ReadonlyArray<MockPromptBackend.Scripted>
  readonly interactive?: boolean
  readonly inquiries?: Readonly<Record<string, Schema.Json>>
  readonly backend?: InquiryBackend["Service"]
  readonly config?: unknown
  /** Use the file store in this storage dir instead of the in-memory one. */
  readonly storageDir?: string
  /** Entries already in the conversation (default: one turn holding `calls`). */
  readonly entries?: ReadonlyArray<StreamEntry>
  readonly state?: TurnState.TurnState
  /** The open-question registry (default: a fresh live one). */
  readonly answers?: PendingAnswers["Service"]
  /** An executor of the test's own instead of the scripted `tools`. */
  readonly executor?: Executor["Service"]
}

/** The turn state as plain maps, for assertions. */
export interface StateView {
  readonly rememberedToolAnswers: ReadonlyMap<string, Schema.Json>
  readonly rememberedPermissionDecisions: ReadonlyMap<string, "y" | "n">
  readonly inquiryAttempts: ReadonlyMap<string, number>
}

export interface Harness {
  readonly scripted: ReturnType<typeof ExecutorScripted.make>
  readonly shown: ReadonlyArray<MockPromptBackend.Shown>
  readonly inquiries: ReadonlyArray<InquiryBackendRequest>
  /** The turn's state as it stands now. */
  readonly state: StateView
  readonly layer: Layer.Layer<Services, unknown>
  /** Every run event published so far, in order. */
  readonly events: ReadonlyArray<RunEvent.RunEvent>
  /** Runs the coordinator over `calls` in a session of its own (more cycles may follow with the same state). */
  readonly run: (
    calls: ReadonlyArray<ToolCallRequest>
  ) => Effect.Effect<ReadonlyArray<ToolCallResponse>, unknown, Services>
  /** {@link run}, with the questions deferred too. */
  readonly runAll: (
    calls: ReadonlyArray<ToolCallRequest>,
    resume?: ToolCoordinator.ResumeInput
  ) => Effect.Effect<ToolCoordinator.ToolsResult, unknown, Services>
  /** Appends entries in a session of its own (a later cycle of the same turn). */
  readonly append: (entries: ReadonlyArray<StreamEntry>) => Effect.Effect<void, unknown, ConversationStore>
  /** The persisted entries. */
  readonly persisted: Effect.Effect<ReadonlyArray<StreamEntry>, unknown, ConversationStore>
}

/** The services the coordinator asks for. */
export type Services =
  | ConversationStore
  | Executor
  | PromptBackend
  | InquiryBackend
  | Config
  | RunEvents
  | PendingAnswers

/** A hub that keeps what is published, for assertions (the live hub is tested on its own). */
export const recordingEvents = (events: Array<RunEvent.RunEvent>) =>
  RunEvents.of({
    publish: (e) => Effect.sync(() => void events.push(e)),
    publishUnsafe: (e) => void events.push(e),
    events: Stream.suspend(() => Stream.fromIterable(events)),
    sequenced: Stream.suspend(() => Stream.fromIterable(events.map((event, i) => ({ seq: i + 1, event })))),
    since: (seq) =>
      Stream.suspend(() => Stream.fromIterable(events.map((event, i) => ({ seq: i + 1, event })).slice(seq))),
    latest: Effect.sync(() => events.length),
    // As the live hub: the run's `Stopped` while it is the last event (the next one starts a new run).
    ended: Effect.sync(() => (events.at(-1)?._tag === "Stopped" ? events.length : null))
  })

export const setup = (s: Setup, calls: ReadonlyArray<ToolCallRequest>) =>
  Effect.gen(function* (): Effect.fn.Return<Harness, unknown> {
    const scripted = ExecutorScripted.make(s.tools)
    const mock = yield* MockPromptBackend.make(s.prompts ?? [], { interactive: s.interactive ?? false })
    const inquiries: Array<InquiryBackendRequest> = []
    const backend = s.backend ?? MockInquiryBackend.make(s.inquiries ?? {}, { log: inquiries })
    const entries = [...(s.entries ?? turnWith(calls))]
    const conversation: Conversation.Conversation = {
      ...Conversation.make({ id: conversationId, title: "coordinator test", now: clock() }),
      entries
    }
    const storeLayer =
      s.storageDir === undefined
        ? MemoryConversationStore.layer([conversation])
        : FileConversationStore.layer({ storageDir: s.storageDir })
    if (s.storageDir !== undefined) {
      yield* ConversationStore.use((store) =>
        Effect.scoped(store.create({ id: conversationId, metadata: conversation.metadata, entries }))
      ).pipe(Effect.provide(storeLayer))
    }
    const events: Array<RunEvent.RunEvent> = []
    const layer = Layer.mergeAll(
      Layer.succeed(RunEvents, recordingEvents(events)),
      s.answers !== undefined ? Layer.succeed(PendingAnswers, s.answers) : PendingAnswersLive.layer,
      Layer.succeed(Executor, s.executor ?? scripted.executor),
      Layer.succeed(PromptBackend, mock.service),
      Layer.succeed(InquiryBackend, backend),
      Config.layerLiteral(s.config ?? {}),
      storeLayer
    )
    const state = yield* Ref.make(s.state ?? TurnState.make())
    const session = <A, E, R>(f: (session: ConversationSession.ConversationSession) => Effect.Effect<A, E, R>) =>
      Effect.scoped(
        Effect.flatMap(
          ConversationStore.use((store) => store.open(conversationId)),
          f
        )
      )
    return {
      scripted,
      shown: mock.prompts.shown,
      inquiries,
      get state() {
        const st = Ref.getUnsafe(state)
        return {
          rememberedToolAnswers: new Map(st.rememberedToolAnswers),
          rememberedPermissionDecisions: new Map(st.rememberedPermissionDecisions),
          inquiryAttempts: new Map(st.inquiryAttempts)
        }
      },
      layer,
      events,
      run: (cs) =>
        Effect.map(
          session((sn) => ToolCoordinator.runTools({ session: sn, calls: cs, state, root: "/tmp" })),
          (r) => r.responses
        ),
      runAll: (cs, resume) =>
        session((sn) =>
          ToolCoordinator.runTools({
            session: sn,
            calls: cs,
            state,
            root: "/tmp",
            ...(resume !== undefined ? { resume } : {})
          })
        ),
      append: (es) => session((sn) => sn.append(es)),
      persisted: ConversationStore.use((store) => store.load(conversationId)).pipe(Effect.map((c) => c.entries))
    }
  })

/** A compact view of persisted inquiry and tool events for assertions. */
export const digest = (entries: ReadonlyArray<StreamEntry>): Array<string> =>
  entries.flatMap((e) => {
    switch (e.type) {
      case "tool_call_request":
        return [`call ${e.id} ${e.name}`]
      case "tool_call_response":
        return [`result ${e.id}${e.is_error ? " ERROR" : ""}: ${e.content}`]
      case "inquiry_request":
        return [
          `ask ${e.id} (${e.source.source}${"name" in e.source ? ` ${e.source.name}` : ""}) ${e.question.answer_type.type}: ${e.question.text}`
        ]
      case "inquiry_response":
        return [
          e.outcome === "answered"
            ? `answered ${e.id}: ${JSON.stringify(e.answer)}`
            : e.outcome === "cancelled"
              ? `cancelled ${e.id}: ${e.reason}`
              : `redacted ${e.id}`
        ]
      default:
        return []
    }
  })
