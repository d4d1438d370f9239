/**
 * The Ctrl-C menu of a foreground `query` at a terminal (RFD 027 "Ctrl+C
 * (interrupt)"; JP's `InterruptHandler`): the first Ctrl-C asks what to do
 * — stop, abort, continue, reply or detach — and a second Ctrl-C while it asks is
 * the plain stop it always was.
 *
 * The terminal cannot tell its own Ctrl-C from a `kill -INT` sent from
 * outside: both arrive as SIGINT. So while the run is under way and no prompt
 * has the terminal, its input is read in raw mode, where Ctrl-C is a key
 * (`\x03`) and Ctrl-Z another (`\x1a`, handed to the Ctrl-Z detach as the
 * SIGTSTP it would have been). SIGINT itself keeps contract §3: from outside,
 * or for a run without a terminal, it stops the run with exit 130.
 *
 * "reply" asks for a message line at the terminal (the live rows taken
 * down while it is typed; Enter on an empty line, or Esc, goes back to the
 * run), then sends it as `parley conversation send ID MESSAGE --when now`
 * does: the turn stops as Ctrl-C stops it and goes on in the background
 * with the message (docs/cli.md#talk-to-a-running-turn); `conversation
 * attach ID` follows it there. Ctrl-C while the line is typed stops the run.
 *
 * @internal
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Ref from "effect/Ref"
 * import * as InterruptMenu from "parley/layers/prompt/InterruptMenu"
 * // In a scope, with the run's Ref that "abort" sets (read when the run is interrupted):
 * const menu = Effect.gen(function* () {
 *   const aborted = yield* Ref.make(false)
 *   yield* InterruptMenu.watch({ say: (text) => console.error(text), aborted })
 * })
 * ```
 */
import { spawn } from "node:child_process"
import * as readline from "node:readline"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Background from "./Background.ts"

const CTRL_C = "\x03"
const CTRL_Z = "\x1a"

/** The menu's line. */
export const MENU =
  "parley: Ctrl-C — [s]top (keep what finished)  [a]bort (discard the turn)  [c]ontinue  [r]eply  [d]etach  (Ctrl-C again stops)"

/** The prompt of the reply's line. */
export const REPLY_PROMPT = "parley: reply (Enter sends it and restarts the turn with it; empty goes back)> "

/** How "reply" reaches the run: its live rows, and where to send the message. */
export interface Reply {
  /** Runs `effect` with the live rows off the screen (`Status.paused`). */
  readonly paused: <A>(effect: Effect.Effect<A>) => Effect.Effect<A>
  /** Sends the message to the running turn, `--when now`. */
  readonly send: (message: string) => void
}

/** The storage and config the run was given (`Hint.Context`'s), which the send repeats. */
export interface Given {
  readonly storage?: string | undefined
  readonly config?: string | undefined
}

/**
 * Sends `message` to the turn of `id` as `parley conversation send ID
 * MESSAGE --when now` (with this run's storage and config): a process of its
 * own, detached, since it stops this one. Its own output goes nowhere: this
 * run says what happens.
 */
export const sendNow =
  (id: string, context: Given) =>
  (message: string): void => {
    const script = process.argv[1]
    if (script === undefined) return
    const args = [
      script,
      ...(context.storage !== undefined ? ["--storage", context.storage] : []),
      ...(context.config !== undefined ? ["--config", context.config] : []),
      "conversation",
      "send",
      id,
      message,
      "--when",
      "now"
    ]
    spawn(process.execPath, args, { detached: true, stdio: "ignore" }).unref()
  }

/**
 * Reads the reply's line in cooked mode: the message, or `undefined` (an
 * empty line). Ctrl-C while it is typed stops the run (the menu's second
 * Ctrl-C).
 */
const readReply = (): Effect.Effect<string | undefined> =>
  Effect.callback<string | undefined>((resume) => {
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true })
    let done = false
    const finish = (line: string | undefined) => {
      if (done) return
      done = true
      rl.close()
      resume(Effect.succeed(line !== undefined && line.trim() !== "" ? line.trim() : undefined))
    }
    rl.on("SIGINT", () => {
      finish(undefined)
      process.kill(process.pid, "SIGINT")
    })
    rl.on("close", () => finish(undefined))
    rl.question(REPLY_PROMPT, finish)
    return Effect.sync(() => finish(undefined))
  })

/** What the menu does with the terminal and the process; the run's own signals do the work. */
export interface Hooks {
  /** Prints a line above the status rows. */
  readonly say: (text: string) => void
  /** Set when the person chooses "abort": the run stops and its turn is discarded (the run reads it on interruption). */
  readonly aborted: Ref.Ref<boolean>
  /** "reply": without it the choice is not taken. */
  readonly reply?: Reply
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
      case "r":
        if (hooks.reply !== undefined) return leaveWith(() => replying(hooks.reply!))
        return hooks.say("parley: continuing.")
      default:
        hooks.say("parley: continuing.")
    }
  }
  // The line is a prompt: the menu's raw reading is off meanwhile, and back on after an empty line.
  const replying = (reply: Reply) => {
    Background.promptStarted()
    Effect.runFork(
      Effect.flatMap(reply.paused(readReply()), (message) =>
        Effect.sync(() => {
          Background.promptEnded()
          if (message === undefined) return hooks.say("parley: no reply; continuing.")
          hooks.say("parley: replying: the turn stops and goes on in the background with your message.")
          reply.send(message)
        })
      )
    )
  }
  function onData(chunk: Buffer | string) {
    for (const key of chunk.toString()) {
      if (!armed) return
      if (key === CTRL_Z) return leaveWith(signal("SIGTSTP"))
      if (key === CTRL_C && shown) return leaveWith(signal("SIGINT"))
      if (key === CTRL_C) {
        shown = true
        hooks.say(MENU)
      } else if (shown && "sadcr".includes(key.toLowerCase())) choose(key.toLowerCase())
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
