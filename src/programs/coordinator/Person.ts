/**
 * A question for a person, answered from anywhere (docs/decisions.md#answer-from-anywhere): while it
 * is open it is registered in `PendingAnswers` under its inquiry id, and the
 * first answer that fits wins — typed at this terminal's prompt, or offered
 * by any other answerer (another terminal, the HTTP API). The other side is
 * then dropped: a prompt still on screen closes when someone else answered.
 *
 * With nobody to ask and `detached = "wait"`, the question waits for any
 * answerer up to `wait_timeout`, then is deferred like `defer` (and the run
 * says so).
 *
 * @example
 * ```ts
 * import * as Person from "parley/programs/coordinator/Person"
 * import type { Env, Asked, Closer } from "parley/programs/coordinator/Env"
 * declare const env: Env, asked: Asked, close: Closer, since: string
 * const routed = Person.ask(env, asked, close, since) // Effect<Routed, RecordError>
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Schema from "effect/Schema"
import * as RunEvent from "../../domain/run/RunEvent.ts"
import * as TurnState from "../../domain/stream/TurnState.ts"
import * as ConfigData from "../../domain/tool/Config.ts"
import { isRememberable } from "../../domain/tool/Question.ts"
import type { Offered, Waiting } from "../../services/PendingAnswers.ts"
import { PromptFailed } from "../../services/PromptBackend.ts"
import {
  type Asked,
  type Closer,
  describeDefect,
  type Env,
  positionOf,
  type RecordError,
  Routed,
  Texts
} from "./Env.ts"

/** Registers the question for every answerer while `use` runs. */
const registered = <A, E, R>(
  env: Env,
  asked: Asked,
  since: string,
  use: (waiting: Waiting) => Effect.Effect<A, E, R>
) =>
  Effect.scoped(
    Effect.flatMap(
      env.answers.open({
        inquiryId: asked.id,
        conversationId: env.session.id,
        call: RunEvent.toolCall(asked.call),
        question: asked.question,
        since
      }),
      use
    )
  )

/** Records an answer that won, remembering it for the turn when the person typed `Y`/`N` (here or at an attached terminal). */
export const answered = (env: Env, asked: Asked, closer: Closer, offered: Offered, remember: boolean) =>
  Effect.gen(function* () {
    // A secret, or a question with persistence = "none" (RFD 083), is never remembered.
    const remembered = remember && isRememberable(asked.question)
    if (remembered) {
      yield* Ref.update(env.state, (s) =>
        TurnState.rememberAnswer(s, asked.call.name, asked.question.id, offered.answer)
      )
    }
    return yield* closer.answered(offered.by, offered.answer, remembered)
  })

/**
 * The "who's asking" header of a prompt (RFD 083 `prompt_label`, display
 * only): the question's config, else the tool's own default (`ask_user`:
 * "Assistant"). The one home of the label: this terminal's prompt reads it
 * here, attached terminals from `QuestionOpened`.
 */
export const promptLabel = (env: Env, tool: string, questionId: string): string | undefined =>
  ConfigData.questionConfig(env.config, tool, questionId)?.prompt_label ?? env.executor.promptLabel?.(tool, questionId)

/** Who answered at this terminal (they are closed by the terminal's side, under the prompt lock). */
const TERMINAL: ReadonlySet<RunEvent.Answerer> = new Set(["you", "remembered"])

/**
 * The terminal's side: the prompt (one on screen at a time), or the answer
 * this turn remembered. Its answer is offered like anyone's; when it wins,
 * it is recorded before the prompt lock is released, so the answer's line is
 * shown before the next prompt. When another answer won meanwhile, this side
 * never ends (the other side records that one).
 */
const prompt = (env: Env, asked: Asked, waiting: Waiting, closer: Closer) => {
  const { call, question } = asked
  // A secret, or a question with persistence = "none" (RFD 083), is never remembered nor answered from memory.
  const rememberable = isRememberable(question)
  const offer = (answer: Schema.Json, by: RunEvent.Answerer, remember: boolean): Effect.Effect<Routed, RecordError> =>
    Effect.flatMap(Effect.result(env.answers.offer(asked.id, answer, by)), (offered) =>
      offered._tag === "Success"
        ? answered(env, asked, closer, { answer, by }, remember)
        : offered.failure._tag === "QuestionAlreadyAnswered"
          ? Effect.never
          : closer.cancelled("you", "backend_error", { content: Texts.promptFailed, is_error: true })
    )
  const closeAs = (reason: "user" | "backend_error") =>
    Effect.flatMap(
      waiting.claim("you"),
      (mine): Effect.Effect<Routed, RecordError> =>
        !mine
          ? Effect.never
          : reason === "user"
            ? closer.cancelled("you", "user", { content: Texts.inputCancelled, is_error: false })
            : closer.cancelled("you", "backend_error", { content: Texts.promptFailed, is_error: true })
    )
  return Effect.suspend(() =>
    // Look again once the prompt is ours: a Y/N typed while this call waited counts too.
    Effect.flatMap(Ref.get(env.state), (s) => {
      const remembered = rememberable ? TurnState.rememberedAnswer(s, call.name, question.id) : undefined
      if (remembered !== undefined && Option.isSome(remembered)) return offer(remembered.value, "remembered", false)
      const label = promptLabel(env, call.name, question.id)
      const request = { toolName: call.name, question, arguments: call.arguments, position: positionOf(env, call) }
      return env.prompts.question(label === undefined ? request : { ...request, label }).pipe(
        Effect.catchDefect((d) => Effect.fail(new PromptFailed({ reason: describeDefect(d) }))),
        Effect.matchEffect({
          onFailure: (e) => closeAs(e._tag === "PromptCancelled" ? "user" : "backend_error"),
          onSuccess: (reply) => offer(reply.answer, "you", reply.remember && rememberable)
        })
      )
    })
  ).pipe(env.promptLock.withPermits(1))
}

/** A person answers: at this terminal's prompt or from any other answerer, whichever is first. */
export const ask = (env: Env, asked: Asked, closer: Closer, since: string) =>
  registered(env, asked, since, (waiting) => {
    // Exactly one offer wins: the terminal's side records its own, this side everyone else's.
    const other = Effect.flatMap(
      waiting.answer,
      (offered): Effect.Effect<Routed, RecordError> =>
        TERMINAL.has(offered.by) ? Effect.never : answered(env, asked, closer, offered, offered.remember === true)
    )
    return env.prompts.interactive ? Effect.raceFirst(prompt(env, asked, waiting, closer), other) : other
  })

/**
 * Nobody at this process's terminal, but a person is attached from another
 * (`conversation attach`): the question waits for any answerer while anyone
 * is attached. When the last one leaves with the question still open, it
 * goes on as `deserted` says (the `detached` policy), still registered.
 */
export const attended = (
  env: Env,
  asked: Asked,
  closer: Closer,
  since: string,
  deserted: (waiting: Waiting) => Effect.Effect<Routed, RecordError>
) =>
  registered(env, asked, since, (waiting) =>
    // Only the waiting races: an answer that won is recorded whole, whoever leaves meanwhile.
    Effect.flatMap(Effect.raceFirst(waiting.answer, Effect.as(env.answers.deserted, undefined)), (offered) =>
      offered === undefined ? deserted(waiting) : answered(env, asked, closer, offered, offered.remember === true)
    )
  )

/** Waits for any answerer up to `wait_timeout`, then defers the question (and says so). */
export const waitOn = (env: Env, asked: Asked, closer: Closer, waiting: Waiting) =>
  Effect.gen(function* () {
    const timeout = ConfigData.waitTimeoutMs(env.config)
    const offered = yield* Effect.timeoutOption(waiting.answer, Duration.millis(timeout))
    if (Option.isSome(offered))
      return yield* answered(env, asked, closer, offered.value, offered.value.remember === true)
    yield* env.events.publish(
      RunEvent.make.Warning({
        text: `Nobody answered "${asked.question.text.split("\n")[0]}" (${asked.id}) within ${Duration.format(Duration.millis(timeout))}; it is deferred.`
      })
    )
    return Routed.Deferred({ inquiryId: asked.id })
  })

/** Nobody to ask yet: any answerer may answer until `wait_timeout`, then the question is deferred. */
export const wait = (env: Env, asked: Asked, closer: Closer, since: string) =>
  registered(env, asked, since, (waiting) => waitOn(env, asked, closer, waiting))
