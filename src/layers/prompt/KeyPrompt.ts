/**
 * A single-keypress prompt (`y`/`Y`/`n`/`N` style, case-sensitive), built on
 * effect/cli's `Prompt.Custom` render loop: no Enter needed, Enter takes the
 * default when there is one, anything else beeps. `?` toggles the help,
 * and with it `details` (e.g. a tool call's arguments in full) when given.
 * Styling follows `NO_COLOR`.
 *
 * @example
 * ```ts
 * import * as Prompt from "effect/cli/Prompt"
 * import { keyPrompt } from "parley/layers/prompt/KeyPrompt"
 * const key = Prompt.run(keyPrompt({
 *   message: "Run local write_note tool?",
 *   keys: [{ key: "y", label: "run" }, { key: "n", label: "skip" }],
 *   defaultKey: "y"
 * })) // Effect<string, …, Terminal>
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Prompt from "effect/cli/Prompt"
import * as Terminal from "effect/Terminal"

/** One key of a key prompt and what it does. */
export interface KeyChoice<K extends string = string> {
  readonly key: K
  /** What the key does, shown in the `?` help and after submission. */
  readonly label: string
  /** Listed only in the `?` help, not in the `[y/n,?]` key list (a key most answers never need). */
  readonly helpOnly?: boolean
}

/** Colour and weight unless `NO_COLOR` is set (https://no-color.org). */
const styled = (): boolean => process.env["NO_COLOR"] === undefined || process.env["NO_COLOR"] === ""
export const dim = (s: string) => (styled() ? `\x1b[2m${s}\x1b[22m` : s)
export const bold = (s: string) => (styled() ? `\x1b[1m${s}\x1b[22m` : s)

interface State {
  readonly help: boolean
}

// effect/cli keeps its Action constructors private; the type is public.
const Action = Data.taggedEnum<Prompt.ActionDefinition>()

/** Erases the `rows` terminal rows the previous frame used, leaving the cursor at column 0. */
const erase = (text: string, columns: number): string => {
  const rows = text
    .split("\n")
    .reduce((n, line) => n + Math.max(1, Math.ceil(visibleLength(line) / Math.max(columns, 1))), 0)
  let out = ""
  for (let i = 0; i < rows - 1; i++) out += "\x1b[2K\x1b[1A"
  return out + "\x1b[2K\r"
}

const visibleLength = (s: string): number => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "").length

/** A prompt answered by one key press (see the example above). */
export const keyPrompt = <K extends string>(options: {
  readonly message: string
  readonly keys: ReadonlyArray<KeyChoice<K>>
  readonly defaultKey?: NoInfer<K>
  /** Shown with the help (`?`), below the keys. */
  readonly details?: string
}): Prompt.Prompt<K> => {
  const keyList = options.keys
    .filter((k) => k.helpOnly !== true)
    .map((k) => (k.key === options.defaultKey ? bold(k.key) : k.key))
    .join("/")
  const details = options.details !== undefined ? options.details.replace(/\n?$/, "\n") : ""
  const frame = (state: State) =>
    `${bold("?")} ${options.message} ${dim("[")}${keyList}${dim(",?]")} ` +
    (state.help
      ? "\n" + options.keys.map((k) => `  ${k.key}  ${k.label}`).join("\n") + "\n  ?  show this help\n" + details
      : "")
  return Prompt.Custom<State, K>(
    { help: false },
    {
      render: (_state, action) => {
        switch (action._tag) {
          case "Beep":
            return Effect.succeed("\x07")
          case "NextFrame":
            return Effect.succeed(frame(action.state))
          case "Submit": {
            const label = options.keys.find((k) => k.key === action.value)?.label ?? action.value
            return Effect.succeed(`${bold("✔")} ${options.message} ${dim(label)}\n`)
          }
        }
      },
      process: (input, state) => {
        const char = Option.getOrElse(input.input, () => "")
        if (input.key.name === "return" || input.key.name === "enter") {
          return Effect.succeed(
            options.defaultKey !== undefined ? Action.Submit({ value: options.defaultKey }) : Action.Beep()
          )
        }
        if (char === "?") return Effect.succeed(Action.NextFrame({ state: { help: !state.help } }))
        const hit = options.keys.find((k) => k.key === char)
        return Effect.succeed(hit !== undefined ? Action.Submit({ value: hit.key }) : Action.Beep())
      },
      clear: (state) =>
        Effect.gen(function* () {
          const terminal = yield* Terminal.Terminal
          const columns = yield* terminal.columns
          return erase(frame(state), columns)
        })
    }
  )
}
