/**
 * `RunningTurns` over a cluster runner's turns (docs/cluster.md#how-it-works):
 * the turns this runner runs now (`Turns.ts`; the sweep, `Sweep.ts`, resumes
 * the ones a dead runner left and hands off those whose shard moved). The
 * conversation's owner answers through `Answer.deliver` with this layer, as
 * `parley serve` does with its host sockets, so "running here? then offer it,
 * else record it on disk" is decided in one place for every channel.
 *
 * @example
 * ```ts
 * import * as ClusterTurns from "parley/layers/cluster/ClusterTurns"
 * import type * as Turns from "parley/layers/cluster/Turns"
 * declare const turns: Turns.Turns
 * const running = ClusterTurns.layer(turns) // Layer<RunningTurns>
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { InquiryId } from "../../domain/event/InquiryId.ts"
import type { ConversationId } from "../../domain/storage/ConversationId.ts"
import { type RunningTurn, RunningTurns } from "../../services/RunningTurns.ts"
import type * as Turns from "./Turns.ts"

/** The turn running here, as every answerer sees it (an answer from a runner is another answerer's: `other`). */
export const fromTurn = (turn: Turns.Turn): RunningTurn => ({
  id: turn.id,
  info: Effect.map(turn.pending.list, (open) => ({
    pid: process.pid,
    open: open.map((q) => ({
      // Registered under its inquiry id: the id is one.
      inquiryId: q.inquiryId as InquiryId,
      kind: q.kind ?? "question",
      toolCallId: q.call.id,
      tool: q.call.name,
      arguments: q.call.arguments,
      question: q.question
    }))
  })),
  offer: (inquiryId, value, via, options) =>
    turn.pending.offer(inquiryId, value, "other", {
      ...(via !== undefined ? { via } : {}),
      ...(options?.remember === true ? { remember: true } : {})
    }),
  offerAll: (answers, via) => turn.pending.offerAll(answers, "other", via !== undefined ? { via } : undefined),
  subscribe: (after) => turn.events.since(after),
  interrupt: turn.stop
})

/** The running turns of this runner. */
export const make = (turns: Turns.Turns): RunningTurns["Service"] =>
  RunningTurns.of({
    find: (id: ConversationId) => Effect.succeed(Option.map(Option.fromNullishOr(turns.get(id)), fromTurn))
  })

/** {@link make} as a layer. */
export const layer = (turns: Turns.Turns): Layer.Layer<RunningTurns> => Layer.succeed(RunningTurns, make(turns))
