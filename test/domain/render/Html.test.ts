import { describe, expect, it } from "@effect/vitest"
import type { StreamEntry } from "../../../src/domain/event/ConversationEvent.ts"
import { renderHtml, renderHtmlParts } from "../../../src/domain/render/Html.ts"
import { groupAttempts } from "../../../src/domain/render/HtmlInquiry.ts"
import { CLIP_CHARS, CLIP_LINES, clipHead, escapeHtml, icon, preBlock } from "../../../src/domain/render/HtmlText.ts"
import { markdownToHtml } from "../../../src/layers/render/SafeMarkdown.ts"
import { streams } from "../_streams.ts"
import { everyShape, HOSTILE, LEAKED_SECRET, LONG_RESULT, QUESTIONS } from "./_everyShape.ts"

/** The commands as the CLI renders them (Hint), with a storage path that needs quoting and escaping. */
const COMMANDS = {
  resume: "parley query --continue-turn --id 17738399468 --storage '/tmp/a&b'",
  discard: "parley query --discard-turn --id 17738399468 --storage '/tmp/a&b'"
}

const page = (entries: ReadonlyArray<StreamEntry>, title?: string) =>
  renderHtml({ id: "17738399468", title, entries }, { markdown: markdownToHtml, commands: COMMANDS })

/**
 * The HTML of each tool call block, by call id: from its opening tag to its
 * matching `</details>` (nested ones counted). The browser tests check the
 * same nesting on the real DOM.
 */
const callBlocks = (html: string): Map<string, string> => {
  const out = new Map<string, string>()
  for (const m of html.matchAll(/<details class="tool-call[^"]*" id="call-\d+" data-call-id="([^"]*)"/g)) {
    const tags = /<details\b|<\/details>/g
    tags.lastIndex = m.index
    let depth = 0
    for (let t = tags.exec(html); t !== null; t = tags.exec(html)) {
      depth += t[0] === "</details>" ? -1 : 1
      if (depth === 0) {
        out.set(m[1]!, html.slice(m.index, t.index + t[0].length))
        break
      }
    }
  }
  return out
}

describe("renderHtml: a conversation with every RFD 082 shape", () => {
  const html = page(everyShape(), "Deploy & tidy")

  it("is one page with its own style, no script, and a policy that forbids loading anything", () => {
    expect(html.startsWith('<!doctype html>\n<html lang="en">')).toBe(true)
    expect(html).toContain(
      `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">`
    )
    expect(html.match(/<style\b/gi)?.length).toBe(1)
    expect(html).not.toMatch(/<script\b/i)
    expect(html).toContain("<title>Deploy &amp; tidy</title>")
  })

  it("has no src, no href that leaves the page, no @import and no url() in markup or style", () => {
    const attributes = [
      ...html.matchAll(/<[a-z][^<>]*?\s(src|href|srcset|action|formaction|poster|data)\s*=\s*"([^"]*)"/gi)
    ]
    expect(attributes.length).toBeGreaterThan(0)
    for (const [, name, value] of attributes) {
      expect(name).toBe("href")
      expect(value).toMatch(/^#turn-\d+$/)
    }
    const style = html.slice(html.indexOf("<style>"), html.indexOf("</style>"))
    expect(style).not.toMatch(/@import|url\(|https?:/)
    // The hostile text is there, but only as escaped text.
    expect(html).toContain("&lt;script&gt;window.__pwned = 1; document.title = &quot;pwned&quot;&lt;/script&gt;")
  })

  it("shows every question text and every outcome, inside the tool call that asked it", () => {
    const blocks = callBlocks(html)
    expect([...blocks.keys()]).toStrictEqual(["c1", "c2", "c3", "c4", "toolu_legacy", "c5", "c6"])
    for (const q of QUESTIONS) {
      const row = `data-inquiry-id="${escapeHtml(q.id)}"`
      expect(html.split(row).length - 1).toBe(1)
      if (q.call === null) {
        for (const block of blocks.values()) expect(block).not.toContain(row)
        const looseAt = html.lastIndexOf(`<div class="loose">`, html.indexOf(row))
        expect(looseAt).toBeGreaterThan(0)
        expect(html.slice(looseAt, html.indexOf(row))).not.toMatch(/<\/div><\/div>|<\/ol>/)
      } else {
        expect(blocks.get(q.call)).toContain(row)
      }
      const rowAt = html.indexOf(row)
      const rowHtml = html.slice(rowAt, html.indexOf("</li>", rowAt))
      expect(rowHtml).toContain(`>${escapeHtml(q.outcome)}</span>`)
      if ("value" in q) expect(html.slice(rowAt, rowAt + 4000)).toContain(escapeHtml(q.value))
    }
    expect(html).toContain("Deploy to <strong>prod</strong>?")
    for (const text of [
      "Which region?",
      "Any note for the log?",
      "API token for the deploy?",
      "Delete 3 files?",
      "A question from the future?",
      "Who are you?",
      "Shall I go on?",
      "Overwrite a.txt?"
    ]) {
      expect(html).toContain(text)
    }
  })

  it("says who asked: a tool by name, the assistant, the user, another source by name", () => {
    expect(html).toContain(`Asked by tool <code>deploy</code>`)
    expect(html).toContain(`<li class="inquiry src-assistant"><div class="q-head">Asked by the assistant`)
    expect(html).toContain(`<li class="inquiry src-user"><div class="q-head">Asked by the user`)
    expect(html).toContain(`<li class="inquiry src-other"><div class="q-head">Asked by other: <code>mcp-bridge</code>`)
  })

  it("shows answer types, select options and defaults", () => {
    const region = html.slice(html.indexOf("Which region?"), html.indexOf(`data-inquiry-id="c1.region.1"`))
    expect(region).toContain(`answer type <code>select</code> · default <code>&quot;eu&quot;</code>`)
    expect(region).toContain(
      `<li><code>&quot;eu&quot;</code> <span class="desc">Europe</span> <span class="tag">default</span></li><li><code>&quot;us&quot;</code></li>`
    )
    expect(html).toContain(`answer type <code>secret</code>`)
  })

  it("groups attempts of one question, numbered", () => {
    const c2 = callBlocks(html).get("c2")!
    expect(c2.split("Delete 3 files?").length - 1).toBe(1)
    expect(c2).toMatch(
      /asked 2 times<\/div>.*<span class="attempt-n">attempt 1<\/span> <span class="outcome"><span class="badge b-cancelled">cancelled \(user\)<\/span>.*<span class="attempt-n">attempt 2<\/span> <span class="outcome"><span class="badge b-cancelled">cancelled \(backend_error\)/s
    )
    expect(c2).toContain("a reason this version of parley does not know")
  })

  it("never shows an answer to a secret question", () => {
    expect(html).not.toContain(LEAKED_SECRET)
    expect(html).toContain(
      `<span class="badge b-answered">answered</span> <span class="note">a secret: the answer is not shown</span>`
    )
    expect(html).toContain(`<span class="badge b-redacted">redacted</span>`)
  })

  it("makes failed calls stand out and leaves them closed", () => {
    expect(html).toContain(`<details class="tool-call s-failed" id="call-2" data-call-id="c2">`)
    expect(callBlocks(html).get("c2")).toContain(`<div class="result error"><h4>Error`)
    expect(html).toContain(`<span class="err-text">1 failed</span>`)
  })

  it("marks the incomplete last turn with its RFD 023 state and what resuming would do", () => {
    const turn = html.slice(html.indexOf(`<section class="turn incomplete-turn" id="turn-2">`))
    expect(turn).toContain(
      `<div class="incomplete" role="status" data-state="waiting-for-input"><p class="state">${icon("pending")} Incomplete turn (waiting for input)</p>`
    )
    expect(turn).toContain(`<code>write_note</code> — waiting for input</li>`)
    expect(turn).toContain(`<code>read_file</code> — completed</li>`)
    expect(turn).toContain(
      `Resuming runs the tool calls without a result again (<code>write_note</code>) and asks the open question again under its recorded id (“Overwrite a.txt?”)`
    )
    // The commands as the caller rendered them, escaped.
    expect(turn).toContain(
      `<p class="commands">Resume: <code>parley query --continue-turn --id 17738399468 --storage &#39;/tmp/a&amp;b&#39;</code><br>` +
        `Drop it: <code>parley query --discard-turn --id 17738399468 --storage &#39;/tmp/a&amp;b&#39;</code></p>`
    )
    // Without them the page says what resuming would do, and names no command of its own.
    const bare = renderHtml({ id: "17738399468", entries: everyShape() }, { markdown: markdownToHtml })
    expect(bare).toContain(`Resuming runs the tool calls without a result again`)
    expect(bare).not.toContain(`class="commands"`)
    expect(bare).not.toContain("--continue-turn")
    expect(html).toContain(`<details class="tool-call s-waiting-for-input" id="call-6" data-call-id="c5" open>`)
    expect(html).toContain(`<a href="#turn-2">The last turn is incomplete</a>`)
  })

  it("a turn being run (the served page) is drawn as running: no incomplete marker, a place for each open question's form", () => {
    const live = renderHtml(
      { id: "17738399468", entries: everyShape() },
      {
        markdown: markdownToHtml,
        live: { script: "/app.js", css: "", controls: "", running: true, top: "<nav></nav>" }
      }
    )
    const turn = live.slice(live.indexOf(`id="turn-2"`))
    expect(turn).toContain(`<span class="chip c-running">running</span>`)
    const text = live.replace(/<style>[\s\S]*?<\/style>/, "").replace(/<[^>]*>/g, "")
    expect(text).not.toMatch(/incomplete|resum/i)
    expect(turn).toContain(`<span class="badge b-open">waiting for you</span><div class="ask" data-inquiry="`)
    expect(live).toContain(`<main>\n<nav></nav><div id="turns">`)
    // Icons are inline SVG: no glyph that needs an emoji font.
    expect(live).not.toMatch(/[⏳⏸✓✗]/u)
    expect(live).toContain(`<span class="mark m-completed" title="completed">${icon("completed")}</span>`)
  })

  it("the served page's own parts (title count, body state, navigation) are drawn in place; its pieces join to the page", () => {
    const options = {
      markdown: markdownToHtml,
      live: {
        script: "/app.js",
        css: "",
        controls: "",
        top: "<p>top</p>",
        nav: "<nav>back</nav>\n",
        state: "incomplete",
        waiting: 2
      }
    }
    const conversation = { id: "17738399468", title: "Review <b>", entries: everyShape() }
    const parts = renderHtmlParts(conversation, options)
    const page = renderHtml(conversation, options)
    expect(parts.join("")).toBe(page)
    // The turns are pieces of their own (a server encodes them one by one), not one string.
    expect(parts.length).toBeGreaterThan(3)
    expect(page).toContain(`<title>(2) Review &lt;b&gt;</title>`)
    expect(page).toContain(`<body data-state="incomplete">`)
    expect(page).toContain(`</header>\n<nav>back</nav>\n<main>\n<p>top</p><div id="turns">`)
    // Nothing waiting: the title is the heading alone; the printed page has none of the served parts.
    expect(renderHtml(conversation, { ...options, live: { ...options.live, waiting: 0 } })).toContain(
      `<title>Review &lt;b&gt;</title>`
    )
    const printed = renderHtml(conversation, { markdown: markdownToHtml })
    expect(printed).toContain(`<body>\n<header>`)
    expect(printed).toContain(`</header>\n<main>\n<section class="turn"`)
  })

  it("clips a long tool result behind a show-all, keeping all of it", () => {
    const legacy = callBlocks(html).get("toolu_legacy")!
    expect(legacy).toContain(
      `<summary>Show all 3,000 lines, ${LONG_RESULT.length.toLocaleString("en-US")} characters</summary>`
    )
    expect(legacy).toContain(`line 40 of the build log<span class="cut">…</span></pre>`)
    expect(legacy).toContain(LONG_RESULT)
  })

  it("renders Markdown without links or images that point anywhere", () => {
    expect(html).toContain(
      `<span class="link">the docs</span> <span class="url">&lt;https://example.com/docs&gt;</span>`
    )
    expect(html).toContain(
      `<span class="image">[image: logo]</span> <span class="url">&lt;https://example.com/logo.png&gt;</span>`
    )
  })

  it("collapses reasoning", () => {
    expect(html).toContain(`<details class="reasoning"><summary>Reasoning · `)
  })
})

describe("renderHtml: other conversations", () => {
  it("says so when there are no messages", () => {
    expect(page([])).toContain(`<p class="note">No messages yet.</p>`)
  })

  it("marks each RFD 023 state with what resuming would do", () => {
    const b = streams()
    const cases: Array<[Array<StreamEntry>, string, string]> = [
      [[b.ts(), b.cr("Hi")], "pending-llm-response", "Resuming asks the model again for a reply to the last message."],
      [
        [b.ts(), b.cr("Hi"), b.call("c1", "build")],
        "pending-tool-execution",
        "Resuming runs the tool calls that have no result (<code>build</code>), then sends their results to the model."
      ],
      [
        [b.ts(), b.cr("Hi"), b.call("c1", "build"), b.result("c1")],
        "pending-follow-up",
        "Resuming sends the tool results to the model for its follow-up reply."
      ]
    ]
    for (const [entries, state, text] of cases) {
      const html = page(entries)
      expect(html).toContain(`data-state="${state}"`)
      expect(html).toContain(text)
    }
  })

  it("shows a response that matches no request instead of dropping it", () => {
    const b = streams()
    const html = page([b.ts(), b.cr("Hi"), b.result("ghost"), b.answer("ghost.q"), b.msg("ok")])
    expect(html).toContain(`A tool result for <code>ghost</code>, which matches no request of this turn`)
    expect(html).toContain(`A question response for <code>ghost.q</code>, which matches no request of this turn`)
  })

  it("numbers turns from 1 and lists them", () => {
    const b = streams()
    const html = page([b.ts(), b.cr("first"), b.msg("a"), b.ts(), b.cr("second"), b.msg("b")])
    expect(html).toContain(`<ol><li><a href="#turn-1">first</a></li><li><a href="#turn-2">second</a></li></ol>`)
    expect(html).toContain(`<section class="turn" id="turn-2">`)
  })
})

describe("renderHtml: compactions (RFD 064)", () => {
  it("shows each compaction at the top of the first turn it covers, its summary as Markdown, escaped", () => {
    const b = streams()
    const html = page([
      b.ts(),
      b.cr("first"),
      b.msg("a"),
      b.ts(),
      b.cr("second"),
      b.msg("b"),
      b.compaction(0, 1, { summary: "Set up **src/main.rs** <script>" }),
      b.compaction(1, 1, { tool_calls: { policy: "strip", request: true, response: true } }),
      b.compaction(7, 9, { reasoning: "strip" })
    ])
    const turn1 = html.slice(
      html.indexOf(`<section class="turn" id="turn-1">`),
      html.indexOf(`<section class="turn" id="turn-2">`)
    )
    expect(turn1).toContain(`<aside class="compaction"><p class="what"><strong>Compaction</strong> of turns 1–2 · `)
    expect(turn1).toContain(
      `: the model sees this summary instead:</p><div class="md"><p>Set up <strong>src/main.rs</strong> &lt;script&gt;</p>`
    )
    expect(turn1.indexOf(`class="compaction"`)).toBeLessThan(turn1.indexOf(`class="msg user"`))
    const turn2 = html.slice(html.indexOf(`<section class="turn" id="turn-2">`))
    expect(turn2).toContain(`<strong>Compaction</strong> of turn 2 · `)
    expect(turn2).toContain(`: for the model, tool calls stripped.</p></aside>`)
    // One that starts after the last turn is shown after it.
    expect(html.indexOf("Compaction</strong> of turns 8–10")).toBeGreaterThan(html.indexOf(`id="turn-2"`))
    expect(html).not.toContain("<script>")
  })
})

describe("text helpers", () => {
  it("escapes the five HTML specials", () => {
    expect(escapeHtml(`<a href="x" title='y'>&amp;</a>`)).toBe(
      "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;"
    )
  })

  it("clips at the line limit or the character limit, whichever comes first", () => {
    expect(clipHead("a\n".repeat(CLIP_LINES))).toBeUndefined()
    expect(clipHead("a\n".repeat(CLIP_LINES + 1) + "b")).toBe(Array(CLIP_LINES).fill("a").join("\n"))
    expect(clipHead("x".repeat(CLIP_CHARS))).toBeUndefined()
    expect(clipHead("x".repeat(CLIP_CHARS + 1))).toBe("x".repeat(CLIP_CHARS))
    expect(clipHead(("y".repeat(1000) + "\n").repeat(10))).toBe(Array(3).fill("y".repeat(1000)).join("\n"))
    expect(clipHead("z".repeat(CLIP_CHARS + 10) + "\nz")).toBe("z".repeat(CLIP_CHARS))
    expect(preBlock("short")).toBe(`<pre class="text">short</pre>`)
  })

  it("groups attempts by asker, text and answer type, in first-asked order", () => {
    const b = streams()
    const q1 = b.ask("c.a.1", "t", "Same?"),
      q2 = b.ask("c.b.1", "t", "Other?"),
      q3 = b.ask("c.a.2", "t", "Same?")
    const q4 = b.ask("c.a.3", "t", "Same?", { type: "text" }),
      q5 = b.askAssistant("c.a.4", "Same?")
    const groups = groupAttempts([q1, q2, q3, q4, q5].map((request) => ({ request, response: null })))
    expect(groups.map((g) => g.map((p) => p.request.id))).toStrictEqual([
      ["c.a.1", "c.a.2"],
      ["c.b.1"],
      ["c.a.3"],
      ["c.a.4"]
    ])
  })

  it("keeps hostile text in every field as text", () => {
    const b = streams()
    const html = page(
      [
        b.ts(),
        b.cr(HOSTILE),
        b.call(HOSTILE, HOSTILE, { [HOSTILE]: HOSTILE }),
        b.ask(`${HOSTILE}.q.1`, HOSTILE, HOSTILE),
        b.cancel(`${HOSTILE}.q.1`, HOSTILE),
        b.result(HOSTILE, HOSTILE, true),
        b.msg(HOSTILE)
      ],
      HOSTILE
    )
    expect(html).not.toMatch(/<script\b|<img\b|<style>@import/i)
    expect(html.match(/<style\b/gi)?.length).toBe(1)
  })
})
