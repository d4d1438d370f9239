/**
 * The page of `parley serve` in Debian's Chromium through playwright-core
 * (docs/serve.md#the-page), for the page's tests: the browser's path, the two
 * screen sizes, a signed-in browser context, a detached run to look at, and
 * screenshots into `screenshots/serve/` (docs/serve.md#screenshots).
 *
 * @example
 * ```ts
 * import { chromium } from "playwright-core"
 * import * as LiveBrowser from "../../support/LiveBrowser.ts"
 * const browser = await chromium.launch({ executablePath: LiveBrowser.executable(), args: ["--no-sandbox"] })
 * ```
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { expect } from "@effect/vitest"
import type { Browser, BrowserContext, BrowserContextOptions, Page } from "playwright-core"
import * as Chromium from "./Chromium.ts"
import { type Project, parley, writeScript } from "./Project.ts"
import type * as Serve from "./Serve.ts"

export const SHOTS = path.resolve(import.meta.dirname, "../../screenshots/serve")

/** Chromium's absolute path (playwright-core wants one). */
export const executable = (): string => {
  const name = Chromium.chromiumBinary!
  return path.isAbsolute(name) ? name : execFileSync("sh", ["-c", 'command -v "$0"', name], { encoding: "utf8" }).trim()
}

export const SCREENS = [
  { name: "desktop", viewport: { width: 1280, height: 800 }, isMobile: false, hasTouch: false },
  { name: "phone", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true }
] as const
export type Screen = (typeof SCREENS)[number]

/** A detached run of `steps` (its process group pushed to `groups`, to be ended by the test); its conversation id. */
export const detached = (p: Project, steps: ReadonlyArray<unknown>, groups: Array<number>, policy = "wait"): string => {
  const script = writeScript(p, "s.json", steps)
  const r = parley(p, ["query", "--detach", "--new", "deploy", "--script", script, "--detached-policy", policy])
  expect(r.code, r.stderr).toBe(0)
  groups.push(Number(/\(pid (\d+)\)/.exec(r.stderr)![1]))
  return r.stdout.trim()
}

/** Until the run of `id` is listed as running with `n` questions open. */
export const waiting = async (server: Serve.Server, id: string, n = 1) => {
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

/** A browser page at `screen`'s size, signed in with the server's token; its script errors collected. */
export const open = async (
  browser: Browser,
  screen: Screen,
  server: Serve.Server,
  options: BrowserContextOptions = {}
): Promise<{ context: BrowserContext; page: Page; problems: Array<string> }> => {
  const context = await browser.newContext({
    viewport: screen.viewport,
    isMobile: screen.isMobile,
    hasTouch: screen.hasTouch,
    ...options
  })
  const page = await context.newPage()
  const problems: Array<string> = []
  page.on("pageerror", (e) => problems.push(String(e)))
  await page.goto(server.url)
  return { context, page, problems }
}

export const shot = async (page: Page, name: string) => {
  fs.mkdirSync(SHOTS, { recursive: true })
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) })
}
