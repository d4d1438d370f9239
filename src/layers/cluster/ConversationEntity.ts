/**
 * A conversation as an `effect/cluster` entity (docs/cluster.md#how-it-works): its id is the
 * conversation id, and what changes it — send a message, answer a question,
 * continue, discard, stop — are its messages. They are persisted in
 * PostgreSQL (`SqlMessageStorage`) and redelivered to whichever runner owns
 * the conversation's shard until they have a reply, so a message sent while
 * its owner dies is handled by the next one. An answer goes first as a
 * volatile message straight to the owner (`AnswerDirect`: no storage round
 * trip on its way there or back), and as the persisted `Answer` only when that
 * did not come back with a reply (the same nonce, so the owner knows it for
 * the same answer). An answer to a `secret` question is only ever volatile,
 * since a secret never reaches a disk (contract §2).
 *
 * The turn runs in the owner's process (`Turns.ts`); a reply says how it
 * went, or carries one of parley's refusals (`services/Refusals.ts`), so any runner
 * answers the client exactly as the owner would.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as ConversationEntity from "parley/layers/cluster/ConversationEntity"
 * const program = Effect.gen(function* () {
 *   const client = yield* ConversationEntity.Conversation.client
 *   yield* client("17738399468").Answer({ inquiry_id: "call_1.confirm.1", answer: true })
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as ClusterSchema from "effect/cluster/ClusterSchema"
import * as Entity from "effect/cluster/Entity"
import * as Rpc from "effect/rpc/Rpc"
import { When } from "../../domain/storage/QueuedMessage.ts"
import { Refusal } from "../../services/Refusals.ts"

/** Why the owner refused a message: one of parley's refusals (`services/Refusals.ts`), as the HTTP API answers it. */
const Refused = Refusal

/** A turn that runs: which runner process runs it. */
export const RunStarted = Schema.Struct({ conversation_id: Schema.String, pid: Schema.Number })

/** What a message became: the turn it started, or (`queued`: its id) a message queued for the turn that runs. */
export const MessageTaken = Schema.Struct({
  conversation_id: Schema.String,
  pid: Schema.Number,
  queued: Schema.optionalKey(Schema.Number)
})

/** Send a message: a new turn, or queued for the running one (`when` it gets it; docs/cli.md#talk-to-a-running-turn). */
export const Send = Rpc.make("Send", {
  payload: { message: Schema.String, model: Schema.optional(Schema.String), when: Schema.optional(When) },
  success: MessageTaken,
  error: Refused
}).annotate(ClusterSchema.Persisted, true)

/** Resume the incomplete turn. */
export const Continue = Rpc.make("Continue", { success: RunStarted, error: Refused }).annotate(
  ClusterSchema.Persisted,
  true
)

/** Drop the incomplete turn. */
export const Discard = Rpc.make("Discard", {
  success: Schema.Struct({ id: Schema.String, ending: Schema.String }),
  error: Refused
}).annotate(ClusterSchema.Persisted, true)

/** Stop the running turn (open questions are cancelled, as `conversation kill` does). */
export const Stop = Rpc.make("Stop", {
  success: Schema.Struct({ id: Schema.String, pid: Schema.Number }),
  error: Refused
}).annotate(ClusterSchema.Persisted, true)

/**
 * An answer; `nonce` names it across its deliveries (the direct one and the
 * persisted one after it): the delivery that won the question is known by
 * it, and any other delivery of the same answer gets the same reply.
 */
const AnswerPayload = { inquiry_id: Schema.String, answer: Schema.Json, nonce: Schema.optional(Schema.String) }
const AnswerAccepted = Schema.Struct({ id: Schema.String, outcome: Schema.Literals(["delivered", "recorded"]) })

/** Answer an open question. */
export const Answer = Rpc.make("Answer", { payload: AnswerPayload, success: AnswerAccepted, error: Refused }).annotate(
  ClusterSchema.Persisted,
  true
)

/**
 * Answer an open question the direct way: a volatile message, sent to the
 * owner over the runner transport and replied to over it, with no write to
 * or poll of the message storage (on a loaded machine those round trips,
 * serialized on the owner's storage read loop and its shard-lock
 * connection, were most of an answer's time). Whoever sends it falls back to
 * the persisted `Answer`, with the same nonce, when it gets no reply.
 */
export const AnswerDirect = Rpc.make("AnswerDirect", {
  payload: AnswerPayload,
  success: AnswerAccepted,
  error: Refused
})

/** Answer an open `secret` question: volatile, so the secret is never stored. */
export const AnswerSecret = Rpc.make("AnswerSecret", {
  payload: AnswerPayload,
  success: AnswerAccepted,
  error: Refused
})

/** Answer several open questions at once, all or none (volatile: any of them may be a secret). */
export const AnswerAll = Rpc.make("AnswerAll", {
  payload: { answers: Schema.Record(Schema.String, Schema.Json) },
  success: Schema.Struct({
    outcome: Schema.Literals(["delivered", "recorded"]),
    answered: Schema.Array(Schema.String)
  }),
  error: Refused
})

/** The conversation entity. */
export const Conversation = Entity.make("Conversation", [
  Send,
  Continue,
  Discard,
  Stop,
  Answer,
  AnswerDirect,
  AnswerSecret,
  AnswerAll
])
