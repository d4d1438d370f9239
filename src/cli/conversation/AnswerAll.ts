/**
 * `parley conversation answer ID --all` (docs/questions-and-approvals.md#all-of-a-turns-questions-at-once):
 * every open question of the turn is asked in turn — at the terminal's
 * prompt, or read one line each from stdin (typed text, or JSON with
 * `--json`) — and then the answers are given together, all or none
 * (`programs/Answer.deliverAll`): a value that does not fit, or a question
 * another answerer closed meanwhile, records nothing and is named.
 *
 * @example
 * ```sh
 * parley conversation answer 17738399468 --all
 * printf 'yes\ngreen\n' | parley conversation answer 17738399468 --all
 * ```
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Stdin from "../../layers/file/Stdin.ts"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import type * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as Answer from "../../programs/Answer.ts"
import { AnswersDoNotFit } from "../../services/Refusals.ts"
import * as Hint from "../Hint.ts"
import * as PersonTerminal from "../../layers/prompt/PersonTerminal.ts"
import * as Usage from "../Usage.ts"
import * as AnswerValue from "./AnswerValue.ts"

const PATH = ["parley", "conversation", "answer"]

/** One value per open question from stdin's lines, each read by its question's type; every misfit is named. */
const fromStdin = (open: ReadonlyArray<Answer.OpenQuestion>, json: boolean) =>
  Effect.gen(function* () {
    const reader = yield* Stdin.lines
    const answers: Record<string, Schema.Json> = {}
    const misfits: Array<AnswersDoNotFit["answers"][number]> = []
    for (const q of open) {
      const line = yield* reader.next
      if (line.done === true)
        return yield* Usage.failure(PATH, `stdin ended before an answer to ${q.inquiryId}: give one line per question.`)
      const typed = Answer.parseText(q, String(line.value), json)
      if (Result.isSuccess(typed)) answers[q.inquiryId] = typed.success
      else misfits.push({ inquiry_id: q.inquiryId, reason: typed.failure.reason, expected: typed.failure.expected })
    }
    if (misfits.length > 0) return yield* new AnswersDoNotFit({ answers: misfits })
    return answers
  })

/** One value per open question, asked at the terminal's prompt (Ctrl-C stops: nothing is recorded). */
const fromTerminal = (open: ReadonlyArray<Answer.OpenQuestion>) =>
  Effect.gen(function* () {
    const prompts = yield* AnswerValue.prompter
    const answers: Record<string, Schema.Json> = {}
    for (const q of open) {
      const reply = yield* prompts
        .question({ toolName: q.tool, question: q.question })
        .pipe(Effect.catchTag("PromptCancelled", () => Effect.interrupt))
      answers[q.inquiryId] = reply.answer as Schema.Json
    }
    return answers
  })

/** Asks every open question of the turn, then gives the answers together, all or none. */
export const answerAll = (
  id: ConversationId.ConversationId,
  turn: { readonly pid: number | undefined; readonly open: ReadonlyArray<Answer.OpenQuestion> },
  f: { readonly json: boolean; readonly format: "text" | "json" },
  hint: Hint.Context
) =>
  Effect.gen(function* () {
    const running = turn.pid !== undefined
    // A secret is never recorded: with no running turn to take it, it is left for the resumed turn to ask.
    const asked = turn.open.filter((q) => running || q.question.answer_type.type !== "secret")
    const left = turn.open.filter((q) => !asked.includes(q))
    if (asked.length === 0 && left.length === 0) return yield* Console.error(`${id} has no open question.`)
    const answers = PersonTerminal.isInteractive() ? yield* fromTerminal(asked) : yield* fromStdin(asked, f.json)
    const delivered = asked.length === 0 ? { outcome: "recorded", answered: [] } : yield* Answer.deliverAll(id, answers)
    if (f.format === "json") return yield* Console.log(JSON.stringify(delivered))
    const n = delivered.answered.length
    const what = `${n} question${n === 1 ? "" : "s"}`
    yield* Console.error(
      delivered.outcome === "delivered"
        ? `Answered ${what}; the running turn (pid ${turn.pid}) goes on with them.`
        : `Recorded the answers to ${what}; resume the turn to hand them to the tools: ${Hint.resume(id, hint)}`
    )
    for (const q of left)
      yield* Console.error(
        `${q.inquiryId} asks for a secret: it is asked when the turn is resumed in a terminal: ${Hint.resume(id, hint)}`
      )
  })
