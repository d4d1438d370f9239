/**
 * `parley inbox` as a program (docs/cli.md#parley-inbox): every open
 * question of every turn — running (asked of its host through
 * `RunningTurns`) or waiting for input on disk — oldest first, each with its
 * conversation's title and when it was asked. Answering one is
 * `Answer.deliver`'s: to the running turn, else into the waiting turn.
 *
 * It costs what `conversation ls` costs: the store's listing says which
 * turns are incomplete, and a store that keeps the open questions with its
 * listing (the file store's index) is not read again; only an incomplete
 * turn's host is asked, and only a store that does not keep them (PostgreSQL)
 * loads a waiting conversation.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Inbox from "parley/programs/Inbox"
 * const program = Effect.map(Inbox.gather, (items) => items.map((i) => `${i.title}: ${i.question.question.text}`))
 * // Effect<ReadonlyArray<string>, StoreError | NotPrivate, ConversationStore | RunningTurns>
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { InquiryId } from "../domain/event/InquiryId.ts"
import * as Timestamp from "../domain/event/Timestamp.ts"
import type { ConversationId } from "../domain/storage/ConversationId.ts"
import * as OpenQuestions from "../domain/stream/OpenQuestions.ts"
import { Question } from "../domain/tool/Question.ts"
import * as Answer from "./Answer.ts"
import { ConversationStore } from "../services/ConversationStore.ts"
import type { ConversationSummary } from "../services/ConversationStoreTag.ts"
import { type OpenQuestion, RunningTurns } from "../services/RunningTurns.ts"

/** One open question in the inbox. */
export interface InboxItem {
  readonly conversationId: ConversationId
  readonly title: string | null
  /** The question as every answerer sees it (`Answer.row` renders it). */
  readonly question: OpenQuestion
  /** When it was asked (RFC 3339), when the record says. */
  readonly since: string | null
  /** The pid of the process running the turn; `null` for a turn waiting on disk. */
  readonly pid: number | null
}

const decodeQuestion = Schema.decodeUnknownResult(Question)

/** The open questions a listing kept for a waiting turn, or the turn's own when it kept none (or they do not read). */
const waitingOf = (summary: ConversationSummary) =>
  Effect.gen(function* () {
    const kept = summary.waiting
    if (kept !== undefined) {
      const questions = kept.map((w) => decodeQuestion(w.question))
      if (questions.every(Result.isSuccess)) return kept.map((w, i) => ({ ...w, decoded: questions[i]!.success }))
    }
    const conversation = yield* ConversationStore.use((store) => store.load(summary.id))
    return OpenQuestions.ofEntries(conversation.entries).map((w) => ({
      ...w,
      decoded: Result.getOrThrow(decodeQuestion(w.question))
    }))
  })

const itemOf = (
  summary: ConversationSummary,
  question: OpenQuestion,
  since: string | undefined,
  pid: number | null
) => ({
  conversationId: summary.id,
  title: summary.title,
  question,
  since: since === undefined ? null : Timestamp.toRfc3339(since),
  pid
})

/** The open questions of one incomplete turn: its host's when it runs, else those recorded on disk. */
const itemsOf = (summary: ConversationSummary) =>
  Effect.scoped(
    Effect.gen(function* () {
      const running = yield* RunningTurns.use((turns) => turns.find(summary.id))
      const info = Option.isSome(running) ? yield* Effect.option(running.value.info) : Option.none()
      const onDisk = summary.incomplete?.state === "waiting-for-input" || Option.isSome(info)
      const recorded = onDisk ? yield* waitingOf(summary) : []
      if (Option.isSome(info)) {
        // The host knows what is open now; the record says since when (a question is recorded as it opens).
        const since = new Map(recorded.map((w) => [w.inquiryId, w.since]))
        return info.value.open.map((q) => itemOf(summary, q, since.get(q.inquiryId), info.value.pid))
      }
      return recorded.map((w) =>
        itemOf(
          summary,
          {
            inquiryId: w.inquiryId as InquiryId,
            toolCallId: w.toolCallId,
            tool: w.tool,
            question: w.decoded
          },
          w.since,
          null
        )
      )
    })
  )

/** Oldest first; a question with no known time after the rest, then by conversation. */
const byAge = (a: InboxItem, b: InboxItem): number =>
  a.since === null || b.since === null
    ? (a.since === null ? 1 : 0) - (b.since === null ? 1 : 0) || a.conversationId.localeCompare(b.conversationId)
    : a.since.localeCompare(b.since) || a.conversationId.localeCompare(b.conversationId)

/**
 * Every open question of the storage's turns, running or waiting on disk,
 * oldest first. A running host that stops while it is asked is read from
 * disk instead.
 */
export const gather = Effect.gen(function* () {
  const { conversations } = yield* ConversationStore.use((store) => store.list())
  const incomplete = conversations.filter((c) => c.incomplete !== null)
  const items = yield* Effect.forEach(incomplete, itemsOf, { concurrency: 8 })
  return items.flat().sort(byAge) as ReadonlyArray<InboxItem>
})

/** One item as `parley inbox --format json` shows it: the question's row (as `conversation answer` lists it), and where it is. */
export const row = (item: InboxItem, now: number): Schema.JsonObject => {
  const question = Answer.row(item.question)
  return {
    conversation_id: item.conversationId,
    title: item.title,
    inquiry_id: item.question.inquiryId,
    // A row that says its kind (an approval) says so over this default.
    kind: "question",
    ...question,
    since: item.since,
    age_seconds: item.since === null ? null : Math.max(0, Math.round((now - Date.parse(item.since)) / 1000)),
    running: item.pid !== null,
    pid: item.pid
  }
}

/** Delivers `value` to the item's question (`Answer.deliver`: the running turn, else the waiting turn on disk). */
export const answer = (item: InboxItem, value: Schema.Json) =>
  Answer.deliver(item.conversationId, item.question.inquiryId, value)
