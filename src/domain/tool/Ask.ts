/**
 * What `parley ask` records (contract §8 "Any program asks"): one question as
 * a turn of its own — the question as the `chat_request`, a
 * `tool_call_request` named `ask` whose arguments are the question, the
 * `inquiry_request` / `inquiry_response` pair, a `tool_call_response` and a
 * `chat_response` saying how it closed (a turn JP reads as complete) — and
 * how its answer reads back as text. Pure: the program (`programs/Ask.ts`)
 * records and waits.
 *
 * An asker's call is marked (`parley_ask` in the call's metadata, and an id
 * `ask_…`), so a question whose asker was killed is told from a tool's
 * question waiting on disk: nobody but its asker will ever read its answer,
 * and the next parley process that holds the conversation closes it.
 *
 * @example
 * ```ts
 * import * as Ask from "parley/domain/tool/Ask"
 * const question = Ask.question("Deploy to prod?", { type: "boolean" })
 * Ask.answerText(true) // "yes"
 * ```
 *
 * @since 0.1.0
 */
import type * as Schema from "effect/Schema"
import type { EventMetadata } from "../event/EventMetadata.ts"
import * as EventMetadataKeys from "../event/EventMetadata.ts"
import type { InquiryRequest } from "../event/InquiryRequest.ts"
import type { StreamEntry } from "../event/ConversationEvent.ts"
import type { ToolCallRequest } from "../event/ToolCallRequest.ts"
import * as PermissionInquiry from "../event/PermissionInquiry.ts"
import { Question, QuestionId } from "./Question.ts"

/** The name of the recorded call. */
export const TOOL = "ask"

/** The question id of an ask (its inquiry id is `<call>.ask.1`). */
// A literal that passes `questionIdProblem` (non-empty, no "."): branded without a decode on every ask.
export const QUESTION_ID = QuestionId.make("ask")

/** The prefix of an asker's call ids. */
export const CALL_PREFIX = "ask_"

/** The metadata key that marks an asker's call. */
export const MARK_KEY = "parley_ask"

/** The metadata of an asker's `tool_call_request`. */
export const callMetadata: EventMetadata = { [MARK_KEY]: true }

/** The answer types an ask takes (contract §6). */
export type AskType = "boolean" | "text" | "select" | "secret"

/** What is asked, besides the text. */
export interface QuestionOptions {
  readonly type: AskType
  readonly options?: ReadonlyArray<string> | undefined
  readonly default?: Schema.Json | undefined
  readonly context?: string | undefined
}

/** The question of an ask. */
export const question = (text: string, options: QuestionOptions): Question =>
  new Question({
    id: QUESTION_ID,
    text,
    answer_type:
      options.type === "select" ? { type: "select", options: [...(options.options ?? [])] } : { type: options.type },
    ...(options.default !== undefined ? { default: options.default } : {}),
    ...(options.context !== undefined ? { context: options.context } : {}),
    // Only a person answers a program's question: never the assistant.
    exclusive: true
  })

/** The recorded call's arguments: the question as asked (and its key, so a second asker can join it). */
export const callArguments = (q: Question, key: string | undefined): Schema.JsonObject => ({
  question: q.text,
  type: q.answer_type.type,
  ...(q.answer_type.type === "select" ? { options: [...q.answer_type.options] } : {}),
  ...(q.default !== undefined ? { default: q.default } : {}),
  ...(q.context !== undefined ? { context: q.context } : {}),
  ...(key !== undefined ? { key } : {})
})

/** An answer as the asker prints it: `yes`/`no` for a boolean, a string as it is, anything else as JSON. */
export const answerText = (answer: Schema.Json): string =>
  typeof answer === "boolean" ? (answer ? "yes" : "no") : typeof answer === "string" ? answer : JSON.stringify(answer)

/** The `tool_call_response` of an ask, by how it closed (a secret's value is never in it). */
export const response = (
  closed:
    | { readonly _tag: "Answered"; readonly answer: Schema.Json }
    | { readonly _tag: "Redacted" }
    | { readonly _tag: "Cancelled"; readonly reason: string }
): { readonly content: string; readonly is_error: boolean } =>
  closed._tag === "Answered"
    ? { content: answerText(closed.answer), is_error: false }
    : closed._tag === "Redacted"
      ? { content: "(a secret was answered; it is not recorded)", is_error: false }
      : closed.reason === "user"
        ? { content: "Tool input cancelled by user.", is_error: true }
        : { content: `The question was closed without an answer (${closed.reason}).`, is_error: true }

/** Whether `call` is an asker's (its mark, not its name: an approval's call carries the asking program's tool name). */
export const isAskCall = (call: ToolCallRequest): boolean => call.metadata[MARK_KEY] === true

/** Whether a call id is an asker's (a cheap filter before the call itself is read). */
export const isAskCallId = (id: string): boolean => id.startsWith(CALL_PREFIX)

/** The key an open ask was asked with, if any. */
export const keyOf = (args: Schema.JsonObject | undefined): string | undefined => {
  const key = args?.["key"]
  return typeof key === "string" ? key : undefined
}

/**
 * The approval remembered for `tool` in a conversation's recorded events
 * (`always` → `"y"`, `never` → `"n"`; the latest wins), or undefined.
 */
export const rememberedApproval = (entries: ReadonlyArray<StreamEntry>, tool: string): "y" | "n" | undefined => {
  const calls = new Map<string, string>()
  const requests = new Map<string, InquiryRequest>()
  let found: "y" | "n" | undefined
  for (const entry of entries) {
    if (entry.type === "tool_call_request") {
      if (isAskCall(entry)) calls.set(entry.id, entry.name)
    } else if (entry.type === "inquiry_request") requests.set(entry.id, entry)
    else if (entry.type === "inquiry_response") {
      const request = requests.get(entry.id)
      if (request === undefined || calls.get(callIdOf(entry.id)) !== tool) continue
      const decision = PermissionInquiry.decisionOf(request, entry)
      if (decision?.remembered === true) found = decision.decision
    }
  }
  return found
}

/** The call id of an inquiry id `<call>.<question>.<attempt>`. */
const callIdOf = (inquiryId: string): string => inquiryId.split(".").slice(0, -2).join(".")

/** The metadata of an approval's remembered answer (`always`/`never`). */
export const rememberedMetadata: EventMetadata = { [EventMetadataKeys.rememberedAnswer]: true }
