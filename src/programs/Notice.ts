/**
 * What a run tells whoever watches it, as it happens (issue 14 item 1): a
 * tool call started (or resumed), a tool call finished, a question closed
 * (who answered, and what — a secret only as `Redacted`), a reply ended
 * (its stop reason), and the run stopped early with its turn still
 * incomplete or not.
 *
 * The programs emit notices through one optional callback (`onNotice` in the
 * query, turn and coordinator inputs); the CLI renders them as status lines
 * on the terminal and collects them for `query --format json`. Notices carry
 * no terminal concerns and nothing that is not already in the conversation.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import type * as Notice from "parley/programs/Notice"
 * const onNotice = (n: Notice.Notice) => Effect.sync(() => n._tag === "ToolFinished" && console.log(n.call.name))
 * ```
 */
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type { Json } from "effect/Schema"
import type { CancellationReason } from "../domain/event/CancellationReason.ts"
import type { InquiryId } from "../domain/event/InquiryId.ts"
import type { ToolCallRequest } from "../domain/event/ToolCallRequest.ts"
import type { IncompleteSummary } from "../domain/stream/IncompleteTurn.ts"
import type { Question } from "../domain/tool/Question.ts"
import type { ToolResponse } from "../services/Executor.ts"
import type { StopReason } from "../services/Provider.ts"

/**
 * Who closed a question: the person at the prompt, the model's side call,
 * a static answer in config, an answer remembered this turn, or parley
 * itself (a secret refused, an open question cancelled by an interrupt).
 */
export type Answerer = "you" | "assistant" | "config" | "remembered" | "parley"

/** How a question closed. A secret answer is never carried: it is `Redacted`. */
export type QuestionOutcome = Data.TaggedEnum<{
  Answered: { readonly answer: Json }
  Redacted: {}
  Cancelled: { readonly reason: CancellationReason }
}>
export const QuestionOutcome = Data.taggedEnum<QuestionOutcome>()

export type Notice = Data.TaggedEnum<{
  /** A call passed its permission step and its tool is about to run (`resumed`: in a resumed turn). */
  ToolStarted: { readonly call: ToolCallRequest; readonly resumed: boolean }
  /** A call's response is recorded (`ran`: false when it was skipped before running). */
  ToolFinished: { readonly call: ToolCallRequest; readonly ran: boolean; readonly response: ToolResponse }
  /** A question's response is recorded. */
  QuestionClosed: {
    readonly call: ToolCallRequest
    readonly inquiryId: InquiryId
    readonly question: Question
    readonly by: Answerer
    readonly outcome: QuestionOutcome
  }
  /** A model reply is recorded. */
  ReplyFinished: { readonly stopReason: StopReason | undefined }
  /** The run failed or was interrupted; `incomplete` is the turn's state as it was left (null: complete). */
  Stopped: { readonly incomplete: IncompleteSummary | null }
}>
export const Notice = Data.taggedEnum<Notice>()

/** The callback the programs take. */
export type OnNotice = (notice: Notice) => Effect.Effect<void>
