/**
 * A run in the background (docs/questions-and-approvals.md#runs-beyond-the-terminal):
 * how it is started (its own session, stdin closed, its output in a
 * `detached-*.log` under `<storage>/run/`), and what it tells the process
 * that started it through files that process names in its environment: its
 * conversation id and `detached` policy (`$PARLEY_ANNOUNCE`, written once its
 * host listens and its model is chosen), or why it was refused
 * (`$PARLEY_REFUSAL`). Each new run sweeps the logs older than a week. A
 * foreground run that leaves its terminal (Ctrl-Z, `layers/prompt/Background.ts`)
 * sends its output to such a log and stops itself until a waker continues
 * it in the background ({@link leaveTerminal}).
 *
 * @internal
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as DetachedRun from "parley/layers/host/DetachedRun"
 * const program = Effect.gen(function* () {
 *   const dir = DetachedRun.ensureRunDir("/home/me/.parley")
 *   const started = yield* DetachedRun.start(dir, ["query", "--new", "refactor the parser"])
 *   return started.id // "17738399468", announced by the run once it serves its socket
 * })
 * ```
 */
import { spawn } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { ANNOUNCE } from "../../domain/run/HostSocket.ts"
import * as Refusal from "../../domain/run/Refusal.ts"
import { DetachedPolicy } from "../../domain/tool/Config.ts"
import * as ToolEnv from "../../domain/tool/ToolEnv.ts"
import { ConversationLocked } from "../../services/StoreErrors.ts"
import * as ProcessOutput from "../ProcessOutput.ts"
import * as PrivateDir from "../file/PrivateDir.ts"
import * as HostPath from "./HostPath.ts"

/** How long the background run may take to create its conversation and listen. */
const READY_MS = 20_000

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

/** The background run did not get under way: it ended first (`exit`: its code or signal), or took too long; the last lines of its log. */
export class DetachedRunFailed extends Schema.TaggedError<DetachedRunFailed>()("DetachedRunFailed", {
  exit: Schema.optionalKey(Schema.String),
  seconds: Schema.Number,
  log: Schema.String,
  tail: Schema.String
}) {
  override get message(): string {
    const why =
      this.exit !== undefined
        ? `ended before it got under way (exit ${this.exit})`
        : `did not start within ${this.seconds} s`
    return `The background run ${why}. Its output is in ${this.log}:\n${this.tail}`
  }
}

/** A background run under way: its process, its log, and what it announced. */
export interface Started {
  readonly pid: number | undefined
  readonly log: string
  readonly id: string
  readonly policy: DetachedPolicy
}

/** Starts this program with `args` in the background (logging into `dir`) and waits until it announces its conversation. */
export const start = (dir: string, args: ReadonlyArray<string>): Effect.Effect<Started, DetachedRunFailed> =>
  Effect.gen(function* () {
    const tag = `${process.pid}-${crypto.randomBytes(4).toString("hex")}`
    const announced = path.join(dir, `.announce-${tag}`)
    const log = path.join(dir, `detached-${tag}.log`)
    sweepLogs(dir)
    const out = fs.openSync(log, "a", 0o600)
    const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, ...args], {
      detached: true,
      stdio: ["ignore", out, out],
      env: { ...process.env, [ANNOUNCE]: announced }
    })
    fs.closeSync(out)
    child.unref()
    const failed = (exit: string | undefined) =>
      new DetachedRunFailed({
        ...(exit !== undefined ? { exit } : {}),
        seconds: READY_MS / 1000,
        log,
        tail: fs.readFileSync(log, "utf8").trim().split("\n").slice(-5).join("\n")
      })
    const deadline = Date.now() + READY_MS
    let said: string | undefined
    while (said === undefined) {
      if (fs.existsSync(announced)) said = fs.readFileSync(announced, "utf8").trim()
      else if (child.exitCode !== null || child.signalCode !== null)
        return yield* failed(String(child.exitCode ?? child.signalCode))
      else if (Date.now() > deadline) return yield* failed(undefined)
      else yield* Effect.sleep("20 millis")
    }
    fs.rmSync(announced, { force: true })
    const [id = "", named] = said.split("\n")
    return { pid: child.pid, log, id, policy: Schema.is(DetachedPolicy)(named) ? named : "wait" }
  })

/** How long the waker waits before continuing the stopped run: time for the shell to take the terminal back. */
const WAKE_AFTER_S = 0.3

type Write = typeof process.stdout.write

/** Sends everything `stream` is given to `fd` from now on (the terminal may be gone: never write to it again). */
const redirect = (stream: NodeJS.WriteStream, fd: number): void => {
  const write = (
    chunk: string | Uint8Array,
    encoding?: BufferEncoding | ((e?: Error | null) => void),
    callback?: (e?: Error | null) => void
  ): boolean => {
    try {
      fs.writeSync(
        fd,
        typeof chunk === "string" ? Buffer.from(chunk, typeof encoding === "string" ? encoding : "utf8") : chunk
      )
    } catch {
      // A full disk loses log lines, never the run.
    }
    const done = typeof encoding === "function" ? encoding : callback
    done?.(null)
    return true
  }
  stream.write = write as Write
}

/** The log a detached foreground run writes to. */
export interface Log {
  readonly fd: number
  readonly file: string
}

/**
 * Opens the log a detached foreground run writes to (0600), under the
 * storage's run directory; throws `NotPrivate` when that directory is not
 * this user's alone.
 */
export const openLog = (storage: string): Log => {
  const dir = ensureRunDir(storage)
  const file = path.join(dir, `detached-${process.pid}-${crypto.randomBytes(4).toString("hex")}.log`)
  sweepLogs(dir)
  return { fd: fs.openSync(file, "a", 0o600), file }
}

/**
 * Leaves the terminal: output to `log`, hang-ups ignored, and this process
 * stopped until the waker continues it in the background. `forgetHangup`
 * removes the handler that would end the run when the terminal closes.
 */
export const leaveTerminal = (log: Log, forgetHangup: () => void): void => {
  redirect(process.stdout, log.fd)
  redirect(process.stderr, log.fd)
  ProcessOutput.redirect(log.fd)
  forgetHangup()
  // The terminal may close once we are in the background: that no longer ends the run.
  process.on("SIGHUP", () => {})
  const waker = spawn("/bin/sh", ["-c", `sleep ${WAKE_AFTER_S}; kill -CONT ${process.pid}`], {
    detached: true,
    stdio: "ignore",
    env: ToolEnv.withoutParleys(process.env)
  })
  waker.unref()
  process.kill(process.pid, "SIGSTOP")
}
