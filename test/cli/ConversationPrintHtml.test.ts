/**
 * `conversation print --format html` end to end (docs/cli.md#viewing-a-conversation-as-a-page): the built binary
 * writes the page from a conversation on disk (storage base64, a legacy flat
 * inquiry response), and headless Chromium opens it to check the DOM: each
 * question row sits inside its tool call, no script runs, nothing is
 * fetched, dark and phone layouts work. Screenshots are kept in
 * `$TMPDIR/parley-html-viewer/` as test artefacts (not committed).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { JsonObject } from "effect/Schema"
import * as EntryCodec from "../../src/domain/storage/EntryCodec.ts"
import * as Chromium from "../support/Chromium.ts"
import { runParley } from "../support/Cli.ts"
import { copyToTemp, fixtureCorpus, tempDir } from "../support/Fixtures.ts"
import { everyShape, HOSTILE, LEAKED_SECRET, QUESTIONS } from "../domain/render/_everyShape.ts"

const ID = "17740000001"
const artefacts = path.join(os.tmpdir(), "parley-html-viewer")

/** Writes the every-shape conversation as JP stores it, with the legacy question's answer in the old flat shape. */
const writeEveryShape = (storage: string): void => {
  const raw: Array<JsonObject> = everyShape().map((e) => EntryCodec.encodeEntry(e))
  const legacy = raw.findIndex((e) => e["type"] === "inquiry_response" && e["id"] === "toolu_legacy.apply_changes")
  raw[legacy] = {
    timestamp: raw[legacy]!["timestamp"]!,
    type: "inquiry_response",
    id: "toolu_legacy.apply_changes",
    answer: true
  }
  const dir = path.join(storage, "conversations", `${ID}-every-shape`)
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(
    path.join(dir, "metadata.json"),
    JSON.stringify({ title: "Every shape", last_activated_at: "2026-03-05 08:40:00.0" }, null, 2) + "\n"
  )
  fs.writeFileSync(path.join(dir, "base_config.json"), "{}\n")
  fs.writeFileSync(path.join(dir, "events.json"), JSON.stringify(raw, null, 2) + "\n")
}

describe("conversation print --format html (built binary)", () => {
  const storage = tempDir("parley-html-")
  const page = path.join(storage, "page.html")
  writeEveryShape(storage)

  it("writes the page to --output, and the same page to stdout without it", () => {
    const written = runParley(["conversation", "print", ID, "--storage", storage, "--format", "html", "--output", page])
    expect(written.stderr).toBe("")
    expect(written.stdout).toBe("")
    expect(written.code).toBe(0)
    const html = fs.readFileSync(page, "utf8")
    const printed = runParley(["conversation", "print", `jp-c${ID}`, "--storage", storage, "--format", "html"])
    expect(printed.code).toBe(0)
    expect(printed.stdout).toBe(html)
    // The storage base64 is decoded: the on-disk text is not on the page, the plain text is.
    const onDisk = fs.readFileSync(path.join(storage, "conversations", `${ID}-every-shape`, "events.json"), "utf8")
    expect(onDisk).toContain(Buffer.from("contents of b").toString("base64"))
    expect(html).not.toContain(Buffer.from("contents of b").toString("base64"))
    expect(html).toContain("contents of b")
    expect(html).not.toContain(LEAKED_SECRET)
    // The incomplete turn's commands are rendered by the CLI: they repeat --storage, so they work when pasted.
    expect(html).toContain(
      `Resume: <code>parley query --continue-turn --id ${ID} --storage ${storage}</code><br>Drop it: <code>parley query --discard-turn --id ${ID} --storage ${storage}</code>`
    )
  })

  it("fails with a clear message when --output cannot be written", () => {
    const r = runParley([
      "conversation",
      "print",
      ID,
      "--storage",
      storage,
      "--format",
      "html",
      "--output",
      path.join(storage, "no-such-dir", "p.html")
    ])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe("")
    expect(r.stderr).toContain(
      `--output: cannot write ${path.join(storage, "no-such-dir", "p.html")} (ENOENT); pass a path in a folder that exists and that you can write to.`
    )
    expect(fs.readdirSync(storage).filter((n) => n.endsWith(".tmp"))).toStrictEqual([])
  })
})

describe.skipIf(!Chromium.available)(
  `the page in headless Chromium${Chromium.available ? "" : ` — skipped: ${Chromium.missing}`}`,
  () => {
    let browser: Chromium.Browser
    const storage = tempDir("parley-html-")
    const page = path.join(storage, "page.html")
    const url = pathToFileURL(page).href

    beforeAll(async () => {
      writeEveryShape(storage)
      expect(
        runParley(["conversation", "print", ID, "--storage", storage, "--format", "html", "--output", page]).code
      ).toBe(0)
      browser = await Chromium.launch()
    })

    afterAll(async () => {
      await browser?.close()
    })

    it("puts every question row inside its own tool call, with its outcome", async () => {
      const p = await browser.open(url)
      const rows = await p.evaluate<
        Array<[string, string | null, string, boolean]>
      >(`[...document.querySelectorAll(".attempt[data-inquiry-id]")].map((li) => [
      li.dataset.inquiryId,
      li.closest("details.tool-call")?.dataset.callId ?? null,
      li.querySelector(".badge").textContent,
      (li.parentElement.closest("details") ?? null) === li.closest("details.tool-call")
    ])`)
      expect(rows).toStrictEqual(QUESTIONS.map((q) => [q.id, q.call, q.outcome, true]))
      const texts = await p.evaluate<Array<string>>(
        `[...document.querySelectorAll(".q-text")].map((e) => e.textContent.trim())`
      )
      for (const q of QUESTIONS) {
        const shown = q.text.replaceAll("**", "").split("\n")[0]!
        expect(texts.some((t) => t.startsWith(shown))).toBe(true)
      }
      const calls = await p.evaluate<Array<[string, string, boolean]>>(
        `[...document.querySelectorAll("details.tool-call")].map((d) => [d.dataset.callId, d.className, d.open])`
      )
      expect(calls).toStrictEqual([
        ["c1", "tool-call s-completed", false],
        ["c2", "tool-call s-failed", false],
        ["c3", "tool-call s-completed", false],
        ["c4", "tool-call s-completed", false],
        ["toolu_legacy", "tool-call s-completed", false],
        ["c5", "tool-call s-waiting-for-input", true],
        ["c6", "tool-call s-completed", false]
      ])
    })

    it("runs no script from the conversation, loads nothing, and has no link that leaves the page", async () => {
      const p = await browser.open(url)
      expect(await p.evaluate<number>(`document.querySelectorAll("script").length`)).toBe(0)
      expect(await p.evaluate<unknown>(`window.__pwned ?? null`)).toBeNull()
      expect(await p.evaluate<string>(`document.title`)).toBe("Every shape")
      const result = await p.evaluate<string>(
        `document.querySelector('details[data-call-id="c1"] .result pre').textContent`
      )
      expect(result).toBe(`deployed\n${HOSTILE}`)
      expect(
        await p.evaluate<number>(
          `document.querySelectorAll("img, iframe, object, embed, link, style:not(head > style)").length`
        )
      ).toBe(0)
      expect(
        await p.evaluate<Array<string>>(
          `[...document.querySelectorAll("[src], [href], [srcset], [action]")].map((e) => e.getAttribute("href") ?? e.outerHTML)`
        )
      ).toStrictEqual(["#turn-2", "#turn-1", "#turn-2", "#turn-1", "#turn-2"])
      expect(await p.evaluate<number>(`document.styleSheets.length`)).toBe(1)
      expect(
        await p.evaluate<boolean>(
          `[...document.styleSheets[0].cssRules].some((r) => r instanceof CSSImportRule || /url\\(/.test(r.cssText))`
        )
      ).toBe(false)
      expect(p.requests).toStrictEqual([url])
    })

    it("never shows a secret's answer, even with every block open", async () => {
      const p = await browser.open(url)
      await p.evaluate(`document.querySelectorAll("details").forEach((d) => { d.open = true }); 0`)
      const text = await p.evaluate<string>(`document.body.innerText`)
      expect(text).toContain("PIN for the vault?")
      expect(text).toContain("API token for the deploy?")
      expect(text).not.toContain(LEAKED_SECRET)
    })

    it('clips a long result until "show all" is opened', async () => {
      const p = await browser.open(url)
      await p.evaluate(`document.querySelector('details[data-call-id="toolu_legacy"]').open = true; 0`)
      const visible = `[...document.querySelectorAll('details[data-call-id="toolu_legacy"] .result pre')].map((e) => e.checkVisibility() ? e.textContent.split("\\n").length : 0)`
      expect(await p.evaluate<Array<number>>(visible)).toStrictEqual([40, 0])
      await p.evaluate(`document.querySelector('details[data-call-id="toolu_legacy"] details.all').open = true; 0`)
      expect(await p.evaluate<Array<number>>(visible)).toStrictEqual([0, 3000])
    })

    it("follows the reader's colour scheme and fits a phone's width; screenshots kept as artefacts", async () => {
      const light = await browser.open(url)
      expect(await light.evaluate<string>(`getComputedStyle(document.body).backgroundColor`)).toBe("rgb(255, 255, 255)")
      await light.evaluate(
        `document.querySelectorAll("details.tool-call").forEach((d) => { d.open = ["c1", "c2"].includes(d.dataset.callId) }); 0`
      )
      await light.screenshot(path.join(artefacts, "every-shape-light.png"), { fullPage: true })
      const dark = await browser.open(url, { dark: true })
      expect(await dark.evaluate<string>(`getComputedStyle(document.body).backgroundColor`)).toBe("rgb(13, 17, 23)")
      await dark.evaluate(
        `document.querySelectorAll("details.tool-call").forEach((d) => { d.open = ["c1", "c2"].includes(d.dataset.callId) }); 0`
      )
      await dark.screenshot(path.join(artefacts, "every-shape-dark.png"), { fullPage: true })
      const phone = await browser.open(url, { width: 390, height: 844, mobile: true })
      await phone.evaluate(`document.querySelectorAll("details").forEach((d) => { d.open = true }); 0`)
      expect(await phone.evaluate<number>(`document.documentElement.scrollWidth`)).toBeLessThanOrEqual(390)
      await phone.screenshot(path.join(artefacts, "every-shape-phone.png"))
      for (const f of ["every-shape-light.png", "every-shape-dark.png", "every-shape-phone.png"]) {
        expect(fs.readFileSync(path.join(artefacts, f)).subarray(1, 4).toString()).toBe("PNG")
      }
    })

    it("shows a corpus conversation with every legacy question inside its fs_modify_file call", async () => {
      const corpus = copyToTemp(fixtureCorpus.dir)
      const id = "17738348630"
      const file = path.join(corpus, "page.html")
      expect(
        runParley(["conversation", "print", id, "--storage", corpus, "--format", "html", "--output", file]).code
      ).toBe(0)
      const events = JSON.parse(
        fs.readFileSync(
          path.join(fixtureCorpus.dir, "conversations", `${id}-workspace-sanitization-strategy`, "events.json"),
          "utf8"
        )
      ) as Array<{ type: string }>
      const p = await browser.open(pathToFileURL(file).href)
      expect(await p.evaluate<number>(`document.querySelectorAll("details.tool-call").length`)).toBe(
        events.filter((e) => e.type === "tool_call_request").length
      )
      const owners = await p.evaluate<Array<string | null>>(
        `[...document.querySelectorAll(".attempt")].map((li) => li.closest("details.tool-call")?.querySelector("summary .tool-name")?.textContent ?? null)`
      )
      expect(owners.length).toBe(events.filter((e) => e.type === "inquiry_request").length)
      expect(new Set(owners)).toStrictEqual(new Set(["fs_modify_file"]))
      expect(p.requests).toStrictEqual([pathToFileURL(file).href])
      await p.screenshot(path.join(artefacts, "corpus-light.png"))
    })
  }
)
