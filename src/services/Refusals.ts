/**
 * Why parley refuses an answer or a request about a run (docs/serve.md#the-api):
 * one set of Schema tagged errors, each annotated with its HTTP status the way
 * Effect's `HttpApiError` is (`httpApiStatus`). The same classes travel
 * unchanged over a run's socket (`services/RunHost.ts`), between the runners
 * of a cluster (`layers/cluster/ConversationEntity.ts`), out of the HTTP API
 * (`services/ServeApi.ts`, through {@link wire}) and to the CLI's one
 * renderer (`cli/ErrorLine.ts`, which prints `message`). Each carries data;
 * its `message` is built from that data, never patched.
 *
 * A refused secret is never repeated back: `AnswerFit` says "the answer is
 * not text" for one, so no refusal carries its value.
 *
 * @example
 * ```ts
 * import { QuestionNotOpen, wire } from "parley/services/Refusals"
 * const error = new QuestionNotOpen({ inquiry_id: "call_1.confirm.9", open: ["call_1.confirm.1"] })
 * error.message // "No open question has the id call_1.confirm.9 (open: call_1.confirm.1)."
 * const body = wire(QuestionNotOpen) // { error: "QuestionNotOpen", message, inquiry_id, open } with status 404
 * ```
 *
 * @since 0.1.0
 */
import type {} from "effect/http-api/HttpApiSchema"
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { NotPrivate } from "../domain/storage/NotPrivate.ts"
import { HostProtocolMismatch } from "../domain/run/HostProtocol.ts"
import {
  AppendRejected,
  ConversationCorrupt,
  ConversationLocked,
  ConversationNotFound,
  StoreIoError
} from "./StoreErrors.ts"

export { ConversationNotFound }

/** No open question has this id. */
export class QuestionNotOpen extends Schema.TaggedError<QuestionNotOpen>()(
  "QuestionNotOpen",
  { inquiry_id: Schema.String, open: Schema.Array(Schema.String) },
  { httpApiStatus: 404 }
) {
  override get message() {
    return `No open question has the id ${this.inquiry_id}${this.open.length === 0 ? " (none is open)" : ` (open: ${this.open.join(", ")})`}.`
  }
}

/** Another answerer won: the question has a recorded answer (`by`: who gave it). */
export class QuestionAlreadyAnswered extends Schema.TaggedError<QuestionAlreadyAnswered>()(
  "QuestionAlreadyAnswered",
  { inquiry_id: Schema.String, by: Schema.String },
  { httpApiStatus: 409 }
) {
  override get message() {
    return `Question ${this.inquiry_id} was already answered (by ${this.by}).`
  }
}

/** The question closed without an answer before this one came (a cancelled prompt, an interrupt, a deferral). */
export class QuestionCancelled extends Schema.TaggedError<QuestionCancelled>()(
  "QuestionCancelled",
  { inquiry_id: Schema.String, by: Schema.String },
  { httpApiStatus: 409 }
) {
  override get message() {
    return `Question ${this.inquiry_id} was already closed without an answer (by ${this.by}).`
  }
}

/** The answer does not fit the question: why, and what would. */
export class AnswerDoesNotFit extends Schema.TaggedError<AnswerDoesNotFit>()(
  "AnswerDoesNotFit",
  { inquiry_id: Schema.String, reason: Schema.String, expected: Schema.String },
  { httpApiStatus: 422 }
) {
  override get message() {
    return `That answer does not fit question ${this.inquiry_id}: ${this.reason}; expected ${this.expected}.`
  }
}

/** One answer of a batch that does not fit. */
export const Misfit = Schema.Struct({ inquiry_id: Schema.String, reason: Schema.String, expected: Schema.String })

/** Answers given together: those that do not fit (nothing was recorded). */
export class AnswersDoNotFit extends Schema.TaggedError<AnswersDoNotFit>()(
  "AnswersDoNotFit",
  { answers: Schema.Array(Misfit) },
  { httpApiStatus: 422 }
) {
  override get message() {
    const each = this.answers.map((a) => `${a.inquiry_id}: ${a.reason}; expected ${a.expected}`)
    return `${this.answers.length === 1 ? "An answer does" : `${this.answers.length} answers do`} not fit (${each.join("; ")}). Nothing was recorded.`
  }
}

/** One answer of a batch another answerer got to first. */
export const Taken = Schema.Struct({ inquiry_id: Schema.String, by: Schema.String, cancelled: Schema.Boolean })

/** Answers given together: the questions another answerer closed meanwhile (nothing was recorded). */
export class AnswersTaken extends Schema.TaggedError<AnswersTaken>()(
  "AnswersTaken",
  { answers: Schema.Array(Taken) },
  { httpApiStatus: 409 }
) {
  override get message() {
    const each = this.answers.map((a) => `${a.inquiry_id} ${a.cancelled ? "closed" : "answered"} by ${a.by}`)
    return `Another answerer came first (${each.join("; ")}). Nothing was recorded.`
  }
}

/** A secret is only taken by a running turn: it is never recorded. */
export class SecretNeedsRunningTurn extends Schema.TaggedError<SecretNeedsRunningTurn>()(
  "SecretNeedsRunningTurn",
  { id: Schema.String, inquiry_id: Schema.String },
  { httpApiStatus: 409 }
) {
  override get message() {
    return `Question ${this.inquiry_id} asks for a secret, which is never recorded: it can only be given to a running turn, and none is running. Resume the turn in a terminal to be asked for it.`
  }
}

/** Another process runs the conversation (`holder`: `pid N`, another parley process, or an incomplete turn). */
export class ConversationBusy extends Schema.TaggedError<ConversationBusy>()(
  "ConversationBusy",
  { id: Schema.String, holder: Schema.String },
  { httpApiStatus: 409 }
) {
  override get message() {
    if (this.holder === INCOMPLETE)
      return `Conversation ${this.id} has an incomplete turn: continue or discard it first.`
    return this.holder.startsWith("pid ")
      ? `Conversation ${this.id} is running in another parley process (${this.holder}).`
      : `Conversation ${this.id} is running in another parley process.`
  }
}

/** `ConversationBusy`'s holder when what stands in the way is a turn left incomplete. */
export const INCOMPLETE = "an incomplete turn"

/** `holder` of a lock (`ConversationLocked.holder`), as `ConversationBusy` names it. */
export const holderOf = (pid: number | string | undefined) =>
  pid === undefined ? "another parley process" : `pid ${pid}`

/** The conversation has no running turn. */
export class NotRunning extends Schema.TaggedError<NotRunning>()(
  "NotRunning",
  { id: Schema.String },
  { httpApiStatus: 404 }
) {
  override get message() {
    return `No turn of ${this.id} is running.`
  }
}

/**
 * The run went away while it was spoken to, or did not answer in time:
 * `during` says what it was asked (an answer when absent: the body of old).
 */
export class RunLost extends Schema.TaggedError<RunLost>()(
  "RunLost",
  { id: Schema.String, during: Schema.optionalKey(Schema.Literals(["stop", "message"])) },
  { httpApiStatus: 503 }
) {
  override get message() {
    switch (this.during) {
      case "stop":
        return `The turn of ${this.id} may not have been stopped: the process that runs it could not be reached or did not answer. Ask again.`
      case "message":
        return `The run of ${this.id} went away as the message was passed to it; it may not be queued.`
      default:
        return `The run of ${this.id} stopped before it took the answer; nothing was recorded.`
    }
  }
}

/** The run could not start (a bad model, a conversation that cannot be continued): what it said, and its exit code when it was a process. */
export class RunNotStarted extends Schema.TaggedError<RunNotStarted>()(
  "RunNotStarted",
  { output: Schema.String, code: Schema.optionalKey(Schema.Number) },
  { httpApiStatus: 422 }
) {
  override get message() {
    return this.code === undefined
      ? `The run did not start: ${this.output}`
      : `The run did not start (exit ${this.code}).`
  }
}

/** The conversation's files cannot be read (`reason`: what is wrong with them). */
export class ConversationDamaged extends Schema.TaggedError<ConversationDamaged>()(
  "ConversationDamaged",
  { id: Schema.String, reason: Schema.String },
  { httpApiStatus: 500 }
) {
  override get message() {
    return this.reason
  }
}

/**
 * A queued message that cannot be withdrawn (docs/cli.md#talk-to-a-running-turn): `state` says why —
 * a run took it (`delivered`), or the conversation has no message `queued` (`unknown`). One
 * withdrawn already is no refusal: withdrawing it again changes nothing.
 */
export class MessageNotQueued extends Schema.TaggedError<MessageNotQueued>()(
  "MessageNotQueued",
  { id: Schema.String, queued: Schema.Number, state: Schema.Literals(["delivered", "unknown"]) },
  { httpApiStatus: 404 }
) {
  override get message() {
    return this.state === "delivered"
      ? `Message ${this.queued} was already delivered.`
      : `${this.id} has no queued message ${this.queued}.`
  }
}

/** Why an answer offered to a running turn was refused. */
export type OfferRefused = QuestionNotOpen | QuestionAlreadyAnswered | QuestionCancelled | AnswerDoesNotFit

/** Every refusal, as one schema (a cluster message's error). */
export const Refusal = Schema.Union([
  ConversationNotFound,
  QuestionNotOpen,
  QuestionAlreadyAnswered,
  QuestionCancelled,
  AnswerDoesNotFit,
  AnswersDoNotFit,
  AnswersTaken,
  SecretNeedsRunningTurn,
  ConversationBusy,
  NotRunning,
  RunLost,
  RunNotStarted,
  ConversationDamaged
])
export type Refusal = typeof Refusal.Type

/** A refusal class: a tagged error whose fields are plain JSON (its encoded form is `{ _tag, …fields }`). */
export interface RefusalClass<Self extends { readonly _tag: string; readonly message: string }>
  extends Schema.Codec<Self, { readonly _tag: string }> {
  readonly identifier: string
  readonly fields: Schema.Struct.Fields
}

/**
 * `error` as the HTTP API's body: `{ error, message, …its fields }` (the
 * shape docs/serve.md documents), with its class's status. Decoding one
 * gives the class back, so a client derived from the API gets the same
 * error the server failed with.
 */
export const wire = <Self extends { readonly _tag: string; readonly message: string }>(
  error: RefusalClass<Self>
): Schema.Codec<Self, Schema.Json> => {
  const { _tag, ...fields } = error.fields
  const decodeClass = Schema.decodeUnknownSync(error)
  const body = Schema.Struct({ error: Schema.Literal(error.identifier), message: Schema.String, ...fields })
  const codec = body.pipe(
    Schema.decodeTo(
      error,
      SchemaTransformation.transform({
        decode: ({ error: tag, message: _, ...rest }) => ({ _tag: tag, ...rest }),
        encode: (encoded: { readonly _tag: string }) => {
          const { _tag: tag, ...rest } = encoded
          // The message is the class's, built from its fields: the body carries it for a reader without the class.
          return { error: tag, message: decodeClass(encoded).message, ...rest }
        }
      })
    )
  )
  // The body's encoded type is spelled out by its struct above; callers need only its Type (the class) and its AST (OpenAPI).
  return codec as Schema.Codec<Self, Schema.Json>
}

/** A store's lock held by another process, as the conversation being busy (`holder`: its pid when the lock says). */
export const busyFromLock = (locked: { readonly id: string; readonly holder?: number | undefined }) =>
  new ConversationBusy({ id: locked.id, holder: holderOf(locked.holder) })

/**
 * A store's error met while answering conversation `id` on disk, as a
 * refusal: a lock held elsewhere is the conversation being busy; a store
 * that cannot be read or written (or a place parley will not trust) is an
 * answer that reached no turn (`RunLost`: nothing was recorded), as is a
 * run whose host speaks another protocol version. Refusals
 * pass as they are.
 */
export const fromStore =
  (id: string) =>
  <E>(
    e: E | ConversationLocked | ConversationCorrupt | StoreIoError | AppendRejected | NotPrivate | HostProtocolMismatch
  ): E | ConversationBusy | RunLost => {
    if (e instanceof ConversationLocked) return busyFromLock(e)
    if (
      e instanceof ConversationCorrupt ||
      e instanceof StoreIoError ||
      e instanceof AppendRejected ||
      e instanceof NotPrivate ||
      e instanceof HostProtocolMismatch
    )
      return new RunLost({ id })
    return e
  }
