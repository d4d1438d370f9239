/**
 * The HTTP API of `parley serve` (docs/serve.md), as a typed `effect/http-api`
 * definition: the endpoints, their JSON shapes and every error with its
 * status. The server (`layers/serve/`) implements it; a program may derive a
 * client from it (`HttpApiClient.make(ServeApi)`); the OpenAPI document at
 * `/api/openapi.json` is generated from it.
 *
 * Errors are JSON `{ error, message, …data }`: `error` names the variant.
 * Every request needs the token (`Authorization: Bearer …` or the page's
 * cookie); that check, like the `Host` and `Origin` checks, runs before any
 * endpoint (see `layers/serve/Guard.ts`).
 *
 * @example
 * ```ts
 * import { ServeApi } from "parley/services/ServeApi"
 * ServeApi.groups // { conversations: … }
 * ```
 *
 * @since 0.1.0
 */
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as HttpApiSecurity from "effect/http-api/HttpApiSecurity"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import * as LastError from "../domain/run/LastError.ts"
import { LiveViewGone, LiveViewLagged } from "../domain/run/LiveView.ts"
import { RunEvent } from "../domain/run/RunEvent.ts"
import { parseExact } from "../domain/storage/ConversationIdText.ts"
import { When } from "../domain/storage/QueuedMessage.ts"
import * as Refusals from "./Refusals.ts"

/** An error body: `error` names it, `message` says it in words, the rest is its data. */
const errorOf = <const Tag extends string, Fields extends Schema.Struct.Fields>(
  tag: Tag,
  status: number,
  fields: Fields
) =>
  Schema.Struct({ error: Schema.Literal(tag), message: Schema.String, ...fields }).annotate({
    httpApiStatus: status,
    identifier: tag
  })

/** The request is malformed: not JSON, not the shape the endpoint takes, too large. */
export const BadRequest = errorOf("BadRequest", 400, { kind: Schema.String })

// The refusals of answers and runs, as the API's bodies (`services/Refusals.ts`: one set for every channel).
const ConversationNotFound = Refusals.wire(Refusals.ConversationNotFound)
const NotRunning = Refusals.wire(Refusals.NotRunning)
const QuestionNotOpen = Refusals.wire(Refusals.QuestionNotOpen)
const QuestionAlreadyAnswered = Refusals.wire(Refusals.QuestionAlreadyAnswered)
const QuestionCancelled = Refusals.wire(Refusals.QuestionCancelled)
const AnswersDoNotFit = Refusals.wire(Refusals.AnswersDoNotFit)
const AnswersTaken = Refusals.wire(Refusals.AnswersTaken)
const ConversationBusy = Refusals.wire(Refusals.ConversationBusy)
const SecretNeedsRunningTurn = Refusals.wire(Refusals.SecretNeedsRunningTurn)
const AnswerDoesNotFit = Refusals.wire(Refusals.AnswerDoesNotFit)
const RunLost = Refusals.wire(Refusals.RunLost)
const ConversationDamaged = Refusals.wire(Refusals.ConversationDamaged)
const RunNotStarted = Refusals.wire(Refusals.RunNotStarted)
const MessageNotQueued = Refusals.wire(Refusals.MessageNotQueued)

/** A running turn (`ls --format json`'s `running`). */
export const Running = Schema.NullOr(Schema.Struct({ pid: Schema.Number, waiting: Schema.Array(Schema.String) }))

/** One row of `GET /api/conversations`: the `ls --format json` row. */
export const ConversationRow = Schema.Struct({
  id: Schema.String,
  title: Schema.NullOr(Schema.String),
  /** `null` on a damaged row, as every field it could not read. */
  events: Schema.NullOr(Schema.Number),
  last_event_at: Schema.NullOr(Schema.String),
  archived: Schema.Boolean,
  incomplete: Schema.NullOr(Schema.Struct({ state: Schema.String, tool: Schema.optionalKey(Schema.String) })),
  tokens: Schema.Json,
  /** JP's labels (RFD 101), `{ key: [values] }`; `null` on a damaged row. */
  labels: Schema.NullOr(Schema.Record(Schema.String, Schema.Array(Schema.String))),
  /** `null`, or why the conversation cannot be read (`conversation check ID` says more). */
  damaged: Schema.NullOr(Schema.String),
  /** The error the conversation's last run ended in (`message`, and `at` in RFC 3339), kept until its next run; `null`: none. */
  last_error: Schema.NullOr(LastError.LastError),
  running: Running,
  /** Why a `[notify]` hook failed for this conversation, shown once (absent when none did). */
  notify_error: Schema.optionalKey(Schema.String)
})
export type ConversationRow = typeof ConversationRow.Type

/** One open question of `GET /api/questions`. */
export const QuestionRow = Schema.Struct({
  id: Schema.String,
  /** The same as `id` (contract §8's name). */
  inquiry_id: Schema.String,
  /** `approval`: may the call run? (answered `yes`/`no`/`always`/`never`); else a tool's `question`. */
  kind: Schema.Literals(["question", "approval"]),
  conversation_id: Schema.String,
  tool: Schema.String,
  /** The call's arguments (what an approval lets run). */
  arguments: Schema.NullOr(Schema.JsonObject),
  tool_call_id: Schema.String,
  question: Schema.String,
  answer_type: Schema.Literals(["boolean", "select", "text", "secret"]),
  options: Schema.NullOr(Schema.Array(Schema.String)),
  default: Schema.Json,
  since: Schema.NullOr(Schema.String),
  /** Whether a process runs the turn now (`false`: it waits on disk; the answer is recorded for its resume). `parley serve` and a cluster say (a cluster: whether a runner has the turn). */
  running: Schema.optionalKey(Schema.Boolean)
})
export type QuestionRow = typeof QuestionRow.Type

/** What `POST …/questions/:inquiryId` takes. */
export const AnswerBody = Schema.Struct({ answer: Schema.Json })

/** What it says: the running turn took it (`delivered`), or it went into the waiting turn on disk (`recorded`). */
export const AnswerAccepted = Schema.Struct({ id: Schema.String, outcome: Schema.Literals(["delivered", "recorded"]) })

/** What `POST …/answers` takes: answers to several open questions of one turn, by inquiry id. */
export const AnswersBody = Schema.Struct({ answers: Schema.Record(Schema.String, Schema.Json) })

/** What it says: where the answers went (all of them: `answered` lists their ids). */
export const AnswersAccepted = Schema.Struct({
  outcome: Schema.Literals(["delivered", "recorded"]),
  answered: Schema.Array(Schema.String)
})

/**
 * A model as `--model` takes it (contract §4): `scripted`, or `anthropic/` or
 * `openai/` and a model name of letters, digits and `. _ : @ + / -`, not
 * starting with `-`, at most 200 characters in all. Checked before a run
 * starts: a value that is not one never reaches a child's command line.
 */
export const Model = Schema.String.check(
  Schema.makeFilter(
    (s: string) =>
      (s.length <= 200 && /^(?:scripted|(?:anthropic|openai)\/[A-Za-z0-9][A-Za-z0-9._:@+/-]*)$/.test(s)) ||
      "Expected a model: anthropic/<model>, openai/<model> or scripted"
  )
).annotate({ description: "anthropic/<model>, openai/<model> or scripted" })

/** A message a person sends: some text (an empty one is refused as a 400 that names the field). */
export const MessageText = Schema.String.check(
  Schema.makeFilter((s: string) => s.trim() !== "" || "Expected a message with some text in it, got an empty one")
).annotate({ description: "The message (not empty)" })

/** What `POST /api/conversations` takes: the message, and the model of a new conversation. */
export const NewConversation = Schema.Struct({ message: MessageText, model: Schema.optionalKey(Model) })

/**
 * What `POST …/messages` takes: `when` a running turn gets it (docs/cli.md#talk-to-a-running-turn;
 * `after` when not said); `model` only for a turn the message starts.
 */
export const NewMessage = Schema.Struct({
  message: MessageText,
  model: Schema.optionalKey(Model),
  when: Schema.optionalKey(When),
  /** Where it was typed, recorded with it: the page says `page` (default `api`). */
  via: Schema.optionalKey(Schema.Literals(["api", "page"]))
})

/**
 * What `POST …/messages` says: the run that has the message — the running
 * turn's (it was queued: `queued`, its id, as `conversation send` prints
 * it), or the turn it started.
 */
export const MessageSent = Schema.Struct({
  conversation_id: Schema.String,
  pid: Schema.Number,
  queued: Schema.optionalKey(Schema.Number)
})

/**
 * What `DELETE …/messages/:n` says: queued message `queued` will not be
 * delivered — `withdrawn` now, or `already_withdrawn` (a retried request).
 */
export const MessageWithdrawn = Schema.Struct({
  conversation_id: Schema.String,
  queued: Schema.Number,
  outcome: Schema.Literals(["withdrawn", "already_withdrawn"])
})

/** The id of a queued message, as `…/messages` returned it (`queued`): 1, 2, … */
export const QueuedId = Schema.NumberFromString.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(1)).annotate({
  description: "A queued message's id, as POST …/messages returned it"
})

/** A turn started by the server: its conversation and the process that runs it (and serves it on its socket). */
export const RunStarted = Schema.Struct({ conversation_id: Schema.String, pid: Schema.Number })

/** What `POST …/discard` says: how the run ended (`discarded`, `nothing_to_discard`). */
export const Discarded = Schema.Struct({ id: Schema.String, ending: Schema.String })

/** What `POST …/stop` says: the run's host was asked to stop (it ends as SIGTERM ends a run: recorded, resumable). */
export const Stopping = Schema.Struct({ id: Schema.String, pid: Schema.Number })

/**
 * One SSE frame: `id:` the event's sequence number in the run, `data:` the
 * run event as JSON. The last frame of a stream that cannot go on is
 * `event: lagged` (the client fell too far behind: reconnect with
 * `Last-Event-ID`, which an `EventSource` does by itself) or `event: gone`
 * (what follows is no longer kept, or the run is over: the stored
 * conversation is the record); neither has an `id:`.
 */
export const EventFrame = Schema.Union([
  Schema.Struct({ id: Schema.String, event: Schema.Literal("message"), data: Schema.fromJsonString(RunEvent) }),
  Schema.Struct({ event: Schema.Literal("lagged"), data: Schema.fromJsonString(LiveViewLagged) }),
  Schema.Struct({ event: Schema.Literal("gone"), data: Schema.fromJsonString(LiveViewGone) })
])
export type EventFrame = typeof EventFrame.Type

/** A wrong or missing token (401); the body says nothing else. */
export const Unauthorized = errorOf("Unauthorized", 401, {})

/** The `Host` header names another server (DNS rebinding): checked before anything else, on every request. */
export const MisdirectedRequest = errorOf("MisdirectedRequest", 421, {})
/** A `POST` from a page of another site (its `Origin`). */
export const ForeignOrigin = errorOf("ForeignOrigin", 403, {})
/** A request body over 1 MiB. */
export const PayloadTooLarge = errorOf("PayloadTooLarge", 413, {})
/** A body that is not JSON by its content-type. */
export const UnsupportedMediaType = errorOf("UnsupportedMediaType", 415, {})

/** What every `POST` may be refused for before its endpoint runs (`layers/serve/Guard.ts`). */
const POSTED = [ForeignOrigin] as const
/** …and a `POST` that takes a JSON body (one that takes none does not read it). */
const WITH_BODY = [...POSTED, PayloadTooLarge, UnsupportedMediaType] as const

/** The cookie that carries the token for the page (`layers/serve/Guard.ts` sets and reads it). */
export const TOKEN_COOKIE = "parley_token"

/** The token, for the OpenAPI document (the check itself runs before routing, `layers/serve/Guard.ts`). */
export class Token extends HttpApiMiddleware.Service<Token>()("parley/serve/Token", {
  // The page's requests carry the token in its cookie (set when it is opened with `?token=`); any other client sends the bearer.
  security: { bearer: HttpApiSecurity.bearer, cookie: HttpApiSecurity.apiKey({ in: "cookie", key: TOKEN_COOKIE }) },
  // The Host check runs first, on every request: its 421 belongs with the token's 401.
  error: [Unauthorized, MisdirectedRequest]
}) {}

/** Request-decoding failures as a 400 `BadRequest` (Effect's default is an empty 400). */
export class Validation extends HttpApiMiddleware.Service<Validation>()("parley/serve/Validation", {
  error: BadRequest
}) {}

/** A conversation id as the CLI reads it (`17738399468`, `jp-c17738399468`), never trimmed: anything else is a 400. */
export const ConversationIdParam = Schema.String.check(
  Schema.makeFilter(
    (s: string) =>
      parseExact(s) !== undefined || "Expected a conversation id: digits, or jp-c and digits (nothing around them)"
  )
).annotate({ description: "A conversation id: 17738399468 or jp-c17738399468" })

const Id = { id: ConversationIdParam }

/** The conversations and their questions. */
export class ConversationsGroup extends HttpApiGroup.make("conversations")
  .add(
    HttpApiEndpoint.get("list", "/conversations", { success: Schema.Array(ConversationRow) }).annotate(
      OpenApi.Summary,
      "List the conversations"
    ),
    HttpApiEndpoint.get("get", "/conversations/:id", {
      params: Id,
      success: Schema.Json,
      error: [ConversationNotFound, ConversationDamaged]
    })
      .middleware(Validation)
      .annotate(OpenApi.Summary, "Read one conversation"),
    HttpApiEndpoint.get("events", "/conversations/:id/events", {
      params: Id,
      // A sequence number of the run (EventSource sends back the last `id:` it saw).
      headers: {
        "last-event-id": Schema.optional(
          Schema.NumberFromString.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))
        )
      },
      // 204 when no turn runs: nothing to stream, and an EventSource does not reconnect.
      success: [HttpApiSchema.StreamSse({ events: EventFrame }), HttpApiSchema.NoContent],
      error: [ConversationNotFound]
    })
      .middleware(Validation)
      .annotate(OpenApi.Summary, "Follow a running turn (server-sent events)"),
    HttpApiEndpoint.get("questions", "/questions", { success: Schema.Array(QuestionRow) }).annotate(
      OpenApi.Summary,
      "List every open question"
    ),
    HttpApiEndpoint.post("answer", "/conversations/:id/questions/:inquiryId", {
      params: { id: ConversationIdParam, inquiryId: Schema.String },
      payload: AnswerBody,
      success: AnswerAccepted,
      error: [
        ConversationNotFound,
        QuestionNotOpen,
        QuestionAlreadyAnswered,
        QuestionCancelled,
        ConversationBusy,
        SecretNeedsRunningTurn,
        AnswerDoesNotFit,
        RunLost,
        ...WITH_BODY
      ]
    })
      .middleware(Validation)
      .annotate(OpenApi.Summary, "Answer a question"),
    HttpApiEndpoint.post("answers", "/conversations/:id/answers", {
      params: Id,
      payload: AnswersBody,
      success: AnswersAccepted,
      error: [
        ConversationNotFound,
        QuestionNotOpen,
        AnswersTaken,
        ConversationBusy,
        SecretNeedsRunningTurn,
        AnswersDoNotFit,
        RunLost,
        ...WITH_BODY
      ]
    })
      .middleware(Validation)
      .annotate(OpenApi.Summary, "Answer all of a turn's questions at once"),
    HttpApiEndpoint.post("create", "/conversations", {
      payload: NewConversation,
      success: RunStarted,
      error: [RunNotStarted, ...WITH_BODY]
    })
      .middleware(Validation)
      .annotate(OpenApi.Summary, "Start a conversation"),
    HttpApiEndpoint.post("message", "/conversations/:id/messages", {
      params: Id,
      payload: NewMessage,
      success: MessageSent,
      error: [ConversationNotFound, ConversationBusy, RunNotStarted, RunLost, ...WITH_BODY]
    })
      .middleware(Validation)
      .annotate(OpenApi.Summary, "Send a message (starts a turn, or is queued for the running one)"),
    HttpApiEndpoint.delete("withdraw", "/conversations/:id/messages/:n", {
      params: { id: ConversationIdParam, n: QueuedId },
      success: MessageWithdrawn,
      error: [ConversationNotFound, MessageNotQueued, ...POSTED]
    })
      .middleware(Validation)
      .annotate(OpenApi.Summary, "Withdraw a queued message (until a run took it)"),
    HttpApiEndpoint.post("continue", "/conversations/:id/continue", {
      params: Id,
      success: RunStarted,
      error: [ConversationNotFound, ConversationBusy, RunNotStarted, ...POSTED]
    })
      .middleware(Validation)
      .annotate(OpenApi.Summary, "Resume the incomplete turn"),
    HttpApiEndpoint.post("discard", "/conversations/:id/discard", {
      params: Id,
      success: Discarded,
      error: [ConversationNotFound, ConversationBusy, RunNotStarted, ...POSTED]
    })
      .middleware(Validation)
      .annotate(OpenApi.Summary, "Discard the incomplete turn"),
    HttpApiEndpoint.post("stop", "/conversations/:id/stop", {
      params: Id,
      success: Stopping,
      error: [ConversationNotFound, NotRunning, RunLost, ...POSTED]
    })
      .middleware(Validation)
      .annotate(OpenApi.Summary, "Stop the running turn")
  )
  .middleware(Token)
  .prefix("/api")
  .annotate(OpenApi.Description, "Conversations, their runs and their open questions") {}

/** The whole API. */
export class ServeApi extends HttpApi.make("parley")
  .add(ConversationsGroup)
  .annotateMerge(
    OpenApi.annotations({
      title: "parley serve",
      description: "Watch runs and answer their questions.",
      license: { name: "MIT", url: "https://opensource.org/license/mit" },
      // The document is served by the server it describes, at whatever address it listens on.
      servers: [{ url: "/", description: "The parley serve that serves this document" }]
    })
  ) {}
