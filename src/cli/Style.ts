/**
 * Terminal styling for status lines (docs/cli.md#status-lines): dim, bold, green and red
 * only when a terminal shows them and `NO_COLOR` is not set
 * (https://no-color.org: any non-empty value turns colour off), plus width
 * helpers that ignore escape sequences.
 *
 * @example
 * ```ts
 * import * as Style from "./Style.ts"
 * const s = Style.make(true)
 * s.dim("waiting") // "\x1b[2mwaiting\x1b[22m" (or "waiting" under NO_COLOR)
 * ```
 */
import * as TerminalText from "../domain/render/TerminalText.ts"

export interface Style {
  readonly color: boolean
  readonly dim: (s: string) => string
  readonly bold: (s: string) => string
  readonly green: (s: string) => string
  readonly red: (s: string) => string
}

/** Whether colour is allowed at all (`NO_COLOR` unset or empty). */
export const colorAllowed = (env: Readonly<Record<string, string | undefined>> = process.env): boolean =>
  env["NO_COLOR"] === undefined || env["NO_COLOR"] === ""

const wrap = (on: boolean, open: string, close: string) => (s: string) => (on ? `\x1b[${open}m${s}\x1b[${close}m` : s)

/** Styles for a terminal that shows colour when `color` is true. */
export const make = (color: boolean): Style => ({
  color,
  dim: wrap(color, "2", "22"),
  bold: wrap(color, "1", "22"),
  green: wrap(color, "32", "39"),
  red: wrap(color, "31", "39")
})

/** Plain text (no escapes). */
export const plain = make(false)

/** The printed width of a string in terminal columns (see `TerminalText`). */
export const width = TerminalText.width

/** A string cut to at most so many terminal columns, ending in `…` when cut (see `TerminalText`). */
export const truncate = TerminalText.truncate

/** Text from outside made safe to show: control characters (escape sequences) made visible (see `TerminalText`). */
export const printable = TerminalText.printable

/** The first non-empty line of `s`, trimmed. */
export const firstLine = (s: string): string =>
  s
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l !== "") ?? ""
