/**
 * The person's prompter for a `parley query` run: the terminal's prompts
 * (`TerminalPromptBackend`), the incomplete-turn menu (`ResumeMenu`) and
 * `$EDITOR` (`Editor`), each appearing only once the run's view has shown
 * what happened before it (`Cursor`), with the status lines taken down while
 * it is on screen. Once the run has left its terminal (Ctrl-Z,
 * `Background`) nothing is asked there: a question waits for another
 * answerer (an attached terminal, `conversation answer`), a permission is
 * refused.
 *
 * @internal
 * @example
 * ```ts
 * import type * as Context from "effect/Context"
 * import * as Layer from "effect/Layer"
 * import type * as Prompt from "effect/cli/Prompt"
 * import * as Cursor from "parley/layers/prompt/Cursor"
 * import * as TerminalPrompts from "parley/layers/prompt/TerminalPrompts"
 * import { PromptBackend } from "parley/services/PromptBackend"
 * declare const person: Context.Context<Prompt.Environment>
 * const prompter = Layer.effect(
 *   PromptBackend,
 *   TerminalPrompts.make({ person, paused: (prompt) => prompt, cursor: Cursor.make(), editKept: { why: undefined } })
 * )
 * ```
 */
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Prompt from "effect/cli/Prompt"
import { PromptBackend, PromptFailed } from "../../services/PromptBackend.ts"
import { RunEvents } from "../../services/RunEvents.ts"
import * as Background from "./Background.ts"
import type * as Cursor from "./Cursor.ts"
import * as Editor from "./Editor.ts"
import * as ResumeMenu from "./ResumeMenu.ts"
import * as TerminalPromptBackend from "./TerminalPromptBackend.ts"

/** What the prompter is made of. */
export interface Options {
  /** The person's terminal. */
  readonly person: Context.Context<Prompt.Environment>
  /** Runs a prompt with the status lines off the screen. */
  readonly paused: <A, E>(prompt: Effect.Effect<A, E>) => Effect.Effect<A, E>
  /** How far the terminal's view of the run has got: a prompt waits for it. */
  readonly cursor: Cursor.Cursor
  /** Why the last edit of the pending query was abandoned, when it was (set here, read by the caller). */
  readonly editKept: { why: string | undefined }
}

/**
 * Stops the whole run the way Ctrl-C does when no prompt is on screen (a
 * prompt reads keys in raw mode, so the terminal sends no SIGINT itself):
 * every finalizer runs, and the exit code is 130.
 */
const interruptRun = Effect.sync(() => void process.kill(process.pid, "SIGINT"))

/** The person's prompter, following the run's events. */
export const make = (options: Options) =>
  Effect.gen(function* () {
    const { person, paused, cursor, editKept } = options
    const prompts = yield* TerminalPromptBackend.make({ onRepeatedCancel: interruptRun, editor: Editor.saved }).pipe(
      Effect.provideContext(person)
    )
    const events = yield* RunEvents
    // Once the run has left the terminal (Ctrl-Z) nothing is asked there: a question waits for
    // another answerer (an attached terminal, `conversation answer`), a permission is refused.
    // Counted from the moment a prompt is handed to the terminal: a run does not leave it (Ctrl-Z) meanwhile.
    const shown = <A, E>(prompt: Effect.Effect<A, E>, gone: Effect.Effect<A, E | PromptFailed>) =>
      Effect.acquireUseRelease(
        Effect.sync(Background.promptStarted),
        () =>
          Effect.flatMap(events.latest, cursor.reach).pipe(
            Effect.andThen(Effect.suspend(() => (Background.isDetached() ? gone : paused(prompt))))
          ),
        () => Effect.sync(Background.promptEnded)
      )
    const left = Effect.fail(new PromptFailed({ reason: "the run left its terminal (Ctrl-Z)" }))
    return PromptBackend.of({
      get interactive() {
        return prompts.interactive && !Background.isDetached()
      },
      // Left with Ctrl-Z, the run is still the person's: its questions wait for them (or any answerer).
      get detachedDefault() {
        return Background.isDetached() ? ("wait" as const) : undefined
      },
      permission: (request) => shown(prompts.permission(request), left),
      question: (request) => shown(prompts.question(request), Effect.never),
      review: (request) => shown(prompts.review(request), left),
      resumeChoice: (info) => shown(ResumeMenu.ask(person)(info), left),
      edit: (text, file) =>
        Effect.map(Editor.edit(text, process.env, file), (result) => {
          if (result._tag === "Edited") return result.text
          // Only the pending query's edit explains itself when kept; a call's arguments go back to the prompt.
          if (file === undefined) editKept.why = result.why
          return undefined
        })
    })
  })
