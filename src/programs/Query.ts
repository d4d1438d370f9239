/**
 * `parley query` as a program over services: pick the conversation, hold
 * its lock for the whole run, deal with an incomplete turn (RFD 023: resume,
 * discard, or ask), run the turn, and fold everything back into JP's format
 * at the end — also when interrupted.
 *
 * @example
 * ```ts
 * import * as Query from "./Query.ts"
 * const result = yield* Query.query({ message: "hi", target: { _tag: "MostRecent" }, model: "scripted", root, interactive: false })
 * ```
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { ChatRequest } from "../domain/event/ChatRequest.ts"
import * as Conversation from "../domain/storage/Conversation.ts"
import * as ConversationId from "../domain/storage/ConversationId.ts"
import { ConversationMetadata } from "../domain/storage/ConversationMetadata.ts"
import * as IncompleteTurn from "../domain/stream/IncompleteTurn.ts"
import * as Timestamp from "../domain/event/Timestamp.ts"
import type { ToolCallRequest } from "../domain/event/ToolCallRequest.ts"
import { ConversationStore } from "../services/ConversationStore.ts"
import { freshId } from "./NewConversation.ts"
import { runTurn } from "./TurnLoop.ts"

export type Target =
  | { readonly _tag: "Id"; readonly id: ConversationId.ConversationId }
  | { readonly _tag: "New" }
  | { readonly _tag: "MostRecent" }

/** What to do with an incomplete turn when no flag said (the TTY prompt's keys). */
export type ResumeChoice = "resume" | "discard" | "quit" | "edit"

export interface IncompleteInfo {
  readonly conversationId: ConversationId.ConversationId
  readonly summary: IncompleteTurn.IncompleteSummary
  readonly analysis: IncompleteTurn.TurnAnalysis
}

export interface QueryOptions {
  readonly message: string | undefined
  readonly target: Target
  readonly model: string
  readonly systemPrompt?: string
  /** Where tools run (the storage directory's parent). */
  readonly root: string
  readonly continueTurn?: boolean
  readonly discardTurn?: boolean
  /** Both stdin and stdout are TTYs. */
  readonly interactive: boolean
  /** The inline incomplete-turn prompt (TTY only). */
  readonly askResume?: (info: IncompleteInfo) => Effect.Effect<ResumeChoice>
  /** Opens the pending query in `$EDITOR`; returns the edited text. */
  readonly editMessage?: (text: string) => Effect.Effect<string>
  readonly onText?: (text: string) => Effect.Effect<void>
  readonly onToolCalls?: (calls: ReadonlyArray<ToolCallRequest>) => Effect.Effect<void>
  readonly onWaiting?: (waiting: boolean) => Effect.Effect<void>
  /** Called once the conversation is known (so an interrupt hint can name it). */
  readonly onConversation?: (id: ConversationId.ConversationId) => Effect.Effect<void>
}

export type QueryOutcome = "completed" | "resumed" | "discarded" | "quit" | "nothing-to-resume" | "nothing-to-discard"

/** The conversation has an incomplete turn and nobody said what to do with it. */
export class IncompleteTurnPending extends Schema.TaggedError<IncompleteTurnPending>()("IncompleteTurnPending", {
  id: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return [
      `Conversation ${ConversationId.display(this.id as ConversationId.ConversationId)} has an incomplete turn (${this.detail}).`,
      `    parley query --continue-turn --id ${this.id}    Resume the incomplete turn.`,
      `    parley query --discard-turn --id ${this.id}     Discard the incomplete turn and start fresh.`
    ].join("\n")
  }
}

/** There is nothing to send. */
export class NoMessage extends Schema.TaggedError<NoMessage>()("NoMessage", { hint: Schema.String }) {
  override get message() {
    return this.hint
  }
}

/** A one-line description of an incomplete turn, with the pending question when there is one. */
export const describeIncomplete = (summary: IncompleteTurn.IncompleteSummary, analysis: IncompleteTurn.TurnAnalysis): string => {
  const q = analysis.pendingInquiry
  switch (summary.state) {
    case "waiting-for-input":
      return `waiting for input: ${summary.tool ?? "a tool"}${q !== null ? ` — "${q.question.text.split("\n")[0]}"` : ""}`
    case "pending-tool-execution":
      return `pending tool execution: ${analysis.pendingToolCalls.map((c) => c.name).join(", ")}`
    case "pending-follow-up":
      return "tool results not yet sent to the assistant"
    case "pending-llm-response":
      return "waiting for the assistant's reply"
  }
}

export const query = (options: QueryOptions) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore
    const now = Timestamp.now()

    // 1. Which conversation.
    let id: ConversationId.ConversationId
    let created = false
    if (options.target._tag === "Id") {
      id = options.target.id // loaded (or reported missing) once the lock is held
    } else if (options.target._tag === "MostRecent") {
      const rows = yield* store.list()
      if (rows.length > 0) id = rows[0]!.id
      else {
        id = yield* freshId
        created = true
      }
    } else {
      id = yield* freshId
      created = true
    }
    if (created) {
      if (options.message === undefined || options.message.trim() === "") {
        return yield* new NoMessage({ hint: "Nothing to send: give a message, e.g. parley query \"Hello\"." })
      }
      const title = Conversation.titleFrom(options.message)
      yield* store.save(Conversation.make({ id, now, ...(title !== undefined ? { title } : {}) }))
    }
    if (options.onConversation !== undefined) yield* options.onConversation(id)

    // 2. Hold the lock for the whole run; a second writer fails fast.
    yield* store.lock(id)

    const loaded = yield* store.load(id)
    const title = loaded.metadata.title ?? (options.message !== undefined ? Conversation.titleFrom(options.message) : undefined)
    let conversation: Conversation.Conversation = {
      ...loaded,
      metadata: new ConversationMetadata({
        ...loaded.metadata,
        ...(title !== undefined ? { title } : {}),
        last_activated_at: now
      })
    }
    const stream = { entries: [...conversation.entries] }

    // 3. An incomplete turn.
    const { complete, incomplete } = IncompleteTurn.splitIncompleteTurn(loaded.entries)
    let outcome: QueryOutcome = "completed"
    let resumeWith: IncompleteTurn.TurnAnalysis | undefined
    if (incomplete !== null) {
      const analysis = IncompleteTurn.analyze(incomplete)
      const summary = IncompleteTurn.summaryOf(incomplete) ?? { state: "pending-llm-response" as const }
      let choice: ResumeChoice
      if (options.discardTurn === true) choice = "discard"
      else if (options.continueTurn === true) choice = "resume"
      else if (options.interactive && options.askResume !== undefined) choice = yield* options.askResume({ conversationId: id, summary, analysis })
      else return yield* new IncompleteTurnPending({ id, detail: describeIncomplete(summary, analysis) })

      if (choice === "quit") return { conversationId: id, outcome: "quit" as QueryOutcome }
      if (choice === "discard") {
        stream.entries.splice(0, stream.entries.length, ...complete)
        conversation = { ...conversation, entries: complete }
        yield* store.save({ ...conversation, entries: stream.entries })
        outcome = "discarded"
      } else {
        // Trailing bare turn_starts are not part of what resumes (the store's
        // current turn must be the one whose calls are pending).
        const resumable = IncompleteTurn.resumableEntries(incomplete)
        if (resumable.length !== incomplete.entries.length) {
          stream.entries.splice(0, stream.entries.length, ...complete, ...resumable)
          yield* store.save({ ...conversation, entries: stream.entries })
        }
        if (choice === "edit" && options.editMessage !== undefined) {
          // Replace the pending query with the edited text, then resume from Streaming.
          const at = stream.entries.findLastIndex((e) => e.type === "chat_request")
          if (at >= 0) {
            const old = stream.entries[at] as ChatRequest
            const edited = yield* options.editMessage(old.content)
            stream.entries[at] = new ChatRequest({ ...old, content: edited })
            yield* store.save({ ...conversation, entries: stream.entries })
          }
        }
        resumeWith = analysis
        outcome = "resumed"
      }
    } else if ((options.continueTurn === true || options.discardTurn === true) && (options.message === undefined || options.message.trim() === "")) {
      // RFD 023: both flags are no-ops without an incomplete turn.
      return { conversationId: id, outcome: (options.continueTurn === true ? "nothing-to-resume" : "nothing-to-discard") as QueryOutcome }
    }

    // From here on the conversation changes. At the end, interrupted or not,
    // fold the journal back into JP's files (and record the activity).
    yield* Effect.addFinalizer(() => store.save({ ...conversation, entries: stream.entries }).pipe(Effect.ignore))

    // 4. Run the turn: the resumed one, and/or a new one with the message.
    const common = {
      conversationId: id,
      stream,
      model: options.model,
      root: options.root,
      ...(options.systemPrompt !== undefined ? { systemPrompt: options.systemPrompt } : {}),
      ...(options.onText !== undefined ? { onText: options.onText } : {}),
      ...(options.onToolCalls !== undefined ? { onToolCalls: options.onToolCalls } : {}),
      ...(options.onWaiting !== undefined ? { onWaiting: options.onWaiting } : {})
    }
    if (resumeWith !== undefined) {
      yield* runTurn({ ...common, start: { _tag: "Resume", analysis: resumeWith } })
      // RFD 023: --continue-turn resumes without a new message.
      if (options.message === undefined || options.message.trim() === "") return { conversationId: id, outcome }
    }
    if (options.message === undefined || options.message.trim() === "") {
      if (outcome === "discarded") return { conversationId: id, outcome }
      return yield* new NoMessage({ hint: "Nothing to send: give a message, e.g. parley query \"Hello\"." })
    }
    yield* runTurn({ ...common, start: { _tag: "NewTurn", message: options.message } })
    return { conversationId: id, outcome }
  }).pipe(Effect.scoped)
