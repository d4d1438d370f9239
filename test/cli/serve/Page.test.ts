// parley serve (docs/serve.md): the page of `parley serve`, driven in headless Chromium (Debian's
// `chromium` through playwright-core; no browser download) on a desktop and
// a phone-sized screen: open the list with the token, open a running
// conversation, see its questions appear live, answer them with their forms
// (Yes/No buttons, a select, a password field), see the tools finish and the
// reply arrive. The secret is in no file, no log line, no later response.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { chromium } from "playwright-core"
import * as Chromium from "../../support/Chromium.ts"
import {
  effectsOf,
  exited,
  hostSockets,
  type Project,
  spawnParley,
  waitFor,
  waitingProject,
  writeScript
} from "../../support/Project.ts"
import * as Serve from "../../support/Serve.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
})

const project = waitingProject
const sockets = hostSockets
const effects = effectsOf
const call = (id: string, name: string, mode: string, extra: Record<string, unknown> = {}) => ({
  id,
  name: "deferrable",
  arguments: { name, mode, ...extra }
})
const allFiles = (p: Project) =>
  fs
    .readdirSync(p.root, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => fs.readFileSync(path.join(d.parentPath, d.name), "utf8"))
    .join("\n")

/** The browser's path (playwright wants one, not a name looked up in PATH). */
const executable = (): string => {
  const name = Chromium.chromiumBinary!
  return path.isAbsolute(name) ? name : execFileSync("sh", ["-c", 'command -v "$0"', name], { encoding: "utf8" }).trim()
}

const SCREENS = [
  { name: "desktop", viewport: { width: 1280, height: 800 }, isMobile: false, hasTouch: false },
  { name: "phone", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true }
] as const

describe.skipIf(!Chromium.available)("parley serve: the page in headless Chromium", () => {
  for (const screen of SCREENS) {
    it(`${screen.name}: list → running conversation → questions appear live → answered with their forms → tools finish, the reply arrives`, async () => {
      const p = project()
      const server = await Serve.start(p)
      children.push(server.child)
      // The first tool runs a while: the page is open before the questions exist.
      const script = writeScript(p, "s.json", [
        { message: "Warming up.", tool_calls: [call("w1", "warm", "slow", { seconds: 3 })] },
        {
          message: "Now the questions.",
          tool_calls: [call("a1", "prod", "ask"), call("c1", "paint", "pick"), call("s1", "api", "secret")]
        },
        { message: "All done, deployed." }
      ])
      const run = spawnParley(p, ["query", "--new", "deploy please", "--script", script])
      children.push(run)
      await waitFor("the host's socket", () => sockets(p).length === 1)
      const id = sockets(p)[0]!.replace(".sock", "")

      const browser = await chromium.launch({ executablePath: executable(), args: ["--no-sandbox"] })
      try {
        const context = await browser.newContext({
          viewport: screen.viewport,
          isMobile: screen.isMobile,
          hasTouch: screen.hasTouch
        })
        const page = await context.newPage()
        const requests: Array<string> = []
        const problems: Array<string> = []
        page.on("request", (r) => requests.push(r.url()))
        page.on("console", (m) => (m.type() === "error" ? problems.push(`${m.text()} ${m.location().url}`) : undefined))
        page.on("pageerror", (e) => problems.push(String(e)))

        await page.goto(server.url)
        expect(new URL(page.url()).search).toBe("") // the token left the address bar
        const row = page.locator(`#conversations tr[data-id="${id}"]`)
        await expect
          .poll(() => row.locator(".state").textContent(), { timeout: 15_000 })
          .toMatch(/^(running|waiting for you \(\d+\))$/)
        await row.locator("a").click()
        await page.waitForURL(`**/conversations/${id}`)
        expect(await page.locator("#live-status").textContent({ timeout: 10_000 })).toBeTruthy()

        // The questions appear while the page is open.
        const yesNo = page.locator('form.question[data-inquiry="a1.confirm.1"]')
        await yesNo.waitFor({ timeout: 20_000 })
        expect(await yesNo.locator("button").allTextContents()).toStrictEqual(["Yes", "No"])
        // Tools run at once: each question opens on its own (under load, the first may show well before the rest).
        const select = page.locator('form.question[data-inquiry="c1.color.1"]')
        await select.waitFor({ timeout: 20_000 })
        // No option is picked for the person: the tool gave no default.
        expect(await select.locator("option").allTextContents()).toStrictEqual(["Choose…", "red", "green"])
        const secret = page.locator('form.question[data-inquiry="s1.token.1"]')
        await secret.waitFor({ timeout: 20_000 })
        expect(await secret.locator("input").getAttribute("type")).toBe("password")
        if (screen.isMobile) {
          // Fits a phone: nothing wider than the screen, buttons big enough to tap.
          expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(
            screen.viewport.width
          )
          const box = (await yesNo.locator("button").first().boundingBox())!
          expect(box.height).toBeGreaterThanOrEqual(40)
        }

        await yesNo.getByRole("button", { name: "Yes" }).click()
        await select.locator("select").selectOption("green")
        await select.getByRole("button", { name: "Answer" }).click()
        await secret.locator("input").fill("s3cr3t-t0ken")
        await secret.getByRole("button", { name: "Answer" }).click()

        // The run ends; the page is drawn again from the recorded conversation, with the reply.
        // (after the reload: the live part has nothing to follow, and the reply is in the drawn turn, not the live one)
        await page.locator("#live-status", { hasText: "Not running." }).waitFor({ timeout: 30_000 })
        expect(await page.locator("#live-reply").textContent()).toBe("")
        await page.locator("main").getByText("All done, deployed.").first().waitFor({ timeout: 10_000 })
        expect(await exited(run)).toBe(0)
        expect(effects(p, "prod")).toBe("true\n")
        expect(effects(p, "paint")).toBe('"green"\n')
        expect(effects(p, "api")).toBe('"12 chars"\n')
        const html = await page.content()
        expect(html).not.toContain("s3cr3t-t0ken")
        expect(requests.every((u) => u.startsWith(server.base + "/"))).toBe(true)
        expect(problems).toStrictEqual([])
        await context.close()
      } finally {
        await browser.close()
      }
      const doc = await server.json(`/api/conversations/${id}`)
      expect(JSON.stringify(doc.body)).not.toContain("s3cr3t-t0ken")
      expect(allFiles(p)).not.toContain("s3cr3t-t0ken")
      expect(await server.stop()).toBe(143)
      expect(server.child.output()).not.toContain("s3cr3t-t0ken")
    })
  }
})
