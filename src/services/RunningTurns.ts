/**
 * The turns running now, wherever they run (docs/architecture.md#an-answer-from-anywhere):
 * one contract for "is this conversation's turn running, and what can I do
 * with it?" — its open questions, an answer offered to it, its events, a
 * stop. `programs/Answer.deliver` asks it before it records an answer on
 * disk, so every channel (the CLI, a socket, the HTTP API, a cluster runner)
 * decides running-or-recorded the same way.
 *
 * Layers: `layers/host/HostTurns.ts` (the runs of one storage, over their host
 * sockets) and the cluster's (`layers/cluster/Turns.ts`, the turns a runner
 * holds). A running turn is a handle: what it offers grows with the turn
 * (a question with a kind, a message sent to it) without a second contract.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Option from "effect/Option"
 * import type { ConversationId } from "parley/domain/storage/ConversationId"
 * import { RunningTurns } from "parley/services/RunningTurns"
 * declare const id: ConversationId
 * const answerYes = Effect.scoped(
 *   Effect.gen(function* () {
 *     const turn = yield* RunningTurns.use((turns) => turns.find(id))
 *     if (Option.isSome(turn)) yield* turn.value.offer("call_1.confirm.1", true)
 *   })
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { InquiryId } from "../domain/event/InquiryId.ts"
import type * as LiveView from "../domain/run/LiveView.ts"
import type * as RunEvent from "../domain/run/RunEvent.ts"
import type { ConversationId } from "../domain/storage/ConversationId.ts"
import type { NotPrivate } from "../domain/storage/NotPrivate.ts"
import type { HostProtocolMismatch } from "../domain/run/HostProtocol.ts"
import type { Question } from "../domain/tool/Question.ts"
import type { AnswersDoNotFit, AnswersTaken, OfferRefused, QuestionNotOpen, RunLost } from "./Refusals.ts"

/** A question a turn waits on (running, or recorded on disk). */
export interface OpenQuestion {
  readonly inquiryId: InquiryId
  /** A tool's question, or an approval of the call (contract §8); a question when not said. */
  readonly kind?: RunEvent.QuestionKind
  readonly toolCallId: string
  readonly tool: string
  /** The call's arguments (what an approval lets run). */
  readonly arguments?: Schema.JsonObject
  /** The question as a tool asked it (its id, text, answer type, default). */
  readonly question: Question
}

/** What a running turn says about itself. */
export interface TurnInfo {
  /** The process that runs it. */
  readonly pid: number
  /** Its open questions, in the order they opened. */
  readonly open: ReadonlyArray<OpenQuestion>
}

/** One running turn. */
export interface RunningTurn {
  readonly id: ConversationId
  /** Its process and open questions (asked when called: a running turn moves on). */
  readonly info: Effect.Effect<TurnInfo, RunLost>
  /**
   * Offers an answer to an open question (`via`: the surface it came
   * through): the first that fits wins, and the turn records it once.
   * `remember`: a `Y`/`N` typed at a terminal, kept for the rest of the turn.
   */
  readonly offer: (
    inquiryId: string,
    value: Schema.Json,
    via?: RunEvent.Via,
    options?: { readonly remember?: boolean }
  ) => Effect.Effect<void, OfferRefused | RunLost>
  /**
   * Offers answers to several open questions at once: all are taken, or none
   * (any that does not fit, or that another answerer closed, refuses the lot); `via` as for `offer`.
   */
  readonly offerAll: (
    answers: Readonly<Record<string, Schema.Json>>,
    via?: RunEvent.Via
  ) => Effect.Effect<void, QuestionNotOpen | AnswersDoNotFit | AnswersTaken | RunLost>
  /**
   * Its events after `after`, then live, to its end. `attend`: a person
   * follows at a terminal, so a question for a person waits for them while
   * subscribed (where the turn can tell; the runs of a cluster cannot).
   */
  readonly subscribe: (
    after: number,
    options?: { readonly attend?: boolean }
  ) => Stream.Stream<RunEvent.Sequenced, LiveView.Lost | RunLost>
  /** Stops it as Ctrl-C does: what finished is kept, the turn stays resumable. */
  readonly interrupt: Effect.Effect<void, RunLost>
}

export class RunningTurns extends Context.Service<
  RunningTurns,
  {
    /**
     * The running turn of `id`, if one runs; a handle for the scope's life. A
     * place parley will not trust (a socket another user could have put there)
     * is refused, not taken for "not running"; so is a host of another
     * protocol version (`HostProtocolMismatch`).
     */
    readonly find: (
      id: ConversationId
    ) => Effect.Effect<Option.Option<RunningTurn>, NotPrivate | HostProtocolMismatch, Scope.Scope>
    /**
     * The conversations whose turn may be running (a killed host's too: ask
     * `find`), found at once (one directory read), so a listing asks only
     * them; absent, a caller asks `find` of each.
     */
    readonly candidates?: Effect.Effect<ReadonlySet<string>>
  }
>()("parley/RunningTurns") {}
