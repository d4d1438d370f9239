/**
 * A permission decision recorded as an inquiry
 * (docs/decisions.md#permission-decisions-recorded): the moment the
 * person answers `Run local write_note tool? [y/Y/n/N]`, before the tool
 * starts, parley records an `inquiry_request` and its `inquiry_response` in
 * one append, so a run killed while the approved call still runs leaves the
 * decision on disk (RFD 023 "Incremental Persistence": what the person
 * answered is persisted when answered).
 *
 * JP does not record permission prompts (RFD 082 Non-Goals: "`RunTool` …
 * prompts are not inquiry events today"), so the shape is parley's, built
 * from RFD 082's own parts so every reader handles it as any tool question:
 * - id `<tool_call_id>.__permission__.<attempt>` (three segments; the middle
 *   one is RFD 082's permission cache key suffix);
 * - source `{"source":"tool","name":<tool>}`, the question the prompt shows
 *   (`boolean`), and `metadata.parley_permission = true` on the request — the
 *   marker readers go by (a tool may name its own question `__permission__`);
 * - the response `answered` `true` (run) or `false` (skip), with
 *   `parley_remembered` when the person typed a capital (`Y`/`N`: for the
 *   rest of the turn), as a remembered tool answer is.
 *
 * What a resumed turn does with it (RFD 023 "Turn Loop Resumption": the turn
 * state, persisted inquiry responses included, is rebuilt from the turn's
 * events, and the calls without a response run again): a call with a
 * recorded decision is not asked again — `y` approved that call, which is
 * not done yet, so it runs; `n` skips it — and `Y`/`N` answer the tool's
 * other calls in the turn too. A call never decided is asked as before.
 *
 * @example
 * ```ts
 * import * as PermissionInquiry from "parley/domain/event/PermissionInquiry"
 * import { InquiryId, Timestamp } from "parley"
 *
 * const at = Timestamp.make("2026-03-05 19:31:45.7")
 * const id = InquiryId.forToolQuestion("call_1", PermissionInquiry.questionId, 1)
 * const [request, response] = PermissionInquiry.record(at, id, { toolName: "write_note", kind: "local" }, "Y")
 * PermissionInquiry.decisionOf(request, response) // { decision: "y", remembered: true }
 * ```
 *
 * @since 0.1.0
 */
import type * as Schema from "effect/Schema"
import type { JsonObject } from "effect/Schema"
import * as EventMetadata from "./EventMetadata.ts"
import * as JsonText from "../storage/JsonText.ts"
import * as Events from "./Events.ts"
import type { InquiryId } from "./InquiryId.ts"
import type { InquiryRequest } from "./InquiryRequest.ts"
import type { InquiryAnswered, InquiryResponse } from "./InquiryResponse.ts"
import { InquirySource } from "./InquirySource.ts"
import type { Timestamp } from "./Timestamp.ts"

/** The question id of a permission inquiry (RFD 082's `<tool>.__permission__` cache key suffix). */
export const questionId = "__permission__"

/** What the person typed: `y` run, `Y` run and remember for the turn, `n` skip, `N` skip and remember. */
export type Typed = "y" | "Y" | "n" | "N"

/** How a tool runs, as the prompt says it. */
export type ToolKindText = "built-in" | "local" | "MCP"

/** The prompt's question: `Run local write_note tool?`. */
export const text = (kind: ToolKindText, toolName: string): string => `Run ${kind} ${toolName} tool?`

/** The metadata that marks a permission inquiry's request. */
const MARK: EventMetadata.EventMetadata = { [EventMetadata.rememberedPermission]: true }

/** The metadata of a permission inquiry's request (an approval deferred as a question carries it too: docs/decisions.md#detached-policy). */
export const metadata: EventMetadata.EventMetadata = MARK
const REMEMBERED: EventMetadata.EventMetadata = { [EventMetadata.rememberedAnswer]: true }

/**
 * The request and its response for a decision typed at the prompt, to be
 * appended together; `edited`: the arguments the person edited the call to
 * (a run decision, recorded under `EventMetadata.editedArguments`).
 */
export const record = (
  at: Timestamp,
  id: InquiryId,
  tool: { readonly toolName: string; readonly kind: ToolKindText },
  typed: Typed,
  edited?: Schema.JsonObject
): readonly [InquiryRequest, InquiryAnswered] => [
  Events.inquiryRequest(
    at,
    id,
    InquirySource.tool(tool.toolName),
    { text: text(tool.kind, tool.toolName), answer_type: { type: "boolean" } },
    MARK
  ),
  Events.answered(at, id, typed === "y" || typed === "Y", {
    ...(typed === "Y" || typed === "N" ? REMEMBERED : {}),
    ...(edited !== undefined ? editedMetadata(edited) : {})
  })
]

/** The response metadata that carries a call's edited arguments. */
export const editedMetadata = (edited: Schema.JsonObject): EventMetadata.EventMetadata => ({
  [EventMetadata.editedArguments]: edited
})

/** True for the request of a permission inquiry (its marker, not its id). */
export const isPermission = (request: InquiryRequest): boolean =>
  request.metadata[EventMetadata.rememberedPermission] === true

/**
 * The metadata of the request of an approval a running tool asks (an MCP
 * server's page or form): what it approves (`EventMetadata.approval`).
 */
export const approvalMetadata = (approves: JsonObject): EventMetadata.EventMetadata => ({
  [EventMetadata.approval]: approves
})

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * What the request asks a person to approve, when it is an approval: the
 * call's arguments for a permission inquiry (may this call run?), what the
 * tool said for an approval it asked while running (`approvalMetadata`);
 * `undefined` for a tool's question.
 *
 * @example
 * ```ts
 * import * as PermissionInquiry from "parley/domain/event/PermissionInquiry"
 * import type { InquiryRequest } from "parley"
 * declare const request: InquiryRequest
 * PermissionInquiry.approves(request, { target: "prod" }) // { target: "prod" } for `call_1.__permission__.1`
 * ```
 */
export const approves = (request: InquiryRequest, callArguments: JsonObject): JsonObject | undefined => {
  if (isPermission(request)) return callArguments
  const asked = request.metadata[EventMetadata.approval]
  return isObject(asked) ? asked : undefined
}

/**
 * The decision a permission inquiry recorded: `y` (run) or `n` (skip), and
 * whether it holds for the rest of the turn. `undefined` for any other
 * inquiry, or a response that is not a boolean answer.
 */
export const decisionOf = (
  request: InquiryRequest,
  response: InquiryResponse
):
  | { readonly decision: "y" | "n"; readonly remembered: boolean; readonly arguments?: Schema.JsonObject }
  | undefined => {
  if (!isPermission(request) || response.outcome !== "answered" || typeof response.answer !== "boolean")
    return undefined
  const edited = response.answer ? asObject(response.metadata[EventMetadata.editedArguments]) : undefined
  return {
    decision: response.answer ? "y" : "n",
    remembered: response.metadata[EventMetadata.rememberedAnswer] === true,
    ...(edited !== undefined ? { arguments: edited } : {})
  }
}

/** `value` when it is a JSON object (a call's arguments), else `undefined`. */
const asObject = (value: unknown): Schema.JsonObject | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Schema.JsonObject) : undefined

/**
 * A call's arguments as a person edited them (JSON text, from the editor or
 * a form's field): the object, or why it is not one — invalid JSON, or JSON
 * that is not an object (a call's arguments are an object). An empty text
 * is `undefined`: the edit was abandoned, and the approval is asked again.
 *
 * @example
 * ```ts
 * import * as PermissionInquiry from "parley/domain/event/PermissionInquiry"
 * PermissionInquiry.readEdited('{"target": "staging"}') // { arguments: { target: "staging" } }
 * PermissionInquiry.readEdited("[1]") // { problem: "the edited arguments are not a JSON object" }
 * ```
 */
export const readEdited = (
  text: string
): { readonly arguments: Schema.JsonObject } | { readonly problem: string } | undefined => {
  if (text.trim() === "") return undefined
  let parsed: unknown
  try {
    parsed = JsonText.parse(text)
  } catch (e) {
    return { problem: `the edited arguments are not valid JSON (${e instanceof Error ? e.message : String(e)})` }
  }
  const object = asObject(parsed)
  return object === undefined ? { problem: "the edited arguments are not a JSON object" } : { arguments: object }
}

/**
 * The edited arguments an approval's answer carries: `{"edit": {…}}` (the
 * object, or its JSON text), or that JSON as text (`conversation answer ID
 * INQUIRY '{"edit": {…}}'`); `undefined` when the answer is no edit, and a
 * `problem` when it is one that does not fit (an empty edit, a value that is
 * not an object).
 */
export const editOf = (
  value: unknown
): { readonly arguments: Schema.JsonObject } | { readonly problem: string } | undefined => {
  let answer = value
  if (typeof value === "string" && value.trimStart().startsWith("{")) {
    try {
      answer = JsonText.parse(value)
    } catch {
      return undefined
    }
  }
  const object = asObject(answer)
  if (object === undefined || !("edit" in object)) return undefined
  const edit = object["edit"]
  if (typeof edit === "string") return readEdited(edit) ?? { problem: EMPTY_EDIT }
  if (edit === null) return { problem: EMPTY_EDIT }
  const edited = asObject(edit)
  return edited === undefined ? { problem: "the edited arguments are not a JSON object" } : { arguments: edited }
}

const EMPTY_EDIT = "an empty edit answers nothing: the approval stays open"

/**
 * Why `value` is no answer to an approval (for `AnswerDoesNotFit`): an edit
 * that does not fit says what is wrong with it.
 */
export const notAnApproval = (value: unknown): string => {
  const edit = editOf(value)
  return edit !== undefined && "problem" in edit ? edit.problem : `${JSON.stringify(value)} is not an approval's answer`
}

/**
 * An approval's answer as anyone offers it (contract §8): `yes`/`no` (or
 * `true`/`false`, `y`/`n`) decide this call, `always`/`never` (or `Y`/`N`, the
 * permission prompt's capitals) decide it and the tool's later calls this
 * turn. Words are read in any case but the single capitals. `{"edit": {…}}`
 * runs this call with the edited arguments (`arguments`). `undefined`: not
 * an approval's answer ({@link notAnApproval} says why).
 *
 * @example
 * ```ts
 * import * as PermissionInquiry from "parley/domain/event/PermissionInquiry"
 * PermissionInquiry.approvalAnswer("always") // { answer: true, remember: true }
 * ```
 */
export const approvalAnswer = (
  value: unknown
): { readonly answer: boolean; readonly remember: boolean; readonly arguments?: Schema.JsonObject } | undefined => {
  if (typeof value === "boolean") return { answer: value, remember: false }
  // `{"edit": {…}}`: run this call with these arguments (never remembered: they are this call's).
  const edit = editOf(value)
  if (edit !== undefined)
    return "arguments" in edit ? { answer: true, remember: false, arguments: edit.arguments } : undefined
  if (typeof value !== "string") return undefined
  if (value === "Y" || value === "N") return { answer: value === "Y", remember: true }
  switch (value.trim().toLowerCase()) {
    case "yes":
    case "y":
    case "true":
      return { answer: true, remember: false }
    case "no":
    case "n":
    case "false":
      return { answer: false, remember: false }
    case "always":
      return { answer: true, remember: true }
    case "never":
      return { answer: false, remember: true }
    default:
      return undefined
  }
}

/** What an approval takes, as an error message says it. */
export const approvalExpected = "yes, no, always or never"

/** What an approval asked each time takes (an MCP server's page or form: `persistence = "none"`, nothing remembered). */
export const onceExpected = "yes or no"

/**
 * What an approval takes, by whether its answer may be remembered for the
 * turn (`QuestionPolicy.rememberable`): {@link approvalExpected}, or
 * {@link onceExpected} for one asked each time.
 */
export const expectedOf = (rememberable: boolean, review = false): string =>
  review ? reviewExpected : rememberable ? approvalExpected : onceExpected

/** What to type for an approval, as a command's `<placeholder>` says it ({@link expectedOf}'s words). */
export const placeholderOf = (rememberable: boolean): string => (rememberable ? "yes|no|always|never" : "yes|no")

/**
 * {@link approvalAnswer} for an approval whose answer may (`rememberable`)
 * or may not be remembered: an approval asked each time takes `yes`/`no`
 * only, and says why `always`/`never` do not fit. A result review
 * (`review`, {@link isReviewQuestion}) takes {@link readReview}'s answers.
 */
export const readApproval = (
  value: unknown,
  rememberable: boolean,
  review = false
):
  | {
      readonly _tag: "Read"
      readonly answer: boolean
      readonly remember: boolean
      readonly arguments?: Schema.JsonObject
    }
  | { readonly _tag: "Misfit"; readonly reason: string } => {
  if (review) return readReview(value)
  const read = approvalAnswer(value)
  if (read === undefined) return { _tag: "Misfit", reason: notAnApproval(value) }
  if (read.remember && !rememberable)
    return {
      _tag: "Misfit",
      reason: `${JSON.stringify(value)} would answer later approvals too, and this one is asked each time`
    }
  // Asked each time: an MCP server's page or form, whose edit needs the terminal's form (docs/mcp.md).
  if (read.arguments !== undefined && !rememberable)
    return { _tag: "Misfit", reason: "this approval takes yes or no: an edit is for a tool call's arguments" }
  return { _tag: "Read", ...read }
}

/**
 * The question id of a result review asked as an approval (JP's `result =
 * "ask" | "edit"` with nobody at the run's terminal,
 * docs/tools.md#reviewing-a-result-from-anywhere): its inquiry id is
 * `<tool_call_id>.__result__.<attempt>`, beside the permission's
 * `__permission__`.
 */
export const reviewQuestionId = "__result__"

/** True for the question id of a result review ({@link reviewQuestionId}). */
export const isReviewQuestion = (questionId: string): boolean => questionId === reviewQuestionId

/** The review's question: the terminal prompt's words (JP's). */
export const reviewText = (toolName: string): string => `Deliver ${toolName} result to assistant?`

/** What a result review takes, as an error message says it. */
export const reviewExpected = 'deliver, skip or {"edit": {"result": "…"}}'

/**
 * What a result review shows as what it approves (recorded on its request
 * under `EventMetadata.approval`, so a waiting turn lists it, and a resumed
 * one reviews the recorded result without running the tool again).
 */
export const reviewApproves = (content: string, isError: boolean): JsonObject => ({
  result: content,
  is_error: isError
})

/**
 * A result review's answer: `deliver` (or `yes`, `true`) delivers the
 * result, `skip` (or `no`, `false`) skips it, `{"edit": {"result": "…"}}`
 * delivers that text instead. Never remembered: each result is its own.
 *
 * @example
 * ```ts
 * import * as PermissionInquiry from "parley/domain/event/PermissionInquiry"
 * PermissionInquiry.readReview("skip") // { _tag: "Read", answer: false, remember: false }
 * PermissionInquiry.readReview({ edit: { result: "2 files" } }) // { _tag: "Read", answer: true, remember: false, arguments: { result: "2 files" } }
 * ```
 */
export const readReview = (
  value: unknown
):
  | { readonly _tag: "Read"; readonly answer: boolean; readonly remember: false; readonly arguments?: JsonObject }
  | { readonly _tag: "Misfit"; readonly reason: string } => {
  const edit = editOf(value)
  if (edit !== undefined) {
    if ("problem" in edit) return { _tag: "Misfit", reason: edit.problem }
    const result = edit.arguments["result"]
    return typeof result === "string"
      ? { _tag: "Read", answer: true, remember: false, arguments: { result } }
      : { _tag: "Misfit", reason: 'an edited result is {"edit": {"result": "<text>"}}' }
  }
  if (typeof value === "boolean") return { _tag: "Read", answer: value, remember: false }
  const word = typeof value === "string" ? value.trim().toLowerCase() : undefined
  if (word === "deliver" || word === "yes" || word === "y" || word === "true")
    return { _tag: "Read", answer: true, remember: false }
  if (word === "skip" || word === "no" || word === "n" || word === "false")
    return { _tag: "Read", answer: false, remember: false }
  return { _tag: "Misfit", reason: `${JSON.stringify(value)} is not a result review's answer` }
}

/**
 * How a result review's recorded response ends it: the text delivered
 * (`edited` when a person edited it), or `undefined` for a skip. `result`:
 * the tool's result as the review's request recorded it.
 */
export const reviewedOf = (
  response: InquiryResponse,
  result: string
): { readonly content: string; readonly edited: boolean } | undefined => {
  if (response.outcome !== "answered" || response.answer !== true) return undefined
  const edited = asObject(response.metadata[EventMetadata.editedArguments])?.["result"]
  return typeof edited === "string" ? { content: edited, edited: true } : { content: result, edited: false }
}
