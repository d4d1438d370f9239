/**
 * What a run whose questions were deferred (docs/decisions.md#detached-policy)
 * says and exits with: shared by `query` and `conversation attach`, and a
 * module of its own so that attach's fast path (`conversation/AttachFast.ts`)
 * does not load the query command to print it.
 *
 * @example
 * ```ts
 * import { DEFERRED_EXIT, deferredLines } from "./DeferredLines.ts"
 * declare const report: Parameters<typeof deferredLines>[0]
 * process.stderr.write(deferredLines(report, { storage: undefined, config: undefined }, undefined) + "\n")
 * process.exitCode = DEFERRED_EXIT
 * ```
 */
import * as PermissionInquiry from "../domain/event/PermissionInquiry.ts"
import * as RunReport from "../domain/run/RunReport.ts"
import * as ConversationId from "../domain/storage/ConversationId.ts"
import * as AnswerFit from "../domain/tool/AnswerFit.ts"
import * as Hint from "./Hint.ts"
import * as Style from "./Style.ts"

/** The exit code of a run whose questions were deferred (docs/decisions.md#detached-policy): not a failure, not done. */
export const DEFERRED_EXIT = 3

/** What stderr says of a deferred run: each open question, with the command that answers it (a secret is asked at resume). */
export const deferredLines = (report: RunReport.RunReport, hint: Hint.Context, unsent: string | undefined): string => {
  const id = report.conversationId!
  const lines = [
    `parley: ${ConversationId.display(id as ConversationId.ConversationId)} is waiting for input; nobody could be asked:`
  ]
  for (const q of RunReport.openQuestions(report)) {
    // An approval asked each time (an MCP server's page or form) takes yes or no only.
    const rememberable = q.persistence !== "none"
    lines.push(
      `  ${q.id}  ${Style.printable(q.tool)}: ${Style.printable(q.question.split("\n")[0]!)} [${q.kind === "approval" ? PermissionInquiry.expectedOf(rememberable) : AnswerFit.expected(RunReport.answerTypeOf(q))}]`
    )
    const placeholder = AnswerFit.placeholder(RunReport.answerTypeOf(q), q.kind, rememberable)
    lines.push(
      placeholder === undefined
        ? "    a secret: asked when the turn is resumed in a terminal"
        : `    ${Hint.answer(id, q.id, { placeholder }, hint)}`
    )
  }
  lines.push(`Then resume the turn: ${Hint.resume(id, hint)}`)
  if (unsent !== undefined)
    lines.push("Your new message was not sent: the turn is still waiting for input. Send it once the turn is complete.")
  return lines.join("\n")
}
