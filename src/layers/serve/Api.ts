/**
 * The handlers of `parley serve`'s API (docs/serve.md#the-api; the contract is
 * `services/ServeApi.ts`). Reading goes through the storage's store (the rows of
 * `ls --format json`, the document of `print --format json`); everything
 * about a running turn goes to its host over its socket (`Hosts.ts`), so a
 * run started in a terminal is watched and answered here exactly like one
 * the server started. An answer for a turn that is not running goes into its
 * waiting turn on disk, as `conversation answer` does.
 *
 * A secret answer is passed to the host and forgotten: it is not logged, not
 * put in an error (a refused secret is described by its type only), not
 * written.
 *
 * @example
 * ```ts
 * import * as Api from "parley/layers/serve/Api"
 * const routes = Api.layer("/home/me/.parley")
 * ```
 *
 * @since 0.1.0
 */
import * as http from "node:http"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as Timestamp from "../../domain/event/Timestamp.ts"
import { renderJson } from "../../domain/render/Render.ts"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as HostClient from "../host/HostClient.ts"
import * as Answer from "../../programs/Answer.ts"
import * as Inbox from "../../programs/Inbox.ts"
import * as Send from "../../programs/Send.ts"
import { ConversationStore } from "../../services/ConversationStore.ts"
import { RunningTurns } from "../../services/RunningTurns.ts"
import {
  ConversationBusy,
  ConversationDamaged,
  ConversationNotFound,
  fromStore,
  holderOf,
  type MessageNotQueued,
  NotRunning,
  RunLost,
  RunNotStarted
} from "../../services/Refusals.ts"
import { type NewMessage, ServeApi, Token, Validation } from "../../services/ServeApi.ts"
import { damagedJsonRow, lsJsonRow } from "../../services/ConversationRows.ts"
import * as Spool from "../notify/Spool.ts"
import * as HostPath from "../host/HostPath.ts"
import * as HostTurns from "../host/HostTurns.ts"
import * as LiveFrames from "./LiveFrames.ts"
import * as Hosts from "./Hosts.ts"
import * as RelayModule from "./Relay.ts"
import * as Runs from "./Runs.ts"
import * as JsonText from "../../domain/storage/JsonText.ts"

type Relay = RelayModule.Relay

// Exact: the API's schema refused anything else already (a stray space is a 400, never trimmed away).
const idOf = (id: string) =>
  Effect.fromNullishOr(ConversationId.parseExact(id)).pipe(Effect.mapError(() => new ConversationNotFound({ id })))

const notFound = (id: string) => new ConversationNotFound({ id })

/** `GET /api/conversations`: the `ls --format json` rows, each with its running turn. */
const list = (storage: string) =>
  Effect.gen(function* () {
    const { conversations, damaged } = yield* ConversationStore.use((s) => s.list({ archived: false })).pipe(
      Effect.orDie
    )
    const running = new Map((yield* Hosts.all(storage)).map((i) => [i.conversation_id, i]))
    const failed = Spool.takeErrors(
      storage,
      conversations.map((r) => r.id)
    )
    const rows = conversations.map((r) => {
      const host = running.get(r.id)
      const error = failed.get(r.id)
      return {
        ...lsJsonRow(r),
        running: host === undefined ? null : { pid: host.pid, waiting: host.open.map((q) => q.inquiry_id) },
        ...(error === undefined ? {} : { notify_error: error })
      }
    })
    // The same rows as `ls --format json`: a conversation that cannot be read is listed as damaged, never left out.
    return [...rows, ...damaged.map(damagedJsonRow)]
  })

/** `GET /api/conversations/:id`: every stored entry, as `print --format json` writes it. */
const get = (id: string) =>
  Effect.gen(function* () {
    const cid = yield* idOf(id)
    const c = yield* ConversationStore.use((s) => s.load(cid)).pipe(
      Effect.mapError((e) =>
        e._tag === "ConversationNotFound" ? notFound(id) : new ConversationDamaged({ id, reason: e.message })
      )
    )
    // An entry too deep to print stays a defect (a 500), as when renderJson threw.
    return JsonText.parse(Result.getOrThrow(renderJson(c.entries)))
  })

/** How long a client dropped for falling behind has to read its `lagged` frame before its connection is closed. */
const LAGGED_GRACE_MS = 2000

/**
 * Closes the connection of `request` unless its response ended within the
 * grace: a client that stopped reading leaves the response blocked on a
 * write, where its stream's `lagged` frame never gets to be written.
 */
const closeIfStuck = (request: HttpServerRequest.HttpServerRequest, finished: () => boolean) => () => {
  const source = request.source
  if (!(source instanceof http.IncomingMessage)) return
  setTimeout(() => {
    if (!finished()) source.socket.destroy()
  }, LAGGED_GRACE_MS).unref()
}

/**
 * How a client that asks for the events of conversation `cid` is served: `live` when this server
 * follows its run or a host runs it; `ended` when the host answers but says its run ended (it only
 * sends the end to its last followers: a new follower is not given the whole run again, to its end, as
 * a page reloaded at the end once was, docs/serve.md#the-page); `none` when no host answers.
 */
const streamed = (storage: string, relay: Relay, cid: ConversationId.ConversationId) =>
  Effect.gen(function* () {
    const socket = HostPath.of(storage, cid)
    if (relay.following(socket)) return "live" as const
    if (!(yield* HostClient.running(socket))) return "none" as const
    return (yield* Hosts.ended(storage, cid)) ? ("ended" as const) : ("live" as const)
  })

/** `GET /api/conversations/:id/events`: the running turn's events after `after`, live, ending with the run; 204 when none runs. */
const events = (storage: string, relay: Relay, id: string, after: number) =>
  Effect.gen(function* () {
    const cid = yield* idOf(id)
    const socket = HostPath.of(storage, cid)
    const how = yield* streamed(storage, relay, cid)
    if (how !== "live") {
      yield* ConversationStore.use((s) => s.load(cid)).pipe(Effect.mapError(() => notFound(id)))
      // A client resuming a run that ended gets the rest while the server keeps it, then is told where it ended.
      const ended = after > 0 ? relay.ended(socket, after) : undefined
      if (ended !== undefined) return LiveFrames.response(ended)
      // Nothing to stream: 204, which tells an EventSource not to reconnect (a 404 is for a conversation that
      // does not exist); but a client resuming a run the server did not see end gets the rest from its host.
      if (how === "none" || after === 0) return HttpServerResponse.empty({ status: 204 })
    }
    // One host subscription per run, shared by every client (`Relay.ts`); a host that goes away ends it.
    const request = yield* HttpServerRequest.HttpServerRequest
    let finished = false
    return LiveFrames.response(
      relay.since(
        socket,
        after,
        closeIfStuck(request, () => finished)
      ),
      () => {
        finished = true
      }
    )
  })

/** `GET /api/questions`: every open question of every running turn, then those of the turns waiting on disk (`running: false`). */
const questions = (storage: string) =>
  Effect.gen(function* () {
    const hosts = yield* Hosts.all(storage)
    const running = new Set(hosts.map((h) => h.conversation_id))
    // A storage that cannot be listed now still shows its running turns.
    const waiting = yield* Effect.orElseSucceed(Inbox.waitingOnDisk, () => [])
    return [
      ...hosts.flatMap((h) =>
        h.open.map(
          (q) =>
            ({
              ...Answer.row({
                inquiryId: q.inquiry_id as Answer.OpenQuestion["inquiryId"],
                kind: q.kind ?? "question",
                toolCallId: q.call.id,
                tool: q.call.name,
                arguments: q.call.arguments,
                question: q.question
              }),
              conversation_id: h.conversation_id,
              // The run event says it as the log does; every row says RFC 3339 (as a waiting turn's, the inbox's).
              since: Timestamp.toRfc3339(q.since),
              running: true
            }) as never
        )
      ),
      ...waiting
        .filter((item) => !running.has(item.conversationId))
        .map(
          (item) =>
            ({
              ...Answer.row(item.question),
              conversation_id: item.conversationId,
              since: item.since,
              running: false
            }) as never
        )
    ]
  })

/**
 * The running turns of `storage` as the server reaches them. A run the server
 * follows (an SSE client or the page watches it) is answered over the
 * relay's connection (`Relay.ts`): one round trip. Any other over a
 * connection of the request's own, closed after it: no probe before it and
 * no subscription on it, so the run's host does nothing but take the answer
 * (its events are only sent to a watcher).
 */
const relayed = (storage: string, relay: Relay): RunningTurns["Service"] =>
  RunningTurns.of({
    find: (id) => {
      const socket = HostPath.of(storage, id)
      const turnOf = (client: HostClient.Client) =>
        HostTurns.fromClient(id, client, (after) => relay.since(socket, after))
      const own = Effect.gen(function* () {
        // A scope of its own under the caller's: closed before the wait below when the run has ended.
        const first = yield* Scope.fork(yield* Effect.scope)
        const opened = yield* Scope.provide(HostClient.connectRunningWithInfo(socket, "1 second"), first)
        if (Option.isNone(opened)) return Option.none()
        const { client, info } = opened.value
        if (Option.isSome(info) && info.value.ended === undefined) return Option.some(turnOf(client))
        // A run that just ended (or a host too busy to say) still answers while its host goes, and takes no
        // answer: it is waited for until gone (`Hosts.settled`); the answer goes to the run after it, if one
        // started, else into the turn on disk. This connection is closed first: the ending host's server
        // waits for its connections (up to a second) before it goes.
        yield* Scope.close(first, Exit.void)
        if (Option.isNone(yield* Hosts.settled(storage, id))) return Option.none()
        return Option.map(yield* HostClient.connectRunning(socket), turnOf)
      })
      if (!relay.following(socket)) return own
      // The relay has none while it connects or reconnects, and says none for a socket it will not trust:
      // asked again over a connection of this request's own, which says why.
      return Effect.flatMap(relay.client(socket), (client) =>
        Option.isSome(client) ? Effect.succeed(Option.some(turnOf(client.value))) : own
      )
    }
  })

/** `POST /api/conversations/:id/questions/:inquiryId`: to the running turn, else into the waiting turn on disk (`Answer.deliver`). */
const answer = (storage: string, relay: Relay, id: string, inquiryId: string, value: Schema.Json) =>
  Effect.gen(function* () {
    const cid = yield* idOf(id)
    const delivered = yield* Answer.deliver(cid, inquiryId, value, "api").pipe(
      Effect.provideService(RunningTurns, relayed(storage, relay)),
      Effect.mapError(fromStore(id))
    )
    return { id: inquiryId, outcome: delivered._tag === "Delivered" ? ("delivered" as const) : ("recorded" as const) }
  })

/** `POST /api/conversations/:id/answers`: all or none, to the running turn or into the waiting turn on disk (`Answer.deliverAll`). */
const answers = (storage: string, relay: Relay, id: string, given: Readonly<Record<string, Schema.Json>>) =>
  Effect.gen(function* () {
    const cid = yield* idOf(id)
    return yield* Answer.deliverAll(cid, given, "api").pipe(
      Effect.provideService(RunningTurns, relayed(storage, relay)),
      Effect.mapError(fromStore(id))
    )
  })

/** `POST /api/conversations/:id/stop`: the running turn stops as `conversation kill` stops it. */
const stop = (storage: string, relay: Relay, id: string) =>
  Effect.gen(function* () {
    const cid = yield* idOf(id)
    const client = yield* relay.client(HostPath.of(storage, cid))
    if (Option.isNone(client)) return yield* new NotRunning({ id })
    return yield* Effect.gen(function* () {
      const info = yield* client.value.Info()
      yield* client.value.Interrupt()
      return { id, pid: info.pid }
    }).pipe(Effect.catch(() => Effect.fail(new RunLost({ id, during: "stop" }))))
  })

/** A child that ended at once, as the API's error. */
const endedAtOnce = (ended: Runs.Ended) =>
  new RunNotStarted({ output: ended.output, ...(ended.code === null ? {} : { code: ended.code }) })

/** What a child for conversation `id` that ended at once said, as the API's error. */
const notStarted = (id: string, ended: Runs.Ended) => {
  // The child's refusal as it reported it; a lock whose file does not name its holder yet has none (that was a 422).
  if (ended.refused?._tag === "ConversationLocked")
    return new ConversationBusy({ id, holder: holderOf(ended.refused.holder) })
  return endedAtOnce(ended)
}

/** The report a discard child printed (`--format json`), decoded: none when it printed no such report. */
const discardReport = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Struct({ outcome: Schema.String })))

/** Conversation `cid` (as `id` was given) exists and no other process runs it: `host`, as `Hosts.settled` found it, is none. */
const freeOf = (id: string, cid: ConversationId.ConversationId, host: Option.Option<HostClient.Info>) =>
  Effect.gen(function* () {
    yield* ConversationStore.use((s) => s.load(cid)).pipe(Effect.mapError(() => notFound(id)))
    if (host._tag === "Some") return yield* new ConversationBusy({ id, holder: holderOf(host.value.pid) })
    return cid
  })

/** The conversation exists and no other process runs it (a host whose run ended is waited for). */
const free = (storage: string, id: string) =>
  Effect.flatMap(idOf(id), (cid) => Effect.flatMap(Hosts.settled(storage, cid), (host) => freeOf(id, cid, host)))

/**
 * A message for a running turn (docs/cli.md#talk-to-a-running-turn): queued
 * for it (`programs/Send.ts`, surface `api`); with `now`, the turn is stopped
 * and a child of the server resumes it with the message.
 */
const queued = (
  storage: string,
  runs: Effect.Success<ReturnType<typeof Runs.make>>,
  id: ConversationId.ConversationId,
  payload: typeof NewMessage.Type
) =>
  Effect.gen(function* () {
    let resumed: { conversation_id: string; pid: number } | undefined
    const sent = yield* Send.send({
      id,
      message: payload.message,
      surface: payload.via ?? "api",
      ...(payload.when !== undefined ? { when: payload.when } : {}),
      start: () =>
        Effect.flatMap(runs.start(["--continue-turn", `--id=${id}`]), (r) =>
          Effect.map(started(id, r), (s) => {
            resumed = s
          })
        )
    }).pipe(
      Effect.provide(HostTurns.layer(storage)),
      Effect.mapError((e) =>
        e._tag === "ConversationNotFound"
          ? notFound(id)
          : e._tag === "RunNotStarted" || e._tag === "ConversationBusy"
            ? e
            : new RunLost({ id, during: "message" })
      )
    )
    const pid = resumed?.pid ?? (sent._tag === "Queued" ? sent.pid : 0)
    return { conversation_id: id, pid, queued: sent.queued.id }
  })

/** `DELETE /api/conversations/:id/messages/:n`: a queued message withdrawn (`Send.withdrawRefused`); a store that fails is a 500. */
const withdrawn = (id: string, n: number) =>
  Effect.flatMap(idOf(id), (cid) =>
    Send.withdrawRefused(cid, n).pipe(
      Effect.catch(
        (e): Effect.Effect<never, ConversationNotFound | MessageNotQueued> =>
          e._tag === "ConversationNotFound"
            ? Effect.fail(notFound(id))
            : e._tag === "MessageNotQueued"
              ? Effect.fail(e)
              : Effect.die(e)
      )
    )
  )

/** A turn run by a child of the server (`Runs.ts`). */
const started = (id: string, r: Runs.Started | Runs.Ended) =>
  r._tag === "Started"
    ? Effect.succeed({ conversation_id: r.conversation_id, pid: r.pid })
    : Effect.fail(notStarted(id, r))

// `=` forms: a value is never read as a flag of its own, whatever it holds (the schema checked it too).
const modelArgs = (model: string | undefined) => (model === undefined ? [] : [`--model=${model}`])

const handlers = (storage: string, config: string | undefined, line: ((error: unknown) => string) | undefined) =>
  HttpApiBuilder.group(ServeApi, "conversations", (h) =>
    Effect.gen(function* () {
      const store = yield* Effect.service(ConversationStore)
      const runs = yield* Runs.make(storage, config, line)
      const relay = yield* RelayModule.make
      const withStore = Effect.provideService(ConversationStore, store)
      return h
        .handle("list", () => withStore(list(storage)))
        .handle("get", ({ params }) => withStore(get(params.id)))
        .handle("events", ({ params, headers }) =>
          withStore(events(storage, relay, params.id, headers["last-event-id"] ?? 0))
        )
        .handle("questions", () => withStore(questions(storage)))
        .handle("answer", ({ params, payload }) =>
          withStore(answer(storage, relay, params.id, params.inquiryId, payload.answer))
        )
        .handle("answers", ({ params, payload }) => withStore(answers(storage, relay, params.id, payload.answers)))
        .handle("stop", ({ params }) => stop(storage, relay, params.id))
        .handle("create", ({ payload }) =>
          Effect.flatMap(runs.start(["--new", ...modelArgs(payload.model)], payload.message), (r) =>
            r._tag === "Started"
              ? Effect.succeed({ conversation_id: r.conversation_id, pid: r.pid })
              : Effect.fail(endedAtOnce(r))
          )
        )
        .handle("message", ({ params, payload }) =>
          withStore(
            Effect.flatMap(idOf(params.id), (cid) =>
              // Queued for a run that goes on; a run that ended reads no more messages: a new turn starts with it.
              Effect.flatMap(Hosts.settled(storage, cid), (host) =>
                Option.isSome(host) && host.value.ended === undefined
                  ? queued(storage, runs, cid, payload)
                  : Effect.flatMap(freeOf(params.id, cid, host), () =>
                      Effect.flatMap(runs.start([`--id=${cid}`, ...modelArgs(payload.model)], payload.message), (r) =>
                        started(params.id, r)
                      )
                    )
              )
            )
          )
        )
        .handle("withdraw", ({ params }) => withStore(withdrawn(params.id, params.n)))
        .handle("continue", ({ params }) =>
          withStore(
            Effect.flatMap(free(storage, params.id), (cid) =>
              Effect.flatMap(runs.start(["--continue-turn", `--id=${cid}`]), (r) => started(params.id, r))
            )
          )
        )
        .handle("discard", ({ params }) =>
          withStore(
            Effect.flatMap(free(storage, params.id), (cid) =>
              Effect.flatMap(runs.discard(cid), (ended) => {
                const report = ended.code === 0 ? discardReport(ended.stdout ?? "") : Option.none()
                return Option.isSome(report)
                  ? Effect.succeed({ id: params.id, ending: report.value.outcome })
                  : Effect.fail(notStarted(params.id, ended))
              })
            )
          )
        )
    })
  )

/** The token is checked before routing (`Guard.ts`); this middleware only puts it in the OpenAPI document. */
const TokenLive = Layer.succeed(Token)(Token.of({ bearer: (effect) => effect, cookie: (effect) => effect }))

const ValidationLive = HttpApiMiddleware.layerSchemaErrorTransform(Validation, (e) =>
  e.kind === "Body" || e.kind === "ResponseHeaders"
    ? Effect.fail(e) // a response that does not encode is our bug: a 500
    : Effect.fail({ error: "BadRequest" as const, kind: e.kind, message: e.cause.message })
)

/**
 * Parley's group (`ConversationsGroup`) for an `HttpApi` of one's own that adds
 * it: its handlers over the storage's store (provide a `ConversationStore`)
 * and its middleware. Its key is the group's, whichever API holds it. The
 * token is not checked here: `parley serve` puts `Guard.layer` in front of
 * every route, and so should a program that listens beyond its own user.
 */
export const group = (storage: string, config?: string, line?: (error: unknown) => string) =>
  handlers(storage, config, line).pipe(Layer.provideMerge(middleware))

/** The group's middleware: the token's (checked by `Guard.ts` before routing) and the 400 of a request that does not decode. */
export const middleware = Layer.mergeAll(TokenLive, ValidationLive)

/** The API's routes and its OpenAPI document, over the store of `storage` (given by `Server.app`: one for the page and the API). */
export const layer = (storage: string, config?: string, line?: (error: unknown) => string) =>
  HttpApiBuilder.layer(ServeApi, { openapiPath: "/api/openapi.json" }).pipe(
    Layer.provide(handlers(storage, config, line)),
    Layer.provide(middleware)
  )
