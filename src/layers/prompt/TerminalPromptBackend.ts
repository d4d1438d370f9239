/**
 * The live `PromptBackend`: prompts on the terminal through effect/cli's
 * prompts (`Terminal` service). One prompt is on screen at a time; a secret
 * is read with `Prompt.Hidden`, which echoes nothing.
 *
 * Every prompt says which call it belongs to when several run together
 * (`write_file · call 2 of 3`), and the permission prompt shows the call's
 * arguments, pretty-printed and cut to a few lines (`?` shows them whole):
 * the person sees what they allow before they allow it (docs/cli.md#status-lines).
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
 * import * as TerminalPromptBackend from "parley/layers/prompt/TerminalPromptBackend"
 * import { PromptBackend } from "parley/services/PromptBackend"
 * const program = Effect.map(Effect.service(PromptBackend), (p) => p.interactive)
 * const runnable = Effect.provide(program, TerminalPromptBackend.layer.pipe(Layer.provide(NodeServices.layer)))
 * ```
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Semaphore from "effect/Semaphore"
import * as Prompt from "effect/cli/Prompt"
import * as Terminal from "effect/Terminal"
import type * as Schema from "effect/Schema"
import * as PermissionInquiry from "../../domain/event/PermissionInquiry.ts"
import type { Question } from "../../domain/tool/Question.ts"
import * as QuestionPolicy from "../../domain/tool/QuestionPolicy.ts"
import * as ToolStyle from "../../domain/tool/ToolStyle.ts"
import {
  type CallPosition,
  type PermissionKey,
  type PermissionRequest,
  PromptBackend,
  PromptCancelled,
  PromptFailed,
  type QuestionAnswer,
  type QuestionRequest,
  type ReviewKey,
  type ReviewRequest
} from "../../services/PromptBackend.ts"
import { printable } from "../../domain/render/TerminalText.ts"
import { bold, dim, type KeyChoice, keyPrompt } from "./KeyPrompt.ts"

const PERMISSION_KEYS: ReadonlyArray<KeyChoice<PermissionKey>> = [
  { key: "y", label: "run" },
  { key: "Y", label: "run, and remember for this turn" },
  { key: "n", label: "skip" },
  { key: "N", label: "skip, and remember for this turn" }
]

/** The result review's keys (JP's). */
const REVIEW_KEYS: ReadonlyArray<KeyChoice<ReviewKey>> = [
  { key: "y", label: "deliver the result" },
  { key: "n", label: "skip delivery" },
  { key: "e", label: "edit the result first" }
]

/** How many lines of a result the review shows before `?`. */
const RESULT_LINES = 12

/** The permission prompt's keys with `e` (a call whose arguments may be edited first), listed under `?`. */
const PERMISSION_EDIT_KEYS: ReadonlyArray<KeyChoice<PermissionKey>> = [
  ...PERMISSION_KEYS,
  { key: "e", label: "edit the arguments, then run", helpOnly: true }
]

const BOOLEAN_KEYS = [
  { key: "y", label: "yes" },
  { key: "Y", label: "yes, and remember for this turn" },
  { key: "n", label: "no" },
  { key: "N", label: "no, and remember for this turn" }
]

/** A boolean question whose answer is never remembered (RFD 083 `persistence = "none"`): no `Y`/`N`. */
const BOOLEAN_ONCE_KEYS = [
  { key: "y", label: "yes" },
  { key: "n", label: "no" }
]

/** Shown after a prompt's frame when the prompt is quit. */
export const CANCELLED = dim("(cancelled)")

/** How many lines of arguments the permission prompt shows before `?`. */
export const ARGUMENT_LINES = 8

/**
 * `write_file · call 2 of 3`: which of the calls run together asks (nothing
 * when it is the only one, or when the tool is not shown as a tool call:
 * RFD 083 `style.hidden`, `ask_user`, whose label says who asks).
 */
export const callHeader = (toolName: string, position: CallPosition | undefined): string | undefined =>
  position !== undefined && position.total > 1 && !ToolStyle.isHidden(toolName)
    ? printable(`${toolName} · call ${position.index} of ${position.total} (${position.callId})`)
    : undefined

const indent = (text: string) =>
  text
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n")

const cut = (line: string, columns: number) =>
  [...line].length <= columns ? line : [...line].slice(0, Math.max(columns - 1, 1)).join("") + "…"

/**
 * The arguments as the permission prompt shows them: pretty JSON, at most
 * {@link ARGUMENT_LINES} lines no wider than the terminal; `full` is set
 * when something was left out (shown with `?`).
 */
export const argumentsShown = (
  args: Schema.JsonObject,
  columns: number
): { readonly shown: string; readonly full: string | undefined } => {
  // JSON escapes C0 controls; C1 controls and bidi overrides need making visible too.
  const whole = printable(JSON.stringify(args, null, 2), "\n")
  if (whole === "{}") return { shown: "", full: undefined }
  const width = Math.max(columns - 3, 16)
  const lines = whole.split("\n")
  const fits = lines.length <= ARGUMENT_LINES && lines.every((l) => [...l].length <= width)
  if (fits) return { shown: indent(whole), full: undefined }
  const kept = lines.slice(0, ARGUMENT_LINES - 1).map((l) => cut(l, width))
  const more = lines.length - kept.length
  const note = more > 0 ? `… ${more} more line${more === 1 ? "" : "s"} (? shows all)` : "… (? shows all)"
  return { shown: indent([...kept, note].join("\n")), full: indent(whole) }
}

/** Splits long question text: everything but the last line is printed above the prompt. */
const splitText = (question: Question): { before: string; message: string } => {
  const lines = printable(question.text.trimEnd(), "\n").split("\n")
  const message = lines.pop() ?? ""
  const before = [
    question.context !== undefined ? printable(question.context, "\n") : undefined,
    lines.length > 0 ? lines.join("\n") : undefined
  ]
    .filter((s): s is string => s !== undefined && s !== "")
    .join("\n")
  return { before, message }
}

/** How soon a second cancelled prompt counts as "stop the turn". */
export const REPEAT_WINDOW_MS = 2000

/**
 * Options of the terminal prompts: what a second Ctrl-C in a row does
 * (`onRepeatedCancel`), and what ends the line of a prompt closed from
 * outside (`closedLine`).
 */
export interface Options {
  /** Runs when a prompt is cancelled within {@link REPEAT_WINDOW_MS} of the previous cancellation. */
  readonly onRepeatedCancel?: Effect.Effect<void>
  /**
   * Read when a prompt on screen is interrupted: the words that end its line
   * instead of {@link CANCELLED} (an attached terminal whose question someone
   * else answered: "answered elsewhere: hotfix (via api)").
   */
  readonly closedLine?: () => string | undefined
  /**
   * The person's editor (`Editor.edit`): given, an approval's prompt offers
   * `e` (edit the call's arguments, then run; docs/tools.md#editing-a-calls-arguments),
   * answered `{"edit": {…}}`. `undefined` from it: the edit was left empty.
   */
  readonly editor?: (text: string, file: string) => Effect.Effect<string | undefined>
}

/** The terminal prompt backend over effect/cli's `Prompt` environment (a terminal). */
export const make = (options: Options = {}) =>
  Effect.gen(function* () {
    const context = yield* Effect.context<Prompt.Environment>()
    const terminal = yield* Terminal.Terminal
    const one = yield* Semaphore.make(1)
    let lastCancel = Number.NEGATIVE_INFINITY
    /** How an interrupted prompt's line ends: said by whoever closed it, else "(cancelled)". */
    const closedBy = () => {
      const line = options.closedLine?.()
      return line === undefined ? CANCELLED : dim(line)
    }

    /** A prompt was cancelled: the second time within the window, the person means the whole turn. */
    const cancelled = Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const repeated = now - lastCancel <= REPEAT_WINDOW_MS
      lastCancel = now
      return repeated && options.onRepeatedCancel !== undefined ? options.onRepeatedCancel : Effect.void
    })

    const run = <A>(prompt: Prompt.Prompt<A>) =>
      Prompt.run(prompt).pipe(
        Effect.provide(context),
        // Interrupted (SIGTERM, SIGHUP, a signal's SIGINT) with the prompt on screen: end its
        // line, or whatever is printed next would follow the unanswered prompt on the same line.
        Effect.onInterrupt(() => terminal.display(`${closedBy()}\n`).pipe(Effect.ignore)),
        // A quit prompt (Ctrl-C) leaves its frame unfinished: mark it and end the line.
        Effect.tapError(() => terminal.display(`${CANCELLED}\n`).pipe(Effect.ignore, Effect.andThen(cancelled))),
        Effect.mapError(() => new PromptCancelled()),
        one.withPermits(1)
      )

    const say = (text: string) =>
      text === ""
        ? Effect.void
        : terminal
            .display(text.endsWith("\n") ? text : text + "\n")
            .pipe(Effect.mapError((e) => new PromptFailed({ reason: String(e) })))

    /** The permission prompt's keys and argument lines for an approval asked as a question (`e` with an editor). */
    const approval = (request: QuestionRequest, message: string) =>
      Effect.gen(function* () {
        const { shown, full } = argumentsShown(request.arguments ?? {}, yield* terminal.columns)
        yield* say(shown)
        // An approval asked each time (an MCP server's page or form) offers no Y/N, and no edit.
        const rememberable = QuestionPolicy.of(request.question).rememberable
        const editor = rememberable ? options.editor : undefined
        for (;;) {
          const key = yield* run(
            keyPrompt({
              message,
              keys: !rememberable ? BOOLEAN_ONCE_KEYS : editor !== undefined ? PERMISSION_EDIT_KEYS : PERMISSION_KEYS,
              defaultKey: "y",
              ...(full !== undefined ? { details: `arguments:\n${full}` } : {})
            })
          )
          if (key !== "e" || editor === undefined)
            return { answer: key === "y" || key === "Y", remember: key === "Y" || key === "N" } satisfies QuestionAnswer
          const edited = yield* editArguments(request.arguments ?? {}, editor)
          if (edited !== undefined) return { answer: { edit: edited }, remember: false } satisfies QuestionAnswer
        }
      })

    /** The arguments edited until they are a JSON object (a warning line each time they are not); `undefined`: left empty. */
    const editArguments = (args: Schema.JsonObject, editor: NonNullable<Options["editor"]>) =>
      Effect.gen(function* () {
        let text = JSON.stringify(args, null, 2)
        for (;;) {
          const saved = yield* editor(text, "ARGUMENTS.json")
          const read = saved === undefined ? undefined : PermissionInquiry.readEdited(saved)
          if (read === undefined || saved === undefined) return undefined
          if ("arguments" in read) return read.arguments
          yield* say(dim(`The edited arguments: ${read.problem}; edit them again.`))
          text = saved
        }
      })

    const question = (request: QuestionRequest) =>
      Effect.gen(function* () {
        const q = request.question
        const { before, message } = splitText(q)
        const header = callHeader(request.toolName, request.position)
        if (header !== undefined) {
          const args =
            request.approval !== true && request.arguments !== undefined && Object.keys(request.arguments).length > 0
              ? ` ${printable(JSON.stringify(request.arguments))}`
              : ""
          yield* say(dim(cut(header + args, Math.max((yield* terminal.columns) - 1, 20))))
        }
        // Who is asking (RFD 083 prompt_label), above the question's context.
        if (request.label !== undefined) yield* say(bold(`${printable(request.label)} asks:`))
        yield* say(before)
        // An approval (may this call run?) is asked as the permission prompt asks it: the call's arguments, y/Y/n/N.
        if (request.approval === true && q.answer_type.type === "boolean") return yield* approval(request, message)
        switch (q.answer_type.type) {
          case "boolean": {
            const key = yield* run(
              keyPrompt({
                message,
                keys: QuestionPolicy.of(q).rememberable ? BOOLEAN_KEYS : BOOLEAN_ONCE_KEYS,
                ...(typeof q.default === "boolean" ? { defaultKey: q.default ? "y" : "n" } : {})
              })
            )
            return { answer: key === "y" || key === "Y", remember: key === "Y" || key === "N" } satisfies QuestionAnswer
          }
          case "select": {
            // Duplicates would mark the default twice, which effect/cli rejects as a defect.
            const options = [...new Set(q.answer_type.options)]
            if (options.length === 0)
              return yield* new PromptFailed({ reason: `question "${q.id}" offers no options to choose from` })
            const answer = yield* run(
              Prompt.Select({
                message,
                choices: options.map((o) => ({ title: printable(o), value: o, selected: q.default === o }))
              })
            )
            return { answer, remember: false } satisfies QuestionAnswer
          }
          case "text": {
            const answer = yield* run(
              Prompt.String({
                message,
                ...(typeof q.default === "string" ? { default: q.default } : {})
              })
            )
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
      permission: (request: PermissionRequest) =>
        Effect.gen(function* () {
          const header = callHeader(request.toolName, request.position)
          if (header !== undefined) yield* say(dim(header))
          const { shown, full } = argumentsShown(request.arguments, yield* terminal.columns)
          yield* say(shown)
          const key = yield* run(
            keyPrompt({
              message: PermissionInquiry.text(request.kind, printable(request.toolName)),
              keys: request.editable === true ? PERMISSION_EDIT_KEYS : PERMISSION_KEYS,
              defaultKey: "y",
              ...(full !== undefined ? { details: `arguments:\n${full}` } : {})
            })
          )
          return key
        }),
      question,
      review: (request: ReviewRequest) =>
        Effect.gen(function* () {
          const header = callHeader(request.toolName, request.position)
          if (header !== undefined) yield* say(dim(header))
          const lines = printable(request.content, "\n").split("\n")
          const cutAt = lines.length > RESULT_LINES ? RESULT_LINES - 1 : lines.length
          const more = lines.length - cutAt
          yield* say(
            indent([...lines.slice(0, cutAt), ...(more > 0 ? [`… ${more} more lines (? shows all)`] : [])].join("\n"))
          )
          const key = yield* run(
            keyPrompt({
              message: `Deliver ${printable(request.toolName)} result to assistant?`,
              keys: REVIEW_KEYS,
              defaultKey: "y",
              ...(more > 0 ? { details: `result:\n${indent(lines.join("\n"))}` } : {})
            })
          )
          return key
        }),
      // The incomplete-turn menu and the editor belong to the program that runs the
      // turn (the CLI brings its own); a bare terminal prompter offers neither.
      resumeChoice: () =>
        Effect.fail(new PromptFailed({ reason: "no incomplete-turn menu on this terminal prompter" })),
      edit: () => Effect.fail(new PromptFailed({ reason: "no editor on this terminal prompter" }))
    })
  })

/** Needs the `Terminal`, `FileSystem` and `Path` services (e.g. `NodeServices.layer`). */
export const layer: Layer.Layer<PromptBackend, never, Prompt.Environment> = Layer.effect(PromptBackend, make())

/** {@link layer} with options. */
export const layerWith = (options: Options): Layer.Layer<PromptBackend, never, Prompt.Environment> =>
  Layer.effect(PromptBackend, make(options))

/**
 * Nobody to ask: JP routes questions to the inquiry backend instead, unless
 * the run is meant to be watched (`--detach`, `serve`): then they wait.
 */
export const headless = (watched: boolean) =>
  PromptBackend.of({
    interactive: false,
    detachedDefault: watched ? "wait" : undefined,
    permission: () => Effect.fail(new PromptFailed({ reason: "no terminal" })),
    question: () => Effect.fail(new PromptFailed({ reason: "no terminal" })),
    review: () => Effect.fail(new PromptFailed({ reason: "no terminal" })),
    resumeChoice: () => Effect.fail(new PromptFailed({ reason: "no terminal" })),
    edit: () => Effect.fail(new PromptFailed({ reason: "no terminal" }))
  })
