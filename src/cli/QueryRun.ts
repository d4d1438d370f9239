/**
 * A `parley query` run on the live services, and its output (what
 * `Query.ts` describes): the terminal's view, the run's socket, the JSON
 * document, the hints and the one-line errors. Apart from the effect/cli
 * command so that the query's fast path (`QueryFast.ts`,
 * docs/startup.md#start-up-of-a-query) runs it without loading effect/cli's
 * command tree; the command (`Query.ts`) and the demo run it too.
 *
 * @example
 * ```ts
 * import { runQuery } from "./QueryRun.ts"
 * yield* runQuery({ message: "hi", target: Query.Target.New(), continueTurn: false, discardTurn: false, format: "text" })
 * ```
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as RunReport from "../domain/run/RunReport.ts"
import * as ConversationId from "../domain/storage/ConversationId.ts"
import type * as Compact from "../domain/stream/Compact.ts"
import * as Query from "../programs/Query.ts"
import { RunEvents } from "../services/RunEvents.ts"
import { StoreIoError } from "../services/StoreErrors.ts"
import { CliFailure } from "./CliFailure.ts"
import * as ErrorLine from "./ErrorLine.ts"
import * as ProcessOutput from "../layers/ProcessOutput.ts"
import * as DetachedRun from "../layers/host/DetachedRun.ts"
import * as Hint from "./Hint.ts"
import * as Host from "./Host.ts"
import * as Live from "./Live.ts"
import * as RunView from "./RunView.ts"
import { DEFERRED_EXIT, deferredLines } from "./DeferredLines.ts"

/** What a query run does, after its flags are parsed (the demo builds it directly). */
export interface RunQueryParams {
  readonly message: string | undefined
  readonly target: Query.Target
  readonly continueTurn: boolean
  readonly discardTurn: boolean
  readonly format: "text" | "json" | "jsonl"
  /** `--compact[=SPEC]`: compact before the turn (RFD 064). */
  readonly compact?: Compact.CompactFlag
}

/** What the run's output needs once it has run: the report and the hint context. */
const makeOutput = (run: Live.Run["Service"], params: RunQueryParams) => {
  const view = RunView.make(run.status, params.format)
  /** The context hints repeat: `--model` only while the conversation may not remember it, `--script` for the scripted model. */
  const hint = (): Hint.Context => {
    const model = view.model()
    return {
      storage: run.hint.storage,
      config: run.hint.config,
      model: model === undefined ? run.hint.model : undefined,
      script: model === undefined || model === "scripted" ? run.hint.script : undefined,
      detachedPolicy: run.hint.detachedPolicy
    }
  }
  return {
    view,
    hint,
    report: () => RunReport.fold(view.events),
    // jsonl: the report is the stream's last line, the same document on one line.
    json: (doc: unknown) =>
      Effect.sync(() =>
        ProcessOutput.write("stdout", `${JSON.stringify(doc, null, params.format === "jsonl" ? undefined : 2)}\n`)
      )
  }
}

type Output = ReturnType<typeof makeOutput>

/** The command that resumes the turn, when the run left it incomplete. */
const resumeHint = (out: Output): string | undefined => {
  const report = out.report()
  return report.incomplete !== null && report.conversationId !== null
    ? Hint.resume(report.conversationId, out.hint())
    : undefined
}

/**
 * A run that ended in an error, as data: the error's text and, when the turn
 * can be resumed, the command that resumes it. stderr gets both (one
 * {@link CliFailure}); the JSON document has them apart (`error`, `resume`).
 */
interface Failed {
  readonly code: number
  readonly error: string
  readonly resume?: string | undefined
}

/** The CLI error of a failed run: the error, then the resume command on its own line. */
const cliFailure = (failed: Failed): CliFailure =>
  new CliFailure({
    code: failed.code,
    message: failed.resume !== undefined ? `${failed.error}\n${SAVED} ${failed.resume}` : failed.error
  })

/** A failed run: the message, and the resume command when the turn can be resumed. */
const failure = (out: Output, error: unknown): Failed => {
  if (error instanceof CliFailure) return { code: error.code, error: error.message }
  const ctx = out.hint()
  if (error instanceof Query.IncompleteTurnPending) {
    return {
      code: 1,
      error: [
        `Conversation ${ConversationId.display(error.id as ConversationId.ConversationId)} has an incomplete turn (${error.detail}).`,
        `    ${Hint.resume(error.id, ctx)}    Resume the incomplete turn.`,
        `    ${Hint.discard(error.id, ctx)}    Discard the incomplete turn and start fresh.`
      ].join("\n")
    }
  }
  if (error instanceof StoreIoError && error.server !== undefined) {
    // The database went away (docs/postgres.md): what was committed is kept, and the run stops as an interrupt stops it.
    return { code: SERVER_LOST_EXIT, error: `${error.message}.`, resume: resumeHint(out) }
  }
  const message =
    error instanceof Query.NoMessage
      ? `Nothing to send: give a message, e.g. ${Hint.command(["query", "Hello"], ctx)}`
      : ErrorLine.line(error, ctx)
  return { code: 1, error: message, resume: resumeHint(out) }
}

const SAVED = "The turn is saved; resume it with:"

/** The exit code of a run whose database went away: an interrupt's (SIGINT), since the run can be resumed as after one. */
const SERVER_LOST_EXIT = 130

/** What the person is told when the run ends normally (stderr), or the failure it is. */
const ending = (out: Output, run: Live.Run["Service"], result: Query.QueryResult): Effect.Effect<void, Failed> => {
  const id = ConversationId.display(result.conversationId)
  switch (result.outcome._tag) {
    case "Discarded":
      return out.view.stderr(`Discarded the incomplete turn of ${id}.`)
    case "NothingToDiscard":
      return out.view.stderr(`${id} has no incomplete turn; nothing to discard.`)
    case "NothingToResume":
      return out.view.stderr(`${id} has no incomplete turn; nothing to resume.`)
    case "EditAbandoned":
      return Effect.fail({
        code: 1,
        error: `Kept the pending query as it was (${run.editKept.why ?? "nothing to send"}); nothing was sent.`,
        resume: Hint.resume(result.conversationId, out.hint())
      })
    case "Deferred":
      return Effect.fail({ code: DEFERRED_EXIT, error: "" })
    default:
      return Effect.void
  }
}

/**
 * "abort" at the Ctrl-C menu (RFD 027; JP: "abort generation, without saving
 * the current cycle"): the run stopped as on "stop", then its incomplete turn
 * is discarded as `query --discard-turn` discards it. The exit code stays an
 * interrupt's (130).
 */
const abortTurn = (out: Output, run: Live.Run["Service"], id: ConversationId.ConversationId) =>
  Query.query({
    message: undefined,
    target: Query.Target.Id({ id }),
    discardTurn: true,
    model: (remembered) => run.chooseModel(remembered),
    root: run.root,
    interactive: false
  }).pipe(
    Effect.andThen(out.view.endLine),
    Effect.andThen(
      out.view.stderr(`parley: aborted. The turn is discarded; ${ConversationId.display(id)} is as it was before it.`)
    ),
    Effect.catch((e) =>
      out.view.stderr(
        `parley: aborted, but the turn could not be discarded (${String(e)}); ${Hint.discard(id, out.hint())} discards it.`
      )
    )
  )

/** Runs `parley query` on the live services and prints what it did. */
export const runQuery = (params: RunQueryParams) =>
  Effect.scoped(
    Effect.gen(function* () {
      const run = yield* Live.Run
      const out = makeOutput(run, params)
      // The view follows the run's events in its own fiber; the prompts wait for it (Cursor).
      yield* RunView.watch(out.view, yield* RunEvents, run.cursor)
      // Once the conversation is known, the run is served on its socket for other clients (docs/questions-and-approvals.md#runs-beyond-the-terminal).
      yield* Effect.forkScoped(Host.serveWhenKnown(run))
      const settled = RunView.settled(out.view, yield* RunEvents, run.cursor)
      const json = (end: RunReport.Ending) =>
        params.format !== "text" ? out.json(RunReport.toJson(out.report(), end)) : Effect.void
      const withResume = (end: RunReport.Ending): RunReport.Ending => {
        const resume = resumeHint(out)
        return resume !== undefined ? { ...end, resume } : end
      }
      const result = yield* Query.query({
        message: params.message,
        target: params.target,
        continueTurn: params.continueTurn,
        discardTurn: params.discardTurn,
        model: (remembered) => run.chooseModel(remembered),
        ...(run.config.assistant?.system_prompt !== undefined
          ? { systemPrompt: run.config.assistant.system_prompt }
          : {}),
        root: run.root,
        interactive: run.person !== undefined,
        ...(params.compact !== undefined ? { compact: params.compact } : {})
      }).pipe(
        Effect.onInterrupt(() =>
          Effect.gen(function* () {
            yield* settled
            const report = out.report()
            if ((yield* Ref.get(run.aborted)) && report.conversationId !== null && report.incomplete !== null)
              return yield* abortTurn(out, run, report.conversationId as ConversationId.ConversationId)
            yield* json(withResume({ outcome: "interrupted" }))
            if (out.report().ending === null) return yield* out.view.endLine
            const resume = resumeHint(out)
            yield* out.view.stderr(
              resume !== undefined
                ? `parley: interrupted. What finished is saved; resume with: ${resume}`
                : "parley: interrupted. The reply so far is saved; the turn is complete."
            )
          })
        ),
        Effect.catch((error) =>
          Effect.gen(function* () {
            yield* settled
            // A run started by serve says why it was refused as data (a lock), not only as the line below.
            yield* Effect.sync(() => DetachedRun.refuse(error))
            const failed = failure(out, error)
            yield* json(withResume({ outcome: "failed", error: failed.error }))
            yield* out.view.endLine
            return yield* Effect.fail(cliFailure(failed))
          })
        )
      )
      yield* settled
      yield* out.view.endLine
      if (result.outcome._tag === "Deferred")
        yield* out.view.stderr(deferredLines(out.report(), out.hint(), result.outcome.unsent))
      const end = ending(out, run, result)
      yield* end.pipe(
        Effect.catch((failed) =>
          json(withResume(failed.code === DEFERRED_EXIT ? {} : { error: failed.error })).pipe(
            Effect.andThen(Effect.fail(cliFailure(failed)))
          )
        )
      )
      yield* json(withResume({}))
      return result
    })
  )
