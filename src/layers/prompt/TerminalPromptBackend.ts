/**
 * The live `PromptBackend`: prompts on the terminal through effect/cli's
 * prompts (`Terminal` service). One prompt is on screen at a time; a secret
 * is read with `Prompt.Hidden`, which echoes nothing.
 *
 * Ctrl-C at a prompt cancels that question only; a second cancellation
 * within {@link REPEAT_WINDOW_MS} of the first means "stop", and runs
 * `onRepeatedCancel` (the CLI interrupts the whole turn, as Ctrl-C does when
 * no prompt is on screen), so a turn with many queued questions stops with
 * two presses, not one per question.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import * as NodeServices from "@effect/platform-node/NodeServices"
 * import * as TerminalPromptBackend from "./TerminalPromptBackend.ts"
 * import { PromptBackend } from "../../services/PromptBackend.ts"
 * const program = Effect.map(Effect.service(PromptBackend), (p) => p.interactive)
 * const runnable = Effect.provide(program, TerminalPromptBackend.layer.pipe(Layer.provide(NodeServices.layer)))
 * ```
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Semaphore from "effect/Semaphore"
import * as Prompt from "effect/cli/Prompt"
import * as Terminal from "effect/Terminal"
import type { Question } from "../../domain/tool/Question.ts"
import {
  type PermissionDecision,
  PromptBackend,
  PromptCancelled,
  PromptFailed,
  type QuestionAnswer
} from "../../services/PromptBackend.ts"
import { keyPrompt } from "./KeyPrompt.ts"

const PERMISSION_KEYS = [
  { key: "y", label: "run" },
  { key: "Y", label: "run, and remember for this turn" },
  { key: "n", label: "skip" },
  { key: "N", label: "skip, and remember for this turn" }
]

const BOOLEAN_KEYS = [
  { key: "y", label: "yes" },
  { key: "Y", label: "yes, and remember for this turn" },
  { key: "n", label: "no" },
  { key: "N", label: "no, and remember for this turn" }
]

/** Shown after a prompt's frame when the prompt is quit. */
export const CANCELLED = "\x1b[2m(cancelled)\x1b[22m"

/** Splits long question text: everything but the last line is printed above the prompt. */
const splitText = (question: Question): { before: string; message: string } => {
  const lines = question.text.trimEnd().split("\n")
  const message = lines.pop() ?? ""
  const before = [question.pre_amble, lines.length > 0 ? lines.join("\n") : undefined]
    .filter((s): s is string => s !== undefined && s !== "")
    .join("\n")
  return { before, message }
}

/** How soon a second cancelled prompt counts as "stop the turn". */
export const REPEAT_WINDOW_MS = 2000

/** Options of the terminal prompts: what a second Ctrl-C in a row does (`onRepeatedCancel`). */
export interface Options {
  /** Runs when a prompt is cancelled within {@link REPEAT_WINDOW_MS} of the previous cancellation. */
  readonly onRepeatedCancel?: Effect.Effect<void>
}

/** The terminal prompt backend over effect/cli's `Prompt` environment (a terminal). */
export const make = (options: Options = {}) => Effect.gen(function*() {
  const context = yield* Effect.context<Prompt.Environment>()
  const terminal = yield* Terminal.Terminal
  const one = yield* Semaphore.make(1)
  let lastCancel = Number.NEGATIVE_INFINITY

  /** A prompt was cancelled: the second time within the window, the person means the whole turn. */
  const cancelled = Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const repeated = now - lastCancel <= REPEAT_WINDOW_MS
    lastCancel = now
    return repeated && options.onRepeatedCancel !== undefined ? options.onRepeatedCancel : Effect.void
  })

  const run = <A>(prompt: Prompt.Prompt<A>) =>
    Prompt.run(prompt).pipe(
      Effect.provide(context),
      // A quit prompt (Ctrl-C) leaves its frame unfinished: mark it and end the line.
      Effect.tapError(() => terminal.display(`${CANCELLED}\n`).pipe(Effect.ignore, Effect.andThen(cancelled))),
      Effect.mapError(() => new PromptCancelled()),
      one.withPermits(1)
    )

  const say = (text: string) =>
    text === "" ? Effect.void : terminal.display(text.endsWith("\n") ? text : text + "\n").pipe(
      Effect.mapError((e) => new PromptFailed({ reason: String(e) }))
    )

  const question = (request: { readonly toolName: string; readonly question: Question }) =>
    Effect.gen(function*() {
      const q = request.question
      const { before, message } = splitText(q)
      yield* say(before)
      switch (q.answer_type.type) {
        case "boolean": {
          const key = yield* run(keyPrompt({
            message,
            keys: BOOLEAN_KEYS,
            ...(typeof q.default === "boolean" ? { defaultKey: q.default ? "y" : "n" } : {})
          }))
          return { answer: key === "y" || key === "Y", remember: key === "Y" || key === "N" } satisfies QuestionAnswer
        }
        case "select": {
          // Duplicates would mark the default twice, which effect/cli rejects as a defect.
          const options = [...new Set(q.answer_type.options)]
          if (options.length === 0) return yield* new PromptFailed({ reason: `question "${q.id}" offers no options to choose from` })
          const answer = yield* run(Prompt.Select({
            message,
            choices: options.map((o) => ({ title: o, value: o, selected: q.default === o }))
          }))
          return { answer, remember: false } satisfies QuestionAnswer
        }
        case "text": {
          const answer = yield* run(Prompt.String({
            message,
            ...(typeof q.default === "string" ? { default: q.default } : {})
          }))
          return { answer, remember: false } satisfies QuestionAnswer
        }
        case "secret": {
          const answer = yield* run(Prompt.Hidden({ message }))
          return { answer: Redacted.value(answer), remember: false } satisfies QuestionAnswer
        }
      }
    })

  return PromptBackend.of({
    // Provided only where a person can be asked (the CLI decides: stdin a TTY, a terminal reachable).
    interactive: true,
    permission: (request) =>
      run(keyPrompt({
        message: `Run ${request.kind} ${request.toolName} tool?`,
        keys: PERMISSION_KEYS,
        defaultKey: "y"
      })).pipe(Effect.map((k) => k as PermissionDecision)),
    question
  })
})

/** Needs the `Terminal`, `FileSystem` and `Path` services (e.g. `NodeServices.layer`). */
export const layer: Layer.Layer<PromptBackend, never, Prompt.Environment> = Layer.effect(PromptBackend, make())

/** {@link layer} with options. */
export const layerWith = (options: Options): Layer.Layer<PromptBackend, never, Prompt.Environment> => Layer.effect(PromptBackend, make(options))
