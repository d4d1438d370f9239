/**
 * Text from outside shown on a terminal (docs/security.md#text-from-the-model-tools-and-servers, review): tool names,
 * arguments, error messages, questions and answers come from the model, a
 * tool's output or an MCP server, and a terminal acts on the control
 * characters in what it is sent — `ESC [ 2 J` clears the screen, `ESC ] 0 ;`
 * retitles the window, a bidi override reorders what the person reads before
 * they allow a call. {@link printable} makes each such character visible
 * instead (Unicode's control pictures: `␛`, `␇`; `<U+202E>` for the rest), so
 * what is shown can never drive the terminal.
 *
 * @example
 * ```ts
 * import { printable } from "parley/domain/render/TerminalText"
 * printable("evil\x1b[2J") // "evil␛[2J"
 * printable("a\nb", "\n") // "a\nb" (newlines kept, for text shown on several lines)
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
