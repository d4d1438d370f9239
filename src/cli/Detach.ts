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
import { spawn } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { ANNOUNCE } from "../domain/run/HostSocket.ts"
import * as Refusal from "../domain/run/Refusal.ts"
import { DetachedPolicy } from "../domain/tool/Config.ts"
import * as PrivateDir from "../layers/file/PrivateDir.ts"
import * as HostPath from "../layers/host/HostPath.ts"
import { ConversationLocked } from "../services/StoreErrors.ts"
import { CliFailure } from "./CliFailure.ts"
import * as ErrorLine from "./ErrorLine.ts"
import * as Hint from "./Hint.ts"

export { ANNOUNCE }

/** How long the background run may take to create its conversation and listen. */
const READY_MS = 20_000

/** This invocation's arguments for the background run: `--detach` dropped, a message read from stdin passed as the argument. */
const childArgs = (argv: ReadonlyArray<string>, stdinMessage: string | undefined): Array<string> => {
  const args = argv.filter((a) => a !== "--detach")
  return stdinMessage === undefined ? args : [...args, stdinMessage]
}

/** How long a background run's log is kept: each new one sweeps older ones than this. */
const LOG_DAYS = 7

/** Removes background runs' logs older than {@link LOG_DAYS} from `dir` (a run's own log is fresh while it runs). */
export const sweepLogs = (dir: string, now = Date.now()): void => {
  let names: Array<string> = []
  try {
    names = fs.readdirSync(dir)
  } catch {
    return
  }
  for (const name of names) {
    if (!/^detached-.+\.log$/.test(name)) continue
    const file = path.join(dir, name)
    try {
      if (now - fs.statSync(file).mtimeMs > LOG_DAYS * 86_400_000) fs.rmSync(file, { force: true })
    } catch {
      // Gone meanwhile, or not ours to remove: it stays.
    }
  }
}

/**
 * The run directory of `storage`, made (0700) or found this user's alone
 * (`PrivateDir.ensure`); throws `NotPrivate` when it is not, and changes nothing.
 */
export const ensureRunDir = (storage: string): string => {
  const dir = HostPath.runDir(storage)
  PrivateDir.ensure(dir)
  return dir
}

/** Whether this run announces itself to the process that started it (`query --detach`, `serve`): it is meant to be watched. */
export const announcing = (): boolean => (process.env[ANNOUNCE] ?? "") !== ""

/**
 * Writes `id` where the detaching process waits for it (atomically: it never
 * reads half an id), and on a second line the `detached` policy its
 * questions follow, for the banner to say who answers them.
 */
export const announce = (id: string, policy: DetachedPolicy): void => {
  const file = process.env[ANNOUNCE]
  if (file === undefined || file === "") return
  const tmp = `${file}.${process.pid}.tmp`
  fs.writeFileSync(tmp, `${id}\n${policy}`, { mode: 0o600 })
  fs.renameSync(tmp, file)
}

/**
 * Says why this run is refused, as data, to the process that started it
 * (`$PARLEY_REFUSAL`, given by `parley serve`): a conversation another
 * process holds. Other failures are not refusals: the parent reports them
 * by the exit code and the output.
 */
export const refuse = (error: unknown): void => {
  const file = process.env[Refusal.REFUSAL]
  if (file === undefined || file === "" || !(error instanceof ConversationLocked)) return
  const refusal = Refusal.ConversationLocked.make(error.holder === undefined ? {} : { holder: error.holder })
  try {
    fs.writeFileSync(file, Refusal.encode(refusal), { mode: 0o600 })
  } catch {
    // Not written: the parent sees a run that ended at once, and its output says why.
  }
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
      try: () => ensureRunDir(options.storage),
      catch: (e) => ErrorLine.failure(e, { storage: options.storageGiven, config: options.configGiven })
    })
    const tag = `${process.pid}-${crypto.randomBytes(4).toString("hex")}`
    const announced = path.join(dir, `.announce-${tag}`)
    const log = path.join(dir, `detached-${tag}.log`)
    sweepLogs(dir)
    const out = fs.openSync(log, "a", 0o600)
    const child = spawn(
      process.execPath,
      [...process.execArgv, process.argv[1]!, ...childArgs(process.argv.slice(2), options.stdinMessage)],
      {
        detached: true,
        stdio: ["ignore", out, out],
        env: { ...process.env, [ANNOUNCE]: announced }
      }
    )
    fs.closeSync(out)
    child.unref()
    const failed = (why: string) =>
      new CliFailure({
        code: 1,
        message: `The background run ${why}. Its output is in ${log}:\n${fs.readFileSync(log, "utf8").trim().split("\n").slice(-5).join("\n")}`
      })
    const deadline = Date.now() + READY_MS
    let said: string | undefined
    while (said === undefined) {
      if (fs.existsSync(announced)) said = fs.readFileSync(announced, "utf8").trim()
      else if (child.exitCode !== null || child.signalCode !== null)
        return yield* failed(`ended before it got under way (exit ${child.exitCode ?? child.signalCode})`)
      else if (Date.now() > deadline) return yield* failed(`did not start within ${READY_MS / 1000} s`)
      else yield* Effect.sleep("20 millis")
    }
    fs.rmSync(announced, { force: true })
    const [id = "", named] = said.split("\n")
    const policy = Schema.is(DetachedPolicy)(named) ? named : "wait"
    const ctx = {
      storage: options.storageGiven,
      config: options.configGiven,
      script: options.script,
      detachedPolicy: options.detachedPolicy
    }
    yield* Console.log(id)
    yield* Console.error(
      [
        `Running in the background (pid ${child.pid}); its output goes to ${log}.`,
        `    ${Hint.command(["conversation", "attach", id], ctx)}    Follow it here (Ctrl-Z detaches again).`,
        whoAnswers(id, policy, ctx),
        `    ${Hint.command(["conversation", "kill", id], ctx)}    Stop it (the turn stays resumable).`
      ].join("\n")
    )
  })
