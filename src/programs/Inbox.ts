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
import * as AskDomain from "../domain/tool/Ask.ts"
import * as Answer from "./Answer.ts"
import * as Ask from "./Ask.ts"
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

/** An item and the recorded timestamp it sorts by (JP's format, fixed-width: it orders as text). */
interface Sorted {
  readonly at: string | undefined
  readonly item: InboxItem
}

const decodeQuestion = Schema.decodeUnknownResult(Question)

/**
 * A question a listing kept (the fields of a `Question` it built from the
 * record), without decoding it again: a few microseconds instead of a
 * schema's hundred, for each of a thousand waiting turns. A value that is
 * not a question's shape (an index edited by hand) is decoded, and refused.
 */
const questionOf = (fields: typeof Question.Encoded): Question | undefined =>
  typeof fields?.id === "string" &&
  typeof fields.text === "string" &&
  typeof fields.answer_type === "object" &&
  fields.answer_type !== null &&
  "type" in fields.answer_type
    ? // Checked when it was recorded; the listing kept its fields as they were.
      new Question(fields as ConstructorParameters<typeof Question>[0], { disableChecks: true })
    : Result.getOrUndefined(decodeQuestion(fields))

type Kept = OpenQuestions.WaitingQuestion & { readonly decoded: Question }

/** The open questions a listing kept for a waiting turn, if it kept them and they read. */
const keptOf = (summary: ConversationSummary): ReadonlyArray<Kept> | undefined => {
  const out: Array<Kept> = []
  for (const w of summary.waiting ?? []) {
    const decoded = questionOf(w.question)
    if (decoded === undefined) return undefined
    out.push({ ...w, decoded })
  }
  return summary.waiting === undefined ? undefined : out
}

/** The open questions a listing kept for a waiting turn, or the turn's own when it kept none (or they do not read). */
const waitingOf = (summary: ConversationSummary) =>
  Effect.gen(function* () {
    const kept = keptOf(summary)
    if (kept !== undefined) return kept
    const conversation = yield* ConversationStore.use((store) => store.load(summary.id))
    return OpenQuestions.ofEntries(conversation.entries).map((w) => ({
      ...w,
      decoded: Result.getOrThrow(decodeQuestion(w.question))
    }))
  })

const JP_TIME = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d+))?$/

/** RFC 3339 of a recorded timestamp: by its text when it is JP's usual form (`Timestamp.toRfc3339` costs ~50 µs). */
const rfc3339 = (at: string): string => {
  const m = JP_TIME.exec(at)
  if (m === null) return Timestamp.toRfc3339(at)
  const fraction = (m[3] ?? "").replace(/0+$/, "")
  return `${m[1]}T${m[2]}${fraction === "" ? "" : `.${fraction}`}Z`
}

const itemOf = (
  summary: ConversationSummary,
  question: OpenQuestion,
  at: string | undefined,
  pid: number | null
): Sorted => ({
  at,
  item: {
    conversationId: summary.id,
    title: summary.title,
    question,
    since: at === undefined ? null : rfc3339(at),
    pid
  }
})

/** The items of a turn waiting on disk. */
const onDiskItems = (summary: ConversationSummary, recorded: ReadonlyArray<Kept>): Array<Sorted> =>
  recorded.map((w) =>
    itemOf(
      summary,
      {
        // An inquiry id as recorded: the turn's own.
        inquiryId: w.inquiryId as InquiryId,
        kind: w.kind ?? "question",
        toolCallId: w.toolCallId,
        tool: w.tool,
        ...(w.arguments !== undefined ? { arguments: w.arguments } : {}),
        question: w.decoded
      },
      w.since,
      null
    )
  )

/** The open questions of one incomplete turn: its host's when it runs, else those recorded on disk. */
const itemsOf = (summary: ConversationSummary, hosted: ReadonlySet<string> | undefined) =>
  Effect.scoped(
    Effect.gen(function* () {
      const running =
        hosted === undefined || hosted.has(summary.id)
          ? yield* RunningTurns.use((turns) => turns.find(summary.id))
          : Option.none()
      const info = Option.isSome(running) ? yield* Effect.option(running.value.info) : Option.none()
      const onDisk = summary.incomplete?.state === "waiting-for-input" || Option.isSome(info)
      const recorded = onDisk ? yield* waitingOf(summary) : []
      if (Option.isNone(info)) return onDiskItems(summary, recorded)
      // The host knows what is open now; the record says since when (a question is recorded as it opens).
      const since = new Map(recorded.map((w) => [w.inquiryId, w.since]))
      return info.value.open.map((q) => itemOf(summary, q, since.get(q.inquiryId), info.value.pid))
    })
  )

/** Oldest first; a question with no known time after the rest, then by conversation. */
const byAge = (a: Sorted, b: Sorted): number =>
  a.at === undefined || b.at === undefined
    ? (a.at === undefined ? 1 : 0) - (b.at === undefined ? 1 : 0) || compareIds(a, b)
    : a.at < b.at
      ? -1
      : a.at > b.at
        ? 1
        : compareIds(a, b)

const compareIds = (a: Sorted, b: Sorted): number =>
  a.item.conversationId < b.item.conversationId ? -1 : a.item.conversationId > b.item.conversationId ? 1 : 0

/**
 * Every open question of the storage's turns, running or waiting on disk,
 * oldest first. A running host that stops while it is asked is read from
 * disk instead.
 */
export const gather = Effect.gen(function* () {
  const { conversations } = yield* ConversationStore.use((store) => store.list())
  // Only a conversation with a host's socket may run: the others are not asked.
  const candidates = (yield* RunningTurns).candidates
  const hosted = candidates === undefined ? undefined : yield* candidates
  const sorted: Array<Sorted> = []
  const asked: Array<ConversationSummary> = []
  for (const c of conversations) {
    if (c.incomplete === null) continue
    // The common case, a turn waiting on disk whose questions the listing kept: no effect of its own.
    const kept = hosted !== undefined && !hosted.has(c.id) ? keptOf(c) : undefined
    if (kept !== undefined) sorted.push(...onDiskItems(c, kept))
    else if (hosted === undefined || hosted.has(c.id) || c.incomplete.state === "waiting-for-input") asked.push(c)
  }
  for (const more of yield* Effect.forEach(asked, (c) => itemsOf(c, hosted), { concurrency: 8 })) sorted.push(...more)
  const reaped = yield* reapAbandonedAsks(sorted)
  const items: ReadonlyArray<InboxItem> = sorted
    .filter((s) => !reaped.has(s.item.conversationId))
    .sort(byAge)
    .map((s) => s.item)
  return items
})

/**
 * Closes the questions of `parley ask`s that were killed (an asker's question
 * waiting on disk, its conversation's lock free: nobody will ever read its
 * answer), as cancelled (`user`): the conversations closed so.
 */
const reapAbandonedAsks = (sorted: ReadonlyArray<Sorted>) =>
  Effect.gen(function* () {
    const ids = new Set<ConversationId>()
    for (const s of sorted)
      if (s.item.pid === null && AskDomain.isAskCallId(s.item.question.toolCallId)) ids.add(s.item.conversationId)
    const reaped = new Set<ConversationId>()
    for (const id of ids) {
      const closed = yield* Effect.orElseSucceed(Ask.reapAbandoned(id), () => 0)
      if (closed > 0) reaped.add(id)
    }
    return reaped
  })

/** Nobody runs a turn: what {@link gather} sees of the storage alone. */
const noneRunning = RunningTurns.of({
  find: () => Effect.succeed(Option.none()),
  candidates: Effect.succeed(new Set())
})

/**
 * The open questions of the turns waiting on disk, oldest first, hosts not
 * asked (a caller that follows the running turns itself, `parley serve`,
 * leaves out the conversations it knows run).
 */
export const waitingOnDisk = Effect.provideService(gather, RunningTurns, noneRunning)

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
