import { describe, expect, it } from "@effect/vitest"
import { markdownToHtml, remembering } from "../../../src/layers/render/SafeMarkdown.ts"

describe("SafeMarkdown (docs/cli.md#viewing-a-conversation-as-a-page)", () => {
  it("renders Markdown", () => {
    expect(markdownToHtml("# T\n\n**b** _i_ `c`\n\n- x\n\n```ts\nconst a = 1 < 2\n```")).toBe(
      '<h1>T</h1>\n<p><strong>b</strong> <em>i</em> <code>c</code></p>\n<ul>\n<li>x</li>\n</ul>\n<pre><code class="language-ts">const a = 1 &lt; 2\n</code></pre>\n'
    )
  })

  it("never passes HTML through, inline or as a block", () => {
    expect(markdownToHtml("a <script>x()</script> b")).toBe("<p>a &lt;script&gt;x()&lt;/script&gt; b</p>\n")
    expect(markdownToHtml("<img src=x onerror=alert(1)>\n\nafter")).toBe(
      "<p>&lt;img src=x onerror=alert(1)&gt;</p>\n<p>after</p>\n"
    )
    expect(markdownToHtml("<details open><summary>s</summary>")).toBe(
      "<p>&lt;details open&gt;&lt;summary&gt;s&lt;/summary&gt;</p>\n"
    )
  })

  it("shows links and images as text with their address, with no href or src", () => {
    expect(markdownToHtml('[docs](https://example.com/a?b=1&c="2")')).toBe(
      `<p><span class="link">docs</span> <span class="url">&lt;https://example.com/a?b=1&amp;c=&quot;2&quot;&gt;</span></p>\n`
    )
    expect(markdownToHtml("<https://example.com>")).toBe(`<p><span class="link">https://example.com</span></p>\n`)
    expect(markdownToHtml('![a "logo"](http://x/y.png)')).toBe(
      `<p><span class="image">[image: a &quot;logo&quot;]</span> <span class="url">&lt;http://x/y.png&gt;</span></p>\n`
    )
    expect(markdownToHtml("[x][r]\n\n[r]: https://example.com/ref")).toBe(
      `<p><span class="link">x</span> <span class="url">&lt;https://example.com/ref&gt;</span></p>\n`
    )
    expect(markdownToHtml("[j](javascript:alert(1))")).not.toMatch(/href|<a\b/)
  })

  it("remembering: the HTML markdownToHtml gives, for sources seen before, dropped, too large to keep, or new", () => {
    // A bound of 400 characters: a few sources fit, the rest push the oldest out; one is over a quarter of it.
    const markdown = remembering(400)
    const sources = [
      "**a**",
      "[docs](https://example.com)",
      "<script>x()</script> and `code`",
      `# title\n\n${"long line ".repeat(12)}`,
      "- one\n- two",
      "plain"
    ]
    for (let round = 0; round < 3; round++)
      for (const source of [...sources, ...sources.slice().reverse()])
        expect(markdown(source)).toBe(markdownToHtml(source))
  })
})
