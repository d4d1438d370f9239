/**
 * Text helpers of the conversation page (docs/cli.md#viewing-a-conversation-as-a-page): HTML escaping, and long
 * text shown clipped with a "show all" that needs no script.
 *
 * Every string that comes from a conversation goes through {@link escapeHtml}
 * (or the injected Markdown renderer) before it reaches the page.
 *
 * @example
 * ```ts
 * import { escapeHtml, preBlock } from "parley/domain/render/HtmlText"
 * escapeHtml("<script>") // "&lt;script&gt;"
 * preBlock("a\nb") // '<pre class="text">a\nb</pre>'
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as JsonText from "../storage/JsonText.ts"
import * as Timestamp from "../event/Timestamp.ts"

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;"
}
const SPECIAL = /[&<>"']/g

/**
 * Text as HTML text or attribute value (double or single quoted).
 *
 * @example
 * ```ts
 * import { escapeHtml } from "parley/domain/render/HtmlText"
 * escapeHtml(`a "b" & <c>`) // "a &quot;b&quot; &amp; &lt;c&gt;"
 * ```
 */
export const escapeHtml = (text: string): string => text.replace(SPECIAL, (c) => ESCAPES[c]!)

/** Where long text is cut: whichever of the two comes first. */
export const CLIP_LINES = 40
export const CLIP_CHARS = 4000
/** Tool arguments are cut shorter: they are there for reference, and the questions and result follow them. */
export const CLIP_ARGUMENT_LINES = 12

/**
 * The first `maxLines` (default {@link CLIP_LINES}) lines of `text`, at most
 * {@link CLIP_CHARS} characters, or `undefined` when the whole text is within
 * both.
 *
 * @example
 * ```ts
 * import { clipHead } from "parley/domain/render/HtmlText"
 * clipHead("short") // undefined
 * clipHead("x".repeat(5000))?.length // 4000
 * ```
 */
export const clipHead = (text: string, maxLines = CLIP_LINES): string | undefined => {
  if (text.length <= CLIP_CHARS) {
    let lines = 1
    for (let i = text.indexOf("\n"); i >= 0 && i < text.length - 1; i = text.indexOf("\n", i + 1)) {
      if (++lines > maxLines) return text.slice(0, i)
    }
    return undefined
  }
  let end = 0
  for (let n = 0; n < maxLines; n++) {
    const next = text.indexOf("\n", end + 1)
    // Cut after the last whole line that fits; a first line longer than the limit is cut inside.
    if (next < 0 || next > CLIP_CHARS) return text.slice(0, end > 0 ? end : CLIP_CHARS)
    end = next
  }
  return text.slice(0, end)
}

const countLines = (text: string): number => {
  let n = 1
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++
  return text.endsWith("\n") ? n - 1 : n
}

/** `12,345` */
export const formatCount = (n: number): string => n.toLocaleString("en-US")

/**
 * Preformatted text. Long text is shown clipped, followed by a closed
 * `<details>` holding all of it (the clipped head hides once it is open), so
 * a huge tool result costs the browser no layout until someone asks for it.
 *
 * @example
 * ```ts
 * import { preBlock } from "parley/domain/render/HtmlText"
 * preBlock("x\n".repeat(1000)).includes("Show all 1,000 lines") // true
 * ```
 */
export const preBlock = (text: string, className = "text", maxLines = CLIP_LINES): string => {
  const head = clipHead(text, maxLines)
  if (head === undefined) return `<pre class="${className}">${escapeHtml(text)}</pre>`
  const size = `${formatCount(countLines(text))} lines, ${formatCount(text.length)} characters`
  return (
    `<div class="clip"><pre class="${className} head">${escapeHtml(head)}<span class="cut">…</span></pre>` +
    `<details class="all"><summary>Show all ${size}</summary><pre class="${className}">${escapeHtml(text)}</pre></details></div>`
  )
}

/** One line of `text` (the first), at most `max` characters, for a summary row. */
export const oneLine = (text: string, max = 80): string => {
  const nl = text.indexOf("\n")
  const line = (nl < 0 ? text : text.slice(0, nl)).trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : nl >= 0 && text.slice(nl).trim() !== "" ? `${line} …` : line
}

/**
 * A `<time>` element: the machine-readable instant, the time of day shown,
 * the full instant on hover.
 *
 * @example
 * ```ts
 * import { timeTag } from "parley/domain/render/HtmlText"
 * timeTag("2026-03-05 08:40:00.0") // '<time datetime="2026-03-05T08:40:00Z" title="2026-03-05T08:40:00Z">08:40:00</time>'
 * ```
 */
export const timeTag = (timestamp: string, withDate = false): string => {
  const iso = Timestamp.toRfc3339(timestamp)
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})/.exec(iso)
  const shown = m === null ? iso : withDate ? `${m[1]} ${m[2]} UTC` : m[2]!
  return `<time datetime="${escapeHtml(iso)}" title="${escapeHtml(iso)}">${escapeHtml(shown)}</time>`
}

/** JSON for people: pretty-printed, as a clipped block. */
export const jsonBlock = (value: unknown, maxLines = CLIP_LINES): string =>
  preBlock(JsonText.shown(value, 2) ?? "null", "json", maxLines)

/** The shapes of the page's icons (16×16, stroked in the text's colour). */
const ICON_PATHS = {
  completed: "M3 8.5l3.2 3L13 4.5",
  failed: "M4 4l8 8M12 4l-8 8",
  pending: "M8 2.5a5.5 5.5 0 1 0 0 11a5.5 5.5 0 1 0 0-11M8 5v3.2l2.2 1.6",
  "waiting-for-input": "M6 4v8M10 4v8"
} as const

/**
 * An icon as inline SVG (no emoji font needed, no file fetched): decorative,
 * so hidden from screen readers; the text beside it says the same.
 *
 * @example
 * ```ts
 * import { icon } from "parley/domain/render/HtmlText"
 * icon("completed").startsWith("<svg") // true
 * ```
 */
export const icon = (name: keyof typeof ICON_PATHS): string =>
  `<svg class="icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" focusable="false"><path d="${ICON_PATHS[name]}" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"/></svg>`
