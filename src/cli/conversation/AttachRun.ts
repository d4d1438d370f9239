/**
 * `parley conversation attach [ID]` (docs/questions-and-approvals.md#runs-beyond-the-terminal; RFD 027 "attach loop", past
 * its one-client non-goal): a terminal follows a run another process hosts.
 * It subscribes to the run's events over the host's socket — the current run
 * replayed, then live — and shows them with the same status lines as
 * `query`; a question for a person is asked here with the same prompts
 * (keys), and the answer is offered to the host, where the first answer that
 * fits wins. A prompt still on screen closes when another client answered;
 * the answered line says who: `(you)`, `(other client)`.
 *
 * While a person follows at a terminal, the host counts them present: a
 * question for a person waits for them instead of following the `detached`
 * policy. Ctrl-C stops the run (as it would in `query`); Ctrl-Z, a closed
 * terminal or SIGTERM detach this client and leave the run going. The attach ends with the run:
 * exit 0 when it completed, else the code `query` would have had and the
 * resume command; a host that dies under it → exit 1 with the resume command.
 *
 * @example
 * ```sh
 * parley conversation attach 17738399468
 * parley conversation attach            # the most recently started run
 * ```
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Semaphore from "effect/Semaphore"
import type * as Prompt from "effect/cli/Prompt"
import * as Editor from "../../layers/prompt/Editor.ts"
import type * as RunEvent from "../../domain/run/RunEvent.ts"
import * as RunReport from "../../domain/run/RunReport.ts"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as HostClient from "../../layers/host/HostClient.ts"
import * as HostTurns from "../../layers/host/HostTurns.ts"
import * as FileLock from "../../layers/store/FileLock.ts"
import * as StoreLocks from "../../layers/store/StoreLocks.ts"
import * as AttachKeys from "../../layers/prompt/AttachKeys.ts"
import * as TerminalPromptBackend from "../../layers/prompt/TerminalPromptBackend.ts"
import * as FollowTurn from "../../programs/FollowTurn.ts"
import { ConversationStore } from "../../services/ConversationStore.ts"
import { CliFailure } from "../CliFailure.ts"
import * as ErrorLine from "../ErrorLine.ts"
import * as Hint from "../Hint.ts"
import * as HostPath from "../../layers/host/HostPath.ts"
import * as PersonTerminal from "../../layers/prompt/PersonTerminal.ts"
import * as Pid from "../../layers/host/Pid.ts"
import { deferredLines, DEFERRED_EXIT } from "../DeferredLines.ts"
import * as RunView from "../RunView.ts"
import * as Status from "../Status.ts"
import * as StatusText from "../StatusText.ts"
import * as AttachSend from "./AttachSend.ts"
import { withStoreAt } from "./Store.ts"
import * as Style from "../Style.ts"

/** What the command was given. */
export interface Given {
  readonly id: ConversationId.ConversationId | undefined
  /** The storage directory (resolved) and the `--storage` flag as given (for printed commands). */
  readonly storage: string
  readonly storageGiven: string | undefined
  /** `--config FILE` as given (absolute), which the resume command repeats. */
  readonly configGiven?: string | undefined
  /** `--tail=N` (RFD 027): show only the last N events the run kept before following it live. */
  readonly tail?: number | undefined
}

/** The running conversation of `storage` whose run started last (its socket is the newest), if any. */
export const mostRecent = (storage: string): Effect.Effect<ConversationId.ConversationId | undefined> =>
  // A socket's name is its conversation's id.
  HostClient.mostRecent(storage) as Effect.Effect<ConversationId.ConversationId | undefined>

/** The exit code `query` would have had for a run that ended so. */
const exitCode = (ending: RunEvent.Ending): number => {
  switch (ending) {
    case "deferred":
      return DEFERRED_EXIT
    case "interrupted":
      return 130
    case "failed":
    case "edit_abandoned":
      return 1
    default:
      return 0
  }
}

/** The terminal's prompter (effect/cli prompts on the person's terminal), for the scope's life. */
const prompter = (onRepeatedCancel: Effect.Effect<void>, closedLine: () => string | undefined) =>
  Effect.gen(function* () {
    const terminal = Context.merge(
      yield* Effect.context<Prompt.Environment>(),
      yield* Layer.build(PersonTerminal.layer)
    )
    const prompts = yield* TerminalPromptBackend.make({ onRepeatedCancel, closedLine, editor: Editor.saved }).pipe(
      Effect.provideContext(terminal)
    )
    return { prompts, terminal }
  })

/**
 * What ends the line of a prompt someone else answered (instead of
 * "(cancelled)"): "answered elsewhere: hotfix (via api)".
 */
export const answeredElsewhere = (e: RunEvent.Of<"QuestionClosed">): string => {
  const how = e.via !== undefined ? `via ${e.via}` : e.by === "you" || e.by === "other" ? "other client" : e.by
  if (e.outcome._tag === "Cancelled") return `closed elsewhere (${how}): ${e.outcome.reason}`
  return e.outcome._tag === "Redacted"
    ? `answered elsewhere (${how})`
    : `answered elsewhere: ${StatusText.answerText(e.outcome)} (${how})`
}

/** The commands the attach prints repeat `--storage`, and `--script` for a scripted run. */
const hintOf = (given: Given, view: RunView.View, info: HostClient.Info): Hint.Context => ({
  storage: given.storageGiven,
  config: given.configGiven,
  model: undefined,
  script: view.model() === "scripted" ? info.script : undefined,
  detachedPolicy: info.detached_policy
})

/** How the conversation's last turn stands on disk ("unknown" when it cannot be read). */
const turnLeft = (id: ConversationId.ConversationId, storage: string) =>
  withStoreAt({ dir: storage, given: undefined }, FollowTurn.turnLeft(id)).pipe(Effect.orElseSucceed(() => "unknown"))

/** What the person is told when the attach ends, and the exit code. */
const ending = (
  id: ConversationId.ConversationId,
  end: FollowTurn.End,
  view: RunView.View,
  hint: Hint.Context,
  pid: number,
  storage: string
) =>
  Effect.gen(function* () {
    const name = ConversationId.display(id)
    const resume = Hint.resume(id, hint)
    yield* view.endLine
    if (end._tag === "Detached") {
      return yield* view.stderr(
        `Detached from ${name}; the run goes on (pid ${pid}). Attach again with: ${Hint.command(["conversation", "attach", id], hint)}`
      )
    }
    if (end._tag === "Gone") {
      return yield* new CliFailure({
        code: 1,
        message: `${end.gone.message} ${Hint.command(["conversation", "print", id], hint)} shows it.`
      })
    }
    if (end._tag === "Lost") {
      // A stopped or stalled host stops answering too: it still holds the conversation, and no resume would work.
      if (yield* Pid.stillAlive(pid)) {
        return yield* new CliFailure({
          code: 1,
          message: `The run of ${name} (pid ${pid}) stopped answering; it still runs and holds the conversation. Attach again with ${Hint.command(
            ["conversation", "attach", id],
            hint
          )}, or stop it with ${Hint.command(["conversation", "kill", id, "--force"], hint)}.`
        })
      }
      // Gone before this terminal read its end (it was stopped, or slow): the conversation says how it ended.
      if ((yield* turnLeft(id, storage)) === "complete") {
        return yield* view.stderr(
          `parley: the run of ${name} ended while this terminal was not following; its turn is complete (${Hint.command(["conversation", "print", id], hint)} shows it).`
        )
      }
      return yield* new CliFailure({
        code: 1,
        message: `The run of ${name} stopped without finishing: its process (pid ${pid}) is gone. What finished is saved; resume with: ${resume}`
      })
    }
    const { ending, incomplete } = end.event
    if (ending === "deferred") {
      yield* view.stderr(deferredLines(RunReport.fold(view.events), hint, undefined))
      return yield* new CliFailure({ code: DEFERRED_EXIT, message: "" })
    }
    const code = exitCode(ending)
    if (code === 0 && incomplete === null) return
    const said = incomplete !== null ? ` What finished is saved; resume with: ${resume}` : ""
    if (code === 0) return yield* view.stderr(`parley: the run of ${name} ended (${ending}).${said}`)
    return yield* new CliFailure({
      code,
      message: `The run of ${name} ${ending === "interrupted" ? "was interrupted" : "failed"}.${said}`
    })
  })

/** The run's host is not there (never was, or stopped before we spoke): said apart from a conversation that does not exist. */
const notRunning = (id: ConversationId.ConversationId, given: Given) =>
  withStoreAt(
    { dir: given.storage, given: given.storageGiven, configGiven: given.configGiven },
    ConversationStore.use((store) => store.load(id)).pipe(
      Effect.as(true),
      Effect.catchTag("ConversationNotFound", () => Effect.succeed(false))
    )
  ).pipe(
    Effect.orElseSucceed(() => true),
    Effect.flatMap((exists) =>
      Effect.fail(
        exists
          ? stopped(id, given)
          : new CliFailure({
              code: 1,
              message: `There is no conversation ${ConversationId.display(id)} in ${given.storage}; ${Hint.command(["conversation", "ls"], { storage: given.storageGiven, config: given.configGiven })} lists them.`
            })
      )
    )
  )

const stopped = (id: ConversationId.ConversationId, given: Given) =>
  new CliFailure({
    code: 1,
    message: `${ConversationId.display(id)} has no running turn to attach to. ${Hint.command(["conversation", "print", id], { storage: given.storageGiven, config: given.configGiven })} shows it; ${Hint.resume(id, { storage: given.storageGiven, config: given.configGiven })} resumes an incomplete turn.`
  })

/**
 * How long an attach looks for the socket of a run whose lock a live process
 * holds. A run nobody watches is served once it calls a tool, asks, or has
 * run 200 ms (`cli/Host.ts`, `HOST_AFTER_MS`): an attach in that first moment
 * finds the run but not yet its socket, and must not say it is not running.
 */
const SERVED_WITHIN_MS = 2_000
const LOOK_EVERY_MS = 25

/** Whether the run of `id` is served within {@link SERVED_WITHIN_MS} (at once false when nothing holds its lock). */
const servedSoon = (storage: string, id: ConversationId.ConversationId, socket: string): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const lock = StoreLocks.lockPath(storage, id)
    const deadline = Date.now() + SERVED_WITHIN_MS
    while (Date.now() < deadline && (yield* Effect.promise(() => FileLock.heldLive(lock)))) {
      yield* Effect.sleep(LOOK_EVERY_MS)
      if (yield* Effect.orElseSucceed(HostClient.reachable(socket), () => false)) return true
    }
    return false
  })

/** Stops the run from a prompt: a second Ctrl-C in a row there means the run, as in `query`. */
const sigint = Effect.sync(() => void process.kill(process.pid, "SIGINT"))

/** Attaches this terminal to the running turn of `given.id` (or the newest run). */
export const attach = (given: Given) =>
  Effect.scoped(
    Effect.gen(function* () {
      const id = given.id ?? (yield* mostRecent(given.storage))
      if (id === undefined) {
        return yield* new CliFailure({
          code: 1,
          message: `No conversation of ${given.storage} has a running turn. ${Hint.command(["query", "--detach", "MESSAGE"], { storage: given.storageGiven, config: given.configGiven })} starts one in the background.`
        })
      }
      const socket = HostPath.of(given.storage, id)
      const live = yield* HostClient.reachable(socket).pipe(
        Effect.mapError((e) => ErrorLine.failure(e, { storage: given.storageGiven, config: given.configGiven }))
      )
      if (!live && !(yield* servedSoon(given.storage, id, socket))) return yield* notRunning(id, given)
      const client = yield* HostClient.connect(socket).pipe(
        Effect.catch((e) =>
          // A place parley will not trust, or a host of another protocol version: said as it is, not "not running".
          e._tag === "NotPrivate" || e._tag === "HostProtocolMismatch"
            ? Effect.fail(ErrorLine.failure(e, { storage: given.storageGiven, config: given.configGiven }))
            : notRunning(id, given)
        )
      )
      const info = yield* client.Info().pipe(Effect.catch(() => notRunning(id, given)))
      const interactive = PersonTerminal.isInteractive()
      const screen = PersonTerminal.reach() ?? (process.stderr.isTTY === true ? process.stderr : undefined)
      const status = yield* Status.make(screen, Style.colorAllowed())
      const view = RunView.make(status, "text")
      // How a prompt someone else answered ends: the follow says so, the prompter reads it here.
      let closing: string | undefined
      const person = interactive ? yield* prompter(sigint, () => closing) : undefined
      const prompts = person?.prompts
      const detached = yield* AttachKeys.detachSignals
      const storageAt = { dir: given.storage, given: given.storageGiven, configGiven: given.configGiven }
      // `m` sends a message (AttachKeys, AttachSend); a question and the message's prompt take the terminal in turn.
      const lock = yield* Semaphore.make(1)
      let sentNow = false
      const counted = AttachSend.queuedLine(storageAt, id)
      if (person !== undefined)
        yield* AttachKeys.watch({
          terminal: (prompt) => Effect.provideContext(prompt, person.terminal),
          lock,
          paused: status.paused,
          say: view.stderr,
          send: (message, when) =>
            AttachSend.sendFrom(storageAt, id, message, when).pipe(
              Effect.tap((sent) =>
                Effect.sync(() => {
                  if (sent._tag === "Queued" && sent.restarted) sentNow = true
                })
              ),
              // The send command's module (effect/cli flags) loads with the first message, not with attach.
              Effect.flatMap((sent) =>
                Effect.flatMap(
                  Effect.promise(() => import("./Send.ts")),
                  (SendCommand) =>
                    Effect.map(counted, (line) => SendCommand.said(sent, id, hintOf(given, view, info)) + line)
                )
              ),
              Effect.catch((e) =>
                Effect.succeed(`parley: could not send: ${ErrorLine.line(e, hintOf(given, view, info))}`)
              )
            )
        })
      if (person !== undefined) yield* view.stderr(AttachKeys.KEYS)
      const arrived = yield* counted
      if (arrived !== "") yield* view.stderr(`parley:${arrived}`)
      const end = yield* FollowTurn.follow({
        turn: HostTurns.fromClient(id, client),
        latest: info.latest,
        open: info.open.map((q) => q.inquiry_id),
        tail: given.tail,
        attend: interactive,
        // A delivered message: how many are still queued.
        show: (e) =>
          e._tag === "MessageDelivered"
            ? Effect.andThen(
                view.show(e),
                Effect.flatMap(counted, (line) => (line === "" ? Effect.void : view.stderr(`parley:${line}`)))
              )
            : view.show(e),
        say: view.stderr,
        paused: status.paused,
        // The prompt query shows, header included (who is asking, from the run).
        ask:
          prompts === undefined
            ? undefined
            : (e) =>
                AttachKeys.prompting(
                  lock,
                  prompts.question({
                    toolName: e.call.name,
                    question: e.question,
                    arguments: e.call.arguments,
                    ...(e.label !== undefined ? { label: e.label } : {}),
                    ...(e.kind === "approval" ? { approval: true } : {})
                  })
                ),
        answerHint: (inquiryId) =>
          Hint.answer(
            id,
            inquiryId,
            { placeholder: "VALUE" },
            { storage: given.storageGiven, config: given.configGiven }
          ),
        stopRun: sigint,
        detached,
        closedElsewhere: (e) => {
          closing = e === undefined ? undefined : answeredElsewhere(e)
        }
      }).pipe(
        Effect.onInterrupt(() =>
          view.stderr(
            `parley: interrupted. What finished is saved; resume with: ${Hint.resume(id, hintOf(given, view, info))}`
          )
        )
      )
      // Stopped for a `now` message sent here: the turn goes on in the background with it.
      if (sentNow && end._tag === "Stopped" && end.event.ending === "interrupted") {
        yield* view.endLine
        return yield* view.stderr(
          `parley: the turn stopped for your message and goes on in the background. Attach again with: ${Hint.command(["conversation", "attach", id], hintOf(given, view, info))}`
        )
      }
      yield* ending(id, end, view, hintOf(given, view, info), info.pid, given.storage)
    })
  )
