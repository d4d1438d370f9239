/**
 * The run's side of messages sent to a running turn (docs/cli.md#talk-to-a-running-turn):
 * the run that holds the conversation takes them from the store's queue
 * (`ConversationStore.messages`) and records each as a `chat_request` whose
 * metadata says which message it was and where it was typed
 * (`QueuedMessage.METADATA_KEY`).
 *
 * - {@link between}: `next` and `now` messages, before the turn's next model
 *   request after tool results — JP's place for a reply typed mid-turn (a
 *   `chat_request` that does not start a turn);
 * - {@link closeForNow}: a turn stopped for a `now` message goes on without
 *   the calls the stop cut short (each answered as interrupted);
 * - {@link drain}: once the turn ends, every message left (`after` ones,
 *   and `next` ones that came too late) starts a turn of its own, in id
 *   order.
 *
 * A message is taken before it is recorded, and counted delivered only once
 * its `chat_request` is in the events: a run killed between the two leaves
 * it to the next run, which delivers it once.
 *
 * @example
 * ```ts
 * import * as Queued from "parley/programs/Queued"
 * import type { ConversationSession } from "parley/services/ConversationSession"
 * declare const session: ConversationSession
 * const entries = Queued.between(session) // the chat_requests of the `next` and `now` messages
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as RunEvent from "../domain/run/RunEvent.ts"
import * as Events from "../domain/event/Events.ts"
import type { StreamEntry } from "../domain/event/ConversationEvent.ts"
import type { ConversationId } from "../domain/storage/ConversationId.ts"
import * as Timestamp from "../domain/event/Timestamp.ts"
import * as QueuedMessage from "../domain/storage/QueuedMessage.ts"
import type { TurnAnalysis } from "../domain/stream/IncompleteTurn.ts"
import type { ConversationSession } from "../services/ConversationSession.ts"
import { ConversationStore } from "../services/ConversationStore.ts"
import { RunEvents } from "../services/RunEvents.ts"

/** The messages still to deliver to `session`'s conversation (none when the store keeps no queue). */
export const pendingFor = (session: ConversationSession) =>
  Effect.gen(function* () {
    const queue = (yield* ConversationStore).messages
    if (queue === undefined) return []
    const all = yield* queue.list(session.id)
    if (all.length === 0) return []
    return QueuedMessage.pending({ messages: all }, QueuedMessage.deliveredIn((yield* session.snapshot).entries))
  })

/** How many messages wait in `id`'s queue, not yet delivered (0 when the store keeps no queue). */
export const pendingCount = (id: ConversationId) =>
  Effect.gen(function* () {
    const store = yield* ConversationStore
    if (store.messages === undefined) return 0
    const messages = yield* store.messages.list(id)
    if (messages.length === 0) return 0
    const delivered = QueuedMessage.deliveredIn((yield* store.load(id)).entries)
    return QueuedMessage.pending({ messages }, delivered).length
  })

/** The metadata that records which message `m` was (its id and its record's nonce) and who sent it. */
export const metadataOf = (m: QueuedMessage.QueuedMessage) => ({
  [QueuedMessage.METADATA_KEY]: { id: m.id, nonce: m.nonce, via: m.surface }
})

/**
 * Takes `m`; whether the take won: a withdraw logged before it wins, and the
 * message is then not delivered (the sender was told it was withdrawn).
 */
const take = (session: ConversationSession, m: QueuedMessage.QueuedMessage) =>
  Effect.gen(function* () {
    const queue = (yield* ConversationStore).messages
    if (queue === undefined) return false
    yield* queue.take(session.id, m.id)
    return (yield* queue.list(session.id)).find((q) => q.nonce === m.nonce)?.state === "taken"
  })

/**
 * Tells the run's followers (attach, the page, `--format jsonl`) that `m` is
 * delivered: read from the context, as the turn that records it runs where
 * a run's events go (none outside a run).
 */
const announce = (m: QueuedMessage.QueuedMessage) =>
  Effect.flatMap(Effect.serviceOption(RunEvents), (events) =>
    Option.isNone(events)
      ? Effect.void
      : events.value.publish(
          RunEvent.make.MessageDelivered({ id: m.id, message: m.message, via: m.surface, when: m.when })
        )
  )

/** The `next` and `now` messages, taken, as the `chat_request`s to record before the next model request. */
export const between = (session: ConversationSession) =>
  Effect.gen(function* () {
    const due = (yield* pendingFor(session)).filter((m) => m.when !== "after")
    const out: Array<StreamEntry> = []
    for (const m of due) {
      if (!(yield* take(session, m))) continue
      out.push(Events.chatRequest(yield* Timestamp.current, m.message, metadataOf(m)))
      yield* announce(m)
    }
    return out
  })

/** The answer recorded for a call a `now` message cut short. */
export const INTERRUPTED = "Interrupted: the user stopped this call to send a message."

/**
 * When a `now` message waits, the resumed turn does not run again the calls
 * its stop cut short: each is answered as interrupted (what finished is
 * kept), and the message goes with their results. Returns whether it closed any.
 */
export const closeForNow = (session: ConversationSession, analysis: TurnAnalysis) =>
  Effect.gen(function* () {
    if (analysis.pendingToolCalls.length === 0) return false
    if (!(yield* pendingFor(session)).some((m) => m.when === "now")) return false
    const at = yield* Timestamp.current
    yield* session.append(
      analysis.pendingToolCalls.map((c) => Events.toolCallResponse(at, c.id, { content: INTERRUPTED, is_error: true }))
    )
    return true
  })

/**
 * Runs a turn for each message left, in id order, while each ends complete
 * (`turn`: one new turn with the message; `true` when it ended waiting for
 * input, which leaves the rest queued). Returns how many it started.
 */
export const drain = <E, R>(
  session: ConversationSession,
  turn: (message: string, metadata: ReturnType<typeof metadataOf>) => Effect.Effect<boolean, E, R>
) =>
  Effect.gen(function* () {
    let started = 0
    for (;;) {
      const [next] = yield* pendingFor(session)
      if (next === undefined) return started
      if (!(yield* take(session, next))) continue
      started++
      yield* announce(next)
      if (yield* turn(next.message, metadataOf(next))) return started
    }
  })
