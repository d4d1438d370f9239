/**
 * How `parley conversation answer` reads an answer (docs/decisions.md#answer-from-anywhere):
 * typed text by the question's answer type (or JSON with `--json`), and a
 * secret — only a running turn takes one — read from the terminal without
 * echo (or stdin with `--stdin`), never taken from argv. Where the value
 * goes is `programs/Answer.deliver`'s to decide.
 *
 * @example
 * ```sh
 * parley conversation answer 17738399468 call_1.deploy.1 yes
 * printf 'hunter2' | parley conversation answer 17738399468 call_1.token.1 --stdin
 * ```
 */
import * as Effect from "effect/Effect"
import * as Stdin from "../../layers/file/Stdin.ts"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import * as AnswerFit from "../../domain/tool/AnswerFit.ts"
import * as Answer from "../../programs/Answer.ts"
import * as PersonTerminal from "../../layers/prompt/PersonTerminal.ts"
import * as Usage from "../Usage.ts"

const PATH = ["parley", "conversation", "answer"]

/** What the command was given. */
export interface Given {
  readonly inquiry: string | undefined
  readonly value: string | undefined
  readonly json: boolean
  readonly stdin: boolean
  readonly format: "text" | "json"
}

/** The terminal's prompter, for the scope's life. */
export const prompter = PersonTerminal.promptBackend()

/** The value for `q`: parsed from argv, or (a secret) read without echo or from stdin. */
export const valueFor = (q: Answer.OpenQuestion, given: Given) =>
  Effect.gen(function* () {
    if (q.question.answer_type.type === "secret") {
      if (given.value !== undefined)
        return yield* Usage.failure(
          PATH,
          `${q.inquiryId} asks for a secret, which is never taken from the command line: leave VALUE out to type it without echo, or pipe it with --stdin.`
        )
      if (given.stdin) return (yield* Stdin.secret) as Schema.Json
      if (!PersonTerminal.isInteractive())
        return yield* Usage.failure(
          PATH,
          `${q.inquiryId} asks for a secret: type it at a terminal (no echo), or pipe it with --stdin.`
        )
      const prompts = yield* prompter
      const reply = yield* prompts
        .question({ toolName: q.tool, question: q.question })
        .pipe(Effect.catchTag("PromptCancelled", () => Effect.interrupt))
      return reply.answer as Schema.Json
    }
    if (given.value === undefined)
      return yield* Usage.failure(
        PATH,
        `give the answer after the question id: ${AnswerFit.expected(q.question.answer_type)} (with --json, write the flag after the value: VALUE --json).`
      )
    const parsed = Answer.parseText(q, given.value, given.json)
    return Result.isFailure(parsed) ? yield* parsed.failure : parsed.success
  })
