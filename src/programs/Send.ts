/**
 * `parley conversation send` as a program (docs/cli.md#talk-to-a-running-turn):
 * a message to a conversation, whether or not its turn runs.
 *
 * - a turn runs: the message is queued beside the conversation
 *   (`ConversationStore.messages`) for the run to deliver `after` the turn
 *   (default), at its `next` model request, or `now` — the turn is stopped
 *   as Ctrl-C stops it (`RunningTurn.interrupt`), then resumed in the
 *   background with the message (`start`);
 * - nothing runs and the last turn is complete: queued, and a run is
 *   started in the background to deliver it (as `query --id ID MESSAGE
 *   --detach` would, with who sent it recorded);
 * - nothing runs and the last turn is incomplete: queued, delivered when
 *   that turn is resumed (or after it is discarded, by the next run); the
 *   edge names both commands.
 *
 * {@link withdraw} takes a queued message back until a run took it.
 *
 * @example
 * ```ts
 * import * as Send from "parley/programs/Send"
 * import type { ConversationId } from "parley/domain/storage/ConversationId"
 * import * as Effect from "effect/Effect"
 * declare const id: ConversationId
 * const sent = Send.send({ id, message: "also check the tests", surface: "terminal", start: () => Effect.void })
 * ```
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { ConversationId } from "../domain/storage/ConversationId.ts"
import * as ConversationIdText from "../domain/storage/ConversationId.ts"
import type { QueuedMessage, Surface, When } from "../domain/storage/QueuedMessage.ts"
import * as IncompleteTurn from "../domain/stream/IncompleteTurn.ts"
import { ConversationStore } from "../services/ConversationStore.ts"
import { MessageNotQueued } from "../services/Refusals.ts"
import { RunningTurns } from "../services/RunningTurns.ts"

/** The store keeps no queue of messages. */
export class QueueUnsupported extends Schema.TaggedError<QueueUnsupported>()("QueueUnsupported", {
  id: Schema.String
}) {
  override get message() {
    return `This storage cannot keep messages for conversation ${ConversationIdText.display(this.id)}.`
  }
}

/** What happened to a sent message. */
export type Sent = Data.TaggedEnum<{
  /** Queued for the running turn (pid: its process); `now`: the turn was stopped and a run resumes it with the message. */
  Queued: { readonly queued: QueuedMessage; readonly pid: number; readonly restarted: boolean }
  /** Nothing ran: a run was started in the background to deliver it. */
  Started: { readonly queued: QueuedMessage }
  /** The last turn is incomplete: delivered once it is resumed or discarded. */
  WaitsForTurn: { readonly queued: QueuedMessage; readonly detail: string }
}>
export const Sent = Data.taggedEnum<Sent>()

/** What `send` needs. */
export interface SendOptions<E> {
  readonly id: ConversationId
  readonly message: string
  /** When the running turn gets it (`after` when not said). */
  readonly when?: When
  readonly surface: Surface
  /** Starts a run in the background that resumes the conversation's turn, or delivers its queue (`query --continue-turn`). */
  readonly start: () => Effect.Effect<void, E>
  /** The sender's tag for the message: sent again with it, it is not queued twice (`MessageQueue.enqueue`). */
  readonly nonce?: string
  /** How long a stopped run may take to let go of the conversation (`now`). */
  readonly stopMs?: number
}

/** Waits until `id`'s turn no longer runs (bounded by `ms`). */
const stopped = (id: ConversationId, ms: number) =>
  Effect.gen(function* () {
    const turns = yield* RunningTurns
    const deadline = Date.now() + ms
    while (Date.now() < deadline) {
      const still = yield* Effect.scoped(turns.find(id))
      if (Option.isNone(still)) return true
      yield* Effect.sleep("50 millis")
    }
    return false
  })

/** Sends `message` to conversation `id` (see the module). */
export const send = <E>(options: SendOptions<E>) =>
  Effect.gen(function* () {
    const store = yield* ConversationStore
    const queue = store.messages
    if (queue === undefined) return yield* new QueueUnsupported({ id: options.id })
    const when = options.when ?? "after"
    const running = yield* Effect.scoped(
      Effect.gen(function* () {
        const turn = yield* (yield* RunningTurns).find(options.id)
        if (Option.isNone(turn)) return undefined
        const info = yield* turn.value.info
        const queued = yield* queue.enqueue(options.id, {
          message: options.message,
          surface: options.surface,
          when,
          ...(options.nonce !== undefined ? { nonce: options.nonce } : {})
        })
        if (when === "now") yield* turn.value.interrupt
        return { queued, pid: info.pid }
      })
    )
    if (running !== undefined) {
      if (when !== "now") return Sent.Queued({ ...running, restarted: false })
      yield* stopped(options.id, options.stopMs ?? 30_000)
      yield* options.start()
      return Sent.Queued({ ...running, restarted: true })
    }
    const conversation = yield* store.load(options.id)
    // Nothing runs, so nothing is stopped: a `now` message waits as `after` (else a later resume of an incomplete
    // turn would answer its pending calls as cut short for it).
    const queued = yield* queue.enqueue(options.id, {
      message: options.message,
      surface: options.surface,
      when: when === "now" ? "after" : when
    })
    const incomplete = IncompleteTurn.incompleteSummary(conversation.entries)
    if (incomplete !== null) return Sent.WaitsForTurn({ queued, detail: incomplete.state })
    yield* options.start()
    return Sent.Started({ queued })
  })

/** Withdraws queued message `n` of `id` (see `QueuedMessage.Withdrawn`). */
export const withdraw = (id: ConversationId, n: number) =>
  Effect.gen(function* () {
    const queue = (yield* ConversationStore).messages
    if (queue === undefined) return yield* new QueueUnsupported({ id })
    return yield* queue.withdraw(id, n)
  })

/**
 * {@link withdraw} as the HTTP APIs answer it: the conversation must exist;
 * a message delivered or never queued is a {@link MessageNotQueued}; one
 * withdrawn already stays so (`already_withdrawn`: a retried request
 * changes nothing).
 */
export const withdrawRefused = (id: ConversationId, n: number) =>
  Effect.gen(function* () {
    const store = yield* ConversationStore
    // A conversation that does not exist is a 404 of its own, not a message it never had.
    yield* store.load(id)
    const outcome = yield* withdraw(id, n)
    if (outcome === "delivered" || outcome === "unknown")
      return yield* new MessageNotQueued({ id, queued: n, state: outcome })
    return {
      conversation_id: id,
      queued: n,
      outcome: outcome === "withdrawn" ? "withdrawn" : "already_withdrawn"
    } as const
  })
