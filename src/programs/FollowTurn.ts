/**
 * Following a running turn from another terminal
 * (docs/questions-and-approvals.md#runs-beyond-the-terminal; RFD 027
 * "attach loop", past its one-client non-goal): its events — the current
 * run replayed, then live — are shown as they come; a question for a person
 * is asked here (one prompt at a time, as `query` asks) and the answer is
 * offered to the turn, where the first answer that fits wins. A prompt still
 * on screen closes when another client answered, and the answered event says
 * who: `you` (this follower), `other` (another client).
 *
 * A subscription the turn closed because this follower fell behind
 * (`LiveViewLagged`) is taken again after the last event seen, without a
 * gap; `LiveViewGone` (the turn no longer keeps what follows) ends the
 * follow with what the turn said. The follow ends with the turn (`Stopped`),
 * with the connection (`Lost`), or when the caller detaches; interrupted,
 * it stops the turn as Ctrl-C does and waits a few seconds for its end.
 *
 * How events are drawn and questions asked is the caller's (`parley
 * conversation attach` renders them on a terminal); this program decides
 * what is shown, what is asked, and who answered.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as FollowTurn from "parley/programs/FollowTurn"
 * import type { RunningTurn } from "parley/services/RunningTurns"
 * declare const turn: RunningTurn
 * // Prints each event's tag until the turn ends; its questions are left to other answerers.
 * const watched = Effect.scoped(
 *   FollowTurn.follow({
 *     turn,
 *     latest: 0,
 *     open: [],
 *     attend: false,
 *     show: (event) => Effect.log(event._tag),
 *     say: (line) => Effect.log(line),
 *     paused: (effect) => effect,
 *     ask: undefined,
 *     answerHint: (inquiryId) => `parley conversation answer ${inquiryId}`,
 *     stopRun: turn.interrupt.pipe(Effect.ignore),
 *     detached: Effect.never
 *   })
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import type * as LiveView from "../domain/run/LiveView.ts"
import type * as RunEvent from "../domain/run/RunEvent.ts"
import type { ConversationId } from "../domain/storage/ConversationId.ts"
import * as IncompleteTurn from "../domain/stream/IncompleteTurn.ts"
import { ConversationStore } from "../services/ConversationStore.ts"
import type { PromptError, QuestionAnswer } from "../services/PromptBackend.ts"
import type { RunningTurn } from "../services/RunningTurns.ts"

/** How a follow ends. */
export type End =
  | { readonly _tag: "Stopped"; readonly event: RunEvent.Of<"Stopped"> }
  | { readonly _tag: "Lost" }
  | { readonly _tag: "Gone"; readonly gone: LiveView.LiveViewGone }
  | { readonly _tag: "Detached" }

/** What a follow is given: the turn, where it stood on arrival, and how to show and ask. */
export interface Options {
  readonly turn: RunningTurn
  /** The last event the turn had kept when this follower arrived (the host's `Info.latest`). */
  readonly latest: number
  /** The inquiry ids open on arrival: asked though replayed (one the replay shows closing later is not). */
  readonly open: ReadonlyArray<string>
  /** Show only the last `tail` events kept before following live (a question still open is asked all the same). */
  readonly tail?: number | undefined
  /** A person follows (the turn keeps its questions for a person waiting for them). */
  readonly attend: boolean
  /** Shows one event (the answered ones with `by` as seen from here). */
  readonly show: (event: RunEvent.RunEvent) => Effect.Effect<void>
  /** Says a line to the person (an answer refused, a question that cannot be asked here). */
  readonly say: (line: string) => Effect.Effect<void>
  /** Runs a prompt with whatever else is drawn out of its way. */
  readonly paused: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Asks a question for a person here; none where nobody can be asked. */
  readonly ask: ((e: RunEvent.Of<"QuestionOpened">) => Effect.Effect<QuestionAnswer, PromptError>) | undefined
  /** The command that answers a question from elsewhere (said when it cannot be asked here). */
  readonly answerHint: (inquiryId: string) => string
  /** Stops the run (a prompt cancelled here, as Ctrl-C anywhere while following). */
  readonly stopRun: Effect.Effect<void>
  /** Succeeds when this follower leaves the turn running (a detach). */
  readonly detached: Effect.Effect<void>
  /**
   * Told the event that closes a prompt on screen because another client
   * answered, before the prompt is interrupted (its line can say who), and
   * `undefined` once it is gone.
   */
  readonly closedElsewhere?: ((e: RunEvent.Of<"QuestionClosed"> | undefined) => void) | undefined
}

/**
 * One follower: shows events, asks the questions meant for a person (one
 * prompt at a time), and tells its own answers from other clients'.
 */
class Follower {
  /** Prompts handed to the person, by inquiry id (drawn, or waiting for their turn). */
  private readonly asking = new Map<string, Fiber.Fiber<void>>()
  /** Offers sent from here: whether each won (settled once the turn replied). */
  private readonly offers = new Map<string, Deferred.Deferred<boolean>>()
  /** `Y`/`N` typed here, by tool and question: the questions still waiting here take it too. */
  private readonly remembered = new Map<string, Schema.Json>()

  constructor(
    private readonly options: Options,
    private readonly asks: (e: RunEvent.Of<"QuestionOpened">) => boolean,
    private readonly scope: Scope.Scope,
    private readonly lock: Semaphore.Semaphore
  ) {}

  /** Shows one event, and asks or closes what it opens or closes. */
  handle(event: RunEvent.RunEvent): Effect.Effect<void> {
    switch (event._tag) {
      case "QuestionOpened":
        return Effect.andThen(this.options.show(event), this.opened(event))
      case "QuestionClosed":
        return this.closed(event)
      default:
        return this.options.show(event)
    }
  }

  private offer(inquiryId: string, reply: QuestionAnswer) {
    const { turn, say } = this.options
    return Effect.gen({ self: this }, function* () {
      const won = yield* Deferred.make<boolean>()
      this.offers.set(inquiryId, won)
      const sent = yield* Effect.exit(
        turn.offer(inquiryId, reply.answer, "attach", reply.remember ? { remember: true } : undefined)
      )
      yield* Deferred.succeed(won, Exit.isSuccess(sent))
      const refused = Exit.isFailure(sent) ? sent.cause.reasons.find((r) => r._tag === "Fail") : undefined
      // Another client's answer won: its closed line says who. A lost turn ends the stream.
      if (refused?._tag === "Fail" && refused.error._tag === "AnswerDoesNotFit")
        yield* say(`parley: ${refused.error.message}`)
    })
  }

  /** Asks `e` here once the prompts before it are done, unless a `Y`/`N` typed here already answers it. */
  private prompt(e: RunEvent.Of<"QuestionOpened">, ask: NonNullable<Options["ask"]>) {
    const key = `${e.call.name}\u0000${e.question.id}`
    const asked = Effect.suspend(() => {
      const remembered = this.remembered.get(key)
      if (remembered !== undefined) return this.offer(e.inquiry_id, { answer: remembered, remember: true })
      return ask(e).pipe(
        Effect.tap((reply) => Effect.sync(() => void (reply.remember && this.remembered.set(key, reply.answer)))),
        Effect.flatMap((reply) => this.offer(e.inquiry_id, reply))
      )
    })
    return this.lock
      .withPermits(1)(this.options.paused(asked))
      .pipe(
        // Cancelling a prompt stops the run, as Ctrl-C does anywhere while attached (RFD 027).
        Effect.catchTag("PromptCancelled", () => this.options.stopRun),
        Effect.catch((error) =>
          this.options.say(
            `parley: could not ask ${e.inquiry_id} here (${error.reason}); answer it with: ${this.options.answerHint(e.inquiry_id)}`
          )
        ),
        Effect.ensuring(Effect.sync(() => void this.asking.delete(e.inquiry_id)))
      )
  }

  private opened(e: RunEvent.Of<"QuestionOpened">) {
    const { ask, answerHint, say } = this.options
    return Effect.gen({ self: this }, function* () {
      if (e.audience !== "person" || this.asking.has(e.inquiry_id) || !this.asks(e)) return
      // Nobody to ask here: say what is waiting and how to answer it.
      if (ask === undefined)
        return yield* say(`parley: ${e.inquiry_id} is waiting for input; answer it with: ${answerHint(e.inquiry_id)}`)
      this.asking.set(e.inquiry_id, yield* Effect.forkIn(this.prompt(e, ask), this.scope))
    })
  }

  private closed(e: RunEvent.Of<"QuestionClosed">) {
    return Effect.gen({ self: this }, function* () {
      const sent = this.offers.get(e.inquiry_id)
      // Ours if the turn took our offer: wait for its reply before saying who answered.
      const mine = sent !== undefined && (yield* Deferred.await(sent))
      const prompt = this.asking.get(e.inquiry_id)
      if (prompt !== undefined && !mine) {
        // The prompt on screen (if it is this one) ends saying who answered, not "(cancelled)".
        const told = this.options.closedElsewhere
        told?.(e)
        yield* Effect.ensuring(
          Fiber.interrupt(prompt),
          Effect.sync(() => told?.(undefined))
        )
      }
      // "you" in the turn's events is its own terminal: another client, seen from here.
      const by: RunEvent.Answerer = mine ? "you" : e.by === "you" ? "other" : e.by
      yield* this.options.show({ ...e, by })
    })
  }
}

/**
 * The turn's events through its `Stopped`, subscribing again after the last
 * event seen when the turn closed the subscription because this follower
 * fell behind; `LiveViewGone` is returned.
 */
const followed = (
  turn: RunningTurn,
  handle: (e: RunEvent.Sequenced) => Effect.Effect<void>,
  attend: boolean,
  after: () => number
): Effect.Effect<LiveView.LiveViewGone | undefined, unknown> =>
  Stream.runForEach(turn.subscribe(after(), { attend }), handle).pipe(
    Effect.as(undefined),
    Effect.catchTags({
      LiveViewLagged: () => followed(turn, handle, attend, after),
      LiveViewGone: (gone) => Effect.succeed(gone)
    })
  )

/** Stops the turn and shows how it left (waiting a few seconds at most). */
const interruptTurn = (
  turn: RunningTurn,
  handle: (e: RunEvent.Sequenced) => Effect.Effect<void>,
  after: () => number
) =>
  turn.interrupt.pipe(
    Effect.andThen(Stream.runForEach(turn.subscribe(after()), handle)),
    Effect.timeout("5 seconds"),
    Effect.ignore
  )

/** The end of the events `events` ran through, once the race with a detach is decided. */
const endOf = (
  exit: Exit.Exit<LiveView.LiveViewGone | undefined, unknown>,
  stopped: RunEvent.Of<"Stopped"> | undefined
): End =>
  stopped !== undefined
    ? { _tag: "Stopped", event: stopped }
    : exit._tag === "Success" && exit.value !== undefined
      ? { _tag: "Gone", gone: exit.value }
      : { _tag: "Lost" }

/** Follows `options.turn` until it stops, is lost, or the caller detaches. */
export const follow = (options: Options): Effect.Effect<End, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { turn, latest, tail, attend } = options
    const openOnArrival = new Set(options.open)
    let seq = 0
    // A question replayed is asked only when still open on arrival.
    const asks = (e: RunEvent.Of<"QuestionOpened">) => seq > latest || openOnArrival.has(e.inquiry_id)
    const [scope, lock] = yield* Effect.zip(Effect.scope, Semaphore.make(1))
    const follower = new Follower(options, asks, scope, lock)
    // `tail`: the events kept before the last `tail` are not shown; a question still open is asked all the same.
    const cutoff = tail === undefined ? 0 : latest - tail
    const skipped = (e: RunEvent.Sequenced) =>
      e.seq <= cutoff && !(e.event._tag === "QuestionOpened" && openOnArrival.has(e.event.inquiry_id))
    let stopped: RunEvent.Of<"Stopped"> | undefined
    const handle = (e: RunEvent.Sequenced) =>
      Effect.suspend(() => {
        seq = e.seq
        if (e.event._tag === "Stopped") stopped = e.event
        return skipped(e) ? Effect.void : follower.handle(e.event)
      })
    return yield* Effect.raceFirst(
      Effect.map(Effect.exit(followed(turn, handle, attend, () => seq)), (exit) => endOf(exit, stopped)),
      Effect.as(options.detached, { _tag: "Detached" } as const)
    ).pipe(Effect.onInterrupt(() => interruptTurn(turn, handle, () => seq)))
  })

/** How the conversation's last turn stands on disk: what a run that ended while nobody followed it left. */
export const turnLeft = (id: ConversationId) =>
  ConversationStore.use((store) => store.load(id)).pipe(
    Effect.map((c) => (IncompleteTurn.splitIncompleteTurn(c.entries).incomplete === null ? "complete" : "incomplete"))
  )
