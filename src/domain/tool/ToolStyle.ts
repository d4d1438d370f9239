/**
 * How a tool call is shown (RFD 083 `style.hidden`): a hidden tool's call
 * and result are not drawn as a tool call — not in the status lines, not in
 * `conversation print`, not on the HTML page. Its questions are: the person
 * sees the question and the answer, flowing with the assistant's reply.
 * `ask_user` is hidden (the question is the whole interaction); the record
 * keeps its call and result as any other.
 *
 * @example
 * ```ts
 * import * as ToolStyle from "parley/domain/tool/ToolStyle"
 * ToolStyle.isHidden("ask_user") // true
 * ToolStyle.isHidden("write_file") // false
 * ```
 *
 * @since 0.1.0
 */

/** The tools whose calls are not shown as tool calls (RFD 083: the built-in `ask_user`'s `style.hidden = true`). */
const HIDDEN: ReadonlySet<string> = new Set(["ask_user"])

/** Whether a call of the tool `name` is kept out of sight as a tool call (its questions stay shown). */
export const isHidden = (name: string): boolean => HIDDEN.has(name)
