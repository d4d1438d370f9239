/**
 * The handlers of a cluster runner's API (docs/cluster.md; the contract is
 * `services/ClusterApi.ts`). Any runner serves any conversation:
 *
 * - reads come from PostgreSQL: the listing, a conversation, the open
 *   questions (those of every incomplete turn waiting for input, whichever
 *   runner runs it), the runners (`GET /api/cluster`);
 * - writes are messages to the conversation's entity (`ConversationEntity`),
 *   persisted and handled by the runner that owns it; the reply, or its
 *   refusal (the same error bodies as `parley serve`), is what the client
 *   gets. A new conversation is created here (its id is its entity's id),
 *   then sent its message.
 *
 * A turn's live events (`…/events`) stream from the runner that runs it;
 * another runner relays them from there (`Events.ts`).
 *
 * @example
 * ```ts
 * import type { SqlClient } from "effect/sql/SqlClient"
 * import * as Effect from "effect/Effect"
 * import * as Api from "parley/layers/cluster/Api"
 * import type * as Turns from "parley/layers/cluster/Turns"
 * import type { ConversationStore } from "parley/services/ConversationStore"
 * declare const turns: Turns.Turns
 * declare const store: ConversationStore["Service"]
 * declare const sql: SqlClient
 * const routes = Api.layer({ turns, store, sql, runner: "127.0.0.1:13141", token: "…", chooseModel: (asked) => Effect.succeed(asked ?? "scripted") })
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as crypto from "node:crypto"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import type { SqlClient } from "effect/sql/SqlClient"
import * as Timestamp from "../../domain/event/Timestamp.ts"
import { renderJson } from "../../domain/render/Render.ts"
import * as Conversation from "../../domain/storage/Conversation.ts"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../domain/storage/ConversationMetadata.ts"
import * as IncompleteTurn from "../../domain/stream/IncompleteTurn.ts"
import * as Answer from "../../programs/Answer.ts"
import * as Send from "../../programs/Send.ts"
import { ClusterApi } from "../../services/ClusterApi.ts"
import { ConversationStore } from "../../services/ConversationStore.ts"
import {
  ConversationDamaged,
  ConversationNotFound,
  type MessageNotQueued,
  Refusal,
  RunLost,
  RunNotStarted
} from "../../services/Refusals.ts"
import { Token, Validation } from "../../services/ServeApi.ts"
import { damagedJsonRow, lsJsonRow } from "../../services/ConversationRows.ts"
import { Conversation as Entity } from "./ConversationEntity.ts"
import * as LiveFrames from "../serve/LiveFrames.ts"
import * as Events from "./Events.ts"
import * as Trace from "./Trace.ts"
import type * as Turns from "./Turns.ts"
import * as JsonText from "../../domain/storage/JsonText.ts"

/** What the handlers work with. */
export interface Options {
  readonly turns: Turns.Turns
  readonly store: ConversationStore["Service"]
  readonly sql: SqlClient
  /** This runner's address. */
  readonly runner: string
  /** The cluster's web token (`RunnerChannel.webTokenOf`): a turn's live events are relayed from the runner that runs it with it. */
  readonly token: string
  readonly chooseModel: (
    asked: string | undefined,
    remembered: string | undefined
  ) => Effect.Effect<string, { readonly message: string }>
}

const notFound = (id: string) => new ConversationNotFound({ id })

const idOf = (id: string) => Effect.fromNullishOr(ConversationId.parse(id)).pipe(Effect.mapError(() => notFound(id)))

/** The open questions of a stored conversation's incomplete turn, with when each was asked. */
const openOf = (entries: Conversation.Conversation["entries"]) => {
  const incomplete = IncompleteTurn.splitIncompleteTurn(entries).incomplete
  if (incomplete === null) return []
  return Answer.openIn(incomplete).map((o) => ({ open: o.open, since: Timestamp.toRfc3339(o.asked) }))
}

const isRefusal = Schema.is(Refusal)

/** A lost run, as the endpoints that speak to a running turn say it. */
const lostRun = (id: string, during?: "stop") => () => new RunLost(during === undefined ? { id } : { id, during })
/** …and as those that start one say it (their contract has no RunLost). */
const notTaken = (tag: string) =>
  new RunNotStarted({ output: `The conversation's runner did not take the message (${tag}); nothing was recorded.` })

/**
 * A message to the entity failed: a refusal its endpoint declares goes out
 * as it is; anything else (the cluster's own errors, a refusal the endpoint
 * has no status for) as `fallback`: nothing was recorded.
 */
const sent =
  <const T extends Refusal["_tag"], F>(allowed: ReadonlyArray<T>, fallback: (tag: string) => F) =>
  <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) => {
    // Widened to read the list: any tag may be looked up in it.
    const declared = (e: E): e is E & Extract<Refusal, { readonly _tag: T }> =>
      isRefusal(e) && (allowed as ReadonlyArray<string>).includes(e._tag)
    return Effect.catch(
      effect,
      (e): Effect.Effect<never, Extract<Refusal, { readonly _tag: T }> | F> =>
        declared(e) ? Effect.fail(e) : Effect.fail(fallback(e._tag))
    )
  }

/** What each endpoint that messages the entity may say (as `services/ServeApi.ts` declares). */
const ANSWER = [
  "ConversationNotFound",
  "QuestionNotOpen",
  "QuestionAlreadyAnswered",
  "QuestionCancelled",
  "ConversationBusy",
  "SecretNeedsRunningTurn",
  "AnswerDoesNotFit",
  "RunLost"
] as const
const ANSWERS = [
  "ConversationNotFound",
  "QuestionNotOpen",
  "AnswersTaken",
  "ConversationBusy",
  "SecretNeedsRunningTurn",
  "AnswersDoNotFit",
  "RunLost"
] as const
const STOP = ["ConversationNotFound", "NotRunning", "RunLost"] as const
const START = ["ConversationNotFound", "ConversationBusy", "RunNotStarted"] as const

/**
 * The answer type of question `inquiryId` as the log recorded it (the last
 * time it was asked), or undefined when it was never asked. One indexed
 * query on the PostgreSQL store's events (a cluster's storage is always
 * one), not a load of the whole conversation: this is on every answer's way.
 */
const answerKind = (sql: SqlClient, id: string, inquiryId: string) =>
  sql<{ kind: string | null }>`SELECT json::jsonb #>> '{question,answer_type,type}' AS kind FROM parley_events
    WHERE conversation_id = ${id} AND type = 'inquiry_request' AND json::jsonb ->> 'id' = ${inquiryId}
    ORDER BY seq DESC LIMIT 1`.pipe(
    Effect.map((rows) => (rows[0] === undefined ? undefined : (rows[0].kind ?? "unknown"))),
    Effect.orDie
  )

/** The conversations whose turn a runner runs now, by conversation. */
const runningRows = (sql: SqlClient) =>
  sql<{
    conversation_id: string
    runner: string
    pid: number
  }>`SELECT conversation_id, runner, pid FROM parley_cluster_turns`.pipe(Effect.orDie)

const handlers = (o: Options) =>
  HttpApiBuilder.group(ClusterApi, "conversations", (h) =>
    Effect.gen(function* () {
      const clientFor = yield* Entity.client
      const waitingOf = (id: ConversationId.ConversationId) =>
        o.store.load(id).pipe(
          Effect.map((c) => openOf(c.entries).map((q) => q.open.inquiryId as string)),
          Effect.orElseSucceed(() => [])
        )
      const list = Effect.gen(function* () {
        const { conversations, damaged } = yield* Effect.orDie(o.store.list({ archived: false }))
        const running = new Map((yield* runningRows(o.sql)).map((r) => [r.conversation_id, r]))
        const rows = yield* Effect.forEach(
          conversations,
          (r) =>
            Effect.gen(function* () {
              const turn = running.get(r.id)
              const waiting = r.incomplete?.state === "waiting-for-input" ? yield* waitingOf(r.id) : []
              return { ...lsJsonRow(r), running: turn === undefined ? null : { pid: turn.pid, waiting } }
            }),
          { concurrency: 8 }
        )
        // The same rows as `ls --format json`: a conversation that cannot be read is listed as damaged.
        return [...rows, ...damaged.map(damagedJsonRow)]
      })
      const questions = Effect.gen(function* () {
        const { conversations } = yield* Effect.orDie(o.store.list({ archived: false }))
        const waiting = conversations.filter((c) => c.incomplete?.state === "waiting-for-input")
        // A turn some runner runs now (its question waits there) vs one left waiting on disk (answered for its resume).
        const running = new Set((yield* runningRows(o.sql)).map((r) => r.conversation_id))
        const rows = yield* Effect.forEach(
          waiting,
          (c) =>
            o.store.load(c.id).pipe(
              Effect.map((conv) =>
                openOf(conv.entries).map(
                  (q) =>
                    ({
                      ...Answer.row(q.open),
                      conversation_id: c.id,
                      since: q.since,
                      running: running.has(c.id)
                    }) as never
                )
              ),
              Effect.orElseSucceed(() => [])
            ),
          { concurrency: 8 }
        )
        return rows.flat()
      })
      /** The persisted way, after the direct one got no reply: stored, redelivered until its owner replies. */
      const answerPersisted = (
        cid: ConversationId.ConversationId,
        inquiryId: string,
        value: Schema.Json,
        nonce: string
      ) =>
        Effect.gen(function* () {
          yield* Trace.line("api.persisted", cid)
          const kind = yield* answerKind(o.sql, cid, inquiryId)
          // No such question: the conversation may not exist (404); else the owner says the question is not open.
          if (kind === undefined) yield* o.store.load(cid).pipe(Effect.mapError(() => notFound(cid)))
          // A secret is never stored, not even in the cluster's message table: its answer is lost with the run.
          if (kind === "secret") return yield* lostRun(cid)()
          return yield* clientFor(cid).Answer({ inquiry_id: inquiryId, answer: value, nonce })
        })
      /**
       * An answer goes to its owner directly (`AnswerDirect`, volatile); the
       * owner's refusal is the reply. Anything else (no reply: the owner went
       * away, its entity was stopped as its shard moved) sends it again as
       * the persisted `Answer` under the same nonce, which reaches the next
       * owner; a delivery that won already gets the same reply.
       */
      const answer = (id: string, inquiryId: string, value: Schema.Json) =>
        Effect.gen(function* () {
          const cid = yield* idOf(id)
          yield* Trace.line("api.answer", id)
          const nonce = crypto.randomUUID()
          return yield* sent(
            ANSWER,
            lostRun(id)
          )(
            clientFor(cid)
              .AnswerDirect({ inquiry_id: inquiryId, answer: value, nonce })
              .pipe(
                Effect.catchCause((cause) => {
                  const found = Cause.findError(cause)
                  return Result.isSuccess(found) && isRefusal(found.success)
                    ? Effect.fail(found.success)
                    : answerPersisted(cid, inquiryId, value, nonce)
                })
              )
          ).pipe(Effect.ensuring(Trace.line("api.replied", id)))
        })
      const create = (message: string, model: string | undefined) =>
        Effect.gen(function* () {
          const chosen = yield* o
            .chooseModel(model, undefined)
            .pipe(Effect.mapError((e) => new RunNotStarted({ output: e.message })))
          const title = Conversation.titleFrom(message)
          const now = yield* Timestamp.current
          const id = yield* Effect.scoped(
            Effect.map(
              o.store.create({
                metadata: ConversationMetadata.make({
                  ...(title !== undefined ? { title } : {}),
                  last_activated_at: now
                }),
                baseConfig: Conversation.baseConfigFor(chosen)
              }),
              (s) => s.id
            )
          ).pipe(Effect.mapError((e) => new RunNotStarted({ output: e.message })))
          return yield* sent(["RunNotStarted"], notTaken)(clientFor(id).Send({ message, model }))
        })
      return h
        .handle("list", () => list)
        .handle("get", ({ params }) =>
          Effect.flatMap(idOf(params.id), (cid) =>
            o.store.load(cid).pipe(
              // An entry too deep to print stays a defect (a 500), as when renderJson threw.
              Effect.map((c) => JsonText.parse(Result.getOrThrow(renderJson(c.entries)))),
              Effect.mapError((e) =>
                e._tag === "ConversationNotFound"
                  ? notFound(params.id)
                  : new ConversationDamaged({ id: params.id, reason: e.message })
              )
            )
          )
        )
        .handle("events", ({ params, headers }) =>
          Effect.gen(function* () {
            const cid = yield* idOf(params.id)
            const since = headers["last-event-id"] ?? 0
            if (o.turns.get(cid) === undefined) {
              yield* o.store.load(cid).pipe(Effect.mapError(() => notFound(params.id)))
              const elsewhere = yield* Events.relay(o, cid, since, () => o.turns.get(cid) !== undefined)
              if (elsewhere !== "here") return elsewhere
            }
            const turn = o.turns.get(cid)
            if (turn === undefined) return HttpServerResponse.empty({ status: 204 })
            return LiveFrames.response(turn.events.since(since))
          })
        )
        .handle("questions", () => questions)
        .handle("answer", ({ params, payload }) => answer(params.id, params.inquiryId, payload.answer))
        .handle("answers", ({ params, payload }) =>
          // Volatile, as a secret's answer: any of them may be one.
          Effect.flatMap(idOf(params.id), (cid) =>
            sent(ANSWERS, lostRun(params.id))(clientFor(cid).AnswerAll({ answers: payload.answers }))
          )
        )
        .handle("stop", ({ params }) =>
          Effect.flatMap(idOf(params.id), (cid) => sent(STOP, lostRun(params.id, "stop"))(clientFor(cid).Stop()))
        )
        .handle("create", ({ payload }) =>
          // A new conversation cannot be busy or missing: whatever refused it is a run that did not start.
          create(payload.message, payload.model).pipe(
            Effect.mapError((e) => (e._tag === "RunNotStarted" ? e : new RunNotStarted({ output: e.message })))
          )
        )
        .handle("message", ({ params, payload }) =>
          Effect.flatMap(idOf(params.id), (cid) =>
            Effect.andThen(
              o.store.load(cid).pipe(Effect.mapError(() => notFound(params.id))),
              sent(
                START,
                notTaken
              )(clientFor(cid).Send({ message: payload.message, model: payload.model, when: payload.when }))
            )
          )
        )
        .handle("withdraw", ({ params }) =>
          // The queue is the store's (PostgreSQL): any runner withdraws, and the queue's log decides a race with a take.
          Effect.flatMap(idOf(params.id), (cid) =>
            Send.withdrawRefused(cid, params.n).pipe(
              Effect.provideService(ConversationStore, o.store),
              Effect.catch(
                (e): Effect.Effect<never, ConversationNotFound | MessageNotQueued> =>
                  e._tag === "ConversationNotFound" || e._tag === "MessageNotQueued" ? Effect.fail(e) : Effect.die(e)
              )
            )
          )
        )
        .handle("continue", ({ params }) =>
          Effect.flatMap(idOf(params.id), (cid) => sent(START, notTaken)(clientFor(cid).Continue()))
        )
        .handle("discard", ({ params }) =>
          Effect.flatMap(idOf(params.id), (cid) => sent(START, notTaken)(clientFor(cid).Discard()))
        )
    })
  )

/** `GET /api/cluster`: the runners (from the cluster's tables) and the turns each runs. */
const clusterHandlers = (o: Options) =>
  HttpApiBuilder.group(ClusterApi, "cluster", (h) =>
    h.handle("cluster", () =>
      Effect.gen(function* () {
        const runners = yield* o.sql<{ address: string; healthy: boolean; last_heartbeat: Date | string | null }>`
          SELECT address, healthy, last_heartbeat FROM cluster_runners ORDER BY address`.pipe(Effect.orDie)
        const shards = yield* o.sql<{
          address: string
          n: number
        }>`SELECT runner AS address, shards AS n FROM parley_cluster_shards`.pipe(Effect.orDie)
        const turns = yield* o.sql<{
          runner: string
          n: number
        }>`SELECT runner, count(*)::int AS n FROM parley_cluster_turns GROUP BY runner`.pipe(Effect.orDie)
        const count = (rows: ReadonlyArray<{ readonly n: number }>, pick: (r: never) => string, address: string) =>
          rows.find((r) => pick(r as never) === address)?.n ?? 0
        return {
          runner: o.runner,
          runners: runners.map((r) => ({
            address: r.address,
            healthy: r.healthy,
            last_heartbeat: r.last_heartbeat === null ? null : new Date(r.last_heartbeat).toISOString(),
            shards: count(shards, (s: { address: string }) => s.address, r.address),
            conversations: count(turns, (t: { runner: string }) => t.runner, r.address)
          }))
        }
      })
    )
  )

const TokenLive = Layer.succeed(Token)(Token.of({ bearer: (effect) => effect, cookie: (effect) => effect }))

const ValidationLive = HttpApiMiddleware.layerSchemaErrorTransform(Validation, (e) =>
  e.kind === "Body" || e.kind === "ResponseHeaders"
    ? Effect.fail(e)
    : Effect.fail({ error: "BadRequest" as const, kind: e.kind, message: e.cause.message })
)

/** The API's routes and its OpenAPI document; needs the runner's `Sharding` (to message entities). */
export const layer = (o: Options) =>
  HttpApiBuilder.layer(ClusterApi, { openapiPath: "/api/openapi.json" }).pipe(
    Layer.provide([handlers(o), clusterHandlers(o)]),
    Layer.provide([TokenLive, ValidationLive])
  )
