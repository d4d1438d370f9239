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
 * Each step takes the open inquiry whole (`Open.ts`): it registers the
 * question (once, for the caller's scope) and closes it.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Person from "parley/programs/coordinator/Person"
 * import type { OpenInquiry } from "parley/programs/coordinator/Open"
 * declare const open: OpenInquiry
 * const routed = Effect.scoped(Person.ask(open)) // Effect<Routed, RecordError>: registered while the scope is open
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as RunEvent from "../../domain/run/RunEvent.ts"
import * as TurnState from "../../domain/stream/TurnState.ts"
import * as ConfigData from "../../domain/tool/Config.ts"
import type { Waiting } from "../../services/PendingAnswers.ts"
import { atPrompt, type Env, positionOf, type RecordError, Routed, Texts } from "./Env.ts"
import type { OpenInquiry } from "./Open.ts"

/**
 * The "who's asking" header of a prompt (RFD 083 `prompt_label`, display
 * only): the question's config, else the tool's own default (`ask_user`:
 * "Assistant"). The one home of the label: this terminal's prompt reads it
 * here, attached terminals from `QuestionOpened`.
 */
export const promptLabel = (env: Env, tool: string, questionId: string): string | undefined =>
  ConfigData.questionConfig(env.config, tool, questionId)?.prompt_label ?? env.executor.promptLabel?.(tool, questionId)

/** An answer offered from this terminal's prompt. */
const TYPED_HERE = { via: "terminal" } as const

/** Who answered at this terminal (they are closed by the terminal's side, under the prompt lock). */
const TERMINAL: ReadonlySet<RunEvent.Answerer> = new Set(["you", "remembered"])

/**
 * The terminal's side: the prompt (one on screen at a time), or the answer
 * this turn remembered. Its answer is offered like anyone's; when it wins,
 * it is recorded before the prompt lock is released, so the answer's line is
 * shown before the next prompt. When another answer won meanwhile, this side
 * never ends (the other side records that one).
 */
const prompt = (open: OpenInquiry, waiting: Waiting) => {
  const { call, env, question } = open
  // A secret, or a question with persistence = "none" (RFD 083), is never remembered nor answered from memory.
  const rememberable = open.policy.rememberable
  const offer = (answer: Schema.Json, by: RunEvent.Answerer, remember: boolean): Effect.Effect<Routed, RecordError> =>
    Effect.flatMap(Effect.result(env.answers.offer(open.id, answer, by, TYPED_HERE)), (offered) =>
      offered._tag === "Success"
        ? open.accept({ answer, by, via: "terminal" }, remember)
        : offered.failure._tag === "QuestionAlreadyAnswered" || offered.failure._tag === "QuestionCancelled"
          ? Effect.never
          : open.cancelled("you", "backend_error", { content: Texts.promptFailed, is_error: true })
    )
  const closeAs = (reason: "user" | "backend_error") =>
    Effect.flatMap(
      waiting.claim("you"),
      (mine): Effect.Effect<Routed, RecordError> =>
        !mine
          ? Effect.never
          : reason === "user"
            ? open.cancelled("you", "user", { content: Texts.inputCancelled, is_error: false })
            : open.cancelled("you", "backend_error", { content: Texts.promptFailed, is_error: true })
    )
  return atPrompt(env, {
    look: (s) => (rememberable ? TurnState.rememberedAnswer(s, call.name, question.id) : Option.none()),
    prompt: () => {
      const label = promptLabel(env, call.name, question.id)
      const request = {
        toolName: call.name,
        question,
        arguments: open.shown.arguments,
        position: positionOf(env, call),
        ...(open.approval ? { approval: true } : {})
      }
      return env.prompts.question(label === undefined ? request : { ...request, label })
    },
    answered: (prompted) => {
      switch (prompted._tag) {
        case "Remembered":
          return offer(prompted.value, "remembered", false)
        case "Typed":
          return offer(prompted.value.answer, "you", prompted.value.remember && rememberable)
        case "Failed":
          return closeAs(prompted.error._tag === "PromptCancelled" ? "user" : "backend_error")
      }
    }
  })
}

/** A person answers: at this terminal's prompt or from any other answerer, whichever is first. */
export const ask = (open: OpenInquiry): Effect.Effect<Routed, RecordError, Scope.Scope> =>
  Effect.flatMap(open.registered(), (waiting) => {
    // Exactly one offer wins: the terminal's side records its own, this side everyone else's.
    const other = Effect.flatMap(
      waiting.answer,
      (offered): Effect.Effect<Routed, RecordError> =>
        TERMINAL.has(offered.by) ? Effect.never : open.accept(offered, offered.remember === true)
    )
    return open.env.prompts.interactive ? Effect.raceFirst(prompt(open, waiting), other) : other
  })

/** Everyone attached left while the question waited for them (it is still registered). */
export const Deserted = { _tag: "Deserted" } as const

/**
 * Nobody at this process's terminal, but a person is attached from another
 * (`conversation attach`): the question waits for any answerer while anyone
 * is attached. When the last one leaves with the question still open, it
 * ends {@link Deserted}, still registered for the caller's scope: the caller
 * follows the `detached` policy from there.
 */
export const attend = (open: OpenInquiry): Effect.Effect<Routed | typeof Deserted, RecordError, Scope.Scope> =>
  Effect.flatMap(open.registered(), (waiting) =>
    // Only the waiting races: an answer that won is recorded whole, whoever leaves meanwhile.
    Effect.flatMap(
      Effect.raceFirst(waiting.answer, Effect.as(open.env.answers.deserted, undefined)),
      (offered): Effect.Effect<Routed | typeof Deserted, RecordError> =>
        offered === undefined ? Effect.succeed(Deserted) : open.accept(offered, offered.remember === true)
    )
  )

/**
 * Nobody to ask yet: any answerer may answer until `wait_timeout`, then the
 * question is deferred (and the run says so).
 */
export const wait = (open: OpenInquiry): Effect.Effect<Routed, RecordError, Scope.Scope> =>
  Effect.gen(function* () {
    const waiting = yield* open.registered()
    const timeout = ConfigData.waitTimeoutMs(open.env.config)
    const offered = yield* Effect.timeoutOption(waiting.answer, Duration.millis(timeout))
    if (Option.isSome(offered)) return yield* open.accept(offered.value, offered.value.remember === true)
    yield* open.env.events.publish(
      RunEvent.make.Warning({
        text: `Nobody answered "${open.question.text.split("\n")[0]}" (${open.id}) within ${Duration.format(Duration.millis(timeout))}; it is deferred.`
      })
    )
    return Routed.Deferred({ inquiryId: open.id })
  })
