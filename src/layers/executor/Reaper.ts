/**
 * Tool processes die with parley (docs/tools.md#tool-processes-are-bounded).
 *
 * Each local tool runs in its own process group, so signals aimed at parley
 * (a terminal's Ctrl-C, `kill -9`) never reach it, and before this a killed
 * parley left its tools running: a resumed turn then ran the same tool again
 * while the first copy was still alive. Node cannot ask the kernel to kill
 * children with their parent (`prctl(PR_SET_PDEATHSIG)` is out of reach), so
 * parley keeps one small watcher, the reaper: a `sh` process in its own
 * session whose stdin is a pipe from parley. parley tells it `+PGID` when a
 * tool group starts and `-PGID` once that group is gone. However parley ends
 * (exit, crash, SIGKILL), the kernel closes parley's end of the pipe; the
 * reaper reads end-of-file and sends SIGKILL to every group still listed.
 *
 * One reaper per parley process, not one supervisor per tool call: it costs
 * one `sh` start per process (about 1-2 ms) instead of one per call, and it
 * puts nothing of its own into a tool's process group, so "the group is empty"
 * still means "the tool and everything it started are gone". It ignores
 * SIGHUP/SIGINT/SIGQUIT/SIGTERM and sits in its own session, so the signals
 * that stop parley do not stop it first. If it dies anyway, parley starts
 * another and lists the running groups again.
 *
 * The tool's command starts only once its group is listed (the gate in
 * `ToolProcess`), and listed means: a live reaper's input has the line.
 * {@link guard} resolves when the write to the reaper has gone through; if
 * the reaper is gone (it failed to start, or died, and parley has not yet
 * heard of it), the write fails, a new reaper is started with every group,
 * and only then does the tool start (before this, a tool
 * listed with a dead reaper ran unguarded until the next tool call). A
 * reaper that dies while parley runs is replaced at once, or a second later
 * if it died young, so it cannot spin.
 *
 * @example
 * ```ts
 * import { spawn } from "node:child_process"
 * import * as Reaper from "parley/layers/executor/Reaper"
 * Reaper.ready()
 * const child = spawn("sleep", ["60"], { detached: true })
 * // The tool's process group dies with parley once this resolves.
 * if (child.pid !== undefined) await Reaper.guard(child.pid)
 * // Once its group is gone:
 * if (child.pid !== undefined) Reaper.release(child.pid)
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as MutableRef from "effect/MutableRef"
import * as ToolEnv from "../../domain/tool/ToolEnv.ts"

/**
 * The reaper. Lines are `+PGID` (watch) and `-PGID` (forget); `groups` is a
 * space-delimited set. On end-of-file every listed group gets SIGKILL.
 */
export const SCRIPT = `trap '' HUP INT QUIT TERM
groups=' '
while IFS= read -r line; do
  g=\${line#?}
  case $line in
    +*) case $groups in *" $g "*) ;; *) groups="$groups$g " ;; esac ;;
    -*) case $groups in *" $g "*) groups="\${groups%% $g *} \${groups#* $g }" ;; esac ;;
  esac
done
for g in $groups; do kill -9 -"$g" 2>/dev/null; done
exit 0
`

// Process state, not a scope's: one reaper per parley process, and it acts once parley is
// gone, after every scope. The groups it lists, the reaper that runs, and its pending restart.
const guarded = new Set<number>()
const current = MutableRef.make<ChildProcess | undefined>(undefined)
const restartTimer = MutableRef.make<ReturnType<typeof setTimeout> | undefined>(undefined)

/** Whether `child` may still take lines: started, not known to have ended, its input open. */
const usable = (child: ChildProcess): boolean =>
  child.pid !== undefined && child.exitCode === null && child.signalCode === null && child.stdin?.writable === true

/** Writes `text` to the reaper; true once the kernel has it, false if the reaper is gone (EPIPE) or was never there. */
const write = (child: ChildProcess, text: string): Promise<boolean> =>
  new Promise((resolve) => {
    if (!usable(child)) return resolve(false)
    child.stdin!.write(text, (error) => resolve(error === null || error === undefined))
  })

const lines = (): string => [...guarded].map((g) => `+${g}\n`).join("")

// A reaper that dies this soon is broken, not killed: it is restarted a
// second later rather than at once, so it cannot spin.
const RESTART_AFTER_MS = 1000

/** Starts a reaper listing every guarded group; `listed` says when they are in its input. */
const start = (): { readonly child: ChildProcess; readonly listed: Promise<boolean> } => {
  const started = Date.now()
  const child = spawn("sh", ["-c", SCRIPT, "parley-reaper"], {
    cwd: "/",
    detached: true,
    // It needs none of parley's own variables, and outlives parley by a moment.
    env: ToolEnv.withoutParleys(process.env),
    stdio: ["pipe", "ignore", "ignore"]
  })
  // A reaper that cannot start or has died: writes fail with EPIPE, which is
  // not worth a crash; the next guard, or the restart below, starts another.
  child.stdin?.on("error", () => {})
  const gone = () => {
    if (current.current !== child) return
    MutableRef.set(current, undefined)
    if (guarded.size === 0 || restartTimer.current !== undefined) return
    const wait = Math.max(0, RESTART_AFTER_MS - (Date.now() - started))
    const timer = setTimeout(() => {
      MutableRef.set(restartTimer, undefined)
      if (current.current === undefined && guarded.size > 0) MutableRef.set(current, start().child)
    }, wait)
    timer.unref()
    MutableRef.set(restartTimer, timer)
  }
  child.on("error", gone)
  child.on("exit", gone)
  // The reaper must never keep parley's event loop alive.
  child.unref()
  const stdin: unknown = child.stdin
  if (typeof stdin === "object" && stdin !== null && "unref" in stdin && typeof stdin.unref === "function")
    stdin.unref()
  return { child, listed: guarded.size === 0 ? Promise.resolve(true) : write(child, lines()) }
}

/**
 * Starts the reaper if none runs. Call it before spawning a tool: starting
 * the reaper forks parley, which can take tens of milliseconds on a busy
 * machine, and it is better done before the tool's clock starts.
 */
export const ready = (): void => {
  const child = current.current
  if (child === undefined || !usable(child)) MutableRef.set(current, start().child)
}

/**
 * Lists a running tool's process group: it gets SIGKILL if parley ends
 * before {@link release}. Resolves once a live reaper has the group in its
 * input (a dead one is replaced, up to three times); only then may the tool
 * start. Never fails: without a reaper the tool still runs, and parley still
 * stops it on interruption.
 */
export const guard = async (pgid: number): Promise<void> => {
  guarded.add(pgid)
  // Released meanwhile (the call was stopped): listing it again could kill a later owner of the number.
  for (let attempt = 0; attempt < 3 && guarded.has(pgid); attempt++) {
    let target = current.current
    let listed: boolean
    if (target === undefined || !usable(target)) {
      const fresh = start()
      target = fresh.child
      MutableRef.set(current, target)
      listed = await fresh.listed
    } else listed = await write(target, `+${pgid}\n`)
    if (listed) return
    // That reaper is gone: the next attempt starts another, which lists every group.
    if (current.current === target) MutableRef.set(current, undefined)
  }
}

/** Forgets a group that is gone (its number may be reused from now on). */
export const release = (pgid: number): void => {
  if (!guarded.delete(pgid)) return
  const child = current.current
  if (child !== undefined) void write(child, `-${pgid}\n`)
}

/** The reaper's pid, if one runs (for tests). */
export const pid = (): number | undefined => current.current?.pid
