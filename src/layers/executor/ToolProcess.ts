/**
 * Runs one local tool command as a bounded process group (contract §6,
 * round-2 bounds; docs/tools.md#tool-processes-are-bounded).
 *
 * - `sh -c command` runs detached: the shell leads a new process group that
 *   holds everything the tool starts. The group is listed with a live
 *   {@link Reaper} before the command may start ({@link gated}): the gate
 *   opens only once the reaper's input has the group, so it dies with
 *   parley however parley ends.
 * - The result is taken when the shell exits. Whatever the tool left behind
 *   (a background job still holding stdout) is stopped with the group;
 *   parley does not wait for those pipes to close on their own.
 * - stdout and stderr are counted as they arrive, and at most
 *   `maxOutputBytes` of them (together) are kept. One byte more and the
 *   tool is stopped, so memory stays flat whatever the tool prints.
 * - Stopping a group is SIGTERM, then SIGKILL after {@link KILL_GRACE_MS},
 *   and ends once no member runs.
 *
 * Why not `effect/process` (`ChildProcess` with the Node spawner)? It starts
 * detached groups and signals them too, but it decides a group is alive with
 * `kill(-pgid, 0)`, which also succeeds for zombies. Where PID 1 does not reap
 * orphans (this sandbox, many containers) a killed background job stays a
 * zombie in the group, and its scoped release then waits out its whole bound:
 * measured 1.1 s added to every call of `sleep 30 & echo hi`. Its release also
 * runs that wait after any non-zero exit, whatever `unref` says. Stopping
 * with a grace period that ends as soon as the group is really empty, and
 * counting bytes before they are buffered, is simplest on `node:child_process`.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as ToolProcess from "parley/layers/executor/ToolProcess"
 * const outcome = ToolProcess.run("echo hi", "/tmp", "{}", 1_048_576, { PATH: "/usr/bin:/bin" })
 * // Effect<ProcessOutcome, string>: Exited { exitCode: 0, stdout: "hi\n", stderr: "" }
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as fs from "node:fs"
import type { Readable } from "node:stream"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Reaper from "./Reaper.ts"

/** How long a process group gets between SIGTERM and SIGKILL (and after SIGKILL, to be gone). */
export const KILL_GRACE_MS = 1000

/**
 * The shell script that runs `command` once parley has written one line to
 * stdin, which it does only after listing the group with the reaper. A parley
 * killed between spawning and listing closes stdin instead, and the command
 * never runs. `read` takes the line byte by byte, so the tool's stdin starts
 * with the request.
 *
 * The command runs in the gate's own shell, as the rest of its first line:
 * the shell parses and runs it as `sh -c command` would (the same `$0`, no
 * arguments, the same output, line numbers in errors and exit status, a
 * syntax error included: test/layers/executor/Reaper.test.ts; where `sh` is
 * bash, a syntax error on the first line quotes the gate with it), without
 * a second `sh` started after the gate (`exec sh -c "$1"` before): 3 ms
 * less from an answer to the tool's first instruction, p50
 * (docs/benchmarks.md, answer → re-run).
 */
export const gated = (command: string): string => `IFS= read -r _ || exit 125; ${command}`

/** How a tool process ended. */
export type ProcessOutcome = Data.TaggedEnum<{
  /** The shell exited (`exitCode` null when a signal ended it). */
  Exited: { readonly exitCode: number | null; readonly stdout: string; readonly stderr: string }
  /** stdout and stderr together passed `limit` bytes; the tool was stopped. Only the first `limit` bytes are kept. */
  OutputLimitExceeded: { readonly limit: number; readonly stdout: string; readonly stderr: string }
}>
export const ProcessOutcome = Data.taggedEnum<ProcessOutcome>()

// A zombie (exited, not yet reaped) is not running. This matters where PID 1
// does not reap orphans (some containers): an orphaned, killed child stays a
// zombie in the group forever and `kill(-pgid, 0)` keeps succeeding.
/** Whether any member of process group `pgid` is still running. */
export const liveMembers = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
  } catch {
    return false
  }
  if (!fs.existsSync("/proc/self/stat")) return true
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      // Fields after the parenthesised command: state ppid pgrp …
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true
    } catch {
      // The process went away while we looked.
    }
  }
  return false
}

/** Polls `done` (after 1, 2, 4, 8, then every 10 ms) until it holds or `ms` pass; says which. */
const waitUntil = async (done: () => boolean, ms: number): Promise<boolean> => {
  const deadline = Date.now() + ms
  for (let delay = 1; ; delay = Math.min(delay * 2, 10)) {
    if (done()) return true
    if (Date.now() >= deadline) return false
    await new Promise<void>((resolve) => setTimeout(resolve, delay))
  }
}

/** Whether `promise` settles within `ms` (the timer is cleared either way). */
const within = (promise: Promise<unknown>, ms: number): Promise<boolean> =>
  new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms)
    void promise.then(() => {
      clearTimeout(timer)
      resolve(true)
    })
  })

/** True once `released` has settled and the group has no running member; false after `ms`. */
const settles = async (pgid: number, released: Promise<unknown>, ms: number): Promise<boolean> => {
  const deadline = Date.now() + ms
  return (await within(released, ms)) && waitUntil(() => !liveMembers(pgid), deadline - Date.now())
}

const signalGroup = (pgid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pgid, signal)
  } catch {
    // ESRCH: nothing left in the group.
  }
}

/**
 * SIGTERM to the group; SIGKILL if after {@link KILL_GRACE_MS} it still has
 * running members or `released` (say, the tool's pipes closing) has not
 * settled; resolves once both hold or a second grace period has passed.
 * Says whether the group is gone.
 */
export const stopGroup = async (pgid: number, released: Promise<unknown> = Promise.resolve()): Promise<boolean> => {
  signalGroup(pgid, "SIGTERM")
  if (await settles(pgid, released, KILL_GRACE_MS)) return true
  signalGroup(pgid, "SIGKILL")
  return (await settles(pgid, released, KILL_GRACE_MS)) || !liveMembers(pgid)
}

/** stdout and stderr under one byte budget: nothing beyond `limit` is kept. */
class BoundedOutput {
  private readonly chunks: Record<"stdout" | "stderr", Array<Buffer>> = { stdout: [], stderr: [] }
  private bytes = 0
  constructor(readonly limit: number) {}

  get exceeded(): boolean {
    return this.bytes > this.limit
  }

  /** Keeps `chunk` unless it passes the limit; false once the limit is passed. */
  add(stream: "stdout" | "stderr", chunk: Buffer): boolean {
    if (this.exceeded) return false
    this.bytes += chunk.length
    if (this.exceeded) {
      this.chunks[stream].push(chunk.subarray(0, chunk.length - (this.bytes - this.limit)))
      return false
    }
    this.chunks[stream].push(chunk)
    return true
  }

  text(stream: "stdout" | "stderr"): string {
    return Buffer.concat(this.chunks[stream]).toString("utf8")
  }
}

const closed = (stream: Readable): Promise<void> => new Promise((resolve) => stream.once("close", () => resolve()))

/**
 * Stops a spawned tool once, however many times it is asked: stops the group
 * (done once its pipes have closed and no member runs), then lets go of the
 * pipes and of the group's entry with the reaper.
 */
const stopper = (child: ChildProcessWithoutNullStreams): (() => Promise<void>) => {
  const pgid = child.pid
  const pipesClosed = Promise.all([closed(child.stdout), closed(child.stderr)])
  let stopping: Promise<void> | undefined
  return () =>
    (stopping ??= (async () => {
      const gone = pgid === undefined || (await stopGroup(pgid, pipesClosed))
      // A member that escaped the group (setsid) may still hold a pipe.
      child.stdout.destroy()
      child.stderr.destroy()
      child.stdin.destroy()
      // A group that would not die stays listed: the reaper kills it when parley ends.
      if (gone && pgid !== undefined) Reaper.release(pgid)
    })())
}

/**
 * Spawns `sh -c command` in its own process group (listed with the reaper)
 * with exactly `env` as its environment, writes `stdin`, and collects
 * output under `maxOutputBytes`. Resolves once the shell has exited (or the
 * output limit was passed) and the group has been stopped. Interrupting the
 * effect stops the group first. A failure to start is a `string` error.
 */
export const run = (
  command: string,
  cwd: string,
  stdin: string,
  maxOutputBytes: number,
  env: Readonly<Record<string, string>>
): Effect.Effect<ProcessOutcome, string> =>
  Effect.callback<ProcessOutcome, string>((resume) => {
    let settled = false
    const settle = (effect: Effect.Effect<ProcessOutcome, string>) => {
      if (settled) return
      settled = true
      resume(effect)
    }
    Reaper.ready()
    // The whole environment is `env`: nothing of parley's own is added to it (see `ToolEnv`).
    const child = spawn("sh", ["-c", gated(command)], {
      cwd,
      detached: true,
      env,
      stdio: ["pipe", "pipe", "pipe"]
    })
    // Listed with a live reaper before the gate opens (see Reaper); nothing else comes between.
    const listed = child.pid !== undefined ? Reaper.guard(child.pid) : Promise.resolve()
    const stop = stopper(child)
    const output = new BoundedOutput(maxOutputBytes)
    let exitCode: number | null = null
    const conclude = () =>
      void stop().then(() =>
        settle(
          Effect.succeed(
            output.exceeded
              ? ProcessOutcome.OutputLimitExceeded({
                  limit: maxOutputBytes,
                  stdout: output.text("stdout"),
                  stderr: output.text("stderr")
                })
              : ProcessOutcome.Exited({ exitCode, stdout: output.text("stdout"), stderr: output.text("stderr") })
          )
        )
      )
    const collect = (name: "stdout" | "stderr") => (chunk: Buffer) => {
      if (output.add(name, chunk)) return
      // Stop reading at once: whatever else the tool prints is never buffered.
      child.stdout.destroy()
      child.stderr.destroy()
      conclude()
    }
    child.stdout.on("data", collect("stdout"))
    child.stderr.on("data", collect("stderr"))
    child.on("error", (e) => void stop().then(() => settle(Effect.fail(e.message))))
    child.on("exit", (code) => {
      exitCode = code
      conclude()
    })
    // A tool that never reads stdin closes the pipe early (EPIPE): not an error.
    child.stdin.on("error", () => {})
    // Opens the gate once the group is listed (unless the call was stopped meanwhile).
    void listed.then(() => {
      if (!child.stdin.destroyed) child.stdin.end(`\n${stdin}`)
    })
    return Effect.promise(stop)
  })
