/**
 * Status as it happens, on the person's terminal (docs/cli.md#status-lines): a live
 * region of spinner rows — "waiting for <model>" while the model has not
 * answered, one row per running tool call — redrawn in place, and permanent
 * lines printed above it (`✓`/`✗` per call, `↳` per question).
 *
 * TTY only: without a terminal every method is a no-op. Colour follows
 * `NO_COLOR`. While a prompt is on screen the region is taken down
 * ({@link Status.paused}), so a prompt never fights a spinner for the cursor.
 * The spinner is a fiber in the run's scope, not a timer left behind.
 *
 * @example
 * ```ts
 * import * as Status from "./Status.ts"
 * const status = yield* Status.make(PersonTerminal.reach(), Style.colorAllowed())
 * yield* status.notice(notice)
 * ```
 */
import type * as tty from "node:tty"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type * as RunEvent from "../domain/run/RunEvent.ts"
import * as ToolStyle from "../domain/tool/ToolStyle.ts"
import * as StatusText from "./StatusText.ts"
import * as Style from "./Style.ts"

export interface Status {
  /** Whether anything is shown (a terminal was reached). */
  readonly enabled: boolean
  readonly style: Style.Style
  /** Shows (or takes down) the "waiting for the model" row. */
  readonly waiting: (on: boolean, label: string) => Effect.Effect<void>
  /** Renders a run event: a running row, a finished line, a question line (others show nothing here). */
  readonly notice: (notice: RunEvent.RunEvent) => Effect.Effect<void>
  /** Prints `text` as a permanent line above the live rows. */
  readonly line: (text: string) => Effect.Effect<void>
  /** Runs `write` (output elsewhere on the same screen: stdout, stderr) with the live rows taken down meanwhile. */
  readonly around: (write: () => void) => Effect.Effect<void>
  /** Runs `effect` with the live rows off the screen (a prompt is showing). */
  readonly paused: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Takes the live rows down for good (the run is over). */
  readonly clear: Effect.Effect<void>
  /** Takes the rows down and never writes to the screen again (the run left the terminal: Ctrl-Z). */
  readonly leave: Effect.Effect<void>
}

/** DECAWM off and on: text written in between is clipped at the right margin. */
const NO_WRAP = "\x1b[?7l"
const WRAP = "\x1b[?7h"

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

/** No terminal: nothing is shown. */
export const none: Status = {
  enabled: false,
  style: Style.plain,
  waiting: () => Effect.void,
  notice: () => Effect.void,
  line: () => Effect.void,
  around: (write) => Effect.sync(write),
  paused: (effect) => effect,
  clear: Effect.void,
  leave: Effect.void
}

/** The live region's state and its drawing (synchronous writes to one terminal). */
class Region {
  private readonly rows = new Map<string, string>()
  private drawn = 0
  private frame = 0
  /** Lines that arrived while a prompt was on screen: printed once it is gone. */
  private readonly held: Array<string> = []
  private paused = false
  /** The run left the terminal: nothing is written to it any more. */
  private gone = false

  constructor(
    private readonly out: tty.WriteStream,
    private readonly style: Style.Style
  ) {}

  get columns(): number {
    return Math.max(this.out.columns ?? 80, 20)
  }

  get active(): boolean {
    return this.rows.size > 0 && !this.paused && !this.gone
  }

  leave(): void {
    this.erase()
    this.held.splice(0)
    this.gone = true
  }

  set(key: string, text: string | undefined): void {
    this.erase()
    if (text === undefined) this.rows.delete(key)
    else this.rows.set(key, text)
    this.draw()
  }

  /** Prints a permanent line above the rows (held back while a prompt is on screen). */
  print(text: string): void {
    if (this.gone) return
    if (this.paused) {
      this.held.push(text)
      return
    }
    this.erase()
    this.out.write(text + "\n")
    this.draw()
  }

  /** Runs `write` with the rows taken down. */
  around(write: () => void): void {
    this.erase()
    write()
    this.draw()
  }

  pause(): void {
    this.erase()
    this.paused = true
  }

  resume(): void {
    this.paused = false
    if (this.gone) return
    for (const text of this.held.splice(0)) this.out.write(text + "\n")
    this.draw()
  }

  tick(): void {
    if (!this.active) return
    this.frame++
    this.erase()
    this.draw()
  }

  erase(): void {
    if (this.drawn === 0) return
    this.out.write("\r\x1b[2K" + "\x1b[1A\x1b[2K".repeat(this.drawn - 1))
    this.drawn = 0
  }

  /** At most this many rows are live: a region taller than the screen could not be erased. */
  get maxRows(): number {
    return Math.max((this.out.rows ?? 24) - 1, 1)
  }

  draw(): void {
    if (!this.active) return
    const spinner = FRAMES[this.frame % FRAMES.length]!
    const texts = [...this.rows.values()]
    const shown =
      texts.length <= this.maxRows
        ? texts
        : [...texts.slice(0, this.maxRows - 1), `… and ${texts.length - this.maxRows + 1} more`]
    const lines = shown.map((text) => this.style.dim(`${spinner} ${Style.truncate(text, this.columns - 3)}`))
    // Autowrap off while the rows are written (one write, so it is never left off): a row
    // that is wider than we reckoned is clipped, not wrapped onto a line erase() misses.
    this.out.write(`${NO_WRAP}${lines.join("\n")}${WRAP}`)
    this.drawn = lines.length
  }
}

/** The status on `out` (or {@link none} without a terminal); the spinner fiber lives in the scope. */
export const make = (out: tty.WriteStream | undefined, color: boolean): Effect.Effect<Status, never, Scope.Scope> =>
  Effect.gen(function* () {
    if (out === undefined) return none
    const style = Style.make(color)
    const region = new Region(out, style)
    yield* Effect.forkScoped(
      Effect.repeat(
        Effect.sync(() => region.tick()),
        Schedule.spaced("80 millis")
      )
    )
    yield* Effect.addFinalizer(() => Effect.sync(() => region.erase()))
    const notice = (n: RunEvent.RunEvent) =>
      Effect.sync(() => {
        const columns = region.columns
        switch (n._tag) {
          case "ToolStarted":
            if (ToolStyle.isHidden(n.call.name)) return
            return region.set(`call:${n.call.id}`, StatusText.runningRow(n, columns))
          case "ToolFinished":
            if (ToolStyle.isHidden(n.call.name)) return
            region.set(`call:${n.call.id}`, undefined)
            return region.print(StatusText.finishedLine(n, columns, style))
          case "QuestionClosed":
            return region.print(StatusText.questionLine(n, columns, style))
          default:
            return
        }
      })
    return {
      enabled: true,
      style,
      waiting: (on, label) => Effect.sync(() => region.set("waiting", on ? label : undefined)),
      notice,
      line: (text) => Effect.sync(() => region.print(text)),
      around: (write) => Effect.sync(() => region.around(write)),
      paused: (effect) =>
        Effect.acquireUseRelease(
          Effect.sync(() => region.pause()),
          () => effect,
          () => Effect.sync(() => region.resume())
        ),
      clear: Effect.sync(() => region.erase()),
      leave: Effect.sync(() => region.leave())
    } satisfies Status
  })
