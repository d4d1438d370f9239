/**
 * One live MCP tool call across the executor's rounds (docs/mcp.md; docs/mcp.md#rounds-2026-07-28).
 *
 * The Executor contract is "run with these answers; return the response or
 * the next question". An MCP call asks its questions in one of two ways,
 * and both are kept here between executor rounds, keyed by conversation and
 * tool call id:
 *
 * - a 2025-11-25 server sends `elicitation/create` while `tools/call` stays
 *   open (the caller holds the server's lock);
 * - a 2026-07-28 server answers `tools/call` with `input_required`: each of
 *   its requests is worked through the same way, and once all have answers
 *   the call is sent again with them and the server's `requestState`
 *   (`McpRound`). At most {@link CallSpec.maxRounds} such rounds.
 *
 * Either way:
 * 1. the first round sends `tools/call` and waits for the first event;
 * 2. an elicitation is opened and worked through question by question
 *    (`domain/tool/Elicitation.ts`): each question not yet answered is
 *    returned as `NeedsInput` (source `tool{name}`, whatever the server
 *    says); the coordinator records and routes it and calls again with the
 *    answer, which is checked (a rejected answer is asked again, at most
 *    {@link MAX_ATTEMPTS} times) — when every field has a value, parley
 *    replies `accept` with the content;
 * 3. the result of `tools/call` is the call's response.
 *
 * A URL request and the review of a filled-in form are asked at the
 * terminal when a person is there (`CallSpec.interactive`); with nobody
 * there and the round's `ExecutionContext.approvals`, they are asked as
 * approvals (`NeedsInput.approval`: the page, or the form's values); else a
 * URL request is declined unasked and a form is sent unreviewed.
 *
 * Answers handed to the first round (a resumed turn gives back what it
 * recorded) are used for the server's questions of the same id without
 * asking, once each. A resumed 2026 call whose open round was recorded
 * (`ExecutionContext.resume`) starts from that round instead of calling
 * the tool afresh, so the server sees the same `requestState`.
 *
 * A call whose question the coordinator ends without calling back (Ctrl-C at
 * the prompt, a failed side call) or that is interrupted is abandoned: the
 * open elicitation is answered `cancel` (a 2025 server), and the request is
 * cancelled after {@link ABANDON_GRACE_MS} if the server has not finished by
 * then. The executor learns of it from the fiber that received the
 * `NeedsInput`: when that fiber ends without calling back, the call was
 * abandoned — so a caller must call `execute` again from the same fiber
 * (the coordinator does).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as McpCall from "parley/layers/mcp/McpCall"
 * declare const server: McpCall.CallSpec["server"]
 * const program = Effect.suspend(() => {
 *   const live = McpCall.start({ server, serverName: "everything", tool: "echo", args: { message: "hi" }, timeoutMs: 300_000, interactive: true, maxRounds: 5 }, {}, () => {})
 *   return McpCall.run(live, {})
 * })
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import type * as Schema from "effect/Schema"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as InquirySource from "../../domain/event/InquirySource.ts"
import * as Elicitation from "../../domain/tool/Elicitation.ts"
import type { Question } from "../../domain/tool/Question.ts"
import { type Answers, Completed, error, type ExecutorResult, NeedsInput } from "../../services/Executor.ts"
import { type ToolResult, toolResponse } from "./Content.ts"
import * as McpRound from "./McpRound.ts"
import type { Connection, ElicitResult, Elicited, InputRequired, Retry } from "./McpServer.ts"
import * as ErrorCode from "../ErrorCode.ts"

/** One question asked more often than this in one call ends the call with a tool error (contract §5 round 2). */
export const MAX_ATTEMPTS = 5

/** How long an abandoned call's server gets to finish after `cancel` before the request is cancelled. */
export const ABANDON_GRACE_MS = 2000

type Event =
  | { readonly _tag: "Elicited"; readonly elicited: Elicited }
  | { readonly _tag: "InputRequired"; readonly input: InputRequired }
  | { readonly _tag: "Finished"; readonly result: ToolResult }
  | { readonly _tag: "Failed"; readonly error: unknown }

/** The elicitation being answered. */
interface Open {
  readonly elicited: Elicited
  readonly request: Elicitation.Request
  /** Form: the "fill in this form?" question was answered yes. */
  accepted: boolean
  /** Form: the field being asked. */
  index: number
  readonly values: Record<string, Elicitation.Value>
  /** Why the last answer to the current question was rejected. */
  problem: string | undefined
  rejected: number
  /** Form at a terminal: asking the fields, the review of the whole form, or which field to change. */
  stage: "fields" | "review" | "edit"
  /** Form: the person accepted the review (or there is none to ask). */
  reviewed: boolean
  /** Form: the field being asked is one the person chose to change (then back to the review). */
  editing: boolean
}

/** What one call needs: the server, the tool and its checked arguments, and its limits. */
export interface CallSpec {
  readonly server: Connection
  readonly serverName: string
  readonly tool: string
  readonly args: Readonly<Record<string, Schema.Json>>
  /** Server time the call may take (time spent waiting for answers does not count). */
  readonly timeoutMs: number
  /**
   * A person is at the run's terminal: a URL request is asked there and a
   * filled-in form reviewed there. Without one, both are asked as approvals
   * when the coordinator says so (`ExecutionContext.approvals`, given to
   * {@link run}); else a URL request is declined and a form sent unreviewed.
   */
  readonly interactive: boolean
  /** How many `input_required` rounds one call may take (2026-07-28; the tool's `max_attempts`). */
  readonly maxRounds: number
  /**
   * A form's questions are the person's alone (`exclusive`, RFD 083): with
   * nobody to ask they follow the `detached` policy, never the model —
   * unless config says `forms = "assistant"` for the server or the tool.
   */
  readonly formsExclusive?: boolean
}

/** A call in flight. Create with {@link start}; drive with {@link run}. */
export interface LiveCall {
  readonly spec: CallSpec
  readonly abort: AbortController
  readonly queue: Array<Event>
  waiter: ((event: Event) => void) | undefined
  /** Answers given to the first round, used once each for questions of the same id. */
  readonly pool: Map<string, Schema.Json>
  open: Open | undefined
  /** The question last returned as `NeedsInput`. */
  asked: Question | undefined
  /** Why the call ended early (a question rejected {@link MAX_ATTEMPTS} times). */
  gaveUp: string | undefined
  /** Finished, or abandoned: nothing more goes to the coordinator. */
  done: boolean
  /** 2026-07-28: the `input_required` round being answered, and how many rounds the call has taken. */
  round: McpRound.Round | undefined
  rounds: number
  /** A `tools/call` is in flight. */
  sending: boolean
  /** Nobody at the terminal, and a person's approval is asked (the latest round's `ExecutionContext.approvals`). */
  approvals: boolean
  spentMs: number
  detach: (() => void) | undefined
  /** Resolves once no `tools/call` of this call is in flight any more (and a 2025 server is free again). */
  readonly settled: Promise<void>
  readonly settle: () => void
  /** Called once when the call ends either way (the registry forgets it). */
  readonly onEnd: () => void
}

const push = (live: LiveCall, event: Event): void => {
  if (live.done && event._tag === "Elicited") return event.elicited.respond({ action: "cancel" })
  const waiter = live.waiter
  live.waiter = undefined
  if (waiter !== undefined) waiter(event)
  else live.queue.push(event)
}

/** Sends `tools/call` (again, with `retry`); its reply becomes the call's next event. */
const send = (live: LiveCall, retry?: Retry): void => {
  const { server } = live.spec
  live.sending = true
  server
    .callTool(live.spec.tool, live.spec.args, live.abort.signal, retry)
    .then(
      (reply) =>
        push(
          live,
          reply._tag === "Result"
            ? { _tag: "Finished", result: reply.result as ToolResult }
            : { _tag: "InputRequired", input: reply.input }
        ),
      (e: unknown) => push(live, { _tag: "Failed", error: e })
    )
    .finally(() => {
      live.sending = false
      // A 2026 call goes on after an `input_required` reply, unless nothing will read it any more.
      if (!server.stateless || live.done || live.queue.some((e) => e._tag !== "InputRequired")) live.settle()
    })
}

/**
 * Starts the call. A 2025 server: sends `tools/call` (the caller holds the
 * server's lock, released when the request settles) and routes the
 * server's elicitations to this call. A 2026 server: sends `tools/call`, or
 * picks up the round `resume` recorded (a resumed turn).
 */
export const start = (spec: CallSpec, answers: Answers, onEnd: () => void, resume?: McpRound.Recorded): LiveCall => {
  let settle: () => void = () => {}
  const live: LiveCall = {
    spec,
    abort: new AbortController(),
    queue: [],
    waiter: undefined,
    pool: new Map(Object.entries(answers)),
    open: undefined,
    asked: undefined,
    gaveUp: undefined,
    done: false,
    round: undefined,
    rounds: 0,
    sending: false,
    approvals: false,
    spentMs: 0,
    detach: undefined,
    settled: new Promise<void>((resolve) => (settle = resolve)),
    settle: () => settle(),
    onEnd
  }
  if (spec.server.stateless) {
    if (resume === undefined) send(live)
    else {
      live.rounds = resume.round - 1
      push(live, { _tag: "InputRequired", input: resume.input })
    }
    return live
  }
  const route = (elicited: Elicited) => push(live, { _tag: "Elicited", elicited })
  spec.server.onElicit = route
  void live.settled.then(() => {
    if (spec.server.onElicit === route) spec.server.onElicit = undefined
    spec.server.lock.release()
  })
  send(live)
  return live
}

const end = (live: LiveCall): void => {
  if (live.done) return
  live.done = true
  live.detach?.()
  live.detach = undefined
  live.onEnd()
}

const respond = (
  live: LiveCall,
  action: "accept" | "decline" | "cancel",
  content?: Record<string, Elicitation.FieldValue>
): void => {
  const open = live.open
  live.open = undefined
  live.asked = undefined
  open?.elicited.respond(action === "accept" && content !== undefined ? { action, content } : { action })
}

/**
 * Gives the call up: the open elicitation and any later one are answered
 * `cancel`; the request itself is cancelled now (nothing was open) or after
 * {@link ABANDON_GRACE_MS} (the server may finish on its own after `cancel`).
 */
export const abandon = (live: LiveCall): void => {
  if (live.done) return
  const hadOpen = live.open !== undefined
  end(live)
  respond(live, "cancel")
  for (const event of live.queue.splice(0)) if (event._tag === "Elicited") event.elicited.respond({ action: "cancel" })
  // A 2026 server keeps nothing open between rounds: stop a request in flight, else there is nothing to wait for.
  if (live.spec.server.stateless) return live.sending ? live.abort.abort() : live.settle()
  if (!hadOpen) return live.abort.abort()
  const timer = setTimeout(() => live.abort.abort(), ABANDON_GRACE_MS)
  void live.settled.then(() => clearTimeout(timer))
}

const form = (open: Open): Elicitation.Form | undefined => (open.request._tag === "Form" ? open.request : undefined)

/** The question the open elicitation waits on, or `undefined` when the form is complete. */
const current = (live: LiveCall, open: Open): Question | undefined => {
  const request = open.request
  if (request._tag === "Url") {
    return live.approvals
      ? Elicitation.urlApproval(live.spec.serverName, request)
      : Elicitation.urlQuestion(live.spec.serverName, request)
  }
  const f = request
  const exclusive = live.spec.formsExclusive !== false
  if (!open.accepted) return Elicitation.formQuestion(live.spec.serverName, f, exclusive)
  if (open.stage === "edit") return Elicitation.editQuestion(f, exclusive)
  const field = f.fields[open.index]
  if (field !== undefined) return Elicitation.fieldQuestion(field, open.problem, exclusive)
  // Every field has its answer: the person sees the whole form before it is sent (MCP's MUST) — at
  // the terminal, else as an approval when one is asked; otherwise it is sent as filled in.
  if (open.reviewed || !(live.approvals || live.spec.interactive)) return undefined
  open.stage = "review"
  return live.approvals
    ? Elicitation.reviewApproval(live.spec.serverName, f, open.values)
    : Elicitation.reviewQuestion(live.spec.serverName, f, open.values, exclusive)
}

/** What the question asked as an approval approves (its arguments): the page, or the form's values; `undefined`: not an approval. */
const approves = (live: LiveCall, question: Question): Record<string, Schema.Json> | undefined => {
  const open = live.open
  if (!live.approvals || open === undefined) return undefined
  const request = open.request
  if (request._tag === "Url") return Elicitation.urlApproves(request)
  return open.stage === "review" && question.id === Elicitation.reviewQuestionId(request)
    ? Elicitation.content(request, open.values)
    : undefined
}

/** The person's choice at the review, or the field to change after `edit`. */
const applyReview = (
  live: LiveCall,
  open: Open,
  f: Elicitation.Form,
  question: Question,
  answer: Schema.Json
): void => {
  if (open.stage === "edit") {
    const index = f.fields.findIndex((field) => field.name === answer)
    if (index < 0)
      return reject(
        live,
        open,
        question,
        `${JSON.stringify(answer)} is not one of the fields (${f.fields.map((x) => x.name).join(", ")})`
      )
    open.rejected = 0
    open.index = index
    open.stage = "fields"
    open.editing = true
    return
  }
  const choice = Elicitation.reviewChoice(answer)
  if (choice === undefined)
    return reject(
      live,
      open,
      question,
      `${JSON.stringify(answer)} is not one of: ${Elicitation.REVIEW_CHOICES.join(", ")}`
    )
  open.rejected = 0
  if (choice === "accept") {
    open.reviewed = true
    open.stage = "fields"
  } else if (choice === "edit") open.stage = "edit"
  else respond(live, choice)
}

const reject = (live: LiveCall, open: Open, question: Question, problem: string): void => {
  open.problem = problem
  open.rejected += 1
  // The elicitation stays open: abandoning the call answers it `cancel`.
  if (open.rejected >= MAX_ATTEMPTS) {
    live.gaveUp = `Tool '${live.spec.tool}' asked "${question.id}" ${MAX_ATTEMPTS} times without getting a valid answer (the last one: ${problem}).`
  }
}

/** Applies one answer to the question the open elicitation waits on. */
const apply = (live: LiveCall, open: Open, question: Question, answer: Schema.Json): void => {
  const f = form(open)
  if (f === undefined || !open.accepted) {
    const yes = Elicitation.checkYesNo(answer)
    if (Result.isFailure(yes)) return reject(live, open, question, yes.failure)
    open.rejected = 0
    if (!yes.success) return respond(live, "decline")
    if (f === undefined) return respond(live, "accept")
    open.accepted = true
    return
  }
  if (open.stage !== "fields") return applyReview(live, open, f, question, answer)
  const checked = Elicitation.check(f.fields[open.index]!, answer)
  if (Result.isFailure(checked)) return reject(live, open, question, checked.failure)
  open.values[question.id] = checked.success
  // A field changed from the review goes back to the review.
  open.index = open.editing ? f.fields.length : open.index + 1
  open.editing = false
  open.problem = undefined
  open.rejected = 0
}

/**
 * Works the open elicitation forward as far as known answers go; replies
 * `accept` once the form is complete. Returns the question to ask next.
 */
const advance = (live: LiveCall): Question | undefined => {
  for (;;) {
    const open = live.open
    if (open === undefined || live.gaveUp !== undefined) return undefined
    // The server withdrew the request (its own timeout), or the call has already ended
    // (the SDK ignores a cancellation of request id 0): nothing to ask any more.
    if (open.elicited.signal.aborted || live.queue.some((e) => e._tag === "Finished" || e._tag === "Failed")) {
      respond(live, "cancel")
      return undefined
    }
    const question = current(live, open)
    if (question === undefined) {
      respond(live, "accept", Elicitation.content(form(open)!, open.values))
      continue
    }
    const pooled = live.pool.get(question.id)
    if (pooled === undefined) return question
    live.pool.delete(question.id)
    apply(live, open, question, pooled)
  }
}

/** Opens an elicitation the server sent, or answers it at once when nobody can. */
const opened = (live: LiveCall, elicited: Elicited): void => {
  const parsed = Elicitation.parse(elicited.params)
  if (Result.isFailure(parsed)) return elicited.refuse(`parley cannot ask this: ${parsed.failure}`)
  // URL mode needs a person at a browser; with nobody at the terminal and no approval asked, nobody can go.
  if (parsed.success._tag === "Url" && !live.spec.interactive && !live.approvals)
    return elicited.respond({ action: "decline" })
  live.open = {
    elicited,
    request: parsed.success,
    accepted: false,
    index: 0,
    values: {},
    problem: undefined,
    rejected: 0,
    stage: "fields",
    reviewed: false,
    editing: false
  }
}

/** The next event, or `undefined` after `ms` (the call's remaining server time). */
const take = (live: LiveCall, ms: number): Effect.Effect<Event | undefined> =>
  Effect.callback<Event | undefined>((resume) => {
    const queued = live.queue.shift()
    if (queued !== undefined) return resume(Effect.succeed(queued))
    const timer = setTimeout(
      () => {
        live.waiter = undefined
        resume(Effect.succeed(undefined))
      },
      Math.max(0, ms)
    )
    live.waiter = (event) => {
      clearTimeout(timer)
      resume(Effect.succeed(event))
    }
    return Effect.sync(() => {
      clearTimeout(timer)
      live.waiter = undefined
    })
  })

/** An error's message, with its cause's when it has one (fetch says only "fetch failed"; the cause says why). */
const describe = (e: unknown): string => {
  if (!(e instanceof Error)) return String(e)
  const cause = e.cause instanceof Error ? e.cause.message : undefined
  return cause === undefined || cause === "" ? e.message : `${e.message} (${cause})`
}

const failed = (live: LiveCall, e: unknown): ExecutorResult => {
  const down = live.spec.server.down()
  const code = ErrorCode.codeOf(e)
  if (code === -32042) {
    // URL elicitation required (the error path): tell the model what the person has to do.
    return error(
      `MCP server "${live.spec.serverName}" needs a page opened first: ${describe(e)}. Ask the person to complete it, then call the tool again.`
    )
  }
  return error(
    down !== undefined
      ? `Tool '${live.spec.tool}' failed: ${down}. Its tools are unavailable for the rest of this run.`
      : `Tool '${live.spec.tool}' failed: MCP server "${live.spec.serverName}": ${describe(e)}`
  )
}

/** Records one answer of a 2026 round; the last one sends the call again with all of them and the server's `requestState`. */
const answerKey = (live: LiveCall, round: McpRound.Round, key: string, result: ElicitResult): void => {
  if (live.done || live.round !== round) return
  round.responses[key] = result
  if (!McpRound.complete(round)) return
  live.round = undefined
  send(live, McpRound.retry(round))
}

/**
 * Opens a 2026 `input_required` round: each request becomes an elicitation
 * worked like a pushed one. Returns why the call must end instead: too many
 * rounds, or a request parley does not answer (it declares only elicitation).
 */
const beginRound = (live: LiveCall, input: InputRequired): string | undefined => {
  const { tool, serverName } = live.spec
  live.rounds += 1
  if (live.rounds > live.spec.maxRounds) {
    return `Tool '${tool}' stopped: MCP server "${serverName}" asked for input ${live.rounds} times in one call (max_attempts is ${live.spec.maxRounds}). Raise max_attempts under [conversation.tools.${tool}] to allow more rounds.`
  }
  const round = McpRound.make(live.rounds, input)
  const requests = McpRound.keys(round).map((key) => [key, McpRound.elicitation(input.inputRequests[key])] as const)
  for (const [, request] of requests) {
    if ("unsupported" in request)
      return `Tool '${tool}' stopped: MCP server "${serverName}" asked for ${request.unsupported}, which parley does not answer.`
  }
  live.round = round
  // Only `requestState`: the server wants the call again, and asks nothing.
  if (requests.length === 0) {
    live.round = undefined
    send(live, McpRound.retry(round))
  }
  for (const [key, request] of requests) {
    live.queue.push({
      _tag: "Elicited",
      elicited: {
        params: "params" in request ? request.params : undefined,
        respond: (result) => answerKey(live, round, key, result),
        // There is no error to send back inside a round: nobody chose, which is `cancel`.
        refuse: () => answerKey(live, round, key, { action: "cancel" }),
        signal: live.abort.signal
      }
    })
  }
  return undefined
}

/** The question to hand the coordinator, with the open round the first time (so it is recorded with it). */
const needsInput = (live: LiveCall, question: Question, answers: Answers): NeedsInput => {
  const round = live.round
  const resume =
    round?.unrecorded === true ? McpRound.toState(live.spec.serverName, round.number, round.input) : undefined
  if (round !== undefined) round.unrecorded = false
  // Asked again because the last answer was rejected: said so, so a configured answer is not given five times (docs/decisions.md#static-answer-rejected).
  const rejected = live.open?.problem
  const approval = approves(live, question)
  return new NeedsInput({
    question,
    source: InquirySource.InquirySource.tool(live.spec.tool),
    answers: { ...answers },
    ...(resume !== undefined ? { resume } : {}),
    ...(rejected !== undefined ? { rejected } : {}),
    ...(approval !== undefined ? { approval } : {})
  })
}

/** Remembers the fiber that got `NeedsInput`: if it ends without calling back, the call was abandoned. */
const watch = (live: LiveCall): Effect.Effect<void> =>
  Effect.withFiber((fiber) =>
    Effect.sync(() => {
      live.detach = fiber.addObserver(() => abandon(live))
    })
  )

const loop = (live: LiveCall, answers: Answers): Effect.Effect<ExecutorResult> =>
  Effect.gen(function* () {
    for (;;) {
      const question = advance(live)
      if (live.gaveUp !== undefined) {
        abandon(live)
        return error(live.gaveUp)
      }
      if (question !== undefined) {
        live.asked = question
        yield* watch(live)
        return needsInput(live, question, answers)
      }
      const started = Date.now()
      const event = yield* take(live, live.spec.timeoutMs - live.spentMs)
      live.spentMs += Date.now() - started
      if (event === undefined) {
        abandon(live)
        return error(`Tool '${live.spec.tool}' timed out after ${live.spec.timeoutMs} ms and was cancelled.`)
      }
      if (event._tag === "Elicited") opened(live, event.elicited)
      else if (event._tag === "InputRequired") {
        const stop = beginRound(live, event.input)
        if (stop !== undefined) {
          abandon(live)
          return error(stop)
        }
      } else {
        // An elicitation still open when the call ends is moot.
        respond(live, "cancel")
        end(live)
        return event._tag === "Finished"
          ? new Completed({ response: toolResponse(event.result) })
          : failed(live, event.error)
      }
    }
  })

/**
 * One executor round: applies the answer to the question asked last round
 * (if any), then waits for the next question or the result. Interrupting
 * it abandons the call. `approvals`: this round's `ExecutionContext.approvals`.
 */
export const run = (live: LiveCall, answers: Answers, approvals = false): Effect.Effect<ExecutorResult> =>
  Effect.suspend(() => {
    live.approvals = approvals
    live.detach?.()
    live.detach = undefined
    const open = live.open
    const asked = live.asked
    if (open !== undefined && asked !== undefined && answers[asked.id] !== undefined)
      apply(live, open, asked, answers[asked.id]!)
    return loop(live, answers)
  }).pipe(Effect.onInterrupt(() => Effect.sync(() => abandon(live))))
