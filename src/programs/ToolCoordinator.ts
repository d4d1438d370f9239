/**
 * The tool coordinator (RFD 082 "Recording lifecycle", RFD 028, RFD 023
 * "Incremental Persistence"): runs a turn's pending tool calls concurrently,
 * one fiber each, and drives every question a tool asks to an answer.
 *
 * For each `NeedsInput`, in this order:
 * 1. allocate `<tool_call_id>.<question_id>.<attempt>` from the turn's counter;
 * 2. record the `InquiryRequest` (source as the executor resolved it) —
 *    before any routing decision;
 * 3. a remembered answer (`Y`/`N` earlier this turn; never for secrets) →
 *    `Answered`;
 * 4. a static answer from config → `Answered` (`Redacted` for a secret);
 * 5. the secret guard: a secret may only be typed by a person — target
 *    `assistant` → tool error + `Cancelled{assistant_routing_denied}`; no TTY →
 *    tool error + `Cancelled{no_prompt_backend}`;
 * 6. TTY and target `user` → the prompter (one prompt at a time, first come
 *    first served) → `Answered` / `Redacted`; Ctrl-C → `Cancelled{user}`;
 *    a prompter failure → `Cancelled{backend_error}`;
 * 7. otherwise the inquiry backend, on a just-in-time snapshot of the stream
 *    → `Answered`, or `Cancelled{user}` (backend cancelled) /
 *    `Cancelled{backend_error}` (any other failure) with JP's tool error text.
 * The answer is added to the tool's answers under the bare question id
 * (latest wins) and the tool runs again. There is no static pre-seed.
 *
 * Every inquiry event and tool response is appended through
 * `ConversationStore.append` the moment it happens. Interrupting the
 * coordinator (Ctrl-C, a parent's timeout) records `Cancelled{user}` for
 * every open inquiry and interrupts every tool fiber; tools that had not
 * finished get no fabricated response, so the turn stays incomplete and
 * resumable (RFD 023).
 *
 * @example
 * ```ts
 * import * as ToolCoordinator from "./ToolCoordinator.ts"
 * const responses = yield* ToolCoordinator.runTools({ conversationId, calls, stream, state, root })
 * ```
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import type { StreamEntry } from "../domain/event/ConversationEvent.ts"
import type { ConversationId } from "../domain/storage/ConversationId.ts"
import type { PendingInquiry } from "../domain/stream/IncompleteTurn.ts"
import type { InquiryQuestion } from "../domain/event/InquiryQuestion.ts"
import * as ConfigData from "../domain/tool/Config.ts"
import type { InquiryId } from "../domain/event/InquiryId.ts"
import { InquiryRequest } from "../domain/event/InquiryRequest.ts"
import { InquiryAnswered, InquiryCancelled, InquiryRedacted } from "../domain/event/InquiryResponse.ts"
import { isQuestionId, Question, toInquiryQuestion } from "../domain/tool/Question.ts"
import * as Timestamp from "../domain/event/Timestamp.ts"
import type { ToolCallRequest } from "../domain/event/ToolCallRequest.ts"
import { ToolCallResponse } from "../domain/event/ToolCallResponse.ts"
import { trusted } from "../domain/event/Trusted.ts"
import * as TurnState from "../domain/stream/TurnState.ts"
import { Config } from "../services/Config.ts"
import { ConversationStore } from "../services/ConversationStore.ts"
import { type Answers, error as executorError, Executor, type ToolResponse } from "../services/Executor.ts"
import { InquiryBackend, InquiryOtherError } from "../services/InquiryBackend.ts"
import { PromptBackend, PromptFailed } from "../services/PromptBackend.ts"

/** The conversation as this process sees it: the loaded entries plus everything appended since. */
export interface StreamMirror {
  readonly entries: Array<StreamEntry>
}

export interface RunToolsInput {
  readonly conversationId: ConversationId
  /** The turn's pending tool calls, in document order. */
  readonly calls: ReadonlyArray<ToolCallRequest>
  readonly stream: StreamMirror
  readonly state: TurnState.TurnState
  /** Where tools run (the storage directory's parent). */
  readonly root: string
  /** Answers already given in this turn, per tool call id (a resumed turn). */
  readonly initialAnswers?: ReadonlyMap<string, Answers>
  /**
   * Questions recorded before the process stopped and never answered (a
   * resumed turn): each is asked again under its recorded id, so the pair
   * closes, before its tool runs with the answer.
   */
  readonly pendingInquiries?: ReadonlyArray<PendingInquiry>
  /** The clock for event timestamps (tests pass a fixed one). */
  readonly now?: () => Timestamp.Timestamp
}

// JP's wording for tool responses (jp-reference §5.2–§5.4, §5.9).
export const Texts = {
  skippedByUser: "Tool skipped by user.",
  skippedRemembered: "Tool skipped by user (remembered).",
  skippedByConfig: "Tool skipped by configuration.",
  inputCancelled: "Tool input cancelled by user.",
  promptFailed: "Tool input prompt failed.",
  permissionFailed: (e: string) => `Permission prompt failed: ${e}`,
  inquiryFailed: (tool: string, question: string, error: string) =>
    `The tool '${tool}' asked a follow-up question ("${question}") that was routed to a secondary assistant for resolution, but the secondary assistant failed to provide a valid answer. Error: ${error}. You may retry the tool call or end the turn.`,
  secretNoTty: (tool: string, question: string) =>
    `The tool '${tool}' asked for a secret value ("${question}"), but secret values can only be typed by a person at an interactive terminal and none is available. Run the query in a terminal to answer it.`,
  secretToAssistant: (tool: string, question: string) =>
    `The tool '${tool}' asked for a secret value ("${question}"), which is never routed to an assistant (its question target is "assistant"). Set the question's target to "user" to answer it at the prompt.`
} as const

/** The tool question behind a persisted one (resume: the tool is not asked again). */
const questionOf = (id: string, q: InquiryQuestion): Question =>
  new Question({
    id: id as Question["id"],
    text: q.text,
    answer_type: q.answer_type.type === "select"
      ? { type: "select", options: q.answer_type.options.map((o) => (typeof o.value === "string" ? o.value : JSON.stringify(o.value))) }
      : { type: q.answer_type.type },
    ...(q.default !== undefined ? { default: q.default } : {})
  })

const describeDefect = (defect: unknown): string => (defect instanceof Error ? defect.message : String(defect))

// Events are built with `trusted`: their fields are a clock reading and values
// the executor already validated, so they are not parsed again.

/**
 * Runs the calls concurrently and returns their responses in call order.
 * Fails only when persisting fails (the store's error).
 */
export const runTools = (input: RunToolsInput) =>
  Effect.gen(function*() {
    const store = yield* ConversationStore
    const executor = yield* Executor
    const prompts = yield* PromptBackend
    const backend = yield* InquiryBackend
    const config = (yield* Config).data
    const now = input.now ?? Timestamp.now
    const writeLock = yield* Semaphore.make(1)
    const promptLock = yield* Semaphore.make(1) // one prompt on screen; waiters served in order
    const { state } = input

    /** Appends to disk and to the in-memory mirror, in one order. */
    const record = (...events: ReadonlyArray<StreamEntry>) =>
      store.append(input.conversationId, events).pipe(
        Effect.tap(() => Effect.sync(() => input.stream.entries.push(...events))),
        writeLock.withPermits(1)
      )

    const permit = (call: ToolCallRequest) =>
      Effect.gen(function*(): Effect.fn.Return<ToolResponse | "run", never> {
        const kind = executor.kind(call.name)
        if (kind === undefined) return "run" // the executor answers "not available"
        const mode = executor.permission(call.name)
        if (mode === "unattended") return "run"
        if (mode === "skip") return { content: Texts.skippedByConfig, is_error: false }
        // run = "ask": without a TTY JP runs the tool (nobody to ask).
        if (!prompts.interactive) return "run"
        const key = TurnState.permissionKey(call.name)
        const remembered = state.rememberedPermissionDecisions.get(key)
        if (remembered === "y") return "run"
        if (remembered === "n") return { content: Texts.skippedRemembered, is_error: false }
        const decision = yield* Effect.suspend(() => {
          // Look again once the prompt is ours: a Y/N typed while this call waited counts too.
          const late = state.rememberedPermissionDecisions.get(key)
          return late !== undefined ? Effect.succeed(late === "y" ? "remembered-y" as const : "remembered-n" as const) : prompts.permission({
            toolName: call.name,
            kind: kind === "builtin" ? "built-in" : "local",
            arguments: call.arguments
          })
        }).pipe(Effect.catchDefect((d) => Effect.fail(new PromptFailed({ reason: describeDefect(d) }))), promptLock.withPermits(1), Effect.result)
        if (decision._tag === "Failure") {
          return decision.failure._tag === "PromptCancelled"
            ? { content: Texts.skippedByUser, is_error: false }
            : { content: Texts.permissionFailed(decision.failure.reason), is_error: true }
        }
        const d = decision.success
        if (d === "remembered-y") return "run"
        if (d === "remembered-n") return { content: Texts.skippedRemembered, is_error: false }
        if (d === "Y" || d === "N") state.rememberedPermissionDecisions.set(key, d === "Y" ? "y" : "n")
        return d === "y" || d === "Y" ? "run" : { content: Texts.skippedByUser, is_error: false }
      })

    /** Routes one question; returns the answer for the tool, or the response that ends the call. */
    const route = (call: ToolCallRequest, question: Question, id: InquiryId, open: { id: InquiryId | undefined }) =>
      Effect.gen(function*(): Effect.fn.Return<{ answer: Schema.Json } | { end: ToolResponse }, unknown> {
        const secret = question.answer_type.type === "secret"
        const answered = (answer: Schema.Json) =>
          record(secret ? trusted(InquiryRedacted, { timestamp: now(), type: "inquiry_response", outcome: "redacted", id, metadata: {} }) : trusted(InquiryAnswered, { timestamp: now(), type: "inquiry_response", outcome: "answered", id, answer, metadata: {} })).pipe(
            Effect.tap(() => Effect.sync(() => (open.id = undefined))),
            Effect.as({ answer })
          )
        const cancelled = (reason: string, end: ToolResponse) =>
          record(trusted(InquiryCancelled, { timestamp: now(), type: "inquiry_response", outcome: "cancelled", id, reason, metadata: {} })).pipe(
            Effect.tap(() => Effect.sync(() => (open.id = undefined))),
            Effect.as({ end })
          )

        const cacheKey = TurnState.toolAnswerKey(call.name, question.id)
        if (!secret && state.rememberedToolAnswers.has(cacheKey)) {
          return yield* answered(state.rememberedToolAnswers.get(cacheKey)!)
        }
        const fixed = ConfigData.staticAnswer(config, call.name, question.id)
        if (fixed !== undefined) return yield* answered(fixed)

        const target = ConfigData.questionTarget(config, call.name, question.id)
        if (secret && target === "assistant") {
          return yield* cancelled("assistant_routing_denied", { content: Texts.secretToAssistant(call.name, question.text), is_error: true })
        }
        if (secret && !prompts.interactive) {
          return yield* cancelled("no_prompt_backend", { content: Texts.secretNoTty(call.name, question.text), is_error: true })
        }

        if (prompts.interactive && target === "user") {
          const reply = yield* Effect.suspend(() =>
            // Look again once the prompt is ours: a Y/N typed while this call waited counts too.
            !secret && state.rememberedToolAnswers.has(cacheKey)
              ? Effect.succeed({ answer: state.rememberedToolAnswers.get(cacheKey)!, remember: false })
              : prompts.question({ toolName: call.name, question })
          ).pipe(Effect.catchDefect((d) => Effect.fail(new PromptFailed({ reason: describeDefect(d) }))), promptLock.withPermits(1), Effect.result)
          if (reply._tag === "Failure") {
            return yield* (reply.failure._tag === "PromptCancelled"
              ? cancelled("user", { content: Texts.inputCancelled, is_error: false })
              : cancelled("backend_error", { content: Texts.promptFailed, is_error: true }))
          }
          if (reply.success.remember && !secret) state.rememberedToolAnswers.set(cacheKey, reply.success.answer)
          return yield* answered(reply.success.answer)
        }

        // The inquiry backend, on the stream as it is right now. The mirror
        // only grows, so "the first n entries" is that snapshot; it is copied
        // only if the backend reads it.
        const all = input.stream.entries
        const n = all.length
        const result = yield* backend.inquire({
          get entries() {
            return all.slice(0, n)
          },
          inquiryId: id,
          toolCallId: call.id,
          toolName: call.name,
          question: toInquiryQuestion(question)
        }).pipe(Effect.catchDefect((d) => Effect.fail(new InquiryOtherError({ detail: describeDefect(d) }))), Effect.result)
        if (result._tag === "Success") return yield* answered(result.success)
        const failure = { content: Texts.inquiryFailed(call.name, question.text, result.failure.message), is_error: true }
        return yield* cancelled(result.failure._tag === "InquiryCancelledError" ? "user" : "backend_error", failure)
      })

    const runOne = (call: ToolCallRequest) => {
      const open: { id: InquiryId | undefined } = { id: undefined }
      return Effect.gen(function*() {
        const permission = yield* permit(call)
        let response: ToolResponse
        if (permission !== "run") {
          response = permission
        } else {
          let answers: Answers = { ...(input.initialAnswers?.get(call.id) ?? {}) }
          let ended: ToolResponse | undefined
          const pending = input.pendingInquiries?.find((p) => p.toolCall === call && p.questionId !== undefined)
          if (pending !== undefined && isQuestionId(pending.questionId!)) {
            // Ask the recorded question again, answering under its recorded id.
            open.id = pending.request.id
            const routed = yield* route(call, questionOf(pending.questionId!, pending.request.question), pending.request.id, open)
            if ("end" in routed) ended = routed.end
            else answers = { ...answers, [pending.questionId!]: routed.answer }
          }
          for (;;) {
            if (ended !== undefined) {
              response = ended
              break
            }
            const result = yield* executor.execute(
              { id: call.id, name: call.name, arguments: call.arguments },
              answers,
              { conversationId: input.conversationId, root: input.root }
            ).pipe(
              // A tool that crashes is a failed call, not a failed turn.
              Effect.catchDefect((d) => Effect.succeed(executorError(`Tool '${call.name}' failed unexpectedly: ${describeDefect(d)}`)))
            )
            if (result._tag === "Completed") {
              response = result.response
              break
            }
            const question = result.question
            const id = TurnState.nextInquiryId(state, call.id, question.id)
            open.id = id
            yield* record(trusted(InquiryRequest, { timestamp: now(), type: "inquiry_request", id, source: result.source, question: toInquiryQuestion(question), metadata: {} }))
            const routed = yield* route(call, question, id, open)
            if ("end" in routed) {
              response = routed.end
              break
            }
            answers = { ...result.answers, [question.id]: routed.answer }
          }
        }
        const event = trusted(ToolCallResponse, { timestamp: now(), type: "tool_call_response", id: call.id, content: response.content, is_error: response.is_error, metadata: {} })
        yield* record(event)
        return event
      }).pipe(
        // Interrupted mid-question: close the inquiry as cancelled by the user.
        // The call itself gets no response, so the turn stays resumable.
        Effect.onInterrupt(() =>
          open.id === undefined
            ? Effect.void
            : record(trusted(InquiryCancelled, { timestamp: now(), type: "inquiry_response", outcome: "cancelled", id: open.id, reason: "user", metadata: {} })).pipe(Effect.ignore)
        )
      )
    }

    const exits = yield* Effect.forEach(input.calls, (call) => Effect.exit(runOne(call)), { concurrency: "unbounded" })
    const responses: Array<ToolCallResponse> = []
    for (const exit of exits) {
      if (Exit.isSuccess(exit)) responses.push(exit.value)
      else return yield* Effect.failCause(exit.cause as Cause.Cause<Effect.Error<ReturnType<typeof record>>>)
    }
    return responses
  })
