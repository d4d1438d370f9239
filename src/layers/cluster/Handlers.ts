/**
 * What the owner of a conversation does with its entity's messages
 * (`ConversationEntity.ts`, docs/decisions.md#conversation-log-is-the-truth). Every handler is safe to run twice
 * for one message — a message is redelivered when its runner died before the
 * reply was stored — because the conversation log decides what already
 * happened (RFD 023):
 *
 * - Send: a new turn; redelivered after the turn started, it finds the
 *   turn's own message pending in the incomplete turn and resumes it.
 * - Answer: offered to the running turn's open question (the first valid
 *   answer wins and is recorded once); with no turn running here, the
 *   incomplete turn is resumed first (its open question is asked again
 *   under its recorded id), and a question already answered in the log is
 *   refused as answered.
 * - Continue / Discard / Stop: what `query --continue-turn`,
 *   `query --discard-turn` and `conversation kill` do.
 *
 * @example
 * ```ts
 * import type { SqlClient } from "effect/sql/SqlClient"
 * import * as Handlers from "parley/layers/cluster/Handlers"
 * import type * as Turns from "parley/layers/cluster/Turns"
 * import type { ConversationStore } from "parley/services/ConversationStore"
 * declare const turns: Turns.Turns
 * declare const store: ConversationStore["Service"]
 * declare const sql: SqlClient
 * const entityLayer = Handlers.layer(turns, store, sql)
 * ```
 *
 * @since 0.1.0
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import type * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import * as Entity from "effect/cluster/Entity"
import type { Sharding } from "effect/cluster/Sharding"
import type { SqlClient } from "effect/sql/SqlClient"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import type { When } from "../../domain/storage/QueuedMessage.ts"
import * as IncompleteTurn from "../../domain/stream/IncompleteTurn.ts"
import * as Answer from "../../programs/Answer.ts"
import * as Query from "../../programs/Query.ts"
import * as Send from "../../programs/Send.ts"
import { ConversationStore } from "../../services/ConversationStore.ts"
import {
  busyFromLock,
  ConversationBusy,
  ConversationNotFound,
  fromStore,
  holderOf,
  INCOMPLETE,
  NotRunning,
  QuestionAlreadyAnswered,
  QuestionNotOpen,
  type Refusal,
  RunLost,
  RunNotStarted
} from "../../services/Refusals.ts"
import { ConversationLocked } from "../../services/StoreErrors.ts"
import * as ClusterTurns from "./ClusterTurns.ts"
import { Conversation } from "./ConversationEntity.ts"
import * as Sweep from "./Sweep.ts"
import * as Trace from "./Trace.ts"
import type * as Turns from "./Turns.ts"

/** How long an answer waits for a resumed turn to ask its question again. */
const REASK_MS = 15_000

/** How long a resume that delivers queued messages waits out another start of the turn here. */
const RESUME_MS = 15_000

const busyHere = (id: string) => new ConversationBusy({ id, holder: holderOf(process.pid) })

/**
 * Why a turn could not start (`Turns.start`'s failure: the store's errors,
 * the run's), as a refusal: a lock held elsewhere or a turn left incomplete
 * is the conversation being busy, anything else a run that did not start.
 */
export const refusalOfStart = (id: string, error: unknown): Refusal => {
  if (error instanceof ConversationNotFound) return error
  if (error instanceof ConversationLocked) return busyFromLock(error)
  if (Predicate.isTagged(error, "IncompleteTurnPending")) return new ConversationBusy({ id, holder: INCOMPLETE })
  if (Predicate.isTagged(error, "RunningHere")) return busyHere(id)
  const message =
    Predicate.hasProperty(error, "message") && typeof error.message === "string" ? error.message : String(error)
  return new RunNotStarted({ output: message })
}

const parse = (id: string) =>
  Effect.fromNullishOr(ConversationId.parse(id)).pipe(Effect.mapError(() => new ConversationNotFound({ id })))

/** The pending message of the conversation's incomplete turn, if it has one. */
const pendingMessage = (store: ConversationStore["Service"], id: ConversationId.ConversationId) =>
  store.load(id).pipe(
    Effect.map((c) =>
      IncompleteTurn.splitIncompleteTurn(c.entries).incomplete?.entries.findLast((e) => e.type === "chat_request")
    ),
    Effect.map((e) => (e !== undefined && e.type === "chat_request" ? e.content : undefined)),
    Effect.orElseSucceed(() => undefined)
  )

/** Who answered `inquiryId` in the log, when it was answered. */
const answeredInLog = (store: ConversationStore["Service"], id: ConversationId.ConversationId, inquiryId: string) =>
  store.load(id).pipe(
    Effect.map((c) => c.entries.some((e) => e.type === "inquiry_response" && e.id === inquiryId)),
    Effect.orElseSucceed(() => false)
  )

const started = (id: string) => ({ conversation_id: id, pid: process.pid })

/** Whether `message` becomes the pending message of `cid`'s turn within 2 s (another runner started it). */
const recordedSoon = (store: ConversationStore["Service"], cid: ConversationId.ConversationId, message: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < 20; i++) {
      yield* Effect.sleep("100 millis")
      if ((yield* pendingMessage(store, cid)) === message) return true
    }
    return false
  })

/**
 * This message as an earlier delivery of it queued it (under the message's
 * id: `cluster-<request id>`), or undefined. Delivered again (its entity
 * stopped as its shard moved before the reply was stored), a message is
 * answered as it was then, and nothing is done again: a `now` message would
 * stop the very turn its first delivery resumed with it, or, that turn
 * still letting go of the conversation, be answered without its `queued`.
 * One not taken yet is watched (`Sweep.deliverStranded`).
 *
 * @internal
 */
export const queuedBefore = (
  turns: Turns.Turns,
  store: ConversationStore["Service"],
  sql: SqlClient,
  cid: ConversationId.ConversationId,
  requestId: string
) =>
  Effect.gen(function* () {
    const queue = store.messages
    if (queue === undefined) return undefined
    const nonce = `cluster-${requestId}`
    const found = (yield* queue.list(cid).pipe(Effect.orElseSucceed(() => []))).find((m) => m.nonce === nonce)
    if (found === undefined) return undefined
    if (found.state === "queued") turns.watchQueue(cid)
    const row = yield* turnRow(sql, cid).pipe(Effect.orElseSucceed(() => undefined))
    return { conversation_id: cid, pid: row?.pid ?? process.pid, queued: found.id }
  })

/**
 * Send: a new turn. The same message found pending in the conversation's
 * incomplete turn is this message delivered again (the runner died before
 * the reply was stored, or two runners briefly both took the shard while
 * shards moved): resumed when nobody runs it, else reported as running.
 */
const send = (
  turns: Turns.Turns,
  store: ConversationStore["Service"],
  sql: SqlClient,
  id: string,
  message: string,
  model: string | undefined,
  when: When | undefined,
  requestId: string
) =>
  Effect.gen(function* () {
    const cid = yield* parse(id)
    const before = yield* queuedBefore(turns, store, sql, cid, requestId)
    if (before !== undefined) return before
    const queueing = { cid, message, when, requestId }
    // A turn runs here: the message is queued for it (durably, in the store), unless it is this turn's own. Or this
    // runner only tries to take the turn over from the runner that still runs it (its sweep, as the shard came here).
    if (turns.get(cid) !== undefined && (yield* pendingMessage(store, cid)) !== message) {
      const elsewhere = yield* turnElsewhere(turns, sql, cid)
      return yield* elsewhere === undefined
        ? queueFor(turns, store, cid, message, when, requestId)
        : queueElsewhere(turns, store, sql, { ...queueing, pid: elsewhere.pid })
    }
    const first = yield* turns.start(cid, { message, model })
    if (first._tag !== "Failed") return started(cid)
    const error = first.error as { _tag?: unknown; holder?: unknown } | undefined
    const busy =
      error?._tag === "IncompleteTurnPending" || error?._tag === "ConversationLocked" || error?._tag === "RunningHere"
    const pending = busy ? yield* pendingMessage(store, cid) : undefined
    const ours = busy && pending === message
    // A turn of another message runs on another runner: the shard came here, and that runner hands the turn off only
    // once no tool of it runs (this runner's sweep tries to take it over meanwhile). Queued for that turn all the same.
    if (!ours && pending !== undefined && (error?._tag === "ConversationLocked" || error?._tag === "RunningHere")) {
      const elsewhere = yield* turnElsewhere(turns, sql, cid)
      if (elsewhere !== undefined) return yield* queueElsewhere(turns, store, sql, { ...queueing, pid: elsewhere.pid })
    }
    if (!ours && error?._tag === "ConversationLocked") {
      // Another runner took this very delivery a moment ago and has not recorded the message yet.
      if (yield* recordedSoon(store, cid, message))
        return { conversation_id: cid, pid: typeof error.holder === "number" ? error.holder : 0 }
    }
    if (!ours) return yield* Effect.fail(refusalOfStart(cid, first.error))
    if (error?._tag === "ConversationLocked")
      return { conversation_id: cid, pid: typeof error.holder === "number" ? error.holder : 0 }
    if (error?._tag === "RunningHere") return started(cid)
    const again = yield* turns.start(cid, { continueTurn: true })
    if (again._tag !== "Failed") return started(cid)
    // This runner's sweep resumed the turn between the two starts, or the runner handing it over still holds it
    // (shards moving under load): the message's turn runs either way. Said busy, its sender was told it was not taken.
    if (Predicate.isTagged(again.error, "RunningHere")) return started(cid)
    if (Predicate.isTagged(again.error, "ConversationLocked")) {
      const holder = Predicate.hasProperty(again.error, "holder") ? again.error.holder : undefined
      return { conversation_id: cid, pid: typeof holder === "number" ? holder : 0 }
    }
    return yield* Effect.fail(refusalOfStart(cid, again.error))
  })

/**
 * Resumes `cid`'s turn here, which delivers its queued messages (`query
 * --continue-turn`). Another start of it here is waited for: one that got
 * going takes the messages; one that did not may have left the turn (the
 * sweep's leaves a turn that was stopped), and it is resumed again. Held by another process (shards
 * moving under load: another runner took the conversation as a stop let go
 * of it), that run takes the messages: said busy, the sender would be told
 * it was not taken.
 */
const resumeWithQueue = (turns: Turns.Turns, cid: ConversationId.ConversationId) =>
  Effect.gen(function* () {
    const deadline = Date.now() + RESUME_MS
    for (;;) {
      const s = yield* turns.start(cid, { continueTurn: true })
      if (s._tag !== "Failed" || Predicate.isTagged(s.error, "ConversationLocked")) return
      if (!Predicate.isTagged(s.error, "RunningHere") || Date.now() > deadline)
        return yield* Effect.fail(refusalOfStart(cid, s.error))
      // Being started here: once it got going it takes the messages; one that did not (the sweep's leaves a turn
      // that was stopped) is tried again. Past its start, a turn here runs and takes them.
      const other = turns.starting(cid)
      if (other === undefined) {
        if (turns.get(cid) !== undefined) return
        yield* Effect.sleep("100 millis")
      } else {
        const went = yield* Effect.timeoutOption(other, Duration.millis(Math.max(0, deadline - Date.now())))
        if (went._tag === "None" || went.value._tag === "Running") return
      }
    }
  })

/**
 * A message for the turn that runs here, from any runner's API
 * (`programs/Send.ts`, surface `api`): queued in the store's queue, which
 * the turn delivers `after` it, at its `next` request, or `now` (stopped,
 * then resumed here with it).
 */
const queueFor = (
  turns: Turns.Turns,
  store: ConversationStore["Service"],
  cid: ConversationId.ConversationId,
  message: string,
  when: When | undefined,
  requestId: string
) =>
  Send.send({
    id: cid,
    message,
    surface: "api",
    // The cluster delivers a message again when its reply was lost: queued once all the same.
    nonce: `cluster-${requestId}`,
    ...(when !== undefined ? { when } : {}),
    start: () => resumeWithQueue(turns, cid)
  }).pipe(
    Effect.provide(ClusterTurns.layer(turns)),
    Effect.provideService(ConversationStore, store),
    Effect.map((sent) => ({ conversation_id: cid, pid: process.pid, queued: sent.queued.id })),
    Effect.mapError((e) =>
      e._tag === "QueueUnsupported" ? new RunNotStarted({ output: e.message }) : fromStore(cid)(e)
    )
  )

/** Who runs `cid`'s turn now, by its row in `parley_cluster_turns` (none: no turn runs). */
const turnRow = (sql: SqlClient, cid: ConversationId.ConversationId) =>
  Effect.map(
    sql<{ runner: string; pid: number }>`SELECT runner, pid FROM parley_cluster_turns WHERE conversation_id = ${cid}`,
    (rows) => rows[0]
  )

/** The runner whose turn of `cid` runs now, when it is not this one (none, too, when the database cannot say). */
const turnElsewhere = (turns: Turns.Turns, sql: SqlClient, cid: ConversationId.ConversationId) =>
  turnRow(sql, cid).pipe(
    Effect.map((row) => (row !== undefined && row.runner !== turns.runner ? row : undefined)),
    Effect.orElseSucceed(() => undefined)
  )

/** How long a stop message's outcome is kept for its redeliveries (they come as its shard moves: seconds). */
const STOPPED_DAYS = 1

/**
 * Stops `cid`'s turn wherever it runs: here at once; on another runner (the
 * shard came here, and that runner hands the turn off only once no tool of
 * it runs) by a request in `parley_cluster_stops`, which that runner takes
 * on its notice (`Sweep.stopsOnNotice`), else at its next sweep. Done once
 * the turn's row is gone (a stopped turn is not resumed). The pid of the
 * process that ran it; `NotRunning`
 * when none runs it; `RunLost` when the other runner did not stop it in the
 * time the request is good for, or the database cannot say (a request left
 * is taken back either way).
 *
 * `requestId` names a stop message across its deliveries: which process it
 * stops is noted (`parley_cluster_stopped`) before the stop is made, so a
 * delivery after one that stopped the turn, whose reply was lost as the
 * shard moved, answers that pid rather than `NotRunning`; a turn still
 * running then (the first delivery was cut short before it stopped it) is
 * stopped as before.
 *
 * @internal
 */
export const stopAnywhere = (
  turns: Turns.Turns,
  sql: SqlClient,
  cid: ConversationId.ConversationId,
  requestId?: string
) => {
  let asked: number | undefined
  let noted = false
  // Noted once per delivery, before the stop: the reply of every later delivery.
  const note = (pid: number) =>
    requestId === undefined || noted
      ? Effect.void
      : Effect.andThen(
          // Pruning is best effort: it must not keep a stop from being made.
          Effect.ignore(
            sql`DELETE FROM parley_cluster_stopped WHERE at < now() - make_interval(days => ${STOPPED_DAYS})`
          ),
          sql`INSERT INTO parley_cluster_stopped (request_id, conversation_id, pid) VALUES (${requestId}, ${cid}, ${pid})
            ON CONFLICT (request_id) DO NOTHING`
        ).pipe(Effect.andThen(Effect.sync(() => (noted = true))))
  const withdraw = Effect.suspend(() =>
    asked === undefined
      ? Effect.void
      : sql`DELETE FROM parley_cluster_stops WHERE conversation_id = ${cid}`.pipe(Effect.ignore)
  )
  const loop = Effect.gen(function* () {
    // Stopped, the turn does not go on with what was queued for it meanwhile (a `now` message resumes it itself).
    turns.unwatchQueue(cid)
    if (requestId !== undefined) {
      const prior = yield* sql<{ pid: number }>`SELECT pid FROM parley_cluster_stopped
        WHERE request_id = ${requestId} AND conversation_id = ${cid}`
      if (prior[0] !== undefined) [asked, noted] = [prior[0].pid, true]
    }
    const deadline = Date.now() + Sweep.STOP_REQUEST_S * 1000
    for (;;) {
      const row = yield* turnRow(sql, cid)
      const here = turns.get(cid)
      if (row === undefined || row.runner === turns.runner) {
        // Here: a turn of ours, or one this runner's sweep resumed as the other runner let go of it (stopped too).
        if (here !== undefined) {
          yield* note(process.pid)
          return yield* Effect.as(here.stop, asked ?? process.pid)
        }
        if (asked !== undefined) return asked
        // A start of it under way here (its lock still held elsewhere, say): once it got going, it is the turn to stop.
        const starting = turns.starting(cid)
        if (starting === undefined) return yield* new NotRunning({ id: cid })
        yield* Effect.timeoutOption(starting, Duration.millis(Math.max(0, deadline - Date.now())))
        if (Date.now() > deadline) return yield* new RunLost({ id: cid, during: "stop" })
        continue
      }
      if (asked === undefined) yield* Trace.line("Stop.elsewhere", cid)
      yield* note(row.pid)
      asked = row.pid
      yield* sql`INSERT INTO parley_cluster_stops (conversation_id, runner) VALUES (${cid}, ${row.runner})
        ON CONFLICT (conversation_id) DO UPDATE SET runner = EXCLUDED.runner, at = now()`
      // That runner takes it now (else at its next sweep).
      yield* Effect.ignore(sql`SELECT pg_notify(${Sweep.STOPS_CHANNEL}, ${row.runner})`)
      if (Date.now() > deadline) return yield* new RunLost({ id: cid, during: "stop" })
      yield* Effect.sleep("100 millis")
    }
  })
  return loop.pipe(
    Effect.catchTag("SqlError", () => Effect.fail(new RunLost({ id: cid, during: "stop" }))),
    Effect.ensuring(withdraw)
  )
}

/**
 * A message for a turn that runs on another runner than the conversation's
 * owner (this one): queued in the store's queue, which every runner shares.
 * That turn takes `next` and `now` messages at its next model request (a
 * `now` cannot stop it from here) and `after` ones as it ends; handed off
 * and resumed here, the turn takes them as a turn running here does (a
 * `now` answers the calls its stop cut short as interrupted). A turn that
 * ended between the look and the queueing had read its queue for the last
 * time: a run started here delivers the message.
 */
const queueElsewhere = (
  turns: Turns.Turns,
  store: ConversationStore["Service"],
  sql: SqlClient,
  m: {
    readonly cid: ConversationId.ConversationId
    readonly message: string
    readonly when: When | undefined
    readonly requestId: string
    readonly pid: number
  }
) =>
  Effect.gen(function* () {
    const queue = store.messages
    if (queue === undefined) return yield* new RunNotStarted({ output: "this storage keeps no queue of messages" })
    const queued = yield* queue
      .enqueue(m.cid, { message: m.message, surface: "api", when: m.when ?? "after", nonce: `cluster-${m.requestId}` })
      .pipe(Effect.mapError(fromStore(m.cid)))
    yield* Trace.line("Send.elsewhere", m.cid)
    // `now`: stopped there as a stop is, then resumed here with the message (the calls the stop cut short answered
    // as interrupted), as `Send.send` does for a turn running here. Not stopped in time, that turn takes it at its
    // next model request: queued either way.
    if (m.when === "now") yield* Effect.ignore(stopAnywhere(turns, sql, m.cid))
    // Watched by the sweep until a run here takes the message or none is queued: the turn still there may have read
    // its queue for the last time, and end without it; the stopped one may still hold the conversation as the resume
    // below tries it (under load, longer than its retries: it gives up, taking it for another process's run).
    turns.watchQueue(m.cid)
    // Nothing runs elsewhere now (a turn here may be this runner's sweep taking over what the stop ended: it leaves it).
    if ((yield* turnElsewhere(turns, sql, m.cid)) === undefined) {
      const resumed = resumeWithQueue(turns, m.cid)
      yield* m.when === "now" ? resumed : Effect.ignore(resumed)
    }
    return { conversation_id: m.cid, pid: m.pid, queued: queued.id }
  })

/** The turn of `id` running here once its question `inquiryId` is open, or why not. */
const turnAsking = (turns: Turns.Turns, cid: ConversationId.ConversationId, inquiryId: string) =>
  Effect.gen(function* () {
    let turn = turns.get(cid)
    // Held by another runner: one that is handing it off (its shard came here) lets go within a sweep or two.
    const deadline = Date.now() + REASK_MS
    while (turn === undefined) {
      const resumed = yield* turns.start(cid, { continueTurn: true })
      if (resumed._tag === "Failed") {
        // Locked: another runner still hands it off. RunningHere: this runner's sweep is starting it right now.
        const tag = (resumed.error as { _tag?: unknown } | undefined)?._tag
        const locked = tag === "ConversationLocked" || tag === "RunningHere"
        if (!locked || Date.now() > deadline) return yield* Effect.fail(refusalOfStart(cid, resumed.error))
        yield* Effect.sleep("250 millis")
        turn = turns.get(cid)
        continue
      }
      turn = turns.get(cid)
      if (turn === undefined) return undefined
    }
    const asking = turn
    const open = Effect.map(asking.pending.list, (qs) => qs.some((q) => q.inquiryId === inquiryId))
    const asked = Effect.gen(function* () {
      while (!(yield* open)) yield* Effect.sleep("50 millis")
    })
    // Bounded: a turn that never asks it again (it was answered meanwhile) is refused by the offer.
    yield* Effect.raceFirst(asked, Effect.asVoid(Deferred.await(asking.ended))).pipe(
      Effect.timeoutOption(Duration.millis(REASK_MS))
    )
    return asking
  })

/**
 * Which message gave each question its answer (`parley_cluster_answers`): a
 * persisted message can be delivered again after its handler answered (the
 * engine redelivers what it has not seen replied), and that delivery must
 * get the same reply, not "already answered".
 */
const winner = (sql: SqlClient, cid: string, inquiryId: string) =>
  sql<{
    request_id: string
  }>`SELECT request_id FROM parley_cluster_answers WHERE conversation_id = ${cid} AND inquiry_id = ${inquiryId}`.pipe(
    Effect.map((rows) => rows[0]?.request_id),
    Effect.orElseSucceed(() => undefined)
  )

const won = (sql: SqlClient, cid: string, inquiryId: string, requestId: string) =>
  sql`INSERT INTO parley_cluster_answers (conversation_id, inquiry_id, request_id) VALUES (${cid}, ${inquiryId}, ${requestId})
    ON CONFLICT DO NOTHING`.pipe(Effect.ignore)

/** One delivery of an answer (`requestId`: its nonce, else the message's id: the same on every delivery). */
interface AnswerMessage {
  readonly id: string
  readonly inquiryId: string
  readonly value: Schema.Json
  readonly requestId: string
}

/** What an Answer message is replied with. */
type Reply = { readonly id: string; readonly outcome: "delivered" | "recorded" }

/** Answer: offered to the running turn (resumed here first when none runs). */
const answer = (turns: Turns.Turns, store: ConversationStore["Service"], sql: SqlClient, m: AnswerMessage) =>
  Effect.gen(function* () {
    const { id, inquiryId } = m
    const cid = yield* parse(id)
    const delivered: Reply = { id: inquiryId, outcome: "delivered" }
    // This message won already (an earlier delivery of it): the same reply again.
    const ours = Effect.map(winner(sql, cid, inquiryId), (w) => w === m.requestId)
    const already = () =>
      Effect.flatMap(ours, (yes) =>
        yes
          ? Effect.succeed(delivered)
          : Effect.fail(new QuestionAlreadyAnswered({ inquiry_id: inquiryId, by: "other" }))
      )
    // The turn asking here is offered the answer at once (no query first: this is the latency path); an
    // earlier delivery of this message is recognised when the offer is refused. With no turn here, a delivery
    // that won already gets the same reply, unless its answer never reached the log (its runner died between
    // the two): then the resumed turn asks again and is offered it.
    if (turns.get(cid) === undefined && (yield* ours) && (yield* answeredInLog(store, cid, inquiryId))) return delivered
    yield* Trace.line("Answer.notOurs", id)
    let turn = yield* turnAsking(turns, cid, inquiryId)
    yield* Trace.line("Answer.asking", id)
    // A turn that ended meanwhile (handed off as its shard moved) is looked for again, a few times.
    for (let i = 0; i < 4 && turn !== undefined && (yield* Deferred.isDone(turn.ended)); i++) {
      yield* Effect.sleep("250 millis")
      turn = yield* turnAsking(turns, cid, inquiryId)
    }
    if (turn === undefined) {
      if (yield* answeredInLog(store, cid, inquiryId)) return yield* already()
      return yield* new QuestionNotOpen({ inquiry_id: inquiryId, open: [] })
    }
    // Through `Answer.deliver`, as every channel: offered to the turn running here, else recorded on disk.
    return yield* Answer.deliver(cid, inquiryId, m.value, "cluster").pipe(
      Effect.provide(ClusterTurns.layer(turns)),
      Effect.provideService(ConversationStore, store),
      Effect.mapError(fromStore(cid)),
      Effect.tap(() => Trace.line("Answer.offered", id)),
      Effect.tap(() => won(sql, cid, inquiryId, m.requestId)),
      // Recorded on disk when the turn ended between the two (handed off, stopped): the answer is kept all the same.
      Effect.map((d): Reply => (d._tag === "Delivered" ? delivered : { id: inquiryId, outcome: "recorded" })),
      Effect.catch((e): Effect.Effect<Reply, Refusal> => {
        if (e._tag === "QuestionAlreadyAnswered") return already()
        if (e._tag !== "QuestionNotOpen") return Effect.fail(e)
        return Effect.flatMap(
          answeredInLog(store, cid, inquiryId),
          (done): Effect.Effect<Reply, Refusal> => (done ? already() : Effect.fail(e))
        )
      })
    )
  })

/**
 * AnswerAll: all or none, through `Answer.deliverAll`: the turn running here
 * takes every answer or none (`PendingAnswers.offerAll`); with none running
 * here they are recorded, all or none, into the waiting turn, under its lock.
 */
const answerAll = (
  turns: Turns.Turns,
  store: ConversationStore["Service"],
  id: string,
  answers: Readonly<Record<string, Schema.Json>>
) =>
  Effect.flatMap(parse(id), (cid) =>
    Answer.deliverAll(cid, answers, "cluster").pipe(
      Effect.provide(ClusterTurns.layer(turns)),
      Effect.provideService(ConversationStore, store),
      Effect.mapError(fromStore(cid))
    )
  )

/** `$PARLEY_CLUSTER_DEBUG`: each delivery on stderr (which runner handled what). */
const trace = Trace.line

/** An `Answer` or `AnswerDirect` request (the same payload; the request id names the answer when no nonce does). */
interface AnswerRequest {
  readonly payload: { readonly inquiry_id: string; readonly answer: Schema.Json; readonly nonce?: string | undefined }
  readonly requestId: { toString(): string }
}

/** The entity's handlers on this runner's turns. */
export const layer = (
  turns: Turns.Turns,
  store: ConversationStore["Service"],
  sql: SqlClient
): Layer.Layer<never, never, Sharding> =>
  Conversation.toLayer(
    Effect.gen(function* () {
      const address = yield* Entity.CurrentAddress
      const id = address.entityId
      const answered = ({ payload, requestId }: AnswerRequest) =>
        Effect.andThen(
          trace(`Answer ${payload.inquiry_id}`, id),
          answer(turns, store, sql, {
            id,
            inquiryId: payload.inquiry_id,
            value: payload.answer,
            requestId: payload.nonce ?? String(requestId)
          }).pipe(
            Effect.tap(() => trace("Answered", id)),
            Effect.tapError((e) => trace(`Answer refused ${e._tag}`, id))
          )
        )
      return Conversation.of({
        Send: ({ payload, requestId }) =>
          Effect.andThen(
            trace("Send", id),
            send(turns, store, sql, id, payload.message, payload.model, payload.when, String(requestId))
          ),
        Continue: () =>
          Effect.flatMap(parse(id), (cid) =>
            turns.get(cid) !== undefined
              ? Effect.fail(busyHere(cid))
              : Effect.flatMap(turns.start(cid, { continueTurn: true }), (s) =>
                  s._tag === "Running"
                    ? Effect.succeed(started(cid))
                    : Effect.fail(
                        refusalOfStart(
                          cid,
                          s._tag === "Failed" ? s.error : { message: "it has no incomplete turn; nothing to resume" }
                        )
                      )
                )
          ),
        Discard: () =>
          Effect.flatMap(parse(id), (cid) =>
            turns.get(cid) !== undefined
              ? Effect.fail(busyHere(cid))
              : Effect.flatMap(turns.start(cid, { discardTurn: true }), (s) =>
                  s._tag === "Ended"
                    ? Effect.succeed({ id: cid, ending: Query.endingOf(s.outcome) })
                    : Effect.fail(refusalOfStart(cid, s._tag === "Failed" ? s.error : {}))
                )
          ),
        Stop: ({ requestId }) =>
          Effect.andThen(
            trace("Stop", id),
            Effect.flatMap(parse(id), (cid) =>
              Effect.map(stopAnywhere(turns, sql, cid, String(requestId)), (pid) => ({ id: cid, pid }))
            )
          ),
        // The persisted Answer and the volatile AnswerDirect carry the same payload: one handler for both.
        Answer: answered,
        AnswerDirect: answered,
        AnswerAll: ({ payload }) => answerAll(turns, store, id, payload.answers),
        AnswerSecret: ({ payload, requestId }) =>
          answer(turns, store, sql, {
            id,
            inquiryId: payload.inquiry_id,
            value: payload.answer,
            requestId: payload.nonce ?? String(requestId)
          })
      })
    }),
    { maxIdleTime: "1 minute" }
  )
