/**
 * The Ctrl-C menu of a foreground `query` at a terminal (RFD 027 "Ctrl+C
 * (interrupt)"; JP's `InterruptHandler`): the first Ctrl-C asks what to do
 * — stop, abort, continue or detach — and a second Ctrl-C while it asks is
 * the plain stop it always was.
 *
 * The terminal cannot tell its own Ctrl-C from a `kill -INT` sent from
 * outside: both arrive as SIGINT. So while the run is under way and no prompt
 * has the terminal, its input is read in raw mode, where Ctrl-C is a key
 * (`\x03`) and Ctrl-Z another (`\x1a`, handed to the Ctrl-Z detach as the
 * SIGTSTP it would have been). SIGINT itself keeps contract §3: from outside,
 * or for a run without a terminal, it stops the run with exit 130.
 *
 * "reply" (stop and send a message in the same turn) is not offered: it comes
 * with a command that talks to a running turn.
 *
 * @example
 * ```ts
 * import * as InterruptMenu from "./InterruptMenu.ts"
 * import * as Ref from "effect/Ref"
 * // In a scope, with the run's Ref that "abort" sets (read when the run is interrupted):
 * const aborted = yield* Ref.make(false)
 * yield* InterruptMenu.watch({ say: (text) => console.error(text), aborted })
 * ```
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Background from "./Background.ts"

const CTRL_C = "\x03"
const CTRL_Z = "\x1a"

/** The menu's line. */
export const MENU =
  "parley: Ctrl-C — [s]top (keep what finished)  [a]bort (discard the turn)  [c]ontinue  [d]etach  (Ctrl-C again stops)"

/** What the menu does with the terminal and the process; the run's own signals do the work. */
export interface Hooks {
  /** Prints a line above the status rows. */
  readonly say: (text: string) => void
  /** Set when the person chooses "abort": the run stops and its turn is discarded (the run reads it on interruption). */
  readonly aborted: Ref.Ref<boolean>
}

const signal = (name: "SIGINT" | "SIGTSTP") => () => void process.kill(process.pid, name)

/**
 * Reads the terminal's keys in raw mode for as long as the scope lives, the
 * run is in the foreground and no prompt has the terminal. Does nothing when
 * stdin or stderr is not a terminal (SIGINT then stops, as always).
 */
export const watch = (hooks: Hooks): Effect.Effect<void, never, Scope.Scope> => {
  const input = process.stdin
  if (input.isTTY !== true || process.stderr.isTTY !== true) return Effect.void
  let armed = false
  let shown = false
  // The terminal as the menu found it: a prompt's terminal may keep raw mode and reading on between prompts.
  // `isPaused()` is false for a stream never read, which is not flowing: what counts is `readableFlowing`.
  let before = { raw: false, flowing: false }
  const disarm = () => {
    if (!armed) return
    armed = false
    shown = false
    input.removeListener("data", onData)
    input.setRawMode(before.raw)
    // Left flowing, the terminal would still be read after a detach, and a read from the background stops the run (SIGTTIN).
    if (!before.flowing) input.pause()
  }
  const arm = () => {
    if (armed || Background.isDetached() || Background.isPrompting()) return
    armed = true
    before = { raw: input.isRaw, flowing: input.readableFlowing === true }
    input.setRawMode(true)
    input.on("data", onData)
    input.resume()
  }
  const leaveWith = (act: () => void) => {
    disarm()
    act()
  }
  const choose = (key: string) => {
    shown = false
    switch (key) {
      case "s":
        return leaveWith(signal("SIGINT"))
      case "a":
        Effect.runSync(Ref.set(hooks.aborted, true))
        return leaveWith(signal("SIGINT"))
      case "d":
        return leaveWith(signal("SIGTSTP"))
      default:
        hooks.say("parley: continuing.")
    }
  }
  function onData(chunk: Buffer | string) {
    for (const key of chunk.toString()) {
      if (!armed) return
      if (key === CTRL_Z) return leaveWith(signal("SIGTSTP"))
      if (key === CTRL_C && shown) return leaveWith(signal("SIGINT"))
      if (key === CTRL_C) {
        shown = true
        hooks.say(MENU)
      } else if (shown && "sadc".includes(key.toLowerCase())) choose(key.toLowerCase())
    }
  }
  return Effect.acquireRelease(
    Effect.sync(() => {
      arm()
      return Background.watchPrompts({ started: disarm, ended: arm })
    }),
    (unwatch) =>
      Effect.sync(() => {
        unwatch()
        disarm()
      })
  ).pipe(Effect.asVoid)
}
