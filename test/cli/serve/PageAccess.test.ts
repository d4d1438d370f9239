// parley serve (docs/serve.md#the-page): the page for everyone, in headless Chromium (Debian's `chromium`
// through playwright-core). axe-core, the real one from npm, finds no serious or critical violation on the
// list, a conversation, a waiting question and an approval (and the Answer all form and a paged list, at
// both sizes), in the light and the dark colour scheme. A
// question and an approval are answered with the keyboard alone, the focus ring in sight. A question that
// opens while the page is in the background shows a notification (permission granted in the browser context).
// Several open questions of a turn are answered at once by one form (the batch endpoint). The home page
// over many conversations is paged.
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { type Browser, chromium, type Page } from "playwright-core"
import * as Chromium from "../../support/Chromium.ts"
import * as LiveBrowser from "../../support/LiveBrowser.ts"
import { addDeferrable, effectsOf, killGroup, makeProject, WAITING, waitingProject } from "../../support/Project.ts"
import * as Serve from "../../support/Serve.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
const groups: Array<number> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  for (const g of groups.splice(0)) killGroup(g)
})

const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js")
const [DESKTOP] = LiveBrowser.SCREENS
const CORPUS = path.resolve(import.meta.dirname, "../../fixtures/corpus/jp/conversations")

const ask = (id: string, name: string, mode: string) => ({ id, name: "deferrable", arguments: { name, mode } })

/** A project whose deferrable tool is approved each time (`run = "ask"`) and whose questions wait for any answerer. */
const approvingProject = () => {
  const p = makeProject()
  fs.appendFileSync(path.join(p.storage, "config.toml"), WAITING.replace('run = "unattended"', 'run = "ask"'))
  addDeferrable(p.root)
  return p
}

const launch = (): Promise<Browser> =>
  chromium.launch({ executablePath: LiveBrowser.executable(), args: ["--no-sandbox"] })

/**
 * axe-core's serious and critical violations on the page as it is now, in both colour schemes
 * (`rule: target…`). Injected as a script tag: the page's CSP allows no inline script, so the audits'
 * browser contexts are opened with `bypassCSP` (those contexts only: the others run under the CSP).
 */
const audit = async (page: Page): Promise<Array<string>> => {
  const found: Array<string> = []
  for (const colorScheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme })
    if (!(await page.evaluate("typeof window.axe !== 'undefined'"))) await page.addScriptTag({ path: AXE })
    const { passes, violations } = await page.evaluate<{
      passes: number
      violations: Array<{ id: string; impact: string | null; nodes: Array<{ target: Array<string> }> }>
    }>(`axe.run(document).then((r) => ({ passes: r.passes.length, violations: r.violations }))`)
    // axe ran its rules (a page it could not audit would pass nothing).
    expect(passes).toBeGreaterThan(10)
    for (const v of violations)
      if (v.impact === "serious" || v.impact === "critical")
        found.push(`${colorScheme} ${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)
  }
  await page.emulateMedia({ colorScheme: null })
  return found
}

/** Tab (at most `max` times) until the focused element matches `selector`. */
const tabTo = async (page: Page, selector: string, max = 40) => {
  for (let i = 0; i < max; i++) {
    if (await page.evaluate(`!!document.activeElement && document.activeElement.matches(${JSON.stringify(selector)})`))
      return
    await page.keyboard.press("Tab")
  }
  throw new Error(`${selector} not reached with ${max} Tabs`)
}

/** The focused element's ring: its outline (style and width), as drawn. */
const ring = (page: Page) =>
  page.evaluate<{ style: string; width: number; matches: boolean }>(`(() => {
    const e = document.activeElement, s = getComputedStyle(e)
    return { style: s.outlineStyle, width: parseFloat(s.outlineWidth), matches: e.matches(":focus-visible") }
  })()`)

describe.skipIf(!Chromium.available)("parley serve: the page for everyone", () => {
  it("axe-core: no serious or critical violation on the list, an approval, a waiting question and a conversation, light and dark", async () => {
    const p = approvingProject()
    const server = await Serve.start(p)
    children.push(server.child)
    const id = LiveBrowser.detached(
      p,
      [{ message: "May I **paint**?", tool_calls: [ask("a1", "paint", "pick")] }, { message: "All done." }],
      groups
    )
    await LiveBrowser.waiting(server, id)
    const browser = await launch()
    try {
      const { context, page, problems } = await LiveBrowser.open(browser, DESKTOP, server, { bypassCSP: true })
      // The list, with the approval in its inbox.
      await page
        .locator('#inbox form.question.approval[data-inquiry="a1.__permission__.1"]')
        .waitFor({ timeout: 20_000 })
      expect(await audit(page)).toStrictEqual([])
      // The approval in its conversation.
      await page.goto(`${server.base}/conversations/${id}`)
      await page.locator('form.approval[data-inquiry="a1.__permission__.1"]').waitFor({ timeout: 20_000 })
      expect(await audit(page)).toStrictEqual([])
      // A waiting question (a select).
      expect(
        (await server.post(`/api/conversations/${id}/questions/a1.__permission__.1`, { answer: "yes" })).status
      ).toBe(200)
      await page.locator('form.question[data-inquiry="a1.color.1"]').waitFor({ timeout: 20_000 })
      expect(await audit(page)).toStrictEqual([])
      // The conversation, complete.
      expect((await server.post(`/api/conversations/${id}/questions/a1.color.1`, { answer: "red" })).status).toBe(200)
      await page.locator("#live-status", { hasText: "Not running." }).waitFor({ timeout: 30_000 })
      await page.getByText("All done.").first().waitFor({ timeout: 10_000 })
      expect(await audit(page)).toStrictEqual([])
      expect(problems).toStrictEqual([])
      await context.close()
    } finally {
      await browser.close()
    }
    expect(await server.stop()).toBe(143)
  }, 240_000)

  it("keyboard only: an approval (Run) and a question (a select, with the arrows) answered with Tab / Enter / arrows, the focus ring drawn", async () => {
    const p = approvingProject()
    const server = await Serve.start(p)
    children.push(server.child)
    const id = LiveBrowser.detached(
      p,
      [{ message: "May I paint?", tool_calls: [ask("a1", "paint", "pick")] }, { message: "All done." }],
      groups
    )
    await LiveBrowser.waiting(server, id)
    const browser = await launch()
    try {
      const { context, page, problems } = await LiveBrowser.open(browser, DESKTOP, server)
      await page.goto(`${server.base}/conversations/${id}`)
      await page.locator('form.approval[data-inquiry="a1.__permission__.1"]').waitFor({ timeout: 20_000 })
      // The waiting bar's link, reached with Tab, takes the keyboard into the form: its first control is Run.
      await tabTo(page, '#waiting-links a[href="#ask-a1.__permission__.1"]')
      await page.keyboard.press("Enter")
      await expect.poll(() => page.evaluate("document.activeElement.textContent"), { timeout: 5000 }).toBe("Run")
      const approvalRing = await ring(page)
      expect(approvalRing.matches).toBe(true)
      expect(approvalRing.style).not.toBe("none")
      expect(approvalRing.width).toBeGreaterThanOrEqual(2)
      await LiveBrowser.shot(page, "desktop-keyboard-approval")
      await page.keyboard.press("Enter")
      // Answered here: the next form takes the keyboard (the select), the arrows choose, Tab and Enter send.
      const question = page.locator('form.question[data-inquiry="a1.color.1"]')
      await question.waitFor({ timeout: 20_000 })
      await expect
        .poll(() => page.evaluate("document.activeElement.closest('form')?.getAttribute('data-inquiry')"), {
          timeout: 5000
        })
        .toBe("a1.color.1")
      await tabTo(page, 'form[data-inquiry="a1.color.1"] select', 3)
      await page.keyboard.press("ArrowDown")
      await page.keyboard.press("ArrowDown")
      expect(await question.locator("select").inputValue()).toBe("green")
      await page.keyboard.press("Tab")
      expect(await page.evaluate("document.activeElement.textContent")).toBe("Answer")
      const questionRing = await ring(page)
      expect(questionRing.matches).toBe(true)
      expect(questionRing.style).not.toBe("none")
      expect(questionRing.width).toBeGreaterThanOrEqual(2)
      await LiveBrowser.shot(page, "desktop-keyboard-question")
      await page.keyboard.press("Enter")
      await page.locator("#live-status", { hasText: "Not running." }).waitFor({ timeout: 30_000 })
      expect(effectsOf(p, "paint")).toBe('"green"\n')
      expect(problems).toStrictEqual([])
      await context.close()
    } finally {
      await browser.close()
    }
    expect(await server.stop()).toBe(143)
  }, 240_000)

  it("a question that opens while the page is in the background: a notification (permission granted) and the tab's count", async () => {
    const p = waitingProject()
    const server = await Serve.start(p)
    children.push(server.child)
    const id = LiveBrowser.detached(
      p,
      [
        { message: "First.", tool_calls: [ask("a1", "prod", "ask")] },
        { message: "Then.", tool_calls: [ask("c1", "paint", "pick")] },
        { message: "All done." }
      ],
      groups
    )
    await LiveBrowser.waiting(server, id)
    const browser = await launch()
    try {
      const { context, page, problems } = await LiveBrowser.open(browser, DESKTOP, server, {
        permissions: ["notifications"]
      })
      // Seen from inside the page: every notification it makes, and a page the test can put in the background.
      await context.addInitScript(`(() => {
        const Real = window.Notification, made = []
        window.__notes = made
        function Recorded(title, options) {
          made.push({ title, body: options && options.body })
          try { return new Real(title, options) } catch (e) { return {} }
        }
        Object.defineProperty(Recorded, "permission", { get: () => Real.permission })
        Recorded.requestPermission = (...a) => Real.requestPermission(...a)
        window.Notification = Recorded
        let hidden = false
        Object.defineProperty(Document.prototype, "hidden", { configurable: true, get: () => hidden })
        Object.defineProperty(Document.prototype, "visibilityState", { configurable: true, get: () => (hidden ? "hidden" : "visible") })
        window.__setHidden = (h) => { hidden = h; document.dispatchEvent(new Event("visibilitychange")) }
      })()`)
      await page.goto(`${server.base}/conversations/${id}`)
      await page.locator('form.question[data-inquiry="a1.confirm.1"]').waitFor({ timeout: 20_000 })
      expect(await page.evaluate("Notification.permission")).toBe("granted")
      // In sight, no notification; nothing asks for a permission already given.
      expect(await page.evaluate("window.__notes.length")).toBe(0)
      expect(await page.locator(".notify-me").count()).toBe(0)
      await page.evaluate("window.__setHidden(true)")
      expect((await server.post(`/api/conversations/${id}/questions/a1.confirm.1`, { answer: true })).status).toBe(200)
      await expect
        .poll(() => page.evaluate("window.__notes"), { timeout: 20_000 })
        .toStrictEqual([{ title: "parley: a question waits", body: "Which color?" }])
      await expect.poll(() => page.title(), { timeout: 5000 }).toMatch(/^\(1\) /)
      await page.evaluate("window.__setHidden(false)")
      expect((await server.post(`/api/conversations/${id}/questions/c1.color.1`, { answer: "red" })).status).toBe(200)
      await page.locator("#live-status", { hasText: "Not running." }).waitFor({ timeout: 30_000 })
      expect(problems).toStrictEqual([])
      await context.close()
    } finally {
      await browser.close()
    }
    expect(await server.stop()).toBe(143)
  }, 240_000)

  it("keyboard: the waiting link the keyboard is on keeps the focus while another question closes and the page redraws", async () => {
    const p = waitingProject()
    const server = await Serve.start(p)
    children.push(server.child)
    const id = LiveBrowser.detached(
      p,
      [
        { message: "Two at once.", tool_calls: [ask("a1", "prod", "ask"), ask("c1", "paint", "pick")] },
        { message: "All done." }
      ],
      groups
    )
    await LiveBrowser.waiting(server, id, 2)
    const browser = await launch()
    try {
      const { context, page, problems } = await LiveBrowser.open(browser, DESKTOP, server)
      await page.goto(`${server.base}/conversations/${id}`)
      await page.locator("#waiting-links a.all-link").waitFor({ timeout: 20_000 })
      await tabTo(page, '#waiting-links a[href="#ask-c1.color.1"]')
      // Marked, so that the same link is found focused later, not one drawn again with the same address.
      await page.evaluate(
        `document.activeElement.dataset.kept = "yes"; document.getElementById("turns").dataset.old = "yes"`
      )
      expect((await server.post(`/api/conversations/${id}/questions/a1.confirm.1`, { answer: true })).status).toBe(200)
      // The bar lets go of the answered question and of Answer all, and the turns are drawn again (fetched anew).
      await expect.poll(() => page.locator("#waiting-links a").count(), { timeout: 20_000 }).toBe(1)
      await page.locator("#turns:not([data-old])").waitFor({ state: "attached", timeout: 20_000 })
      expect(await page.evaluate("document.activeElement.dataset.kept ?? document.activeElement.tagName")).toBe("yes")
      // The keyboard goes on from there: Enter takes it into the question's form.
      await page.keyboard.press("Enter")
      await expect
        .poll(() => page.evaluate("document.activeElement.closest('form')?.getAttribute('data-inquiry')"), {
          timeout: 5000
        })
        .toBe("c1.color.1")
      await page.keyboard.press("ArrowDown")
      await page.keyboard.press("ArrowDown")
      await page.keyboard.press("Tab")
      await page.keyboard.press("Enter")
      await page.locator("#live-status", { hasText: "Not running." }).waitFor({ timeout: 30_000 })
      expect(effectsOf(p, "prod")).toBe("true\n")
      expect(effectsOf(p, "paint")).toBe('"green"\n')
      expect(problems).toStrictEqual([])
      await context.close()
    } finally {
      await browser.close()
    }
    expect(await server.stop()).toBe(143)
  }, 240_000)

  it("Answer all: a turn's open questions answered by one form, together (the batch endpoint); a question left out is said, nothing sent", async () => {
    const p = waitingProject()
    const server = await Serve.start(p)
    children.push(server.child)
    const id = LiveBrowser.detached(
      p,
      [
        { message: "Two at once.", tool_calls: [ask("a1", "prod", "ask"), ask("c1", "paint", "pick")] },
        { message: "All done." }
      ],
      groups
    )
    await LiveBrowser.waiting(server, id, 2)
    const browser = await launch()
    try {
      for (const screen of LiveBrowser.SCREENS) {
        const { context, page, problems } = await LiveBrowser.open(browser, screen, server, { bypassCSP: true })
        await page.goto(`${server.base}/conversations/${id}`)
        const all = page.locator("form#answer-all")
        await all.waitFor({ timeout: 20_000 })
        expect(await audit(page)).toStrictEqual([])
        expect(await all.locator("label").allTextContents()).toStrictEqual(
          expect.arrayContaining(["deferrable: Deploy prod?", "deferrable: Which color?"])
        )
        expect(await page.locator("#waiting-links a.all-link").textContent()).toBe("Answer all")
        await all.scrollIntoViewIfNeeded()
        await LiveBrowser.shot(page, `${screen.name}-answer-all`)
        expect(problems).toStrictEqual([])
        await context.close()
      }
      const { context, page, problems } = await LiveBrowser.open(browser, DESKTOP, server)
      await page.goto(`${server.base}/conversations/${id}`)
      const all = page.locator("form#answer-all")
      await all.waitFor({ timeout: 20_000 })
      await all.getByLabel("deferrable: Deploy prod?").selectOption("yes")
      await all.getByRole("button", { name: "Answer all" }).click()
      expect(await all.locator(".q-note").textContent()).toBe("Answer every question first.")
      await all.getByLabel("deferrable: Which color?").selectOption("green")
      await all.getByRole("button", { name: "Answer all" }).click()
      for (const iid of ["a1.confirm.1", "c1.color.1"])
        await expect
          .poll(() => page.locator(`li.attempt[data-inquiry-id="${iid}"]`).textContent(), { timeout: 10_000 })
          .toContain("you, on this page")
      await page.locator("#live-status", { hasText: "Not running." }).waitFor({ timeout: 30_000 })
      expect(effectsOf(p, "prod")).toBe("true\n")
      expect(effectsOf(p, "paint")).toBe('"green"\n')
      expect(problems).toStrictEqual([])
      await context.close()
    } finally {
      await browser.close()
    }
    expect(await server.stop()).toBe(143)
  }, 240_000)

  it("the home page over 250 conversations: 100 a page, links to the next and the previous, a page past the end shows the last", async () => {
    const p = makeProject()
    const source = path.join(CORPUS, "17758406187-missing-date-in-version-string")
    for (let i = 0; i < 250; i++)
      fs.cpSync(source, path.join(p.storage, "conversations", `${17000000000 + i}-conversation-${i}`), {
        recursive: true
      })
    const server = await Serve.start(p)
    children.push(server.child)
    const browser = await launch()
    try {
      for (const screen of LiveBrowser.SCREENS) {
        const { context, page, problems } = await LiveBrowser.open(browser, screen, server, { bypassCSP: true })
        const rows = page.locator("#conversations tbody tr")
        expect(await rows.count()).toBe(100)
        expect(await page.locator("nav.pages").textContent()).toContain("1–100 of 250 (page 1 of 3)")
        expect(await page.locator('nav.pages a[rel="prev"]').count()).toBe(0)
        await page.locator('nav.pages a[rel="next"]').click()
        await page.waitForURL(/\?page=2$/, { timeout: 10_000 })
        expect(await rows.count()).toBe(100)
        expect(await page.locator("nav.pages").textContent()).toContain("101–200 of 250 (page 2 of 3)")
        await page.goto(`${server.base}/?page=99`)
        expect(await rows.count()).toBe(50)
        expect(await page.locator('nav.pages a[rel="next"]').count()).toBe(0)
        expect(await audit(page)).toStrictEqual([])
        await page.locator("nav.pages").scrollIntoViewIfNeeded()
        await LiveBrowser.shot(page, `${screen.name}-home-paged`)
        expect(problems).toStrictEqual([])
        await context.close()
      }
    } finally {
      await browser.close()
    }
    expect(await server.stop()).toBe(143)
  }, 240_000)
})
