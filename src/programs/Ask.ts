/**
 * Any program asks (contract §8, docs/ask.md): one question recorded as a
 * turn of its own (`domain/tool/Ask.ts` says what is recorded), opened with
 * every answerer (`PendingAnswers`: the asker's own prompt, another
 * terminal, the inbox, the API, the page — through the host socket the edge
 * serves from the run's events), and closed once with the first answer that
 * fits. Every step is published on the `RunEvents` stream as a run's are
 * (`ConversationKnown`, `ToolStarted`, `QuestionOpened`, `QuestionClosed`,
 * `ToolFinished`, `Stopped`): whoever watches a run watches an ask.
 *
 * The asker holds the conversation's lock while it waits, so a question
 * whose asker was killed is known by its lock: the next process that takes
 * the conversation closes it as cancelled (`user`, {@link reapAbandoned}).
 * Interrupting {@link ask} closes its question the same way.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Ask from "parley/programs/Ask"
 * const program = Effect.gen(function* () {
 *   const answered = yield* Ask.ask("Deploy to prod?", { type: "boolean", target: Ask.titled("questions from /srv/app") })
 *   return answered.answer === true
 * }) // needs ConversationStore | PendingAnswers | RunEvents | RunningTurns
 * ```
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ChatResponse } from "../domain/event/ChatResponse.ts"
import * as Events from "../domain/event/Events.ts"
import * as InquiryId from "../domain/event/InquiryId.ts"
import { InquirySource } from "../domain/event/InquirySource.ts"
import * as PermissionInquiry from "../domain/event/PermissionInquiry.ts"
import * as Timestamp from "../domain/event/Timestamp.ts"
import { ToolCallRequest } from "../domain/event/ToolCallRequest.ts"
import * as RunEvent from "../domain/run/RunEvent.ts"
import * as ConversationMetadata from "../domain/storage/ConversationMetadata.ts"
import type { ConversationId } from "../domain/storage/ConversationId.ts"
import * as IncompleteTurn from "../domain/stream/IncompleteTurn.ts"
import * as AskDomain from "../domain/tool/Ask.ts"
import { type Question, toInquiryQuestion } from "../domain/tool/Question.ts"
import type { ConversationSession } from "../services/ConversationSession.ts"
import { ConversationStore } from "../services/ConversationStore.ts"
import { type Offered, PendingAnswers, type Waiting } from "../services/PendingAnswers.ts"
import { RunEvents } from "../services/RunEvents.ts"
import { RunningTurns } from "../services/RunningTurns.ts"

/** Which conversation records the question. */
export type Target =
  | { readonly _tag: "Id"; readonly id: ConversationId }
  | { readonly _tag: "New"; readonly title: string }
  | { readonly _tag: "Titled"; readonly title: string }

/** The newest conversation titled `title` that no other asker holds, else a new one so titled. */
export const titled = (title: string): Target => ({ _tag: "Titled", title })

/** The title of a working directory's questions (`parley ask`'s default conversation). */
export const titleFor = (dir: string): string => `questions from ${dir}`

/**
 * The approval remembered for `tool` (`always` → `"y"`, `never` → `"n"`) in
 * the conversations titled `title` (a Claude Code session's), if any: the
 * tool's next call in the session is decided without asking.
 */
export const rememberedIn = (title: string, tool: string) =>
  Effect.gen(function* () {
    const store = yield* ConversationStore
    const { conversations } = yield* store.list()
    for (const c of conversations.filter((c) => c.title === title)) {
      const conversation = yield* store.load(c.id)
      const found = AskDomain.rememberedApproval(conversation.entries, tool)
      if (found !== undefined) return Option.some(found)
    }
    return Option.none<"y" | "n">()
  })

/** An approval asked for another program's tool call (Claude Code's hook): `Run <tool>?`, answered yes/no/always/never. */
export interface Approval {
  readonly tool: string
  readonly arguments: Schema.JsonObject
}

/** How to ask. */
export interface AskOptions extends AskDomain.QuestionOptions {
  readonly target: Target
  /** Asking again with the same key while it is open joins that question. */
  readonly key?: string | undefined
  /** The inquiry's source name (`{"source":"tool","name":…}`; default `ask`). */
  readonly source?: string | undefined
  /** Ask for an approval of a call instead of a question. */
  readonly approval?: Approval | undefined
  readonly timeout?: Duration.Input | undefined
  /** With a timeout: answer the default (`default`) or fail with {@link AskTimedOut} (`fail`, the default). */
  readonly onTimeout?: "default" | "fail" | undefined
  /** A prompt of the asker's own (its terminal): what it reads is offered like any answer (`via: "ask"`). */
  readonly prompt?: ((question: Question) => Effect.Effect<Schema.Json, unknown>) | undefined
  /** Completes when the question is cancelled from another surface (the host's `Interrupt`). */
  readonly cancelled?: Effect.Effect<void> | undefined
}

/** The answer, who gave it and through which surface. */
export interface Answered {
  readonly conversationId: ConversationId
  readonly inquiryId: string
  readonly answer: Schema.Json
  readonly by: RunEvent.Answerer
  readonly via?: RunEvent.Via | undefined
  /** The approval's answer is to be remembered (`always`/`never`). */
  readonly remember?: boolean | undefined
  /** Another asker's open question with the same key was joined. */
  readonly joined: boolean
}

/** Nobody answered in time (exit 3). */
export class AskTimedOut extends Schema.TaggedError<AskTimedOut>()("AskTimedOut", {
  conversation_id: Schema.String,
  inquiry_id: Schema.String
}) {
  override get message() {
    return `Nobody answered ${this.inquiry_id} in time.`
  }
}

/** The question was cancelled from another surface (exit 130). */
export class AskCancelled extends Schema.TaggedError<AskCancelled>()("AskCancelled", {
  conversation_id: Schema.String,
  inquiry_id: Schema.String
}) {
  override get message() {
    return `The question ${this.inquiry_id} was cancelled.`
  }
}

/** A joined question's answer is a secret, which only its own asker receives. */
export class AskSecretJoined extends Schema.TaggedError<AskSecretJoined>()("AskSecretJoined", {
  inquiry_id: Schema.String
}) {
  override get message() {
    return `The question ${this.inquiry_id} was answered with a secret, which only the process that asked it receives.`
  }
}

/** A question recorded and open. */
interface Opened {
  readonly session: ConversationSession
  readonly call: ToolCallRequest
  readonly shown: RunEvent.ToolCall
  readonly inquiryId: InquiryId.InquiryId
  readonly question: Question
  readonly kind: RunEvent.QuestionKind
}

/** How the wait ended. */
type Ending =
  | { readonly _tag: "Answer"; readonly offered: Offered }
  | { readonly _tag: "TimedOut" }
  | { readonly _tag: "Cancelled" }

const isLocked = (e: { readonly _tag: string }) => e._tag === "ConversationLocked"

/** The conversation to record in, taken for writing (another asker's is passed over for a title). */
const take = (target: Target) =>
  Effect.gen(function* () {
    const store = yield* ConversationStore
    if (target._tag === "Id") return { session: yield* store.open(target.id), created: false }
    if (target._tag === "Titled") {
      const { conversations } = yield* store.list()
      for (const c of conversations.filter((c) => c.title === target.title && !c.archived)) {
        const opened = yield* Effect.result(store.open(c.id))
        if (opened._tag === "Success") return { session: opened.success, created: false }
        if (!isLocked(opened.failure)) return yield* opened.failure
      }
    }
    const metadata = ConversationMetadata.make({ title: target.title, last_activated_at: Timestamp.now() })
    return { session: yield* store.create({ metadata }), created: true }
  })

/** Closes every question of `session`'s incomplete turn whose asker is gone (it holds the lock no more): cancelled, `user`. */
export const reap = (session: ConversationSession) =>
  Effect.gen(function* () {
    const incomplete = yield* session.incompleteTurn
    if (incomplete === null) return 0
    const abandoned = IncompleteTurn.analyze(incomplete).pendingInquiries.filter((p) => AskDomain.isAskCall(p.toolCall))
    for (const p of abandoned) {
      const at = Timestamp.now()
      const response = AskDomain.response({ _tag: "Cancelled", reason: "user" })
      yield* session.append([
        Events.cancelled(at, p.request.id, "user"),
        Events.toolCallResponse(at, p.toolCall.id, response),
        ChatResponse.message(at, response.content)
      ])
    }
    return abandoned.length
  })

/**
 * Closes the questions of conversation `id` whose asker was killed, when no
 * live process holds it (its lock is free or stale). How many were closed;
 * 0 when an asker holds it.
 */
export const reapAbandoned = (id: ConversationId) =>
  Effect.scoped(
    Effect.flatMap(ConversationStore, (store) => Effect.flatMap(store.open(id), reap)).pipe(
      Effect.catchTag("ConversationLocked", () => Effect.succeed(0))
    )
  )

/** Records the call and its question, announces them and opens the question with every answerer. */
const open = (
  session: ConversationSession,
  question: Question,
  options: AskOptions
): Effect.Effect<Opened & { readonly waiting: Waiting }, unknown, PendingAnswers | RunEvents | Scope.Scope> =>
  Effect.gen(function* () {
    const events = yield* RunEvents
    const at = Timestamp.now()
    const approval = options.approval
    const callId = `${AskDomain.CALL_PREFIX}${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`
    const call = new ToolCallRequest({
      timestamp: at,
      id: callId,
      name: approval?.tool ?? AskDomain.TOOL,
      arguments: approval?.arguments ?? AskDomain.callArguments(question, options.key),
      metadata: AskDomain.callMetadata
    })
    const inquiryId = InquiryId.forToolQuestion(callId, approval ? PermissionInquiry.questionId : question.id, 1)
    const source = InquirySource.tool(options.source ?? AskDomain.TOOL)
    const request = Events.inquiryRequest(
      at,
      inquiryId,
      source,
      toInquiryQuestion(question),
      approval ? PermissionInquiry.metadata : {}
    )
    // A turn as JP reads one: the question as the request, the call, its inquiry; closed by the response and a reply.
    yield* session.append([Events.turnStart(at), Events.chatRequest(at, question.text), call, request])
    const shown = RunEvent.toolCall(call)
    const kind: RunEvent.QuestionKind = approval ? "approval" : "question"
    events.publishUnsafe(RunEvent.make.ToolCallsAnnounced({ calls: [shown] }))
    events.publishUnsafe(RunEvent.make.ToolStarted({ call: shown, resumed: false }))
    events.publishUnsafe(
      RunEvent.make.QuestionOpened({
        inquiry_id: inquiryId,
        kind,
        call: shown,
        question,
        source,
        audience: "person",
        since: at
      })
    )
    const waiting = yield* PendingAnswers.use((p) =>
      p.open({ inquiryId, kind, conversationId: session.id, call: shown, question, since: at })
    )
    return { session, call, shown, inquiryId, question, kind, waiting }
  })

/** The asker's own prompt, offered like any answer: the first that fits wins. */
const promptHere = (opened: Opened, options: AskOptions) =>
  options.prompt === undefined
    ? Effect.void
    : Effect.forkScoped(
        Effect.flatMap(options.prompt(opened.question), (value) =>
          PendingAnswers.use((p) => p.offer(opened.inquiryId, value, "you", { via: "ask" }))
        ).pipe(Effect.ignore)
      )

/** Waits for the first answer, a cancel from elsewhere, or the timeout. */
const wait = (opened: Opened & { readonly waiting: Waiting }, options: AskOptions) =>
  Effect.gen(function* () {
    yield* promptHere(opened, options)
    const answer = Effect.map(opened.waiting.answer, (offered): Ending => ({ _tag: "Answer", offered }))
    const cancel: Ending = { _tag: "Cancelled" }
    const cancelled = Effect.as(options.cancelled ?? Effect.never, cancel)
    const first = Effect.raceFirst(answer, cancelled)
    if (options.timeout === undefined) return yield* first
    const done = yield* Effect.timeoutOption(first, options.timeout)
    if (Option.isSome(done)) return done.value
    // Taken for parley: an answer that comes now is refused; one that came first is the answer.
    if (!(yield* opened.waiting.claim("parley"))) return yield* answer
    const fallback = opened.question.default
    return options.onTimeout === "default" && fallback !== undefined
      ? ({ _tag: "Answer", offered: { answer: fallback, by: "parley" } } satisfies Ending)
      : ({ _tag: "TimedOut" } satisfies Ending)
  })

/** Records how the question closed (a secret redacted), and announces it. */
const close = (opened: Opened, ending: Ending) =>
  Effect.gen(function* () {
    const events = yield* RunEvents
    const at = Timestamp.now()
    const secret = opened.question.answer_type.type === "secret"
    const outcome: RunEvent.QuestionOutcome =
      ending._tag === "Answer"
        ? secret
          ? { _tag: "Redacted" }
          : { _tag: "Answered", answer: ending.offered.answer }
        : { _tag: "Cancelled", reason: ending._tag === "Cancelled" ? "user" : "no_prompt_backend" }
    const inquiry =
      outcome._tag === "Answered"
        ? Events.answered(
            at,
            opened.inquiryId,
            outcome.answer,
            ending._tag === "Answer" && ending.offered.remember === true ? AskDomain.rememberedMetadata : {}
          )
        : outcome._tag === "Redacted"
          ? Events.redacted(at, opened.inquiryId)
          : Events.cancelled(at, opened.inquiryId, outcome.reason)
    const response = AskDomain.response(outcome)
    yield* opened.session.append([
      inquiry,
      Events.toolCallResponse(at, opened.call.id, response),
      ChatResponse.message(at, response.content)
    ])
    const by: RunEvent.Answerer = ending._tag === "Answer" ? ending.offered.by : "parley"
    const via = ending._tag === "Answer" ? ending.offered.via : undefined
    const { inquiryId, kind, shown, question } = opened
    events.publishUnsafe(
      RunEvent.make.QuestionClosed({
        inquiry_id: inquiryId,
        kind,
        call: shown,
        question,
        by,
        outcome,
        ...(via !== undefined ? { via } : {})
      })
    )
    events.publishUnsafe(RunEvent.make.ToolFinished({ call: shown, ran: true, response }))
    events.publishUnsafe(
      RunEvent.make.Stopped({ ending: ending._tag === "Answer" ? "completed" : "interrupted", incomplete: null })
    )
  })

/** Another asker's open question with `key`, if one runs among the target's conversations. */
const keyed = (target: Target, key: string) =>
  Effect.gen(function* () {
    const ids =
      target._tag === "Id"
        ? [target.id]
        : target._tag === "New"
          ? []
          : (yield* ConversationStore.use((s) => s.list())).conversations
              .filter((c) => c.title === target.title && c.incomplete !== null)
              .map((c) => c.id)
    for (const id of ids) {
      const turn = yield* RunningTurns.use((t) => t.find(id))
      if (Option.isNone(turn)) continue
      const info = yield* Effect.option(turn.value.info)
      const found = Option.isSome(info)
        ? info.value.open.find((q) => AskDomain.isAskCallId(q.toolCallId) && AskDomain.keyOf(q.arguments) === key)
        : undefined
      if (found !== undefined) return Option.some({ turn: turn.value, question: found })
    }
    return Option.none()
  })

type Keyed = Effect.Success<ReturnType<typeof keyed>> extends Option.Option<infer A> ? A : never

/** The `QuestionClosed` of `inquiryId` among a run's events. */
const closedOf =
  (inquiryId: string) =>
  (e: RunEvent.Sequenced): e is RunEvent.Sequenced & { readonly event: RunEvent.Of<"QuestionClosed"> } =>
    e.event._tag === "QuestionClosed" && e.event.inquiry_id === inquiryId

/** Waits for a joined question's answer, offering the asker's own prompt's to it too. */
const join = (conversationId: ConversationId, joined: Keyed, options: AskOptions) =>
  Effect.gen(function* () {
    const { turn, question } = joined
    const inquiryId = question.inquiryId
    const ids = { conversation_id: conversationId, inquiry_id: inquiryId }
    if (options.prompt !== undefined)
      yield* Effect.forkScoped(
        Effect.flatMap(options.prompt(question.question), (value) => turn.offer(inquiryId, value, "ask")).pipe(
          Effect.ignore
        )
      )
    const closing = Stream.runHead(Stream.map(Stream.filter(turn.subscribe(0), closedOf(inquiryId)), (e) => e.event))
    const timed =
      options.timeout === undefined
        ? closing
        : Effect.map(Effect.timeoutOption(closing, options.timeout), Option.flatten)
    const closed = yield* Effect.catch(timed, () => Effect.succeed(Option.none()))
    if (Option.isNone(closed)) return yield* new AskTimedOut(ids)
    const outcome = closed.value.outcome
    if (outcome._tag === "Redacted") return yield* new AskSecretJoined({ inquiry_id: inquiryId })
    if (outcome._tag === "Cancelled") return yield* new AskCancelled(ids)
    return {
      conversationId,
      inquiryId,
      answer: outcome.answer,
      by: closed.value.answered_by,
      via: closed.value.via,
      joined: true
    } satisfies Answered
  })

/** Asks in a conversation taken for writing: records, waits, closes; interrupted, closes as cancelled (`user`). */
const askIn = (session: ConversationSession, question: Question, options: AskOptions) =>
  Effect.gen(function* () {
    yield* reap(session)
    const opened = yield* open(session, question, options)
    const ids = { conversation_id: session.id, inquiry_id: opened.inquiryId }
    const ending = yield* wait(opened, options).pipe(
      Effect.onInterrupt(() => Effect.ignore(close(opened, { _tag: "Cancelled" })))
    )
    yield* close(opened, ending)
    if (ending._tag === "TimedOut") return yield* new AskTimedOut(ids)
    if (ending._tag === "Cancelled") return yield* new AskCancelled(ids)
    const { offered } = ending
    return {
      conversationId: session.id,
      inquiryId: opened.inquiryId,
      answer: offered.answer,
      by: offered.by,
      via: offered.via,
      remember: offered.remember,
      joined: false
    } satisfies Answered
  })

/**
 * Asks `text` and waits for the first answer from any surface: the typed
 * answer, who gave it and through which surface. Fails with
 * {@link AskTimedOut} or {@link AskCancelled}; interrupted, the question is
 * closed as cancelled (`user`).
 */
export const ask = (text: string, options: AskOptions) =>
  Effect.scoped(
    Effect.gen(function* () {
      const question = AskDomain.question(text, options)
      if (options.key !== undefined) {
        const found = yield* keyed(options.target, options.key)
        if (Option.isSome(found)) return yield* join(found.value.turn.id, found.value, options)
      }
      const { session, created } = yield* take(options.target)
      const { title } = yield* session.metadata
      yield* RunEvents.use((events) =>
        events.publish(
          RunEvent.make.ConversationKnown({
            conversation_id: session.id,
            created,
            detached_policy: "wait",
            ...(title !== undefined ? { title } : {})
          })
        )
      )
      return yield* askIn(session, question, options)
    })
  )
