/**
 * `parley conversation answer ID [INQUIRY_ID VALUE]` (docs/decisions.md#answer-from-anywhere): the
 * open questions of a conversation whose turn is waiting for input, and
 * answering them.
 *
 * - `answer ID` lists them (text, or `--format json`: `id`, `tool`,
 *   `tool_call_id`, `question`, `answer_type`, `options`, `default`); on a
 *   terminal it asks them one by one at the prompt instead.
 * - `answer ID INQUIRY_ID VALUE` answers one: VALUE read by the question's
 *   answer type (`yes`/`no` for a boolean, one of the options for a select,
 *   text as given; a JSON value with `--json`). A value that does not fit:
 *   exit 2 with what would fit, nothing recorded. An unknown or closed id:
 *   exit 1 naming the open ones.
 * - A secret is never taken from argv; it is never recorded either, so with
 *   no running turn to take it the command says so, with the command that
 *   asks it at resume.
 *
 * Then `parley query --continue-turn --id ID` hands the answers to their
 * tools without asking.
 *
 * @example
 * ```sh
 * parley conversation answer 17738399468
 * parley conversation answer 17738399468 call_1.overwrite.1 yes
 * ```
 */
import * as PermissionInquiry from "../../domain/event/PermissionInquiry.ts"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import type * as Prompt from "effect/cli/Prompt"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as AnswerFit from "../../domain/tool/AnswerFit.ts"
import * as TerminalPromptBackend from "../../layers/prompt/TerminalPromptBackend.ts"
import * as Answer from "../../programs/Answer.ts"
import { ConversationStore } from "../../services/ConversationStore.ts"
import { AnswerDoesNotFit, QuestionAlreadyAnswered, QuestionNotOpen } from "../../services/PendingAnswers.ts"
import { CliFailure } from "../CliFailure.ts"
import { formatFlag } from "../Format.ts"
import * as Hint from "../Hint.ts"
import * as HostTurns from "../../layers/host/HostTurns.ts"
import * as AnswerRunning from "./AnswerRunning.ts"
import * as PersonTerminal from "../PersonTerminal.ts"
import { storage } from "../Root.ts"
import * as Style from "../Style.ts"
import * as Usage from "../Usage.ts"
import { parseIdArgument, withStore } from "./Shared.ts"

const PATH = ["parley", "conversation", "answer"]

/** The text listing: each question, what fits, and the command that answers it. */
const listing = (
  id: ConversationId.ConversationId,
  open: ReadonlyArray<Answer.OpenQuestion>,
  hint: Hint.Context,
  running = false
): string => {
  const storageGiven = hint.storage
  if (open.length === 0) return `${ConversationId.display(id)} has no open question.`
  const lines = [`Open questions of ${ConversationId.display(id)}:`]
  for (const q of open) {
    const type = q.question.answer_type
    const approval = q.kind === "approval"
    const expected = approval ? PermissionInquiry.approvalExpected : AnswerFit.expected(type)
    lines.push(
      `  ${q.inquiryId}  ${Style.printable(q.tool)}: ${Style.printable(q.question.text.split("\n")[0]!)} [${expected}]`
    )
    const placeholder = approval
      ? "yes|no|always|never"
      : type.type === "boolean"
        ? "yes|no"
        : type.type === "select"
          ? type.options.join("|")
          : "text"
    lines.push(
      type.type === "secret"
        ? running
          ? `    a secret: ${Hint.answer(id, q.inquiryId, undefined, { storage: storageGiven })} (typed without echo, or piped with --stdin)`
          : `    a secret: asked when the turn is resumed in a terminal (${Hint.resume(id, hint)})`
        : `    ${Hint.answer(id, q.inquiryId, { placeholder }, { storage: storageGiven })}`
    )
  }
  return lines.join("\n")
}

/** This command's own errors as the CLI shows them (exit 2: the value does not fit); the store's pass on to `withStore`. */
const rendered =
  (id: ConversationId.ConversationId, hint: Hint.Context) =>
  <E>(e: E): E | CliFailure => {
    if (e instanceof AnswerDoesNotFit) return new CliFailure({ code: 2, message: `${e.message} Nothing was recorded.` })
    if (e instanceof Answer.SecretNeedsRunningTurn)
      return new CliFailure({ code: 1, message: `${e.message}\n    ${Hint.resume(id, hint)}` })
    if (e instanceof QuestionNotOpen || e instanceof QuestionAlreadyAnswered)
      return new CliFailure({ code: 1, message: e.message })
    return e
  }

/** On a terminal: asks each open question at the prompt and records the answers, one by one (Ctrl-C stops, exit 130). */
const askAll = (id: ConversationId.ConversationId, hint: Hint.Context) =>
  Effect.scoped(
    Effect.gen(function* () {
      const session = yield* ConversationStore.use((store) => store.open(id))
      const open = yield* Answer.openQuestions(session)
      const secrets = open.filter((q) => q.question.answer_type.type === "secret")
      const asked = open.filter((q) => q.question.answer_type.type !== "secret")
      // The terminal lives as long as this command (its key reader and raw mode are scoped).
      const terminal = Context.merge(
        yield* Effect.context<Prompt.Environment>(),
        yield* Layer.build(PersonTerminal.layer)
      )
      const prompts = yield* TerminalPromptBackend.make().pipe(Effect.provideContext(terminal))
      for (const q of asked) {
        const reply = yield* prompts
          .question({ toolName: q.tool, question: q.question })
          .pipe(Effect.catchTag("PromptCancelled", () => Effect.interrupt))
        yield* Answer.record(session, q.inquiryId, { value: reply.answer })
      }
      const resume = Hint.resume(id, hint)
      if (asked.length > 0)
        yield* Console.error(
          `Answered ${asked.length} question${asked.length === 1 ? "" : "s"}; resume the turn to hand the answers to the tools: ${resume}`
        )
      else if (secrets.length === 0) yield* Console.error(`${ConversationId.display(id)} has no open question.`)
      for (const q of secrets)
        yield* Console.error(
          `${q.inquiryId} asks for a secret: it is asked when the turn is resumed in a terminal: ${resume}`
        )
    })
  )

export const answer = Command.make(
  "answer",
  {
    id: Argument.String("id").pipe(Argument.withDescription("The conversation whose turn is waiting for input")),
    inquiry: Argument.String("inquiry-id").pipe(
      Argument.withDescription("The open question to answer (as listed)"),
      Argument.optional
    ),
    value: Argument.String("value").pipe(
      Argument.withDescription("The answer (yes/no, an option, text)"),
      Argument.optional
    ),
    json: Flag.Boolean("json").pipe(Flag.withDescription("VALUE is a JSON value"), Flag.withDefault(false)),
    stdin: Flag.Boolean("stdin").pipe(
      Flag.withDescription("Read a secret answer from stdin (to a running turn)"),
      Flag.withDefault(false)
    ),
    format: formatFlag
  },
  (f) =>
    withStore(
      Effect.scoped(
        Effect.gen(function* () {
          const { dir, given, configGiven } = yield* storage
          const hint = { storage: given, config: configGiven }
          const id = yield* parseIdArgument(f.id, "answer")
          // A running turn takes the answer itself (docs/decisions.md#answer-from-anywhere); else it goes into the waiting turn on disk.
          const running = yield* HostTurns.make(dir).find(id)
          const answered = Option.isSome(running)
            ? AnswerRunning.answer(
                id,
                running.value,
                {
                  inquiry: Option.getOrUndefined(f.inquiry),
                  value: Option.getOrUndefined(f.value),
                  json: f.json,
                  stdin: f.stdin,
                  format: f.format
                },
                (open) => listing(id, open, hint, true)
              )
            : run(f, id, hint)
          return yield* answered.pipe(Effect.mapError(rendered(id, hint)))
        })
      )
    )
).pipe(Command.withDescription("List or answer the open questions of a turn waiting for input"))

interface Flags {
  readonly inquiry: Option.Option<string>
  readonly value: Option.Option<string>
  readonly json: boolean
  readonly format: "text" | "json"
}

const run = (f: Flags, id: ConversationId.ConversationId, hint: Hint.Context) =>
  Effect.gen(function* () {
    const inquiry = Option.getOrUndefined(f.inquiry)
    const value = Option.getOrUndefined(f.value)
    const interactive = PersonTerminal.isInteractive() && f.format === "text"
    if (inquiry === undefined) {
      if (interactive) return yield* askAll(id, hint)
      const open = yield* Answer.list(id)
      return yield* Console.log(
        f.format === "json" ? JSON.stringify(open.map(Answer.row), null, 2) : listing(id, open, hint)
      )
    }
    if (value === undefined) {
      const open = yield* Answer.list(id)
      const q = open.find((o) => o.inquiryId === inquiry)
      if (q === undefined)
        return yield* new QuestionNotOpen({ inquiry_id: inquiry, open: open.map((o) => o.inquiryId) })
      if (q.question.answer_type.type === "secret")
        return yield* new Answer.SecretNeedsRunningTurn({ id, inquiry_id: inquiry })
      return yield* Usage.failure(
        PATH,
        `give the answer after the question id: ${AnswerFit.expected(q.question.answer_type)} (with --json, write the flag after the value: VALUE --json).`
      )
    }
    // Typed text is read here, against the question's type; a question not open is refused by the program.
    const q = (yield* Answer.list(id)).find((o) => o.inquiryId === inquiry)
    const typed = q === undefined ? Result.succeed<Schema.Json>(value) : AnswerRunning.typed(q, value, f.json)
    if (Result.isFailure(typed)) return yield* typed.failure
    const recorded = yield* Answer.answer(id, inquiry, { value: typed.success })
    if (f.format === "json") {
      return yield* Console.log(
        JSON.stringify({
          id: recorded.inquiryId,
          answer: recorded.answer,
          still_open: recorded.stillOpen.map((q) => q.inquiryId)
        })
      )
    }
    const next =
      recorded.stillOpen.length > 0
        ? `${recorded.stillOpen.length} question${recorded.stillOpen.length === 1 ? "" : "s"} still open: ${recorded.stillOpen.map((q) => q.inquiryId).join(", ")}.`
        : `No question left open; resume the turn: ${Hint.resume(id, hint)}`
    yield* Console.error(`Recorded the answer to ${recorded.inquiryId}. ${next}`)
  })
