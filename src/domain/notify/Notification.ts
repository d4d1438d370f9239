/**
 * What `[notify]` tells (docs/questions-and-approvals.md#notifications, contract §8): a pure fold of a
 * run's event stream into notifications — `question_opened` when a question or
 * an approval waits, `question_closed` when it is answered, `run_waiting` when
 * the run ends deferred (exit 3), `run_ended` otherwise. Each carries a
 * delivery id derived from what it is about (conversation, inquiry or run,
 * event name), so every retry and every process that delivers it sends the
 * same id, and a receiver can drop the duplicates an at-least-once delivery
 * makes.
 *
 * No secret value is ever carried: a secret question's default is dropped,
 * and a closed secret carries no answer (its run event is `Redacted` anyway).
 * What the domain cannot know — the command that answers a question, the
 * page of a conversation, how to hash — the caller passes in {@link Context}.
 *
 * @example
 * ```ts
 * import * as Notification from "parley/domain/notify/Notification"
 * import * as RunEvent from "parley/domain/run/RunEvent"
 * const context: Notification.Context = {
 *   run: "1764387000000",
 *   hash: (text) => String(text.length),
 *   answerCommand: (id, inquiry) => `parley conversation answer ${id} ${inquiry}`,
 *   url: () => null
 * }
 * const [state, out] = Notification.step(context, Notification.initial, RunEvent.make.ConversationKnown({ conversation_id: "17", created: true }))
 * out // [] — nothing to tell yet; `state` now knows the conversation
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import type * as Schema from "effect/Schema"
import * as AnswerType from "../tool/AnswerType.ts"
import * as QuestionPolicy from "../tool/QuestionPolicy.ts"
import type { NotifyEventName } from "../tool/Config.ts"
import type * as RunEvent from "../run/RunEvent.ts"

/** One notification: its event name, its delivery id, and the JSON document sent. */
export interface Notification {
  readonly event: NotifyEventName
  readonly delivery_id: string
  readonly body: Schema.JsonObject
}

/** What the fold needs from outside the domain. */
export interface Context {
  /** This run's id (unique per run: a start time and a pid), for the run's own events' delivery ids. */
  readonly run: string
  /** A hex digest of text (SHA-256 in parley): delivery ids. */
  readonly hash: (text: string) => string
  /**
   * The command that answers `inquiryId` of conversation `id` (a placeholder for the value, none for a secret;
   * `rememberable` false: an approval asked each time, yes or no only).
   */
  readonly answerCommand: (
    id: string,
    inquiryId: string,
    answerType: AnswerType.AnswerType,
    kind: string,
    rememberable: boolean
  ) => string
  /** The page of conversation `id` when a server is known (never with its token), else null. */
  readonly url: (id: string) => string | null
}

/** What the fold keeps: the conversation (and its title, when it has one), and the questions open now (in order). */
export interface State {
  readonly conversation_id: string | null
  readonly title: string | null
  readonly open: ReadonlyArray<string>
}

/** Before the first event. */
export const initial: State = { conversation_id: null, title: null, open: [] }

/** The delivery id of `event` about `subject` (an inquiry id, or the run) of conversation `id`. */
export const deliveryId = (context: Context, id: string, subject: string, event: NotifyEventName): string =>
  context.hash(`parley-notify\n${id}\n${subject}\n${event}`).slice(0, 32)

/** The conversation a notification is about: its id, and its title (null: untitled) to name it by. */
interface About {
  readonly id: string
  readonly title: string | null
}

const make = (context: Context, about: About, subject: string, event: NotifyEventName, fields: Schema.JsonObject) => {
  const delivery_id = deliveryId(context, about.id, subject, event)
  const body = { event, delivery_id, conversation_id: about.id, title: about.title, ...fields }
  return { event, delivery_id, body }
}

/** The options of a select question, else null. */
const optionsOf = (t: AnswerType.AnswerType): Schema.Json => (t.type === "select" ? [...t.options] : null)

/** A question's default, unless the question is a secret (a secret's default is a secret too). */
const defaultOf = (q: RunEvent.Of<"QuestionOpened">["question"]): Schema.Json =>
  AnswerType.isSecret(q.answer_type) ? null : (q.default ?? null)

const opened = (context: Context, about: About, e: RunEvent.Of<"QuestionOpened">): Notification =>
  make(context, about, e.inquiry_id, "question_opened", {
    inquiry_id: e.inquiry_id,
    kind: e.kind,
    tool: e.call.name,
    tool_call_id: e.call.id,
    question: e.question.text,
    answer_type: e.question.answer_type.type,
    options: optionsOf(e.question.answer_type),
    default: defaultOf(e.question),
    arguments: e.kind === "approval" ? e.call.arguments : null,
    answer_command: context.answerCommand(
      about.id,
      e.inquiry_id,
      e.question.answer_type,
      e.kind,
      QuestionPolicy.of(e.question).rememberable
    ),
    url: context.url(about.id),
    since: e.since
  })

/** The answer a closed question may show: none for a secret, none when it was not answered. */
const answerOf = (e: RunEvent.Of<"QuestionClosed">): Schema.Json =>
  e.outcome._tag === "Answered" && !AnswerType.isSecret(e.question.answer_type) ? e.outcome.answer : null

const closed = (context: Context, about: About, e: RunEvent.Of<"QuestionClosed">): Notification =>
  make(context, about, e.inquiry_id, "question_closed", {
    inquiry_id: e.inquiry_id,
    kind: e.kind,
    tool: e.call.name,
    tool_call_id: e.call.id,
    question: e.question.text,
    answered_by: e.answered_by,
    via: e.via ?? null,
    outcome: e.outcome._tag === "Answered" ? "answered" : e.outcome._tag === "Redacted" ? "answered" : "cancelled",
    answer: answerOf(e),
    url: context.url(about.id)
  })

const stopped = (context: Context, state: State, about: About, e: RunEvent.Of<"Stopped">): Notification => {
  const waiting = e.ending === "deferred"
  return make(context, about, `run:${context.run}`, waiting ? "run_waiting" : "run_ended", {
    ending: e.ending,
    exit_code: waiting ? 3 : e.ending === "failed" ? 1 : 0,
    waiting: waiting ? [...state.open] : [],
    incomplete: e.incomplete === null ? null : e.incomplete.state,
    url: context.url(about.id)
  })
}

/** The next state, and what `event` tells (nothing before the conversation is known). */
export const step = (
  context: Context,
  state: State,
  event: RunEvent.RunEvent
): readonly [State, ReadonlyArray<Notification>] => {
  if (event._tag === "ConversationKnown")
    return [{ ...state, conversation_id: event.conversation_id, title: event.title ?? null }, []]
  const id = state.conversation_id
  if (id === null) return [state, []]
  const about: About = { id, title: state.title }
  switch (event._tag) {
    case "QuestionOpened":
      return [{ ...state, open: [...state.open, event.inquiry_id] }, [opened(context, about, event)]]
    case "QuestionClosed":
      return [{ ...state, open: state.open.filter((q) => q !== event.inquiry_id) }, [closed(context, about, event)]]
    case "Stopped":
      return [initial, [stopped(context, state, about, event)]]
    default:
      return [state, []]
  }
}

/** Whether a hook that listed `events` (none: every event) wants `n`. */
export const wanted = (n: { readonly event: NotifyEventName }, events: ReadonlyArray<NotifyEventName> | undefined) =>
  events === undefined || events.includes(n.event)

/**
 * The page of a conversation on the server `[server.web]` names, when it
 * names a port (a server is then known: `parley serve` listens there); the
 * token is never part of it (the page asks for it, or has its cookie).
 */
export const pageUrl =
  (web: { readonly bind?: string | undefined; readonly port?: number | undefined } | undefined) =>
  (id: string): string | null => {
    if (web?.port === undefined || web.port === 0) return null
    const bind = web.bind === undefined || web.bind === "0.0.0.0" ? "127.0.0.1" : web.bind === "::" ? "::1" : web.bind
    const host = bind.includes(":") ? `[${bind}]` : bind
    return `http://${host}:${web.port}/conversations/${encodeURIComponent(id)}`
  }
