/**
 * `parley query --detach` (docs/questions-and-approvals.md#runs-beyond-the-terminal): the run goes on in a background
 * process that outlives the terminal — its own session, stdin closed, its
 * output in a log file under `<storage>/run/` — and this command returns
 * once the conversation exists and the run serves its socket, printing the
 * conversation id and the commands that answer it and stop it. With nobody
 * attached, questions follow `[conversation.inquiry] detached`, and with no
 * policy set a detached run's questions wait for an answer from any client
 * (`wait`: the run is meant to be watched).
 *
 * The background run tells this process its conversation id by writing it
 * into a file named in `$PARLEY_ANNOUNCE` (written once its host listens and
 * its model is chosen: a run that cannot get under way says why instead).
 *
 * @example
 * ```sh
 * parley query --detach --new "refactor the parser" --detached-policy wait
 * ```
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import type { DetachedPolicy } from "../domain/tool/Config.ts"
import * as DetachedRun from "../layers/host/DetachedRun.ts"
import * as ErrorLine from "./ErrorLine.ts"
import * as Hint from "./Hint.ts"

/** This invocation's arguments for the background run: `--detach` dropped, a message read from stdin passed as the argument. */
const childArgs = (argv: ReadonlyArray<string>, stdinMessage: string | undefined): Array<string> => {
  const args = argv.filter((a) => a !== "--detach")
  return stdinMessage === undefined ? args : [...args, stdinMessage]
}

/** What the banner says of the open questions of a run nobody is attached to, by its policy. */
export const whoAnswers = (id: string, policy: DetachedPolicy, ctx: Hint.Context): string => {
  const answer = Hint.command(["conversation", "answer", id], ctx)
  switch (policy) {
    case "wait":
      return `    ${answer}    List (or answer) its open questions: they wait for an answer (or parley inbox).`
    case "defer":
      return `    ${answer}    Its questions are not asked: the run stops at them (detached policy "defer"); answer them here, then resume.`
    case "deny":
      return `    ${answer}    Questions for a person are refused while nobody is attached (detached policy "deny").`
    case "assistant":
      return `    ${answer}    The assistant answers its questions while nobody is attached (detached policy "assistant").`
  }
}

/** Starts the run in the background and waits for its conversation; prints what to do next. */
export const detach = (options: {
  readonly storage: string
  readonly storageGiven: string | undefined
  /** `--config FILE` as given (absolute): the printed commands repeat it. */
  readonly configGiven?: string | undefined
  /** The run's `--script` (absolute) and `--detached-policy`: the printed `answer` repeats them for the resume it prints. */
  readonly script?: string | undefined
  readonly detachedPolicy?: string | undefined
  readonly stdinMessage: string | undefined
}) =>
  Effect.gen(function* () {
    // The logs' directory is this user's alone, or nothing is started (its line says what to do).
    const dir = yield* Effect.try({
      try: () => DetachedRun.ensureRunDir(options.storage),
      catch: (e) => ErrorLine.failure(e, { storage: options.storageGiven, config: options.configGiven })
    })
    const started = yield* DetachedRun.start(dir, childArgs(process.argv.slice(2), options.stdinMessage)).pipe(
      Effect.mapError((e) => ErrorLine.failure(e, {}))
    )
    const { id, policy, log } = started
    const ctx = {
      storage: options.storageGiven,
      config: options.configGiven,
      script: options.script,
      detachedPolicy: options.detachedPolicy
    }
    yield* Console.log(id)
    yield* Console.error(
      [
        `Running in the background (pid ${started.pid}); its output goes to ${log}.`,
        `    ${Hint.command(["conversation", "attach", id], ctx)}    Follow it here (Ctrl-Z detaches again).`,
        whoAnswers(id, policy, ctx),
        `    ${Hint.command(["conversation", "kill", id], ctx)}    Stop it (the turn stays resumable).`
      ].join("\n")
    )
  })
