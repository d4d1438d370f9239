/**
 * `RunningTurns` over the host sockets of one storage (docs/questions-and-approvals.md#runs-beyond-the-terminal):
 * a conversation's turn runs when a host answers on its socket
 * (`HostPath.of`), and the handle speaks to that host over `effect/rpc`
 * (`HostClient`). A socket parley will not trust is refused (`NotPrivate`),
 * never taken for "not running".
 *
 * {@link fromClient} makes the handle over a connection someone else keeps
 * (`parley serve` shares one per run between every watcher and answer,
 * `layers/serve/Relay.ts`).
 *
 * @example
 * ```ts
 * import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
 * import * as Answer from "parley/programs/Answer"
 * import * as HostTurns from "parley/layers/host/HostTurns"
 * import type { ConversationId } from "parley/domain/storage/ConversationId"
 * declare const id: ConversationId
 * // Into the running turn when one runs, else into the waiting turn on disk (needs a ConversationStore).
 * const answered = Answer.deliver(id, "call_1.confirm.1", true).pipe(Effect.provide(HostTurns.layer("/home/me/.parley")))
 * ```
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type { InquiryId } from "../../domain/event/InquiryId.ts"
import type * as LiveView from "../../domain/run/LiveView.ts"
import type * as RunEvent from "../../domain/run/RunEvent.ts"
import type { ConversationId } from "../../domain/storage/ConversationId.ts"
import type { OpenQuestionInfo } from "../../services/RunHost.ts"
import { RunLost } from "../../services/Refusals.ts"
import { type OpenQuestion, type RunningTurn, RunningTurns } from "../../services/RunningTurns.ts"
import * as HostClient from "./HostClient.ts"
import * as HostPath from "./HostPath.ts"

/** A host's open question (as its `Info` lists it), as every answerer sees it. */
export const openQuestion = (q: OpenQuestionInfo): OpenQuestion => ({
  // The host keys its questions by their inquiry ids: the id it sends is one.
  inquiryId: q.inquiry_id as InquiryId,
  kind: q.kind ?? "question",
  toolCallId: q.call.id,
  tool: q.call.name,
  arguments: q.call.arguments,
  question: q.question
})

/**
 * An answer whose request was interrupted because the run's connection closed
 * under it (the run ended: serve's relay closes its connection's scope) is
 * the run lost, as a failed request is: the answerer then reads the log
 * (answered, or cancelled), not an interrupted request (an empty 503).
 */
const closedUnder =
  (lost: () => RunLost) =>
  <A, E>(self: Effect.Effect<A, E>): Effect.Effect<A, E | RunLost> =>
    Effect.catchCauseIf(self, Cause.hasInterruptsOnly, () => Effect.fail(lost()))

/**
 * The running turn of `id` over `client`; its events from `events` when the
 * caller relays them itself (else a subscription of this connection).
 */
export const fromClient = (
  id: ConversationId,
  client: HostClient.Client,
  events?: (after: number) => Stream.Stream<RunEvent.Sequenced, LiveView.Lost>
): RunningTurn => {
  const lost = () => new RunLost({ id })
  return {
    id,
    info: client.Info().pipe(
      Effect.map((info) => ({ pid: info.pid, open: info.open.map(openQuestion) })),
      Effect.mapError(lost)
    ),
    offer: (inquiryId, value, via, options) =>
      client
        .Answer({
          inquiry_id: inquiryId,
          answer: value,
          via: via ?? "terminal",
          ...(options?.remember === true ? { remember: true } : {})
        })
        .pipe(
          Effect.catchTag("RpcClientError", () => Effect.fail(lost())),
          closedUnder(lost)
        ),
    offerAll: (answers, via) =>
      client.AnswerAll({ answers, via: via ?? "terminal" }).pipe(
        Effect.catchTag("RpcClientError", () => Effect.fail(lost())),
        closedUnder(lost)
      ),
    subscribe: (after, options) =>
      events !== undefined
        ? events(after)
        : client
            .Subscribe({ after, ...(options?.attend === true ? { attend: true } : {}) })
            .pipe(Stream.catchTag("RpcClientError", () => Stream.fail(lost()))),
    interrupt: client.Interrupt().pipe(Effect.mapError(lost))
  }
}

/** The running turns of `storage`: a host that answers on the conversation's socket. */
export const make = (storage: string): RunningTurns["Service"] =>
  RunningTurns.of({
    find: (id) =>
      Effect.gen(function* () {
        const socket = HostPath.of(storage, id)
        if (!(yield* HostClient.reachable(socket))) return Option.none()
        // Gone between the probe and the connection: it is not running any more.
        const client = yield* HostClient.connectRunning(socket)
        return Option.map(client, (c) => fromClient(id, c))
      }),
    candidates: Effect.sync(() => new Set(HostPath.sockets(storage).map((s) => s.id)))
  })

/** {@link make} as a layer. */
export const layer = (storage: string): Layer.Layer<RunningTurns> => Layer.succeed(RunningTurns, make(storage))
