/**
 * Ctrl-Z detaches a foreground `query` (docs/decisions.md#ctrl-z-detaches; RFD 027 "Ctrl+Z
 * (detach)"): the run goes on in the background, the terminal gets its
 * prompt back, and the line says how to attach again.
 *
 * RFD 027 gets there by always running the turn in a daemon that the
 * terminal is a client of. parley runs the turn in the `query` process
 * itself (no second process on every start), so it leaves the terminal the
 * way job control already knows: on SIGTSTP it takes its status lines down,
 * says how to attach, sends its output to a log file, stops hanging up with
 * the terminal, and stops itself; a small waker sends it SIGCONT a moment
 * later, once the shell has taken the terminal back. The shell then has the
 * run as a background job (`jobs` lists it), and nothing of the run was
 * interrupted: tools in flight and the model's stream go on.
 *
 * From then on the process never touches the terminal: its prompts are gone
 * (a question waits for `conversation attach` or `conversation answer`, or
 * follows the `detached` policy), and its stdout and stderr go to the log.
 *
 * @internal
 * @example
 * ```ts
 * import * as Background from "parley/layers/prompt/Background"
 * Background.isDetached() // false until Ctrl-Z
 * ```
 */
import * as MutableRef from "effect/MutableRef"

// Process state, not a run's: it is this process that leaves its terminal (a job of the shell), and every
// prompt of it shares that terminal.
/** Whether the process has left its terminal. */
const detached = MutableRef.make(false)
/** Prompts handed to the terminal and not yet over (drawn, or waiting for their turn). */
const prompting = MutableRef.make(0)

/** Whether this process has left its terminal (Ctrl-Z). */
export const isDetached = (): boolean => MutableRef.get(detached)

/**
 * A prompt for the terminal started (counted until {@link promptEnded}).
 * The run does not leave the terminal meanwhile: a prompt reads it in raw
 * mode, so Ctrl-Z is a key then, and a SIGTSTP sent by hand would leave the
 * prompt reading a terminal the process no longer owns (which stops it).
 */
export const promptStarted = (): void => {
  if (MutableRef.incrementAndGet(prompting) === 1) for (const w of watchers) w.started()
}

/** A prompt is over. */
export const promptEnded = (): void => {
  if (MutableRef.decrementAndGet(prompting) === 0) for (const w of watchers) w.ended()
}

/** Whether a prompt has the terminal now. */
export const isPrompting = (): boolean => MutableRef.get(prompting) > 0

/** Told when the terminal goes to prompts and comes back (the Ctrl-C menu reads keys only between them). */
export interface PromptWatcher {
  readonly started: () => void
  readonly ended: () => void
}

const watchers = new Set<PromptWatcher>()

/** Follows prompts taking and giving back the terminal, until the returned function is called. */
export const watchPrompts = (watcher: PromptWatcher): (() => void) => {
  watchers.add(watcher)
  return () => void watchers.delete(watcher)
}

/**
 * Marks the process as having left its terminal, unless a prompt is in
 * progress (then nothing changes and it says so: false). From the moment it
 * is marked, no new prompt is drawn.
 */
export const markDetached = (): boolean => {
  if (MutableRef.get(prompting) > 0 || MutableRef.get(detached)) return false
  MutableRef.set(detached, true)
  // The terminal is left for good: whoever reads it between prompts (the Ctrl-C menu) lets go now. A
  // reader still armed when the waker continues the run in the background stops it again (SIGTTIN).
  for (const w of watchers) w.started()
  return true
}
