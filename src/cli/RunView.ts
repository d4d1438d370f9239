/**
 * The terminal's view of a run (docs/decisions.md#one-run-event-stream): a consumer of the run-event
 * stream, in its own fiber. It prints the reply on stdout as it streams
 * (`--format text`) or each event as a JSON line (`--format jsonl`:
 * `RunEventLine`), the conversation line and warnings on stderr, and the
 * status lines; it keeps every event for `query --format json` (a fold:
 * `RunReport`). The prompts wait until it has shown what came before them
 * (`Cursor`), so a question's answer line is never printed under the next
 * prompt.
 *
 * @example
 * ```ts
 * import * as RunView from "./RunView.ts"
 * const view = RunView.make(status, "text")
 * yield* RunView.watch(view, hub, cursor)
 * ```
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as RunEvent from "../domain/run/RunEvent.ts"
import * as RunEventLine from "../domain/run/RunEventLine.ts"
import { printable } from "../domain/render/TerminalText.ts"
import * as ProcessOutput from "../layers/ProcessOutput.ts"
import type { RunEvents } from "../services/RunEvents.ts"
import type * as Cursor from "../layers/prompt/Cursor.ts"
import type * as Status from "./Status.ts"
import * as Style from "./Style.ts"

/**
 * stdout's text, one reply per line: a reply cut mid-line is ended before
 * anything else is printed. On a terminal the model's control characters are
 * shown, not obeyed (a reply could otherwise clear the screen, retitle the
 * window or write the clipboard); piped, the reply is passed on as it came.
 */
class TextOut {
  private last = ""
  private readonly terminal = ProcessOutput.isTerminal("stdout")
  constructor(private readonly enabled: boolean) {}
  write(text: string): void {
    if (!this.enabled || text === "") return
    this.last = text
    ProcessOutput.write("stdout", this.terminal ? printable(text, "\n\t") : text)
  }
  endLine(): void {
    if (this.last !== "" && !this.last.endsWith("\n")) ProcessOutput.write("stdout", "\n")
    this.last = ""
  }
}

export interface View {
  /** Every event seen so far, in order. */
  readonly events: ReadonlyArray<RunEvent.RunEvent>
  /** The model the run chose, once it did. */
  readonly model: () => string | undefined
  /** Shows one event. */
  readonly show: (event: RunEvent.RunEvent) => Effect.Effect<void>
  /** Prints a line on stderr (the reply's line ended first, the status rows out of the way). */
  readonly stderr: (line: string) => Effect.Effect<void>
  /** Ends the reply's line on stdout, if one is open. */
  readonly endLine: Effect.Effect<void>
}

/** What stdout shows as the run goes: the reply (`text`), each event as a JSON line (`jsonl`), or nothing yet (`json`). */
export type Stdout = "text" | "json" | "jsonl"

/** One event as its `--format jsonl` line. */
const writeLine = (e: RunEvent.RunEvent): void =>
  ProcessOutput.write("stdout", `${JSON.stringify(RunEventLine.encode(e))}\n`)

/** A view on `status` (the person's screen, or none), printing on stdout what `stdout` says. */
export const make = (status: Status.Status, stdout: Stdout): View => {
  const events: Array<RunEvent.RunEvent> = []
  const out = new TextOut(stdout === "text")
  const lines = stdout === "jsonl"
  let model: string | undefined
  const stderr = (line: string) =>
    status.around(() => {
      out.endLine()
      ProcessOutput.write("stderr", `${line}\n`)
    })
  const conversation = (e: RunEvent.Of<"ConversationKnown">) => {
    // Dim only where stderr is the terminal: a redirected stderr gets plain text.
    const dim = ProcessOutput.isTerminal("stderr") && status.style.color ? status.style.dim : Style.plain.dim
    return stderr(dim(`conversation ${e.conversation_id}${e.created ? " (new)" : ""}`))
  }
  const show = (e: RunEvent.RunEvent): Effect.Effect<void> => {
    events.push(e)
    if (lines) writeLine(e)
    switch (e._tag) {
      case "ConversationKnown":
        return conversation(e)
      case "ModelChosen":
        return Effect.sync(() => {
          model = e.model
        })
      case "Waiting":
        return status.waiting(e.waiting, `waiting for ${model ?? "the model"}`)
      case "TextDelta":
        return Effect.sync(() => out.write(e.text))
      case "ToolCallsAnnounced":
        return Effect.sync(() => out.endLine())
      case "Warning":
        return stderr(`parley: ${Style.printable(e.text)}`)
      case "MessageDelivered":
        return stderr(`parley: message ${e.id} (via ${e.via}) delivered: ${Style.printable(e.message)}`)
      default:
        return status.notice(e)
    }
  }
  return { events, model: () => model, show, stderr, endLine: Effect.sync(() => out.endLine()) }
}

/** Follows the run's events in a fiber of the scope; the cursor says how far it got. */
export const watch = (
  view: View,
  hub: RunEvents["Service"],
  cursor: Cursor.Cursor
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.suspend(() => {
    cursor.watching()
    return Effect.forkScoped(
      Stream.runForEach(hub.sequenced, (e) =>
        Effect.tap(view.show(e.event), () => Effect.sync(() => cursor.advance(e.seq)))
      ).pipe(Effect.ensuring(Effect.sync(() => cursor.stopped())))
    )
  }).pipe(Effect.asVoid)

/** Waits until the view has shown every event published so far. */
export const settled = (_view: View, hub: RunEvents["Service"], cursor: Cursor.Cursor): Effect.Effect<void> =>
  Effect.flatMap(hub.latest, cursor.reach)
