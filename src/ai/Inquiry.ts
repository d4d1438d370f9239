/**
 * Asking a question from inside an `effect/ai` tool handler (docs/library.md#bridges-to-effectai-parleyai;
 * RFD 028/082's model of a tool question).
 *
 * A handler run by `executorFromToolkit` finds an {@link Inquiry} in
 * its context: the call being run and the answers gathered so far. `ask`
 * either returns the answer already given, or ends this run of the handler
 * with the defect {@link Pending} — the call ends with `NeedsInput`, parley records the
 * question, has it answered (config, the person, the model), records the
 * answer, and runs the handler again from the start with every answer so
 * far. A resumed turn rebuilds those answers from the recorded events, so a
 * handler interrupted by a crash picks up where the conversation left it.
 *
 * Because the handler runs again from the start, ask before you act: a side
 * effect before an `ask` happens once per question. Answers are kept per
 * question id, so give each question its own id, the same on every run (a
 * second, different question under an id already asked fails the call). `Pending` is a defect,
 * not a typed failure, so a handler's `Effect.catch`, `orElse` or `retry` cannot swallow it and
 * a handler's type is exactly what `effect/ai`'s `Toolkit` expects; parley treats a run that
 * raised it as asking, whatever the handler did next (even after `catchCause`).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { Inquiry } from "parley/ai"
 *
 * const write = (path: string) =>
 *   Effect.gen(function*() {
 *     const overwrite = yield* Inquiry.ask(Inquiry.boolean("overwrite", `Overwrite ${path}?`)) // boolean
 *     const branch = yield* Inquiry.ask(Inquiry.select("branch", "Which branch?", ["main", "dev"])) // "main" | "dev"
 *     return overwrite ? `written to ${path} on ${branch}` : "kept"
 *   })
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { AnswerType } from "../domain/tool/AnswerType.ts"
import { Question, QuestionId } from "../domain/tool/Question.ts"
import type { Answers, ExecutionContext, ToolCall } from "../services/Executor.ts"

/**
 * The handler's run of one tool call: what parley passes in, and where
 * `ask` leaves the question that ends the run.
 */
export interface Inquiry {
  /** The call as the model made it. */
  readonly call: ToolCall
  /** Answers by question id, the latest per id (from this turn, or rebuilt on resume). */
  readonly answers: Answers
  /** The conversation and project directory the call runs for. */
  readonly context: ExecutionContext
  /** Records the question this run stops at (called by {@link ask}). */
  pause(question: Question): void
}

/** The run outside any parley tool run: `ask` refuses it (see {@link Inquiry}). */
const outsideRun: Inquiry = {
  call: { id: "", name: "", arguments: {} },
  answers: {},
  context: { conversationId: "", root: "" },
  pause: () => undefined
}

/**
 * Where a handler finds its run. A reference, not a required service: a
 * handler's requirements stay the tool's own (what `Toolkit.toLayer` and
 * `executorFromToolkit` both accept), and `ask` outside a parley run (the
 * default value) ends with a defect that says how to run it.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { Inquiry } from "parley/ai"
 * const toolName = Effect.map(Effect.service(Inquiry.Inquiry), (run) => run.call.name)
 * ```
 */
export const Inquiry: Context.Reference<Inquiry> = Context.Reference<Inquiry>("parley/ai/Inquiry", {
  defaultValue: () => outsideRun
})

const outside = () =>
  new Error(
    "Inquiry.ask ran outside a parley tool run: run the tool's handler through executorFromToolkit (parley/ai), which provides the call and its answers."
  )

/**
 * This run of the handler stopped at an unanswered question. Raised by
 * {@link ask} as a defect; `executorFromToolkit` turns it into `NeedsInput`.
 */
export class Pending extends Schema.TaggedError<Pending>()("parley/ai/Pending", {
  question: Question
}) {
  override get message() {
    return `The tool asked "${this.question.text}" (${this.question.id}) and waits for the answer; run it through parley's executorFromToolkit, which has it answered and runs the tool again.`
  }
}

/**
 * A question and how its answer reads: the domain `Question` plus a typed
 * reading of the recorded JSON answer.
 */
export interface Ask<A> {
  readonly question: Question
  /** The answer as `A`, or `undefined` when the recorded value does not fit. */
  readonly read: (answer: Schema.Json) => A | undefined
}

/** Display options of a question. */
export interface AskOptions<A> {
  /** The suggested answer (shown at the prompt; persisted — never put a secret here). */
  readonly default?: A
  /** Context shown before the question (a diff, say); never persisted. */
  readonly preamble?: string
}

const make = <A>(
  id: string,
  text: string,
  answerType: AnswerType,
  read: Ask<A>["read"],
  options: AskOptions<Schema.Json>
): Ask<A> => ({
  question: new Question({
    id: QuestionId.make(id),
    text,
    answer_type: answerType,
    ...(options.default === undefined ? {} : { default: options.default }),
    ...(options.preamble === undefined ? {} : { context: options.preamble })
  }),
  read
})

const asString = (a: Schema.Json) => (typeof a === "string" ? a : undefined)

/**
 * A yes/no question; its answer is a `boolean`.
 *
 * @example
 * ```ts
 * import { Inquiry } from "parley/ai"
 * Inquiry.boolean("overwrite", "Overwrite a.txt?", { default: false }).question.answer_type // { type: "boolean" }
 * ```
 */
export const boolean = (id: string, text: string, options: AskOptions<boolean> = {}): Ask<boolean> =>
  make(id, text, AnswerType.boolean, (a) => (typeof a === "boolean" ? a : undefined), options)

/**
 * A free-text question; its answer is a `string`.
 *
 * @example
 * ```ts
 * import { Inquiry } from "parley/ai"
 * Inquiry.text("message", "Commit message?").question.answer_type // { type: "text" }
 * ```
 */
export const text = (id: string, text: string, options: AskOptions<string> = {}): Ask<string> =>
  make(id, text, AnswerType.text, asString, options)

/**
 * A secret (typed by a person, without echo; recorded as redacted, scrubbed
 * from the tool's result); its answer is a `string`.
 *
 * @example
 * ```ts
 * import { Inquiry } from "parley/ai"
 * Inquiry.secret("token", "API token?").question.answer_type // { type: "secret" }
 * ```
 */
export const secret = (id: string, text: string, options: Omit<AskOptions<string>, "default"> = {}): Ask<string> =>
  make(id, text, AnswerType.secret, asString, options)

/**
 * A choice among `options`; its answer is one of them.
 *
 * @example
 * ```ts
 * import { Inquiry } from "parley/ai"
 * Inquiry.select("branch", "Which branch?", ["main", "dev"]).question.answer_type // { type: "select", options: ["main", "dev"] }
 * ```
 */
export const select = <const O extends string>(
  id: string,
  text: string,
  options: ReadonlyArray<O>,
  display: AskOptions<O> = {}
): Ask<O> => make(id, text, AnswerType.select(options), (a) => options.find((o) => o === a), display)

const isAsk = <A>(q: Ask<A> | Question): q is Ask<A> => "read" in q && typeof q.read === "function"

const describeAnswer = (a: Schema.Json) => (JSON.stringify(a) ?? String(a)).slice(0, 200)

/**
 * The questions each run of a handler asked, by id. An answer is kept per
 * question id, so a second, different question under an id already asked in
 * this run (a loop asking `remove` for each file) would silently get the
 * first one's answer; `ask` refuses it instead.
 */
const askedInRun = new WeakMap<Inquiry, Map<string, Question>>()

/** The earlier, different question asked under `q`'s id in this run, after recording `q`. */
const clashWith = (run: Inquiry, q: Question): Question | undefined => {
  const asked = askedInRun.get(run) ?? new Map<string, Question>()
  askedInRun.set(run, asked)
  const earlier = asked.get(q.id)
  if (earlier === undefined) {
    asked.set(q.id, q)
    return undefined
  }
  const same = earlier.text === q.text && JSON.stringify(earlier.answer_type) === JSON.stringify(q.answer_type)
  return same ? undefined : earlier
}

const clash = (earlier: Question, q: Question) =>
  new Error(
    `The tool asked two different questions under the id "${q.id}" in one run ("${earlier.text}", then "${q.text}"); answers are kept per question id, so the second would get the first one's answer. Give each question its own id (e.g. one with the item's index in it).`
  )

/**
 * The answer to `question` if it has one; otherwise ends this run of the
 * handler with the defect {@link Pending} (parley asks, then runs the handler again).
 * An answer that does not fit the question (a static answer `"yes"` for a
 * boolean question, say) ends the call with a tool error naming it, and so
 * does a second, different question under an id this run already asked
 * (answers are kept per id: give each question its own).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Schema from "effect/Schema"
 * import { Question } from "parley"
 * import { Inquiry } from "parley/ai"
 *
 * const typed = Inquiry.ask(Inquiry.boolean("overwrite", "Overwrite a.txt?")) // Effect<boolean>
 * const question = Schema.decodeUnknownSync(Question)({ id: "overwrite", text: "Overwrite a.txt?", answer_type: { type: "boolean" } })
 * const raw = Inquiry.ask(question) // Effect<Json>
 * const both = Effect.all([typed, raw])
 * ```
 */
export const ask: {
  <A>(question: Ask<A>): Effect.Effect<A>
  (question: Question): Effect.Effect<Schema.Json>
} = <A>(question: Ask<A> | Question): Effect.Effect<A | Schema.Json> =>
  Effect.flatMap(Effect.service(Inquiry), (run) => {
    if (run === outsideRun) return Effect.die(outside())
    // A Question may be a plain object of its shape (its type allows one): only an `Ask` has `read`.
    const typed: Ask<A | Schema.Json> = isAsk(question)
      ? question
      : { question: question instanceof Question ? question : new Question(question), read: (a) => a }
    const q = typed.question
    const earlier = clashWith(run, q)
    if (earlier !== undefined) return Effect.die(clash(earlier, q))
    const answer = Object.hasOwn(run.answers, q.id) ? run.answers[q.id] : undefined
    if (answer === undefined) {
      return Effect.suspend(() => {
        run.pause(q)
        return Effect.die(new Pending({ question: q }))
      })
    }
    const value = typed.read(answer)
    return value === undefined
      ? Effect.die(
          new Error(
            `The answer to "${q.text}" (${q.id}) is ${describeAnswer(answer)}, which does not fit a ${q.answer_type.type} question; if it is configured (conversation.tools.${run.call.name}.questions.${q.id}.answer), fix it there.`
          )
        )
      : Effect.succeed(value)
  })

/**
 * Every answer given to this call so far (by question id).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { Inquiry } from "parley/ai"
 * const given = Effect.map(Inquiry.answers, (answers) => Object.keys(answers))
 * ```
 */
export const answers: Effect.Effect<Answers> = Effect.map(Effect.service(Inquiry), (run) => run.answers)
