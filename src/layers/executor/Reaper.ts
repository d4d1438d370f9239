/**
 * Tool processes die with parley (issue 11 item 1).
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
 * The one gap: a group is listed right after `spawn` returns (one pipe
 * write), so a parley killed between those two statements leaves that tool
 * unlisted. Hence {@link ready} before the spawn, so that nothing slower than
 * that write sits in between.
 *
 * @example
 * ```ts
 * import { spawn } from "node:child_process"
 * import * as Reaper from "parley/layers/executor/Reaper"
 * Reaper.ready()
 * const child = spawn("sleep", ["60"], { detached: true })
 * // At once: the tool's process group now dies with parley.
 * if (child.pid !== undefined) Reaper.guard(child.pid)
 * // Once its group is gone:
 * if (child.pid !== undefined) Reaper.release(child.pid)
 * ```
 */
import { type ChildProcess, spawn } from "node:child_process"

/**
 * The reaper. Lines are `+PGID` (watch) and `-PGID` (forget); `groups` is a
 * space-delimited set. On end-of-file every listed group gets SIGKILL.
 */
export const SCRIPT = `trap '' HUP INT QUIT TERM
groups=' '
while IFS= read -r line; do
  g=\${line#?}
  case $line in
    +*) groups="$groups$g " ;;
    -*) case $groups in *" $g "*) groups="\${groups%% $g *} \${groups#* $g }" ;; esac ;;
  esac
done
for g in $groups; do kill -9 -"$g" 2>/dev/null; done
exit 0
`

const guarded = new Set<number>()
let current: ChildProcess | undefined

const send = (child: ChildProcess, line: string): void => {
  child.stdin?.write(line)
}

// A reaper that dies this soon is broken, not killed: restarting it at once
// would spin; the next `guard` tries again instead.
const RESTART_AFTER_MS = 1000

const start = (): ChildProcess => {
  const started = Date.now()
  const child = spawn("sh", ["-c", SCRIPT, "parley-reaper"], { cwd: "/", detached: true, stdio: ["pipe", "ignore", "ignore"] })
  // A reaper that cannot start or has died: writes fail with EPIPE, which is
  // not worth a crash; the tool itself still runs and is still stopped by
  // parley on interruption.
  child.on("error", () => {
    if (current === child) current = undefined
  })
  child.stdin?.on("error", () => {})
  child.on("exit", () => {
    if (current !== child) return
    current = undefined
    if (guarded.size > 0 && Date.now() - started >= RESTART_AFTER_MS) current = start()
  })
  // The reaper must never keep parley's event loop alive.
  child.unref()
  const stdin: unknown = child.stdin
  if (typeof stdin === "object" && stdin !== null && "unref" in stdin && typeof stdin.unref === "function") stdin.unref()
  for (const pgid of guarded) send(child, `+${pgid}\n`)
  return child
}

/**
 * Starts the reaper if none runs. Call it before spawning a tool: starting
 * the reaper forks parley, which can take tens of milliseconds on a busy
 * machine, and a parley killed during that fork would leave the tool
 * unguarded (before this: 2 of 40 runs killed at random moments left their
 * tool running).
 */
export const ready = (): void => {
  current ??= start()
}

/** Lists a running tool's process group: it gets SIGKILL if parley ends before {@link release}. */
export const guard = (pgid: number): void => {
  guarded.add(pgid)
  if (current === undefined) current = start() // lists every guarded group, this one included
  else send(current, `+${pgid}\n`)
}

/** Forgets a group that is gone (its number may be reused from now on). */
export const release = (pgid: number): void => {
  if (!guarded.delete(pgid)) return
  if (current !== undefined) send(current, `-${pgid}\n`)
}

/** The reaper's pid, if one runs (for tests). */
export const pid = (): number | undefined => current?.pid
