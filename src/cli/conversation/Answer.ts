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
 * tools without asking. The commands it prints repeat `--storage` and
 * `--config`, and the run's `--script` (default `$PARLEY_SCRIPT`) and
 * `--detached-policy` when this command was given them (`Hint.ts`): it takes
 * those two only to repeat them.
 *
 * @example
 * ```sh
 * parley conversation answer 17738399468
 * parley conversation answer 17738399468 call_1.overwrite.1 yes
 * ```
 */
import * as PermissionInquiry from "../../domain/event/PermissionInquiry.ts"
import * as QuestionPolicy from "../../domain/tool/QuestionPolicy.ts"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as AnswerFit from "../../domain/tool/AnswerFit.ts"
import * as Answer from "../../programs/Answer.ts"
import { ConversationStore } from "../../services/ConversationStore.ts"
import { SecretNeedsRunningTurn } from "../../services/Refusals.ts"
import * as ErrorLine from "../ErrorLine.ts"
import { detachedPolicyFlag } from "../DetachedPolicyFlag.ts"
import { formatFlag } from "../Format.ts"
import { scriptFlag, scriptPath } from "../ScriptFlag.ts"
import * as Hint from "../Hint.ts"
import * as HostTurns from "../../layers/host/HostTurns.ts"
import * as AnswerAll from "./AnswerAll.ts"
import * as AnswerValue from "./AnswerValue.ts"
import * as PersonTerminal from "../../layers/prompt/PersonTerminal.ts"
import { storage } from "../Root.ts"
import * as Style from "../Style.ts"
import { parseIdArgument, withStore } from "./Shared.ts"

/** The text listing: each question, what fits, and the command that answers it. */
const listing = (
  id: ConversationId.ConversationId,
  open: ReadonlyArray<Answer.OpenQuestion>,
  hint: Hint.Context,
  running = false
): string => {
  if (open.length === 0) return `${ConversationId.display(id)} has no open question.`
  const lines = [`Open questions of ${ConversationId.display(id)}:`]
  for (const q of open) {
    const type = q.question.answer_type
    const approval = q.kind === "approval"
    // An approval asked each time (an MCP server's page or form) takes yes or no only.
    const rememberable = QuestionPolicy.of(q.question).rememberable
    const review = PermissionInquiry.isReviewQuestion(q.question.id)
    const expected = approval ? PermissionInquiry.expectedOf(rememberable, review) : AnswerFit.expected(type)
    lines.push(
      `  ${q.inquiryId}  ${Style.printable(q.tool)}: ${Style.printable(q.question.text.split("\n")[0]!)} [${expected}]`
    )
    const placeholder = AnswerFit.placeholder(type, q.kind ?? "question", rememberable)
    lines.push(
      placeholder === undefined
        ? running
          ? `    a secret: ${Hint.answer(id, q.inquiryId, undefined, hint)} (typed without echo, or piped with --stdin)`
          : `    a secret: asked when the turn is resumed in a terminal (${Hint.resume(id, hint)})`
        : `    ${Hint.answer(id, q.inquiryId, { placeholder }, hint)}`
    )
  }
  return lines.join("\n")
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
      const prompts = yield* PersonTerminal.promptBackend()
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

/** What the command was given. */
interface Flags {
  readonly inquiry: Option.Option<string>
  readonly value: Option.Option<string>
  readonly json: boolean
  readonly stdin: boolean
  readonly all: boolean
  readonly format: "text" | "json"
}

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
    all: Flag.Boolean("all").pipe(
      Flag.withDescription(
        "Answer every open question, then record all or none (asked at a terminal; else one line each from stdin)"
      ),
      Flag.withDefault(false)
    ),
    format: formatFlag,
    script: scriptFlag.pipe(Flag.withDescription("The run's --script, repeated in the resume command printed")),
    detachedPolicy: detachedPolicyFlag.pipe(
      Flag.withDescription("The run's --detached-policy, repeated in the resume command printed")
    )
  },
  (f) =>
    withStore(
      Effect.scoped(
        Effect.gen(function* () {
          const { dir, given, configGiven } = yield* storage
          const hint = {
            storage: given,
            config: configGiven,
            script: scriptPath(f.script),
            detachedPolicy: Option.getOrUndefined(f.detachedPolicy)
          }
          const id = yield* parseIdArgument(f.id, "answer")
          // A running turn takes the answer itself (docs/decisions.md#answer-from-anywhere); else it goes into the waiting turn on disk.
          return yield* run(f, id, hint).pipe(
            Effect.provide(HostTurns.layer(dir)),
            Effect.mapError((e) => (Predicate.isTagged(e, "ConversationNotFound") ? e : ErrorLine.failure(e, hint)))
          )
        })
      )
    )
).pipe(Command.withDescription("List or answer the open questions of a turn waiting for input"))

/** `answer ID`: the open questions listed (or, at a terminal with the turn on disk, asked one by one). */
const list = (id: ConversationId.ConversationId, turn: Answer.TurnAt, f: Flags, hint: Hint.Context) =>
  Effect.gen(function* () {
    if (turn.pid === undefined && PersonTerminal.isInteractive() && f.format === "text") return yield* askAll(id, hint)
    if (f.format === "json") return yield* Console.log(JSON.stringify(turn.open.map(Answer.row), null, 2))
    const text = listing(id, turn.open, hint, turn.pid !== undefined)
    return yield* Console.log(turn.pid === undefined ? text : `${text}\n(the turn is running: pid ${turn.pid})`)
  })

const run = (f: Flags, id: ConversationId.ConversationId, hint: Hint.Context) =>
  Effect.gen(function* () {
    const turn = yield* Answer.whereOpen(id)
    if (f.all) return yield* AnswerAll.answerAll(id, turn, f, hint)
    const inquiry = Option.getOrUndefined(f.inquiry)
    if (inquiry === undefined) return yield* list(id, turn, f, hint)
    const given = {
      inquiry,
      value: Option.getOrUndefined(f.value),
      json: f.json,
      stdin: f.stdin,
      format: f.format
    }
    const q = turn.open.find((o) => o.inquiryId === inquiry)
    // A question not open is refused by `deliver`, which says who closed it; a secret is never recorded.
    if (q !== undefined && turn.pid === undefined && q.question.answer_type.type === "secret")
      return yield* new SecretNeedsRunningTurn({ id, inquiry_id: inquiry })
    const value = q === undefined ? (given.value ?? null) : yield* AnswerValue.valueFor(q, given)
    const delivered = yield* Answer.deliver(id, inquiry, value)
    if (delivered._tag === "Delivered") {
      if (f.format === "json")
        return yield* Console.log(JSON.stringify({ id: inquiry, delivered: true, pid: turn.pid }))
      return yield* Console.error(`Answered ${inquiry}; the running turn (pid ${turn.pid}) goes on with it.`)
    }
    if (f.format === "json") {
      return yield* Console.log(
        JSON.stringify({
          id: delivered.inquiryId,
          answer: delivered.answer,
          still_open: delivered.stillOpen.map((q) => q.inquiryId)
        })
      )
    }
    const next =
      delivered.stillOpen.length > 0
        ? `${delivered.stillOpen.length} question${delivered.stillOpen.length === 1 ? "" : "s"} still open: ${delivered.stillOpen.map((q) => q.inquiryId).join(", ")}.`
        : `No question left open; resume the turn: ${Hint.resume(id, hint)}`
    yield* Console.error(`Recorded the answer to ${delivered.inquiryId}. ${next}`)
  })
