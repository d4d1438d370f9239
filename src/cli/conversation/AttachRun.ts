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
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import type * as Prompt from "effect/cli/Prompt"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import type * as LiveView from "../../domain/run/LiveView.ts"
import * as Editor from "../../layers/prompt/Editor.ts"
import type * as RunEvent from "../../domain/run/RunEvent.ts"
import * as RunReport from "../../domain/run/RunReport.ts"
import * as IncompleteTurn from "../../domain/stream/IncompleteTurn.ts"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as HostClient from "../../layers/host/HostClient.ts"
import * as TerminalPromptBackend from "../../layers/prompt/TerminalPromptBackend.ts"
import type { PromptError, QuestionAnswer } from "../../services/PromptBackend.ts"
import { ConversationStore } from "../../services/ConversationStore.ts"
import { CliFailure } from "../CliFailure.ts"
import * as ErrorLine from "../ErrorLine.ts"
import * as Hint from "../Hint.ts"
import * as HostPath from "../../layers/host/HostPath.ts"
import * as PersonTerminal from "../../layers/prompt/PersonTerminal.ts"
import * as Pid from "../../layers/host/Pid.ts"
import { deferredLines, DEFERRED_EXIT } from "../Query.ts"
import * as RunMain from "../RunMain.ts"
import * as RunView from "../RunView.ts"
import * as Status from "../Status.ts"
import * as StatusText from "../StatusText.ts"
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

/** How an attach ends. */
type End =
  | { readonly _tag: "Stopped"; readonly event: RunEvent.Of<"Stopped"> }
  | { readonly _tag: "Lost" }
  | { readonly _tag: "Gone"; readonly gone: LiveView.LiveViewGone }
  | { readonly _tag: "Detached" }

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
    return yield* TerminalPromptBackend.make({ onRepeatedCancel, closedLine, editor: Editor.saved }).pipe(
      Effect.provideContext(terminal)
    )
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

/** Runs `handler` on `signal` while the scope is open (instead of the default action). */
const onSignal = (signal: NodeJS.Signals, handler: () => void) =>
  Effect.acquireRelease(
    Effect.sync(() => void process.on(signal, handler)),
    () => Effect.sync(() => void process.removeListener(signal, handler))
  )

/** What a follower needs: the connection, the view, and how to ask (none without a terminal). */
interface FollowerOptions {
  readonly client: HostClient.Client
  readonly view: RunView.View
  readonly status: Status.Status
  readonly ask: ((e: RunEvent.Of<"QuestionOpened">) => Effect.Effect<QuestionAnswer, PromptError>) | undefined
  /** Whether a question replayed on attach is still to be asked. */
  readonly asks: (e: RunEvent.Of<"QuestionOpened">) => boolean
  /** The command that answers a question from elsewhere (said when this terminal cannot ask). */
  readonly answerHint: (inquiryId: string) => string
  /** Stops the run (Ctrl-C at a prompt, as anywhere else while attached). */
  readonly stopRun: Effect.Effect<void>
}

/**
 * One attached terminal: shows events, asks the questions meant for a
 * person (one prompt at a time, as `query` does), and tells its own answers
 * from other clients'.
 */
class Follower {
  /** Prompts handed to the terminal, by inquiry id (drawn, or waiting for their turn). */
  private readonly asking = new Map<string, Fiber.Fiber<void>>()
  /** The words that end the line of the prompt being closed because someone else answered (read by the prompter). */
  closing: string | undefined
  /** Offers sent from here: whether each won (settled once the host replied). */
  private readonly offers = new Map<string, Deferred.Deferred<boolean>>()
  /** `Y`/`N` typed here, by tool and question: the questions still waiting here take it too. */
  private readonly remembered = new Map<string, Schema.Json>()

  constructor(
    private readonly options: FollowerOptions,
    private readonly scope: Scope.Scope,
    private readonly lock: Semaphore.Semaphore
  ) {}

  /** Shows one event, and asks or closes what it opens or closes. */
  handle(event: RunEvent.RunEvent): Effect.Effect<void> {
    switch (event._tag) {
      case "QuestionOpened":
        return Effect.andThen(this.options.view.show(event), this.opened(event))
      case "QuestionClosed":
        return this.closed(event)
      default:
        return this.options.view.show(event)
    }
  }

  private offer(inquiryId: string, reply: QuestionAnswer) {
    const { client, view } = this.options
    return Effect.gen({ self: this }, function* () {
      const won = yield* Deferred.make<boolean>()
      this.offers.set(inquiryId, won)
      const sent = yield* Effect.exit(
        client.Answer({
          inquiry_id: inquiryId,
          answer: reply.answer,
          via: "attach",
          ...(reply.remember ? { remember: true } : {})
        })
      )
      yield* Deferred.succeed(won, Exit.isSuccess(sent))
      const refused = Exit.isFailure(sent) ? sent.cause.reasons.find((r) => r._tag === "Fail") : undefined
      // Another client's answer won: its closed line says who. A lost host ends the stream.
      if (refused?._tag === "Fail" && refused.error._tag === "AnswerDoesNotFit")
        yield* view.stderr(`parley: ${refused.error.message}`)
    })
  }

  /** Asks `e` here once the prompts before it are done, unless a `Y`/`N` typed here already answers it. */
  private prompt(e: RunEvent.Of<"QuestionOpened">, ask: NonNullable<FollowerOptions["ask"]>) {
    const key = `${e.call.name}\u0000${e.question.id}`
    const asked = Effect.suspend(() => {
      const remembered = this.remembered.get(key)
      if (remembered !== undefined) return this.offer(e.inquiry_id, { answer: remembered, remember: true })
      return ask(e).pipe(
        Effect.tap((reply) => Effect.sync(() => void (reply.remember && this.remembered.set(key, reply.answer)))),
        Effect.flatMap((reply) => this.offer(e.inquiry_id, reply))
      )
    })
    return this.lock
      .withPermits(1)(this.options.status.paused(asked))
      .pipe(
        // Ctrl-C at a prompt stops the run, as Ctrl-C does anywhere while attached (RFD 027).
        Effect.catchTag("PromptCancelled", () => this.options.stopRun),
        Effect.catch((error) =>
          this.options.view.stderr(
            `parley: could not ask ${e.inquiry_id} here (${error.reason}); answer it with: ${this.options.answerHint(e.inquiry_id)}`
          )
        ),
        Effect.ensuring(Effect.sync(() => void this.asking.delete(e.inquiry_id)))
      )
  }

  private opened(e: RunEvent.Of<"QuestionOpened">) {
    const { ask, asks, answerHint, view } = this.options
    return Effect.gen({ self: this }, function* () {
      if (e.audience !== "person" || this.asking.has(e.inquiry_id) || !asks(e)) return
      // Without a terminal here, say what is waiting and how to answer it.
      if (ask === undefined)
        return yield* view.stderr(
          `parley: ${e.inquiry_id} is waiting for input; answer it with: ${answerHint(e.inquiry_id)}`
        )
      this.asking.set(e.inquiry_id, yield* Effect.forkIn(this.prompt(e, ask), this.scope))
    })
  }

  private closed(e: RunEvent.Of<"QuestionClosed">) {
    return Effect.gen({ self: this }, function* () {
      const sent = this.offers.get(e.inquiry_id)
      // Ours if the host took our offer: wait for its reply before saying who answered.
      const mine = sent !== undefined && (yield* Deferred.await(sent))
      const prompt = this.asking.get(e.inquiry_id)
      if (prompt !== undefined && !mine) {
        // The prompt on screen (if it is this one) ends its line saying who answered, not "(cancelled)".
        this.closing = answeredElsewhere(e)
        yield* Effect.ensuring(
          Fiber.interrupt(prompt),
          Effect.sync(() => {
            this.closing = undefined
          })
        )
      }
      // "you" in the host's events is the host's own terminal: another client, seen from here.
      const by: RunEvent.Answerer = mine ? "you" : e.by === "you" ? "other" : e.by
      yield* this.options.view.show({ ...e, by })
    })
  }
}

/** A follower for the scope's life. */
const follower = (options: FollowerOptions) =>
  Effect.map(Effect.zip(Effect.scope, Semaphore.make(1)), ([scope, lock]) => new Follower(options, scope, lock))

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
  withStoreAt(
    { dir: storage, given: undefined },
    ConversationStore.use((store) => store.load(id))
  ).pipe(
    Effect.map((c) => (IncompleteTurn.splitIncompleteTurn(c.entries).incomplete === null ? "complete" : "incomplete")),
    Effect.orElseSucceed(() => "unknown")
  )

/** What the person is told when the attach ends, and the exit code. */
const ending = (
  id: ConversationId.ConversationId,
  end: End,
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
 * The run's events through its `Stopped`: a subscription the host closed
 * because this terminal fell behind (`LiveViewLagged`) is taken again after
 * the last event shown, without a gap; `LiveViewGone` (the host no longer
 * keeps what follows) ends the attach with what the host said.
 */
const followed = (
  client: HostClient.Client,
  handle: (e: RunEvent.Sequenced) => Effect.Effect<void>,
  attend: boolean,
  after: () => number
): Effect.Effect<LiveView.LiveViewGone | undefined, unknown> =>
  Stream.runForEach(client.Subscribe({ after: after(), attend }), handle).pipe(
    Effect.as(undefined),
    Effect.catchTags({
      LiveViewLagged: () => followed(client, handle, attend, after),
      LiveViewGone: (gone) => Effect.succeed(gone)
    })
  )

/** Follows the run until it stops, the host is lost, or this terminal detaches. */
const follow = (
  client: HostClient.Client,
  handle: (e: RunEvent.Sequenced) => Effect.Effect<void>,
  attend: boolean,
  after: () => number
) =>
  Effect.gen(function* () {
    let stopped: RunEvent.Of<"Stopped"> | undefined
    const detached = yield* Deferred.make<void>()
    // Ctrl-Z, a closed terminal or a plain kill end this client only: the run is not this process's.
    // (Only Ctrl-C, SIGINT, stops the run, through the interruption RunMain makes of it.)
    yield* Effect.sync(() => {
      RunMain.forgetSignal("SIGHUP")
      RunMain.forgetSignal("SIGTERM")
    })
    for (const signal of ["SIGTSTP", "SIGHUP", "SIGTERM"] as const)
      yield* onSignal(signal, () => Deferred.doneUnsafe(detached, Exit.void))
    const events = followed(
      client,
      (e) => {
        if (e.event._tag === "Stopped") stopped = e.event
        return handle(e)
      },
      attend,
      after
    )
    const end = yield* Effect.raceFirst(
      Effect.map(
        Effect.exit(events),
        (exit): End =>
          stopped !== undefined
            ? { _tag: "Stopped", event: stopped }
            : exit._tag === "Success" && exit.value !== undefined
              ? { _tag: "Gone", gone: exit.value }
              : { _tag: "Lost" }
      ),
      Effect.as(Deferred.await(detached), { _tag: "Detached" } as End)
    )
    return end
  })

/**
 * Ctrl-C while attached: the run is stopped as `query` stops it, and the
 * attach waits (a few seconds) for it to say how it left the turn.
 */
const interruptRun = (
  client: HostClient.Client,
  handle: (e: RunEvent.Sequenced) => Effect.Effect<void>,
  after: () => number
) =>
  client
    .Interrupt()
    .pipe(
      Effect.andThen(Stream.runForEach(client.Subscribe({ after: after() }), handle)),
      Effect.timeout("5 seconds"),
      Effect.ignore
    )

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
      if (!live) return yield* notRunning(id, given)
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
      // The follower says how a prompt someone else answered ends; the prompter is made first, so it reads it through here.
      let closing: () => string | undefined = () => undefined
      const prompts = interactive ? yield* prompter(sigint, () => closing()) : undefined
      // A question still open when we subscribed is asked; one the replay shows closing later is not.
      const openAtStart = new Set(info.open.map((q) => q.inquiry_id))
      let seq = 0
      const shown = yield* follower({
        client,
        view,
        status,
        // The prompt query shows, header included (who is asking, from the run).
        ask:
          prompts === undefined
            ? undefined
            : (e) =>
                prompts.question({
                  toolName: e.call.name,
                  question: e.question,
                  arguments: e.call.arguments,
                  ...(e.label !== undefined ? { label: e.label } : {}),
                  ...(e.kind === "approval" ? { approval: true } : {})
                }),
        asks: (e) => seq > info.latest || openAtStart.has(e.inquiry_id),
        answerHint: (inquiryId) =>
          Hint.answer(
            id,
            inquiryId,
            { placeholder: "VALUE" },
            { storage: given.storageGiven, config: given.configGiven }
          ),
        stopRun: sigint
      })
      closing = () => shown.closing
      // --tail=N: what the run kept up to its last N events is not shown; a question still open is asked all the same.
      const cutoff = given.tail === undefined ? 0 : info.latest - given.tail
      const skipped = (e: RunEvent.Sequenced) =>
        e.seq <= cutoff && !(e.event._tag === "QuestionOpened" && openAtStart.has(e.event.inquiry_id))
      const handle = (e: RunEvent.Sequenced) =>
        Effect.suspend(() => {
          seq = e.seq
          return skipped(e) ? Effect.void : shown.handle(e.event)
        })
      const end = yield* follow(client, handle, interactive, () => seq).pipe(
        Effect.onInterrupt(() =>
          interruptRun(client, handle, () => seq).pipe(
            Effect.andThen(
              view.stderr(
                `parley: interrupted. What finished is saved; resume with: ${Hint.resume(id, hintOf(given, view, info))}`
              )
            )
          )
        )
      )
      yield* ending(id, end, view, hintOf(given, view, info), info.pid, given.storage)
    })
  )
