// parley serve (docs/serve.md#the-page): the conversation page as one live view, in headless Chromium
// (Debian's `chromium` through playwright-core) at 1280×800 and 390×844. A detached run waits on a
// question: its form is in the first screen, inside its tool call; answered on the page it reads as
// answered by "you, on this page" and the next question takes its place; answered from a terminal
// (`parley conversation answer`) it reads "at a terminal" and the tab's count drops. While the turn
// runs nothing says it is incomplete or needs resuming; a reload shows the same. The buttons are
// those that apply to each state; an approval shows its arguments and Run / Skip / Always / Never.
// Screenshots of each state go to `screenshots/serve/` (docs/serve.md#screenshots).
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import * as Chromium from "../../support/Chromium.ts"
import {
  addDeferrable,
  DEFERRABLE,
  effectsOf,
  killGroup,
  makeProject,
  type Project,
  parley,
  spawnParley,
  waitFor,
  waitingProject,
  writeScript
} from "../../support/Project.ts"
import * as Serve from "../../support/Serve.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
const groups: Array<number> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  for (const g of groups.splice(0)) killGroup(g)
})

const SHOTS = path.resolve(import.meta.dirname, "../../../screenshots/serve")

const executable = (): string => {
  const name = Chromium.chromiumBinary!
  return path.isAbsolute(name) ? name : execFileSync("sh", ["-c", 'command -v "$0"', name], { encoding: "utf8" }).trim()
}

const SCREENS = [
  { name: "desktop", viewport: { width: 1280, height: 800 }, isMobile: false, hasTouch: false },
  { name: "phone", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true }
] as const
type Screen = (typeof SCREENS)[number]

/** A detached run of `script`'s steps (questions wait for any answerer); its conversation id. */
const detached = (p: Project, steps: ReadonlyArray<unknown>, policy = "wait"): string => {
  const script = writeScript(p, "s.json", steps)
  const r = parley(p, ["query", "--detach", "--new", "deploy", "--script", script, "--detached-policy", policy])
  expect(r.code, r.stderr).toBe(0)
  groups.push(Number(/\(pid (\d+)\)/.exec(r.stderr)![1]))
  return r.stdout.trim()
}

/** Until the run of `id` is listed as running with `n` questions open. */
const waiting = async (server: Serve.Server, id: string, n = 1) => {
  await expect
    .poll(
      async () =>
        (
          (await server.json("/api/conversations")).body as Array<{
            id: string
            running: { waiting: Array<string> } | null
          }>
        ).find((r) => r.id === id)?.running?.waiting.length,
      { timeout: 20_000 }
    )
    .toBe(n)
}

const ask = (id: string, name: string, mode: string) => ({ id, name: "deferrable", arguments: { name, mode } })

/** A server, and a detached run waiting on its tool's question `a1.confirm.1` (then "All done."). */
const askingRun = async () => {
  const p = waitingProject()
  const server = await Serve.start(p)
  children.push(server.child)
  const id = detached(p, [
    { message: "Asking first.", tool_calls: [ask("a1", "prod", "ask")] },
    { message: "All done." }
  ])
  await waiting(server, id)
  return { p, server, id }
}

/** A browser page at `screen`'s size, signed in with the server's token; its console errors collected. */
const open = async (browser: Browser, screen: Screen, server: Serve.Server) => {
  const context: BrowserContext = await browser.newContext({
    viewport: screen.viewport,
    isMobile: screen.isMobile,
    hasTouch: screen.hasTouch
  })
  const page = await context.newPage()
  const problems: Array<string> = []
  page.on("pageerror", (e) => problems.push(String(e)))
  await page.goto(server.url)
  return { context, page, problems }
}

const shot = async (page: Page, name: string) => {
  fs.mkdirSync(SHOTS, { recursive: true })
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) })
}

/** The element lies within the screen, the page having settled (scrolled there by itself: the person did not move). */
const inViewport = async (page: Page, selector: string, screen: Screen) => {
  const fits = async () => {
    const box = await page.locator(selector).boundingBox()
    return (
      box !== null &&
      box.y >= 0 &&
      box.y + box.height <= screen.viewport.height &&
      box.x + box.width <= screen.viewport.width
    )
  }
  await expect.poll(fits, { timeout: 5000 }).toBe(true)
}

/** Elements wider than the viewport (their tags), none expected. */
const overflowing = (page: Page): Promise<Array<string>> =>
  page.evaluate(`[...document.querySelectorAll("body *")]
    .filter((e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.right > document.documentElement.clientWidth + 1 && !e.closest("details:not([open])") })
    .map((e) => e.tagName + "." + e.className)`)

const actions = (page: Page) => page.locator("#live .controls button").allTextContents()
/** What the page says (its rendered text, as a reader sees it). */
const bodyText = (page: Page) => page.evaluate<string>("document.body.innerText")

// A browser, a server and detached runs per test: a generous bound for a loaded 2-core machine.
describe.skipIf(!Chromium.available)(
  "parley serve: the conversation page as one live view",
  { timeout: 180_000 },
  () => {
    for (const screen of SCREENS) {
      it(`${screen.name}: the waiting form first, answered here and at a terminal, in place; reload shows the same`, async () => {
        const p = waitingProject()
        const server = await Serve.start(p)
        children.push(server.child)
        const id = detached(p, [
          { message: "Asking first.", tool_calls: [ask("a1", "prod", "ask")] },
          { message: "Now the colour.", tool_calls: [ask("c1", "paint", "pick")] },
          { message: "All done." }
        ])
        await waiting(server, id)
        const browser = await chromium.launch({ executablePath: executable(), args: ["--no-sandbox"] })
        try {
          const { context, page, problems } = await open(browser, screen, server)
          await page.goto(`${server.base}/conversations/${id}`)
          const first = page.locator('form.question[data-inquiry="a1.confirm.1"]')
          await first.waitFor({ timeout: 20_000 })
          // Inside its tool call, in the first screen, counted by the bar and the tab.
          expect(await first.evaluate((f) => f.closest("details.tool-call")?.getAttribute("data-call-id"))).toBe("a1")
          await inViewport(page, 'form.question[data-inquiry="a1.confirm.1"]', screen)
          await expect.poll(() => page.title(), { timeout: 5000 }).toMatch(/^\(1\) /)
          expect(await page.locator("#waiting").textContent()).toContain("Waiting for you (1)")
          const text = await bodyText(page)
          expect(text, server.child.output()).not.toMatch(/incomplete|resum/i)
          expect(await actions(page)).toStrictEqual(["Stop"])
          expect(await overflowing(page)).toStrictEqual([])
          await shot(page, `${screen.name}-waiting`)

          await first.getByRole("button", { name: "Yes" }).click()
          const answered = page.locator('li.attempt[data-inquiry-id="a1.confirm.1"]')
          await expect
            .poll(() => answered.textContent(), { timeout: 5000 })
            .toMatch(/answered true[\s\S]*you, on this page/)
          const next = page.locator('form.question[data-inquiry="c1.color.1"]')
          await next.waitFor({ timeout: 20_000 })
          // No option chosen for the person: the tool gave no default.
          expect(await next.locator("select").inputValue()).toBe("")
          await expect.poll(() => page.title(), { timeout: 5000 }).toMatch(/^\(1\) /)
          await inViewport(page, 'form.question[data-inquiry="c1.color.1"]', screen)
          expect(await bodyText(page)).not.toMatch(/incomplete|resum/i)
          await shot(page, `${screen.name}-next-question`)

          // Reload: the same page (the answer with who gave it, the open form, no "incomplete").
          await page.reload()
          await next.waitFor({ timeout: 20_000 })
          await expect.poll(() => answered.textContent(), { timeout: 5000 }).toContain("you, on this page")
          await inViewport(page, 'form.question[data-inquiry="c1.color.1"]', screen)
          expect(await bodyText(page)).not.toMatch(/incomplete|resum/i)

          // Answered at a terminal while the page is open.
          const r = parley(p, ["conversation", "answer", id, "c1.color.1", "green"])
          expect(r.code, r.stderr).toBe(0)
          const other = page.locator('li.attempt[data-inquiry-id="c1.color.1"]')
          await expect.poll(() => other.textContent(), { timeout: 10_000 }).toContain("you, at a terminal")
          // The tab's count drops (the next step ends the run soon after; the count is gone either way).
          await expect.poll(() => page.title(), { timeout: 5000 }).not.toMatch(/^\(\d+\)/)
          await shot(page, `${screen.name}-answered-at-terminal`)

          // The run ends: the page is drawn again, complete: no buttons but the message box.
          await page.locator("#live-status", { hasText: "Not running." }).waitFor({ timeout: 30_000 })
          await page.getByText("All done.").first().waitFor({ timeout: 10_000 })
          expect(await page.title()).not.toMatch(/^\(\d+\)/)
          expect(await actions(page)).toStrictEqual([])
          expect(await overflowing(page)).toStrictEqual([])
          await shot(page, `${screen.name}-complete`)
          expect(effectsOf(p, "prod")).toBe("true\n")
          expect(effectsOf(p, "paint")).toBe('"green"\n')
          expect(problems).toStrictEqual([])
          await context.close()
        } finally {
          await browser.close()
        }
        expect(await server.stop()).toBe(143)
      })
    }

    it("an approval: tool, arguments (long values folded), Run / Skip / Always / Never; Skip records the skip; an incomplete turn offers Continue / Discard", async () => {
      const p = makeProject()
      fs.appendFileSync(path.join(p.storage, "config.toml"), DEFERRABLE.replace('run = "unattended"', 'run = "ask"'))
      addDeferrable(p.root)
      const server = await Serve.start(p)
      children.push(server.child)
      const long = "x".repeat(300)
      const id = detached(p, [
        {
          message: "May I?",
          tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "prod", mode: "slow", note: long } }]
        },
        { message: "Skipped it." }
      ])
      await waiting(server, id)
      const browser = await chromium.launch({ executablePath: executable(), args: ["--no-sandbox"] })
      try {
        for (const screen of SCREENS) {
          const { context, page, problems } = await open(browser, screen, server)
          await page.goto(`${server.base}/conversations/${id}`)
          const form = page.locator('form.question.approval[data-inquiry="a1.__permission__.1"]')
          await form.waitFor({ timeout: 20_000 })
          expect(await form.locator(".q-text").textContent()).toBe("Run deferrable?")
          expect(await form.locator(":scope > button").allTextContents()).toStrictEqual([
            "Run",
            "Skip",
            "Always",
            "Never"
          ])
          expect(await form.locator("dt").allTextContents()).toStrictEqual(["name", "mode", "note"])
          // The long value is folded: its summary shows, the whole value is behind it.
          expect(await form.locator("dd details").count()).toBe(1)
          expect(await form.locator("dd details").getAttribute("open")).toBeNull()
          await inViewport(page, 'form.question.approval[data-inquiry="a1.__permission__.1"]', screen)
          expect(await overflowing(page)).toStrictEqual([])
          await shot(page, `${screen.name}-approval`)
          expect(problems).toStrictEqual([])
          await context.close()
        }
        const { context, page } = await open(browser, SCREENS[0], server)
        await page.goto(`${server.base}/conversations/${id}`)
        const form = page.locator('form.question.approval[data-inquiry="a1.__permission__.1"]')
        await form.getByRole("button", { name: "Skip" }).click({ timeout: 20_000 })
        const answered = page.locator('li.attempt[data-inquiry-id="a1.__permission__.1"]')
        await expect.poll(() => answered.textContent(), { timeout: 5000 }).toMatch(/you, on this page/)
        await page.locator("#live-status", { hasText: "Not running." }).waitFor({ timeout: 30_000 })
        expect(effectsOf(p, "prod")).toBe("")
        await context.close()
      } finally {
        await browser.close()
      }
      expect(await server.stop()).toBe(143)
    })

    it("a click is not lost to the page drawing itself again: a render that changed while Skip is held waits for the release, an unchanged one is not drawn", async () => {
      const p = makeProject()
      fs.appendFileSync(path.join(p.storage, "config.toml"), DEFERRABLE.replace('run = "unattended"', 'run = "ask"'))
      addDeferrable(p.root)
      const server = await Serve.start(p)
      children.push(server.child)
      const id = detached(p, [
        {
          message: "May I?",
          tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "prod", mode: "slow" } }]
        },
        { message: "Skipped it." }
      ])
      await waiting(server, id)
      const pagePath = `/conversations/${id}`
      const form = 'form.question.approval[data-inquiry="a1.__permission__.1"]'
      const browser = await chromium.launch({ executablePath: executable(), args: ["--no-sandbox"] })
      try {
        // The page fetches its own render again after the events it is given as it connects (a question
        // opened). Given unchanged, the turns drawn are left as they are (the node marked here stays).
        {
          const { context, page } = await open(browser, SCREENS[0], server)
          let marked!: () => void
          const mark = new Promise<void>((resolve) => (marked = resolve))
          let served!: () => void
          const unchanged = new Promise<void>((resolve) => (served = resolve))
          await page.route(
            (url) => url.pathname === pagePath,
            async (route) => {
              if (route.request().resourceType() !== "fetch") return route.continue()
              await mark
              await route.continue()
              served()
            }
          )
          await page.goto(`${server.base}${pagePath}`)
          await page.locator(form).waitFor({ timeout: 20_000 })
          await page.evaluate("document.getElementById('turns').setAttribute('data-mark', 'kept')")
          marked()
          await unchanged
          await new Promise((resolve) => setTimeout(resolve, 500))
          expect(await page.locator('#turns[data-mark="kept"]').count()).toBe(1)
          await context.close()
        }
        // Given changed while Space is down on Skip (a button clicks as the key comes up), it waits too; the
        // window losing the focus ends the press, and the render is drawn.
        {
          const { context, page } = await open(browser, SCREENS[0], server)
          let down!: () => void
          const spaceDown = new Promise<void>((resolve) => (down = resolve))
          let given!: () => void
          const changed = new Promise<void>((resolve) => (given = resolve))
          await page.route(
            (url) => url.pathname === pagePath,
            async (route) => {
              if (route.request().resourceType() !== "fetch") return route.continue()
              const response = await route.fetch()
              const body = (await response.text()).replace('id="turns"', 'id="turns" data-drawn="again"')
              await spaceDown
              await route.fulfill({ response, body })
              given()
            }
          )
          await page.goto(`${server.base}${pagePath}`)
          const skip = page.locator(form).getByRole("button", { name: "Skip" })
          await skip.waitFor({ timeout: 20_000 })
          await skip.focus()
          await page.keyboard.down(" ")
          const responded = page.waitForResponse(
            (r) => new URL(r.url()).pathname === pagePath && r.request().resourceType() === "fetch"
          )
          down()
          await changed
          await (await responded).finished()
          await page.evaluate("new Promise((resolve) => setTimeout(resolve, 100))")
          expect(await page.locator('#turns[data-drawn="again"]').count()).toBe(0)
          await page.evaluate("window.dispatchEvent(new Event('blur'))")
          await page.locator('#turns[data-drawn="again"]').waitFor({ timeout: 5000 })
          await context.close()
        }
        // Given changed (as when the run records something) while Skip is held, it is drawn after the release.
        const { context, page, problems } = await open(browser, SCREENS[0], server)
        let asked!: () => void
        const fetched = new Promise<void>((resolve) => (asked = resolve))
        let given!: () => void
        const changed = new Promise<void>((resolve) => (given = resolve))
        let pressedNow!: () => void
        const pressed = new Promise<void>((resolve) => (pressedNow = resolve))
        await page.route(
          (url) => url.pathname === pagePath,
          async (route) => {
            if (route.request().resourceType() !== "fetch") return route.continue()
            asked()
            const response = await route.fetch()
            const body = (await response.text()).replace('id="turns"', 'id="turns" data-drawn="again"')
            await pressed
            await route.fulfill({ response, body })
            given()
          }
        )
        const posts: Array<string> = []
        page.on("request", (r) => (r.method() === "POST" ? posts.push(new URL(r.url()).pathname) : undefined))
        await page.goto(`${server.base}${pagePath}`)
        const skip = page.locator(form).getByRole("button", { name: "Skip" })
        await skip.waitFor({ timeout: 20_000 })
        await fetched
        const box = (await skip.boundingBox())!
        await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2)
        await page.mouse.down()
        const responded = page.waitForResponse(
          (r) => new URL(r.url()).pathname === pagePath && r.request().resourceType() === "fetch"
        )
        pressedNow()
        // The changed render comes back while the button is held (given, then read and parsed by the page,
        // its tasks done before this one): it is not drawn yet.
        await changed
        await (await responded).finished()
        await page.evaluate("new Promise((resolve) => setTimeout(resolve, 100))")
        expect(await page.locator('#turns[data-drawn="again"]').count()).toBe(0)
        await page.mouse.up()
        // The click went through, and the render was drawn after it.
        await expect
          .poll(() => posts, { timeout: 5000 })
          .toStrictEqual([`/api/conversations/${id}/questions/a1.__permission__.1`])
        await page.locator('#turns[data-drawn="again"]').waitFor({ timeout: 5000 })
        await page.locator("#live-status", { hasText: "Not running." }).waitFor({ timeout: 30_000 })
        expect(effectsOf(p, "prod")).toBe("")
        expect(problems).toStrictEqual([])
        await context.close()
      } finally {
        await browser.close()
      }
      expect(await server.stop()).toBe(143)
    })

    it("the run ends while its host still sends the end to a terminal that stopped reading: the page is drawn ended once, and is given no run to follow", async () => {
      const { p, server, id } = await askingRun()
      // An attached terminal, then stopped: after the run's end its host waits for it (up to 3 s) before it exits.
      const frozen = spawnParley(p, ["conversation", "attach", id])
      children.push(frozen)
      await waitFor("the attached terminal to show the run", () => frozen.output().includes("Asking first."))
      frozen.kill("SIGSTOP")
      const browser = await chromium.launch({ executablePath: executable(), args: ["--no-sandbox"] })
      try {
        const { context, page, problems } = await open(browser, SCREENS[0], server)
        const streams: Array<number> = []
        page.on("response", (r) => (r.url().endsWith("/events") ? streams.push(r.status()) : undefined))
        await page.goto(`${server.base}/conversations/${id}`)
        const form = page.locator('form.question[data-inquiry="a1.confirm.1"]')
        await form.waitFor({ timeout: 20_000 })
        await form.getByRole("button", { name: "Yes" }).click()
        // Drawn again after the end, while the host still answers: ended, not running (it once said
        // "Running.", followed the run again from its start and stayed on "Stopped: completed.").
        await page.locator("#live-status", { hasText: "Not running." }).waitFor({ timeout: 20_000 })
        await page.getByText("All done.").first().waitFor({ timeout: 10_000 })
        expect(await page.evaluate<string | null>("document.body.getAttribute('data-state')")).toBe("complete")
        expect(await actions(page)).toStrictEqual([])
        // The page drawn at the end asked for the run's events and was told there is none to follow (204). Its
        // answer reaches this side as an event of its own, maybe after the page shows it ended: waited for.
        await waitFor("the ended page's request for the run's events", () => streams.length >= 2, 10_000).catch(
          () => undefined
        )
        expect(streams).toStrictEqual([200, 204])
        expect(effectsOf(p, "prod")).toBe("true\n")
        expect(problems).toStrictEqual([])
        await context.close()
      } finally {
        await browser.close()
        frozen.kill("SIGCONT")
      }
      expect(await server.stop()).toBe(143)
    })

    it("the run's process killed (-9) while the page follows it: the page is drawn again, once, with the incomplete turn's Continue / Discard", async () => {
      const { server, id } = await askingRun()
      const browser = await chromium.launch({ executablePath: executable(), args: ["--no-sandbox"] })
      try {
        const { context, page, problems } = await open(browser, SCREENS[0], server)
        const loads: Array<number> = []
        page.on("load", () => loads.push(Date.now()))
        await page.goto(`${server.base}/conversations/${id}`)
        await page.locator('form.question[data-inquiry="a1.confirm.1"]').waitFor({ timeout: 20_000 })
        expect(await actions(page)).toStrictEqual(["Stop"])
        // No Stopped comes: the stream ends, the reconnect is told there is no run (204).
        killGroup(groups.at(-1)!)
        await expect.poll(() => actions(page), { timeout: 20_000 }).toStrictEqual(["Continue", "Discard"])
        expect(await page.locator("#live-status").textContent()).toBe("Not running.")
        expect(await bodyText(page)).toContain("Incomplete turn")
        // Once: the page drawn not running does not reload again.
        await new Promise((r) => setTimeout(r, 1500))
        expect(loads).toHaveLength(2)
        expect(problems).toStrictEqual([])
        await context.close()
      } finally {
        await browser.close()
      }
      expect(await server.stop()).toBe(143)
    })

    it("the buttons that apply: Continue / Discard for an incomplete turn nobody runs; a start with no model shows the server's reason", async () => {
      const p = waitingProject()
      const server = await Serve.start(p, [], { OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "", PARLEY_MODEL: "" })
      children.push(server.child)
      const id = detached(p, [{ message: "Asking.", tool_calls: [ask("a1", "prod", "ask")] }], "defer")
      const browser = await chromium.launch({ executablePath: executable(), args: ["--no-sandbox"] })
      try {
        const { context, page, problems } = await open(browser, SCREENS[0], server)
        await expect
          .poll(
            async () => {
              await page.goto(`${server.base}/conversations/${id}`)
              return actions(page)
            },
            { timeout: 20_000 }
          )
          .toStrictEqual(["Continue", "Discard"])
        // Not running: the incomplete turn is explained, with what resuming does.
        expect(await bodyText(page)).toContain("Incomplete turn")
        await shot(page, "desktop-incomplete")
        // The home page is the inbox: the waiting question on top, answerable there; then the list, with headers.
        for (const screen of SCREENS) {
          const phone = await open(browser, screen, server)
          const item = phone.page.locator('#inbox form.question[data-inquiry="a1.confirm.1"]')
          await item.waitFor({ timeout: 10_000 })
          await inViewport(phone.page, '#inbox form.question[data-inquiry="a1.confirm.1"]', screen)
          await expect.poll(() => phone.page.title(), { timeout: 5000 }).toBe("(1) parley")
          expect(await overflowing(phone.page)).toStrictEqual([])
          await shot(phone.page, `${screen.name}-home`)
          await phone.context.close()
        }
        await page.goto(server.base + "/")
        expect(await page.locator("#conversations th").allTextContents()).toStrictEqual([
          "Conversation",
          "State",
          "Last activity"
        ])
        const listed = page.locator(`#conversations tr[data-id="${id}"]`)
        expect(await listed.locator(".state").textContent()).toBe("stopped, a question waits")
        expect(await listed.locator("time").textContent()).toMatch(/^(just now|\d+ min ago)$/)
        expect(await listed.locator("time").getAttribute("title")).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/)
        await page
          .locator('#inbox form.question[data-inquiry="a1.confirm.1"]')
          .getByRole("button", { name: "No" })
          .click()
        await page.locator("#inbox").waitFor({ state: "hidden", timeout: 10_000 })
        expect(await page.title()).toBe("parley")
        await page.locator("#new textarea").fill("hello")
        await page.locator("#new button").click()
        await expect.poll(() => page.locator("#new .q-note").textContent(), { timeout: 20_000 }).toMatch(/No model/)
        expect(problems).toStrictEqual([])
        await context.close()
      } finally {
        await browser.close()
      }
      expect(await server.stop()).toBe(143)
    })
  }
)
