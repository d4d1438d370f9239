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

const ESCAPE = /\x1b\[[0-9;?]*[A-Za-z]/g

/** Characters that take no column: combining marks, zero-width joiners and spaces, variation selectors. */
// biome-ignore lint/suspicious/noMisleadingCharacterClass: each mark is matched on its own, as one code point
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\u200b-\u200d\u2060\ufe00-\ufe0f]$/u

/** Characters that take two columns: East Asian wide and fullwidth ranges, and emoji shown as emoji. */
const DOUBLE_WIDTH =
  /^[\u1100-\u115f\u231a\u231b\u2329\u232a\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f\uff00-\uff60\uffe0-\uffe6\u{16fe0}-\u{1b2ff}\u{1f200}-\u{1f2ff}\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}\p{Emoji_Presentation}]$/u

/** The columns one code point takes on a terminal (0, 1 or 2). */
export const charWidth = (char: string): number => (ZERO_WIDTH.test(char) ? 0 : DOUBLE_WIDTH.test(char) ? 2 : 1)

/** The printed width of `s` in terminal columns (escape sequences take none; wide characters two). */
export const width = (s: string): number => {
  let columns = 0
  for (const char of s.replace(ESCAPE, "")) columns += charWidth(char)
  return columns
}

/**
 * Cuts `s` (plain text) to at most `columns` terminal columns, ending in `…`
 * when cut. Wide characters count two: a live status row that wrapped could
 * not be erased, and each spinner frame would leave a line behind.
 */
export const truncate = (s: string, columns: number): string => {
  let used = 0
  let kept = "" // the longest prefix that leaves a column for "…"
  let fits = true
  for (const char of s) {
    used += charWidth(char)
    if (used > columns) {
      fits = false
      break // a 1 MB error line is cut without reading past the cut
    }
    if (used <= columns - 1) kept += char
  }
  return fits ? s : columns <= 0 ? "" : kept + "…"
}

/** Text from outside made safe to show: control characters (escape sequences) made visible (see `TerminalText`). */
export const printable = TerminalText.printable

/** The first non-empty line of `s`, trimmed. */
export const firstLine = (s: string): string =>
  s
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l !== "") ?? ""
