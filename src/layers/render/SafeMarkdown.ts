/**
 * Markdown → HTML for the conversation page (docs/cli.md#viewing-a-conversation-as-a-page), with markdown-it.
 *
 * The text comes from a conversation (a person, a model, a tool), so it is
 * untrusted: raw HTML is never passed through (markdown-it's `html: false`
 * escapes it), and nothing in the output points anywhere. Links become their
 * text followed by the address as plain text, images become their alt text
 * and address, so the page has no `href` or `src` that leaves it: opening it
 * fetches nothing and clicking nothing leaks where it was read. This lives in
 * `src/layers` (not next to the pure renderer) because `src/domain` imports
 * only `effect`; the renderer takes it as its `markdown` option.
 *
 * @example
 * ```ts
 * import { markdownToHtml } from "parley/layers/render/SafeMarkdown"
 * markdownToHtml("**hi** <script>x()</script>") // "<p><strong>hi</strong> &lt;script&gt;x()&lt;/script&gt;</p>\n"
 * ```
 *
 * @since 0.1.0
 */
import MarkdownIt from "markdown-it"
import type { MarkdownIt as Md, RendererRule, Token } from "markdown-it"
import { Bounded } from "../../domain/render/Bounded.ts"

const ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }
const escapeHtml = (s: string): string => s.replace(/[&<>"]/g, (c) => ESCAPES[c]!)

/** The plain text of the inline tokens between `from` (exclusive) and the next `link_close`. */
const linkText = (tokens: ReadonlyArray<Token>, from: number): string => {
  let text = ""
  for (let i = from + 1; i < tokens.length && tokens[i]!.type !== "link_close"; i++) text += tokens[i]!.content
  return text
}

// A link renders as its text; the address follows as text unless the text already is the address.
const linkOpen: RendererRule = (tokens, idx) => {
  const token = tokens[idx]!
  // markdown-it stores the address percent-encoded; show it as written.
  const href = md().normalizeLinkText(String(token.attrGet("href") ?? ""))
  const shown = token.markup === "autolink" || linkText(tokens, idx) === href ? "" : href
  for (let i = idx + 1; i < tokens.length; i++) {
    if (tokens[i]!.type === "link_close") {
      tokens[i]!.meta = { shown }
      break
    }
  }
  return `<span class="link">`
}

const linkClose: RendererRule = (tokens, idx) => {
  const shown = (tokens[idx]!.meta as { shown?: string } | null)?.shown ?? ""
  return shown === "" ? "</span>" : `</span> <span class="url">&lt;${escapeHtml(shown)}&gt;</span>`
}

const image: RendererRule = (tokens, idx, options, env, self) => {
  const token = tokens[idx]!
  const alt = self.renderInlineAsText(token.children ?? [], options, env)
  return `<span class="image">[image${alt === "" ? "" : `: ${escapeHtml(alt)}`}]</span> <span class="url">&lt;${escapeHtml(md().normalizeLinkText(String(token.attrGet("src") ?? "")))}&gt;</span>`
}

let instance: Md | undefined

const md = (): Md => {
  if (instance !== undefined) return instance
  const m = MarkdownIt("default", { html: false, linkify: false, typographer: false })
  m.renderer.rules["link_open"] = linkOpen
  m.renderer.rules["link_close"] = linkClose
  m.renderer.rules["image"] = image
  instance = m
  return m
}

/**
 * Renders Markdown to HTML that is safe to embed in the page: no HTML from
 * the source, no `href`/`src` attributes, code blocks as `<pre><code>`.
 *
 * @example
 * ```ts
 * import { markdownToHtml } from "parley/layers/render/SafeMarkdown"
 * markdownToHtml("[docs](https://example.com)") // '<p><span class="link">docs</span> <span class="url">&lt;https://example.com&gt;</span></p>\n'
 * ```
 */
export const markdownToHtml = (source: string): string => md().render(source)

/**
 * {@link markdownToHtml} that remembers what it rendered, up to `maxChars`
 * of sources and their HTML, dropping the least recently used first. A
 * server draws a conversation again after each change, and all but its
 * newest messages render as before: markdown-it is about a third of the
 * draw of a 500-event page. The HTML is a function of the source alone,
 * so a remembered one is the one rendering it again would give.
 *
 * @example
 * ```ts
 * import { remembering } from "parley/layers/render/SafeMarkdown"
 * const markdown = remembering()
 * markdown("**hi**") === markdown("**hi**") // true: rendered once
 * ```
 */
export const remembering = (maxChars = 4_000_000): ((source: string) => string) => {
  // A message larger than a quarter of the bound would push out most of the others.
  const kept = new Bounded<string, string>({ maxSize: maxChars, maxEntrySize: maxChars / 4 })
  return (source) => {
    const known = kept.get(source)
    if (known !== undefined) return known
    const html = markdownToHtml(source)
    kept.set(source, html, source.length + html.length)
    return html
  }
}
