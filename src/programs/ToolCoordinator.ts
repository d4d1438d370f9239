/**
 * The tool coordinator (RFD 082 "Recording lifecycle", RFD 028, RFD 023
 * "Incremental Persistence"): runs a turn's pending tool calls concurrently,
 * one fiber each, and drives every question a tool asks to an answer.
 *
 * Each call goes through named steps:
 * 1. `permit`: `run = "ask" | "edit" | "unattended" | "skip"` decided by the
 *    domain (`Route.decidePermission`), the person asked when it says so
 *    (and given the call's arguments to edit: `e`, `run = "edit"`, an
 *    approval answered `{"edit": {…}}` — the call then runs with those);
 *    what they typed is recorded at once, before the tool starts, as a
 *    `PermissionInquiry` (docs/decisions.md#permission-decisions-recorded), so a run killed while the approved
 *    call runs leaves the decision for the resumed turn;
 * 2. a question an earlier run recorded and never answered (a resumed turn)
 *    is asked again under its recorded id, so the pair closes;
 * 3. the tool runs; each `NeedsInput` allocates
 *    `<tool_call_id>.<question_id>.<attempt>` from the turn's state and is
 *    asked (`Inquiry.ask`: request recorded before any routing, then
 *    remembered / static / secret guard / prompt / inquiry backend); the
 *    answer joins the tool's answers under the bare question id (latest
 *    wins) and the tool runs again;
 * 4. the result is reviewed when the tool's `result` mode says so
 *    (`Review.ts`: delivered, edited or skipped by the person first), and
 *    the `tool_call_response` is recorded, with every secret answer given to
 *    the call scrubbed from it (`Redact.scrub`), so an echoing tool never
 *    puts a secret on disk or in front of the model.
 *
 * Whoever watches (the `RunEvents` stream, docs/decisions.md#one-run-event-stream) sees `ToolStarted` when
 * a call's tool is about to run, `QuestionOpened`/`QuestionClosed` for every
 * question, and `ToolFinished` once the call's response is recorded. A call
 * whose question is deferred (nobody to ask, `detached = "defer"`, or `wait`
 * timed out) stops without a response: the other calls finish, and the
 * result names the deferred questions, so the turn ends waiting for input.
 *
 * Every event goes through the {@link ConversationSession} the moment it
 * happens (durable, then visible). Interrupting the coordinator records
 * `Cancelled{user}` for every open inquiry and interrupts every tool fiber;
 * tools that had not finished get no fabricated response, so the turn stays
 * incomplete and resumable (RFD 023).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Ref from "effect/Ref"
 * import { ToolCoordinator, TurnState } from "parley"
 * import type { ConversationSession, ToolCallRequest } from "parley"
 *
 * declare const session: ConversationSession.ConversationSession
 * declare const calls: ReadonlyArray<ToolCallRequest>
 *
 * const program = Effect.gen(function*() {
 *   const state = yield* Ref.make(TurnState.make())
 *   const { responses, deferred } = yield* ToolCoordinator.runTools({ session, calls, state, root: process.cwd() })
 *   return deferred.length > 0 ? "waiting for input" : `${responses.length} responses`
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as MutableRef from "effect/MutableRef"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import * as Tracer from "effect/Tracer"
import * as EventMetadata from "../domain/event/EventMetadata.ts"
import * as PermissionInquiry from "../domain/event/PermissionInquiry.ts"
import * as Timestamp from "../domain/event/Timestamp.ts"
import * as Events from "../domain/event/Events.ts"
import type { InquiryId } from "../domain/event/InquiryId.ts"
import type { InquiryRequest } from "../domain/event/InquiryRequest.ts"
import type { InquiryResponse } from "../domain/event/InquiryResponse.ts"
import { ToolCallRequest } from "../domain/event/ToolCallRequest.ts"
import type { ToolCallResponse } from "../domain/event/ToolCallResponse.ts"
import * as RunEvent from "../domain/run/RunEvent.ts"
import type { PendingInquiry } from "../domain/stream/IncompleteTurn.ts"
import * as TurnState from "../domain/stream/TurnState.ts"
import { fromInquiryQuestion, isQuestionId } from "../domain/tool/Question.ts"
import * as ConfigData from "../domain/tool/Config.ts"
import * as QuestionPolicy from "../domain/tool/QuestionPolicy.ts"
import * as Redact from "../domain/tool/Redact.ts"
import { decidePermission, Permission } from "../domain/tool/Route.ts"
import type { RunMode, ToolKind } from "../domain/tool/ToolDefinition.ts"
import { Config } from "../services/Config.ts"
import type { ConversationSession } from "../services/ConversationSession.ts"
import {
  type Answers,
  error as executorError,
  Executor,
  type NeedsInput,
  type ToolResponse
} from "../services/Executor.ts"
import { InquiryBackend } from "../services/InquiryBackend.ts"
import { PendingAnswers } from "../services/PendingAnswers.ts"
import { PromptBackend, type PermissionDecision, type PromptError } from "../services/PromptBackend.ts"
import { RunEvents } from "../services/RunEvents.ts"
import * as Approval from "./coordinator/Approval.ts"
import * as Inquiry from "./coordinator/Inquiry.ts"
import * as Review from "./coordinator/Review.ts"

export { Texts } from "./coordinator/Inquiry.ts"
const { Texts } = Inquiry

/** What a resumed turn hands back to its pending calls (from `IncompleteTurn.analyze`). */
export interface ResumeInput {
  /** Answers already given in this turn, per tool call id. */
  readonly answeredInquiries: ReadonlyMap<string, Answers>
  /** Questions recorded and never answered: asked again under their recorded ids. */
  readonly pendingInquiries: ReadonlyArray<PendingInquiry>
  /** The executor state recorded with each call's latest question, per tool call id (handed back as `ExecutionContext.resume`). */
  readonly executorStates?: ReadonlyMap<string, Schema.Json>
  /** The permission decision an earlier run recorded, per tool call id: the call is not asked again. */
  readonly permissionDecisions?: ReadonlyMap<string, "y" | "n">
  /** The arguments a person edited an approved call to, per tool call id: the call runs with these. */
  readonly permissionArguments?: ReadonlyMap<string, Schema.JsonObject>
  /** The review of its result an earlier run asked from anywhere, per tool call id: the recorded result is reviewed, the tool not run again. */
  readonly reviews?: ReadonlyMap<
    string,
    { readonly request: InquiryRequest; readonly response: InquiryResponse | null }
  >
}

/** What `runTools` needs: the open session, the calls, the turn's state, where tools run, and (resuming) what the earlier run left. */
export interface RunToolsInput {
  /** The open conversation the events go to. */
  readonly session: ConversationSession
  /** The turn's pending tool calls, in document order. */
  readonly calls: ReadonlyArray<ToolCallRequest>
  /** The turn's state (remembered answers and permissions, attempt counters). */
  readonly state: Ref.Ref<TurnState.TurnState>
  /** Where tools run (the storage directory's parent). */
  readonly root: string
  /** Set when the calls belong to a resumed turn. */
  readonly resume?: ResumeInput
}

/** What the calls left: their recorded responses, in call order, and the questions deferred (their calls have no response). */
export interface ToolsResult {
  readonly responses: ReadonlyArray<ToolCallResponse>
  readonly deferred: ReadonlyArray<InquiryId>
}

/** How one call ended: its response recorded, or stopped at a deferred question. */
type CallEnd =
  | { readonly _tag: "Recorded"; readonly response: ToolCallResponse }
  | { readonly _tag: "Deferred"; readonly inquiryId: InquiryId }

/** How the prompt names a tool's kind. */
const kindText = (kind: ToolKind): PermissionInquiry.ToolKindText =>
  kind === "builtin" ? "built-in" : kind === "mcp" ? "MCP" : "local"

/**
 * Records what the person typed, request and response in one append, before
 * the call goes on (docs/decisions.md#permission-decisions-recorded): a run killed while the approved call runs
 * leaves the decision for the resumed turn. Uninterruptible once started, as
 * every record is.
 */
const recordDecision = (
  env: Inquiry.Env,
  call: ToolCallRequest,
  kind: ToolKind,
  typed: PermissionDecision,
  edited: Schema.JsonObject | undefined
) =>
  Effect.uninterruptible(
    Effect.flatMap(
      Ref.modify(env.state, (s) => TurnState.nextInquiryId(s, call.id, PermissionInquiry.questionId)),
      (id) =>
        env.session.append(
          PermissionInquiry.record(
            Timestamp.fromClock(env.clock),
            id,
            { toolName: call.name, kind: kindText(kind) },
            typed,
            edited
          )
        )
    )
  )

/** What the person settled at the permission prompt: the decision, and the arguments they edited the call to. */
interface Typed {
  readonly key: PermissionDecision
  readonly arguments?: Schema.JsonObject
}

/** The editor's file for a call's arguments (its name tells the editor the text is JSON). */
const ARGUMENTS_FILE = "ARGUMENTS.json"

/**
 * The permission prompt, with `e` (JP's edit; `run = "edit"` starts there):
 * the call's arguments open in the editor as pretty JSON. A JSON object
 * saved runs the call with it; anything else that is not empty is said (a
 * warning) and opened again as it was left; an edit left empty, or an
 * editor that failed, goes back to the prompt (docs/tools.md#editing-a-calls-arguments).
 */
const promptPermission = (
  env: Inquiry.Env,
  call: ToolCallRequest,
  kind: ToolKind,
  startInEditor: boolean
): Effect.Effect<Typed, PromptError> =>
  Effect.gen(function* () {
    const original = JSON.stringify(call.arguments, null, 2)
    let text = startInEditor ? original : undefined
    for (;;) {
      if (text !== undefined) {
        const edited = yield* env.prompts.edit(text, ARGUMENTS_FILE)
        const read = edited === undefined ? undefined : PermissionInquiry.readEdited(edited)
        if (read !== undefined && "arguments" in read) return { key: "y", arguments: read.arguments }
        if (read !== undefined && edited !== undefined) {
          yield* env.events.publish(
            RunEvent.make.Warning({
              text: `The edited arguments of ${call.name} (${call.id}): ${read.problem}; edit them again.`
            })
          )
          text = edited
          continue
        }
      }
      const key = yield* env.prompts.permission({
        toolName: call.name,
        kind: kindText(kind),
        arguments: call.arguments,
        position: Inquiry.positionOf(env, call),
        editable: true
      })
      if (key !== "e") return { key }
      text = original
    }
  })

/** Edited arguments worth recording: those that differ from what the model asked for. */
const changed = (call: ToolCallRequest, edited: Schema.JsonObject | undefined): Schema.JsonObject | undefined =>
  edited !== undefined && JSON.stringify(edited) !== JSON.stringify(call.arguments) ? edited : undefined

/** Asks the person whether `call` may run (`run = "ask"`; `edit`: the arguments open in the editor first). */
const askPermission = (env: Inquiry.Env, call: ToolCallRequest, kind: ToolKind, edit: boolean) =>
  Inquiry.atPrompt(env, {
    look: (s) => TurnState.rememberedPermission(s, call.name),
    prompt: () => promptPermission(env, call, kind, edit),
    answered: (prompted): Effect.Effect<Approval.Decided, Inquiry.RecordError> => {
      switch (prompted._tag) {
        case "Remembered":
          return Effect.succeed(prompted.value === "y" ? RUN : SKIP_REMEMBERED)
        case "Typed": {
          const typed = prompted.value.key
          const edited = changed(call, prompted.value.arguments)
          // Remembered and recorded while the prompt is still ours: the next call to look sees the decision, on disk first.
          return Effect.as(
            decided(env, call, kind, typed, edited),
            typed === "y" || typed === "Y" ? runWith(edited) : SKIP_DECLINED
          )
        }
        case "Failed":
          return Effect.succeed(
            prompted.error._tag === "PromptCancelled"
              ? SKIP_DECLINED
              : { _tag: "PromptFailed", reason: prompted.error.reason }
          )
      }
    }
  })

const RUN: Approval.Decided = Permission.Run()
/** Run, with the arguments a person edited the call to (`undefined`: as the model asked). */
const runWith = (edited: Schema.JsonObject | undefined): Approval.Decided =>
  edited === undefined ? RUN : { _tag: "Run", arguments: edited }
const RUN_UNKNOWN: Permission = Permission.Run()
const SKIP_REMEMBERED: Approval.Decided = Permission.Skip({ cause: "remembered" })
const SKIP_DECLINED: Approval.Decided = Permission.Skip({ cause: "declined" })

/** What the person typed: recorded (before the call goes on), and remembered for the turn when it was a capital. */
const decided = (
  env: Inquiry.Env,
  call: ToolCallRequest,
  kind: ToolKind,
  typed: PermissionDecision,
  edited: Schema.JsonObject | undefined
) =>
  Effect.andThen(
    recordDecision(env, call, kind, typed, edited),
    typed === "Y" || typed === "N"
      ? Ref.update(env.state, (s) => TurnState.rememberPermission(s, call.name, typed === "Y" ? "y" : "n"))
      : Effect.void
  )

/**
 * Step 1, as far as it is decided without the person, from the turn's state
 * as it is now (`Route.decidePermission`). A tool that decides per call
 * (`callPermission`: an effect/ai `needsApproval`) is asked first; any other
 * call takes no effectful step for it.
 */
const decidePermissionNow = (
  env: Inquiry.Env,
  call: ToolCallRequest,
  resume?: ResumeInput
): Exit.Exit<Permission> | Effect.Effect<Permission> => {
  const kind = env.executor.kind(call.name)
  // An unknown tool runs: the executor answers "not available".
  if (kind === undefined) return Exit.succeed(RUN_UNKNOWN)
  const decide = (mode: RunMode, approval: boolean) =>
    decidePermission({
      tool: { mode, kind },
      interactive: env.prompts.interactive,
      attended: env.answers.present(),
      remembered: TurnState.rememberedPermission(Ref.getUnsafe(env.state), call.name),
      decided: resume?.permissionDecisions?.get(call.id),
      approval,
      // An approval an earlier run left open (deferred) is asked again under its id, with or without a terminal now.
      reopened: pendingApproval(call, resume) !== undefined,
      detached: ConfigData.detachedPolicy(env.config, env.prompts.detachedDefault)
    })
  const perCall = env.executor.callPermission
  if (perCall === undefined) return Exit.succeed(decide(env.executor.permission(call.name), false))
  const toolCall = { id: call.id, name: call.name, arguments: call.arguments }
  return perCall(toolCall).pipe(
    // A check that crashes cannot say the call is safe: it needs approval.
    Effect.catchDefect(() => Effect.succeed({ mode: "ask" as const, approval: true })),
    Effect.map(({ approval, mode }) => decide(mode, approval))
  )
}

/** The approval an earlier run of the turn left open for `call` (deferred: nobody answered it yet). */
const pendingApproval = (call: ToolCallRequest, resume: ResumeInput | undefined): InquiryRequest | undefined =>
  resume?.pendingInquiries.find((p) => p.toolCall.id === call.id && PermissionInquiry.isPermission(p.request))?.request

/**
 * Step 1: may the call run? (What the person types is recorded, so this may
 * fail as recording does.) An approval with nobody to ask may end deferred.
 * Called in the step that runs it: a permission decided there and then (no
 * per-call check, nobody asked) comes back as an `Exit`, taken without a
 * step of its own (every call has one).
 */
const permit = (
  env: Inquiry.Env,
  call: ToolCallRequest,
  resume?: ResumeInput
): Exit.Exit<Approval.Decided> | Effect.Effect<Approval.Decided, Inquiry.RecordError> => {
  const decided = decidePermissionNow(env, call, resume)
  if (!Exit.isExit(decided)) return Effect.flatMap(decided, (d) => permitted(env, call, resume, d))
  return Exit.isSuccess(decided) ? permitted(env, call, resume, decided.value) : Effect.failCause(decided.cause)
}

/** What a decided permission leads to: a prompt, an approval asked, or the decision itself. */
const permitted = (
  env: Inquiry.Env,
  call: ToolCallRequest,
  resume: ResumeInput | undefined,
  decided: Permission
): Exit.Exit<Approval.Decided> | Effect.Effect<Approval.Decided, Inquiry.RecordError> => {
  switch (decided._tag) {
    case "Ask":
      return askPermission(env, call, decided.kind, decided.edit === true)
    case "Approve":
      return Approval.ask(env, call, kindText(decided.kind), pendingApproval(call, resume))
    case "Run":
      // Approved by an earlier run of the turn, maybe with edited arguments: the call runs with those.
      return Exit.succeed(runWith(resume?.permissionArguments?.get(call.id)))
    default:
      return Exit.succeed(decided)
  }
}

/** The response of a call that did not run: the text is chosen here, from why (JP's words; parley's for an approval nobody gave). */
const notRun = (
  env: Inquiry.Env,
  call: ToolCallRequest,
  decided: Exclude<Approval.Decided, { readonly _tag: "Run" | "Deferred" }>
): ToolResponse => {
  if (decided._tag === "Ended") return decided.response
  if (decided._tag === "PromptFailed") return { content: Texts.permissionFailed(decided.reason), is_error: true }
  switch (decided.cause) {
    case "config":
      return { content: Texts.skippedByConfig, is_error: false }
    case "remembered":
      return { content: Texts.skippedRemembered, is_error: false }
    case "declined":
      return { content: Texts.skippedByUser, is_error: false }
    case "no_approval":
      return {
        content: Texts.approvalNobody(call.name, ConfigData.detachedPolicy(env.config, env.prompts.detachedDefault)),
        is_error: false
      }
  }
}

/** Step 2: the question a crashed run left open for this call, asked again under its recorded id. */
const resumePending = (env: Inquiry.Env, call: ToolCallRequest, resume: ResumeInput | undefined) => {
  const pending = resume?.pendingInquiries.find(
    (p) => p.toolCall.id === call.id && p.questionId !== undefined && !PermissionInquiry.isPermission(p.request)
  )
  if (pending === undefined || !isQuestionId(pending.questionId!)) return Effect.succeed(undefined)
  const question = fromInquiryQuestion(pending.questionId!, pending.request.question)
  // An approval the tool asked (an MCP server's page or form) is asked again as one.
  const approves = PermissionInquiry.approves(pending.request, call.arguments)
  return Effect.map(
    Inquiry.ask(
      env,
      call,
      question,
      Inquiry.Opening.Recorded({
        id: pending.request.id,
        source: pending.request.source,
        ...(approves !== undefined ? { approval: true, approves } : {})
      })
    ),
    (routed) => ({ questionId: question.id, routed })
  )
}

/**
 * Whether a tool asks a person's approval for what it would otherwise decide
 * alone for them (an MCP server's page or form; `ExecutionContext.approvals`):
 * nobody at this terminal, and the detached policy waits, defers or denies —
 * or someone is attached. Read before each round: Ctrl-Z leaves the terminal.
 */
const approvalsAsked = (env: Inquiry.Env): boolean =>
  !env.prompts.interactive &&
  (env.answers.present() || ConfigData.detachedPolicy(env.config, env.prompts.detachedDefault) !== "assistant")

/**
 * How a question the tool raised opens: recorded with the executor's state
 * and what an approval approves, when there are any. The common question has
 * neither: one literal, no copies (every question makes one).
 */
const opening = (
  id: InquiryId,
  result: NeedsInput,
  staticRejected: string | undefined,
  shown: RunEvent.ToolCall
): Inquiry.Opening => {
  const approves = result.approval
  if (result.resume === undefined && approves === undefined && staticRejected === undefined)
    return { _tag: "Record", id, source: result.source, shown }
  const metadata = {
    ...(result.resume !== undefined ? { [EventMetadata.executorState]: result.resume } : {}),
    ...(approves !== undefined ? PermissionInquiry.approvalMetadata(approves) : {})
  }
  return Inquiry.Opening.Record({
    id,
    source: result.source,
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
    ...(staticRejected !== undefined ? { staticRejected } : {}),
    ...(approves !== undefined ? { approval: true, approves } : {}),
    shown
  })
}

/** What step 3 runs with: the call (and as run events show it), the answers it starts from, and the executor's recorded state. */
interface Execution {
  readonly env: Inquiry.Env
  readonly call: ToolCallRequest
  readonly shown: RunEvent.ToolCall
  readonly initial: Answers
  readonly recorded: Schema.Json | undefined
}

/** Step 3: runs the tool until it completes, asking each question it raises. */
const execute = (
  env: Inquiry.Env,
  call: ToolCallRequest,
  shown: RunEvent.ToolCall,
  initial: Answers,
  recorded: Schema.Json | undefined
) => Effect.gen({ self: { env, call, shown, initial, recorded } satisfies Execution }, executeSteps)

/**
 * {@link execute}'s steps: one generator function for every call, given its
 * input as `this`. A `function*` written inside `execute` would be a new
 * generator function per call, and V8 gives each one its own prototype and
 * hidden class (old space, pointing back at the closure): whatever the
 * closure captured (the call, the run's env) then outlives the call until a
 * full collection, and every young-generation collection copies and promotes
 * it (docs/benchmarks.md#coordinator).
 */
function* executeSteps(this: Execution) {
  const { env, call, shown, initial, recorded } = this
  let answers = initial
  // The executor's state kept with the latest question: what a later run needs to carry the call on.
  let resume = recorded
  // Secret answers given to this call: never in its recorded result, whatever it echoes.
  const secrets: Array<string> = []
  // Questions last answered from config: asked again as rejected, that answer is invalid (docs/decisions.md#static-answer-rejected).
  // Made by the first such answer: most calls have none, and every call ran this.
  let fromConfig: Set<string> | undefined
  const scrubbed = (response: ToolResponse): ToolResponse =>
    secrets.length === 0 ? response : { ...response, content: Redact.scrub(response.content, secrets) }
  const toolCall = { id: call.id, name: call.name, arguments: call.arguments }
  const base = { conversationId: env.session.id, root: env.root }
  // A tool that crashes is a failed call, not a failed turn. One handler for the call's every run of its tool
  // (`Effect.catchDefect` made two closures and more each time: a twentieth of what a run allocates).
  const crashed = (cause: Cause.Cause<never>) => {
    const defect = Cause.findDefect(cause)
    return Result.isSuccess(defect)
      ? Effect.succeed(
          executorError(`Tool '${call.name}' failed unexpectedly: ${Inquiry.describeDefect(defect.success)}`)
        )
      : Effect.failCause(cause)
  }
  for (;;) {
    const context = approvalsAsked(env) ? { ...base, approvals: true } : base
    const result = yield* Effect.catchCause(
      env.executor.execute(toolCall, answers, resume !== undefined ? { ...context, resume } : context),
      crashed
    )
    if (result._tag === "Completed") return scrubbed(result.response)
    const question = result.question
    // The loop guard: a question asked more than max_attempts times ends the call, no new request recorded.
    const max = ConfigData.maxAttempts(env.config, call.name, question.id)
    // Read and changed in this step, as `Ref.modify` would (no other fiber runs between): one effect, its closure
    // and a step fewer per question.
    const [id, allocated] = TurnState.allocateInquiryId(Ref.getUnsafe(env.state), call.id, question.id, max)
    MutableRef.set(env.state.ref, allocated)
    if (id === undefined) {
      return scrubbed({ content: Texts.tooManyAttempts(call.name, question.id, question.text, max), is_error: true })
    }
    if (result.resume !== undefined) resume = result.resume
    const staticRejected = fromConfig?.has(question.id) === true ? result.rejected : undefined
    const routed = yield* Inquiry.ask(env, call, question, opening(id, result, staticRejected, shown))
    if (routed._tag === "End") return scrubbed(routed.response)
    if (routed._tag === "Deferred") return routed
    if (routed.fromConfig === true) {
      fromConfig ??= new Set()
      fromConfig.add(question.id)
    } else fromConfig?.delete(question.id)
    if (QuestionPolicy.of(question).redact) secrets.push(Redact.secretText(routed.answer))
    answers = { ...result.answers, [question.id]: routed.answer }
  }
}

/** Step 3 for a resumed call: the question its earlier run left open first, then the tool. */
const resumeAndExecute = (env: Inquiry.Env, call: ToolCallRequest, shown: RunEvent.ToolCall, resume: ResumeInput) =>
  Effect.gen(function* () {
    const answers: Answers = { ...(resume.answeredInquiries.get(call.id) ?? {}) }
    // What the executor kept with the call's latest question (an MCP round), handed back so it carries the call on.
    const recorded = resume.executorStates?.get(call.id)
    const pending = yield* resumePending(env, call, resume)
    if (pending === undefined) return yield* execute(env, call, shown, answers, recorded)
    const routed = pending.routed
    if (routed._tag === "End" || routed._tag === "Deferred") return routed._tag === "End" ? routed.response : routed
    return yield* execute(env, call, shown, { ...answers, [pending.questionId]: routed.answer }, recorded)
  })

/** What one call runs with: the run's env, the call as the model asked it, and what an earlier run left. */
interface CallInput {
  readonly env: Inquiry.Env
  readonly asked: ToolCallRequest
  readonly resume: ResumeInput | undefined
}

/** One call, from permission to its recorded response (or to a deferred question). */
const runCall = (env: Inquiry.Env, asked: ToolCallRequest, resume: ResumeInput | undefined) =>
  Effect.gen({ self: { env, asked, resume } satisfies CallInput }, callSteps)

/** {@link runCall}'s steps, one generator function for every call (see {@link executeSteps} for why). */
function* callSteps(this: CallInput) {
  const { env, asked, resume } = this
  const permitting = permit(env, asked, resume)
  // Decided in this step (nearly every call): taken as it is, not yielded (a step and a generator round trip).
  const permission = Exit.isExit(permitting) && Exit.isSuccess(permitting) ? permitting.value : yield* permitting
  if (permission._tag === "Deferred") return { _tag: "Deferred", inquiryId: permission.inquiryId } satisfies CallEnd
  // The call as it runs: with the arguments a person edited it to, for the tool, its questions and the run's events.
  const call =
    permission._tag === "Run" && permission.arguments !== undefined
      ? new ToolCallRequest({ ...asked, arguments: permission.arguments })
      : asked
  const shown = RunEvent.toolCall(call)
  let response: ToolResponse
  let metadata: EventMetadata.EventMetadata = EventMetadata.empty
  if (permission._tag !== "Run") {
    response = notRun(env, call, permission)
  } else {
    // A result an earlier run recorded for review: the tool does not run again.
    const recorded = resume?.reviews?.get(call.id)
    if (recorded === undefined)
      env.events.publishUnsafe(RunEvent.make.ToolStarted({ call: shown, resumed: resume !== undefined }))
    // A new call's tool loop runs inside this generator (delegated, not an effect of its own: three steps fewer).
    const ended =
      recorded !== undefined
        ? Review.recordedResult(recorded.request)
        : resume === undefined
          ? yield* executeSteps.call({ env, call, shown, initial: {}, recorded: undefined })
          : yield* resumeAndExecute(env, call, shown, resume)
    if ("_tag" in ended) return { _tag: "Deferred", inquiryId: ended.inquiryId } satisfies CallEnd
    // Step 4: the result as the person let it through (`result = "ask" | "edit" | "skip"`).
    const reviewed = yield* Review.review(env, call, ended, approvalsAsked(env), recorded)
    if ("_tag" in reviewed) return { _tag: "Deferred", inquiryId: reviewed.inquiryId } satisfies CallEnd
    response = reviewed.response
    metadata = reviewed.metadata
  }
  // Recorded and announced together: an interrupt between the two would hide a recorded response.
  const recorded = yield* Inquiry.recordThen(
    env,
    (at) => Events.toolCallResponse(at, call.id, response, metadata),
    (recorded) => {
      env.events.publishUnsafe(RunEvent.make.ToolFinished({ call: shown, ran: permission._tag === "Run", response }))
      return Effect.succeed(recorded)
    }
  )
  return { _tag: "Recorded", response: recorded } satisfies CallEnd
}

/**
 * Runs the calls concurrently and returns their responses in call order,
 * with the questions deferred. Fails only when recording fails (the
 * session's error).
 */
export const runTools = (input: RunToolsInput) => Effect.gen({ self: input }, runToolsSteps)

/** {@link runTools}' steps, one generator function for every run (see {@link executeSteps} for why). */
function* runToolsSteps(this: RunToolsInput) {
  const env: Inquiry.Env = {
    session: this.session,
    executor: yield* Executor,
    prompts: yield* PromptBackend,
    backend: yield* InquiryBackend,
    answers: yield* PendingAnswers,
    events: yield* RunEvents,
    config: (yield* Config).data,
    state: this.state,
    promptLock: yield* Semaphore.make(1),
    root: this.root,
    clock: yield* Clock.clockWith(Effect.succeed),
    calls: this.calls,
    traced: (yield* Tracer.Tracer) !== Tracer.nativeTracer
  }
  const exits = yield* Effect.forEach(
    this.calls,
    (call) =>
      Effect.exit(
        Inquiry.traced(env, runCall(env, call, this.resume), "ToolCoordinator.toolCall", () => ({
          "parley.conversation_id": env.session.id,
          "parley.tool_call_id": call.id,
          "parley.tool": call.name
        }))
      ),
    { concurrency: "unbounded" }
  )
  const responses: Array<ToolCallResponse> = []
  const deferred: Array<InquiryId> = []
  for (const exit of exits) {
    if (Exit.isFailure(exit)) return yield* Effect.failCause(exit.cause)
    if (exit.value._tag === "Recorded") responses.push(exit.value.response)
    else deferred.push(exit.value.inquiryId)
  }
  return { responses, deferred } satisfies ToolsResult
}
