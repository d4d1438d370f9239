/**
 * Text from outside shown on a terminal (docs/security.md#text-from-the-model-tools-and-servers, review): tool names,
 * arguments, error messages, questions and answers come from the model, a
 * tool's output or an MCP server, and a terminal acts on the control
 * characters in what it is sent — `ESC [ 2 J` clears the screen, `ESC ] 0 ;`
 * retitles the window, a bidi override reorders what the person reads before
 * they allow a call. {@link printable} makes each such character visible
 * instead (Unicode's control pictures: `␛`, `␇`; `<U+202E>` for the rest), so
 * what is shown can never drive the terminal. {@link width} and
 * {@link truncate} count the columns text takes there (wide characters two,
 * combining marks none), so a line can be cut to fit.
 *
 * @example
 * ```ts
 * import { printable, truncate, width } from "parley/domain/render/TerminalText"
 * printable("evil\x1b[2J") // "evil␛[2J"
 * printable("a\nb", "\n") // "a\nb" (newlines kept, for text shown on several lines)
 * width("日本語") // 6
 * truncate("日本語のファイル", 7) // "日本語…"
 * ```
 *
 * @since 0.1.0
 * @internal
 */

/** C0 controls, DEL, C1 controls, and the invisible characters that reorder text (bidi marks, overrides, isolates). */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

/** How one unsafe character is shown: its control picture (C0, DEL), else its code point. */
const visible = (c: string): string => {
  const code = c.codePointAt(0)!
  if (c === "\t") return " "
  if (code < 0x20) return String.fromCodePoint(0x2400 + code)
  if (code === 0x7f) return "\u2421"
  return `<U+${code.toString(16).toUpperCase().padStart(4, "0")}>`
}

/**
 * `text` with every control character (and every character that reorders
 * text) made visible; a tab reads as a space. The characters in `keep`
 * (e.g. `"\n"`) are left as they are.
 */
export const printable = (text: string, keep = ""): string =>
  text.replace(UNSAFE, (c) => (keep.includes(c) ? c : visible(c)))

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
