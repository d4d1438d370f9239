/**
 * `parley inbox [--format json]` (docs/cli.md#parley-inbox): every open
 * question of the storage's turns, running or waiting on disk, oldest first
 * (`programs/Inbox.ts` gathers them). At a terminal it asks them one by one
 * (Escape skips one; Ctrl-C twice in a row quits) and delivers each answer
 * through `Answer.deliver`: to the running turn, else into the waiting turn
 * on disk, which then says how to resume it. Without a terminal it prints
 * them, each with the command that answers it; `--format json` prints one
 * array for scripts.
 *
 * @example
 * ```sh
 * parley inbox
 * parley inbox --format json
 * ```
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Command from "effect/cli/Command"
import * as ConversationId from "../domain/storage/ConversationId.ts"
import * as AnswerFit from "../domain/tool/AnswerFit.ts"
import * as PermissionInquiry from "../domain/event/PermissionInquiry.ts"
import * as QuestionPolicy from "../domain/tool/QuestionPolicy.ts"
import * as HostTurns from "../layers/host/HostTurns.ts"
import * as Inbox from "../programs/Inbox.ts"
import { RunningTurns } from "../services/RunningTurns.ts"
import { withStore } from "./conversation/Shared.ts"
import * as ErrorLine from "./ErrorLine.ts"
import { formatFlag } from "./Format.ts"
import * as NotifyHooks from "./NotifyHooks.ts"
import * as Hint from "./Hint.ts"
import * as PersonTerminal from "../layers/prompt/PersonTerminal.ts"
import { storage } from "./Root.ts"
import * as Style from "./Style.ts"

/**
 * How long `parley inbox` keeps delivering what earlier processes left in the
 * notification spool, counted from its start (after its output: only when a
 * receiver is slow or down does the process end later than its output, by at most this).
 */
const FLUSH_BOUND_MS = 1000

/** How long ago, in the largest unit that fits ("40 s", "4 min", "3 h", "2 d"). */
export const age = (since: string | null, now: number): string => {
  if (since === null) return "at an unknown time"
  const s = Math.max(0, Math.round((now - Date.parse(since)) / 1000))
  if (s < 60) return `${s} s ago`
  if (s < 3600) return `${Math.floor(s / 60)} min ago`
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`
  return `${Math.floor(s / 86_400)} d ago`
}

const where = (item: Inbox.InboxItem): string => (item.pid === null ? "waiting on disk" : `running, pid ${item.pid}`)

/** The line that names an item: its conversation, its tool and question, what fits, its age and where it is. */
const headline = (item: Inbox.InboxItem, now: number): string => {
  const q = item.question
  const title = item.title === null ? "(untitled)" : Style.printable(item.title)
  return `${ConversationId.display(item.conversationId)}  ${title}  ${Style.printable(q.tool)}: ${Style.printable(q.question.text.split("\n")[0]!)} [${q.kind === "approval" ? PermissionInquiry.expectedOf(QuestionPolicy.of(q.question).rememberable, PermissionInquiry.isReviewQuestion(q.question.id)) : AnswerFit.expected(q.question.answer_type)}]  asked ${age(item.since, now)} (${where(item)})`
}

/** The text listing: each item, and the command that answers it. */
const listing = (items: ReadonlyArray<Inbox.InboxItem>, hint: Hint.Context, now: number): string => {
  if (items.length === 0) return "No open questions."
  const lines = [`${items.length} open question${items.length === 1 ? "" : "s"}, oldest first:`]
  for (const item of items) {
    const type = item.question.question.answer_type
    const placeholder = AnswerFit.placeholder(
      type,
      item.question.kind ?? "question",
      QuestionPolicy.of(item.question.question).rememberable
    )
    lines.push(`  ${headline(item, now)}`)
    lines.push(
      placeholder === undefined && item.pid === null
        ? `    a secret: asked when the turn is resumed in a terminal (${Hint.resume(item.conversationId, hint)})`
        : `    ${Hint.answer(item.conversationId, item.question.inquiryId, placeholder === undefined ? undefined : { placeholder }, { storage: hint.storage })}`
    )
  }
  return lines.join("\n")
}

/** Stops the command as Ctrl-C does outside a prompt (a prompt reads keys in raw mode). */
const interrupt = Effect.sync(() => void process.kill(process.pid, "SIGINT"))

/** At a terminal: asks each item in turn and delivers the answers; Escape skips one. */
const askAll = (items: ReadonlyArray<Inbox.InboxItem>, hint: Hint.Context) =>
  Effect.scoped(
    Effect.gen(function* () {
      if (items.length === 0) return yield* Console.error("No open questions.")
      const prompts = yield* PersonTerminal.promptBackend({ onRepeatedCancel: interrupt })
      const recorded = new Set<ConversationId.ConversationId>()
      let answered = 0
      for (const [i, item] of items.entries()) {
        // The prompt shows the tool and the question: the line above it says whose it is.
        const title = item.title === null ? "(untitled)" : Style.printable(item.title)
        yield* Console.error(
          `(${i + 1}/${items.length}) ${title} — ${ConversationId.display(item.conversationId)}, asked ${age(item.since, Date.now())} (${where(item)})`
        )
        const q = item.question
        if (q.question.answer_type.type === "secret" && item.pid === null) {
          yield* Console.error(
            `  a secret: asked when the turn is resumed in a terminal: ${Hint.resume(item.conversationId, hint)}`
          )
          continue
        }
        const reply = yield* prompts.question({ toolName: q.tool, question: q.question }).pipe(Effect.option)
        if (reply._tag === "None") {
          yield* Console.error("  skipped.")
          continue
        }
        const delivered = yield* Effect.result(Inbox.answer(item, reply.value.answer))
        if (delivered._tag === "Failure") {
          yield* Console.error(`  ${ErrorLine.line(delivered.failure, hint)}`)
          continue
        }
        answered += 1
        if (delivered.success._tag === "Recorded") recorded.add(item.conversationId)
        yield* Console.error(delivered.success._tag === "Recorded" ? "  recorded." : "  delivered to the running turn.")
      }
      yield* Console.error(`Answered ${answered} of ${items.length}.`)
      for (const id of recorded)
        yield* Console.error(`Resume ${ConversationId.display(id)} with: ${Hint.resume(id, hint)}`)
    })
  )

export const inbox = Command.make("inbox", { format: formatFlag }, ({ format }) =>
  withStore(
    Effect.gen(function* () {
      const at = yield* storage
      const { dir, given, configGiven } = at
      const hint = { storage: given, config: configGiven }
      // What earlier runs could not tell `[notify]` is delivered meanwhile, bounded: the listing never waits for it.
      const flushing = yield* Effect.forkChild(NotifyHooks.flushLeftovers(at, FLUSH_BOUND_MS))
      const items = yield* Inbox.gather.pipe(Effect.provideService(RunningTurns, HostTurns.make(dir)))
      const now = Date.now()
      if (format === "json")
        yield* Console.log(
          JSON.stringify(
            items.map((i) => Inbox.row(i, now)),
            null,
            2
          )
        )
      else if (PersonTerminal.isInteractive())
        yield* askAll(items, hint).pipe(Effect.provideService(RunningTurns, HostTurns.make(dir)))
      else yield* Console.log(listing(items, hint, now))
      yield* Fiber.join(flushing)
    })
  )
).pipe(
  Command.withDescription(
    "Every open question of every running or waiting turn, oldest first; at a terminal, asks them one by one"
  )
)
