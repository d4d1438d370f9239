/**
 * The keys `conversation attach` reads between prompts
 * (docs/questions-and-approvals.md#runs-beyond-the-terminal): the terminal is
 * read key by key in raw mode; `m` asks for a message to the running turn (a
 * line; Esc or an empty line sends nothing), then when the turn gets it —
 * `after` (a new turn once this one ends), `next` (its next request to the
 * model) or `now` (stopped as Ctrl-C stops it, then resumed with the
 * message). What sending means is the attach's ({@link Hooks}).
 *
 * Ctrl-C and Ctrl-Z keep their meaning while keys are read (raw mode turns
 * them into keys): Ctrl-C stops the run, Ctrl-Z detaches this terminal. A
 * question's prompt and the message's take the terminal in turn
 * ({@link prompting}). Ctrl-Z, a closed terminal or a plain kill detach the
 * attach and leave the run going ({@link detachSignals}).
 *
 * @internal
 * @example
 * ```ts
 * import * as AttachKeys from "parley/layers/prompt/AttachKeys"
 * declare const hooks: AttachKeys.Hooks
 * const keys = AttachKeys.watch(hooks) // scoped: reads `m` until the scope closes
 * ```
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type * as Semaphore from "effect/Semaphore"
import * as Prompt from "effect/cli/Prompt"
import type { When } from "../../domain/storage/QueuedMessage.ts"
import * as ProcessMain from "../ProcessMain.ts"
import * as Background from "./Background.ts"

const CTRL_C = "\x03"
const CTRL_Z = "\x1a"

/** The keys attach reads between prompts, as its first line says. */
export const KEYS = "parley: m sends a message to the running turn · Ctrl-C stops the run · Ctrl-Z detaches"

/** What the `m` key needs from the attach. */
export interface Hooks {
  /** The prompts' terminal. */
  readonly terminal: <A, E>(prompt: Effect.Effect<A, E, Prompt.Environment>) => Effect.Effect<A, E>
  /** Held while the message is typed: a question that opens meanwhile waits for it (and the other way round). */
  readonly lock: Semaphore.Semaphore
  /** Takes the status rows down while the prompt is on screen. */
  readonly paused: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Sends the message; what to say then. */
  readonly send: (message: string, when: When) => Effect.Effect<string>
  /** Prints a line above the status rows. */
  readonly say: (line: string) => Effect.Effect<void>
}

/** A question's prompt: it waits for a message being typed, and the keys are let go while it is on screen. */
export const prompting = <A, E>(lock: Semaphore.Semaphore, prompt: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  lock.withPermits(1)(
    Effect.acquireUseRelease(
      Effect.sync(Background.promptStarted),
      () => prompt,
      () => Effect.sync(Background.promptEnded)
    )
  )

const WHEN = Prompt.Select<When>({
  message: "When",
  choices: [
    { title: "after", value: "after", description: "a new turn once this one ends" },
    { title: "next", value: "next", description: "at the turn's next request to the model" },
    { title: "now", value: "now", description: "stop the turn (as Ctrl-C) and go on with the message" }
  ]
})

/** Asks for the message and when, and sends it; nothing when the person gives up (Esc, an empty line). */
const compose = (hooks: Hooks) =>
  Effect.gen(function* () {
    const message = yield* Prompt.run(Prompt.String({ message: "Message to the running turn" }))
    if (message.trim() === "") return yield* hooks.say("parley: nothing sent.")
    const when = yield* Prompt.run(WHEN)
    yield* hooks.say(yield* hooks.send(message, when))
  }).pipe(
    (effect) => hooks.terminal(effect),
    Effect.catchTag("QuitError", () => hooks.say("parley: nothing sent."))
  )

/**
 * Reads the terminal's keys in raw mode while the scope lives and no prompt
 * has the terminal; `m` composes a message. Nothing when stdin is not a terminal.
 */
export const watch = (hooks: Hooks): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const input = process.stdin
    if (input.isTTY !== true) return
    const pressed = yield* Queue.unbounded<void>()
    let armed = false
    let before = { raw: false, flowing: false }
    const disarm = () => {
      if (!armed) return
      armed = false
      input.removeListener("data", onData)
      input.setRawMode(before.raw)
      if (!before.flowing) input.pause()
    }
    const arm = () => {
      if (armed || Background.isPrompting()) return
      armed = true
      before = { raw: input.isRaw, flowing: input.readableFlowing === true }
      input.setRawMode(true)
      input.on("data", onData)
      input.resume()
    }
    function onData(chunk: Buffer | string) {
      for (const key of chunk.toString()) {
        if (key === CTRL_C) return void process.kill(process.pid, "SIGINT")
        if (key === CTRL_Z) return void process.kill(process.pid, "SIGTSTP")
        if (key === "m" || key === "M") {
          disarm()
          return void Queue.offerUnsafe(pressed, undefined)
        }
      }
    }
    // Each `m`: the prompt, counted as one (the keys are let go meanwhile and read again after it).
    yield* Effect.forkScoped(
      Effect.forever(Effect.andThen(Queue.take(pressed), prompting(hooks.lock, hooks.paused(compose(hooks)))))
    )
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        arm()
        return Background.watchPrompts({ started: disarm, ended: arm })
      }),
      (unwatch) =>
        Effect.sync(() => {
          unwatch()
          disarm()
        })
    )
  })

/** Runs `handler` on `signal` while the scope is open (instead of the default action). */
const onSignal = (signal: NodeJS.Signals, handler: () => void) =>
  Effect.acquireRelease(
    Effect.sync(() => void process.on(signal, handler)),
    () => Effect.sync(() => void process.removeListener(signal, handler))
  )

/**
 * Succeeds when this terminal leaves the run going: Ctrl-Z, a closed
 * terminal or a plain kill end this client only, the run is not this
 * process's (only Ctrl-C, SIGINT, stops the run, through the interruption
 * ProcessMain makes of it).
 */
export const detachSignals = Effect.gen(function* () {
  const detached = yield* Deferred.make<void>()
  yield* Effect.sync(() => {
    ProcessMain.forgetSignal("SIGHUP")
    ProcessMain.forgetSignal("SIGTERM")
  })
  for (const signal of ["SIGTSTP", "SIGHUP", "SIGTERM"] as const)
    yield* onSignal(signal, () => Deferred.doneUnsafe(detached, Exit.void))
  return Deferred.await(detached)
})
