/**
 * A question for a person, answered from anywhere (issue 21 §2): while it
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
 */
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Schema from "effect/Schema"
import * as RunEvent from "../../domain/run/RunEvent.ts"
import * as TurnState from "../../domain/stream/TurnState.ts"
import * as ConfigData from "../../domain/tool/Config.ts"
import type { Offered, Waiting } from "../../services/PendingAnswers.ts"
import { PromptFailed } from "../../services/PromptBackend.ts"
import { type Asked, type Closer, describeDefect, type Env, positionOf, Routed, Texts } from "./Env.ts"

/** How the person's side ended. */
type Outcome = Data.TaggedEnum<{
  /** Someone's answer won (the person's here, or another answerer's). */
  Offered: { readonly offered: Offered }
  Cancelled: {}
  Failed: { readonly reason: string }
}>
const Outcome = Data.taggedEnum<Outcome>()

/** Registers the question for every answerer while `use` runs. */
const registered = <A, E, R>(env: Env, asked: Asked, since: string, use: (waiting: Waiting) => Effect.Effect<A, E, R>) =>
  Effect.scoped(Effect.flatMap(
    env.answers.open({ inquiryId: asked.id, conversationId: env.session.id, call: RunEvent.toolCall(asked.call), question: asked.question, since }),
    use
  ))

/**
 * The terminal's side: the prompt (one on screen at a time), or the answer
 * this turn remembered. Its answer is offered like anyone's; when another
 * answer won meanwhile, that one counts.
 */
const prompt = (env: Env, asked: Asked, waiting: Waiting, remember: { value: boolean }) => {
  const { call, question } = asked
  const secret = question.answer_type.type === "secret"
  const offerOrLose = (answer: Schema.Json, by: RunEvent.Answerer) =>
    Effect.flatMap(Effect.result(env.answers.offer(asked.id, answer, by)), () => Effect.map(waiting.answer, (offered) => Outcome.Offered({ offered })))
  const closeAs = (outcome: Outcome) =>
    Effect.flatMap(waiting.claim("you"), (mine) => (mine ? Effect.succeed(outcome) : Effect.map(waiting.answer, (offered) => Outcome.Offered({ offered }))))
  return Effect.suspend(() =>
    // Look again once the prompt is ours: a Y/N typed while this call waited counts too.
    Effect.flatMap(Ref.get(env.state), (s) => {
      const remembered = secret ? undefined : TurnState.rememberedAnswer(s, call.name, question.id)
      if (remembered !== undefined && Option.isSome(remembered)) return offerOrLose(remembered.value, "remembered")
      return env.prompts.question({ toolName: call.name, question, arguments: call.arguments, position: positionOf(env, call) }).pipe(
        Effect.flatMap((reply) => {
          remember.value = reply.remember && !secret
          return offerOrLose(reply.answer, "you")
        })
      )
    })
  ).pipe(
    Effect.catchDefect((d) => Effect.fail(new PromptFailed({ reason: describeDefect(d) }))),
    env.promptLock.withPermits(1),
    Effect.catch((e) => closeAs(e._tag === "PromptCancelled" ? Outcome.Cancelled() : Outcome.Failed({ reason: e.reason })))
  )
}

/** Records how the person's side ended. */
const close = (env: Env, asked: Asked, closer: Closer, outcome: Outcome, remember: boolean) =>
  Outcome.$match(outcome, {
    Offered: ({ offered }) =>
      Effect.gen(function*() {
        if (remember && offered.by === "you") {
          yield* Ref.update(env.state, (s) => TurnState.rememberAnswer(s, asked.call.name, asked.question.id, offered.answer))
        }
        return yield* closer.answered(offered.by, offered.answer)
      }),
    Cancelled: () => closer.cancelled("you", "user", { content: Texts.inputCancelled, is_error: false }),
    Failed: () => closer.cancelled("you", "backend_error", { content: Texts.promptFailed, is_error: true })
  })

/** A person answers: at this terminal's prompt or from any other answerer, whichever is first. */
export const ask = (env: Env, asked: Asked, closer: Closer, since: string) =>
  registered(env, asked, since, (waiting) =>
    Effect.gen(function*() {
      const remember = { value: false }
      const other = Effect.map(waiting.answer, (offered) => Outcome.Offered({ offered }))
      const outcome = yield* Effect.raceFirst(prompt(env, asked, waiting, remember), other)
      return yield* close(env, asked, closer, outcome, remember.value)
    }))

/** Nobody to ask yet: any answerer may answer until `wait_timeout`, then the question is deferred. */
export const wait = (env: Env, asked: Asked, closer: Closer, since: string) =>
  registered(env, asked, since, (waiting) =>
    Effect.gen(function*() {
      const timeout = ConfigData.waitTimeoutMs(env.config)
      const offered = yield* Effect.timeoutOption(waiting.answer, Duration.millis(timeout))
      if (Option.isSome(offered)) return yield* close(env, asked, closer, Outcome.Offered({ offered: offered.value }), false)
      yield* env.events.publish(RunEvent.make.Warning({
        text: `Nobody answered "${asked.question.text.split("\n")[0]}" (${asked.id}) within ${Duration.format(Duration.millis(timeout))}; it is deferred.`
      }))
      return Routed.Deferred({ inquiryId: asked.id })
    }))
