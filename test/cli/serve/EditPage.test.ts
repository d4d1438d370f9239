// JP's `run = "edit"` and result review on `parley serve`'s page (docs/tools.md#editing-a-calls-arguments,
// docs/tools.md#reviewing-a-result-from-anywhere), in headless Chromium (Debian's `chromium` through
// playwright-core). An approval offers an Edit field prefilled with the call's arguments: text that is not
// a JSON object is refused on the page (nothing sent), an edit is sent as {"edit": {…}} and the tool runs
// with it, recorded with the true decision. A result review shows the result with Deliver / Skip and an
// Edit field: the edited text is what the model gets, recorded as edited.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { type Browser, chromium } from "playwright-core"
import * as Chromium from "../../support/Chromium.ts"
import {
  addDeferrable,
  DEFERRABLE,
  effectsOf,
  killGroup,
  makeProject,
  type Project,
  parley,
  persisted,
  writeScript
} from "../../support/Project.ts"
import * as Serve from "../../support/Serve.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
const groups: Array<number> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  for (const g of groups.splice(0)) killGroup(g)
})

/** A string as JP's files store it in an event's content and metadata (base64). */
const stored = (text: string) => Buffer.from(text, "utf8").toString("base64")

const executable = (): string => {
  const name = Chromium.chromiumBinary!
  return path.isAbsolute(name) ? name : execFileSync("sh", ["-c", 'command -v "$0"', name], { encoding: "utf8" }).trim()
}

/** A project whose deferrable tool has `settings` (TOML lines) in place of `run = "unattended"`, served. */
const served = async (settings: string) => {
  const p = makeProject()
  fs.appendFileSync(path.join(p.storage, "config.toml"), DEFERRABLE.replace('run = "unattended"', settings))
  addDeferrable(p.root)
  const server = await Serve.start(p)
  children.push(server.child)
  return { p, server }
}

/** A detached `wait` run of one slow deferrable call, then "Done."; its conversation id. */
const detached = (p: Project): string => {
  const script = writeScript(p, "s.json", [
    { message: "Working.", tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "prod", mode: "slow" } }] },
    { message: "Done." }
  ])
  const r = parley(p, ["query", "--detach", "--new", "deploy", "--script", script, "--detached-policy", "wait"])
  expect(r.code, r.stderr).toBe(0)
  groups.push(Number(/\(pid (\d+)\)/.exec(r.stderr)![1]))
  return r.stdout.trim()
}

const withPage = async (
  server: Serve.Server,
  url: string,
  body: (page: import("playwright-core").Page) => Promise<void>
) => {
  const browser: Browser = await chromium.launch({ executablePath: executable(), args: ["--no-sandbox"] })
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    const problems: Array<string> = []
    page.on("pageerror", (e) => problems.push(String(e)))
    await page.goto(server.url)
    await page.goto(url)
    await body(page)
    expect(problems).toStrictEqual([])
    await context.close()
  } finally {
    await browser.close()
  }
}

describe.skipIf(!Chromium.available)("parley serve's page: editing a call's arguments and reviewing a result", () => {
  it("JP run = edit on the page: the Edit field holds the arguments; not a JSON object is refused on the page; the edit runs the tool with it, recorded with the true decision", async () => {
    const { p, server } = await served('run = "edit"')
    const id = detached(p)
    await withPage(server, `${server.base}/conversations/${id}`, async (page) => {
      const form = page.locator('form.question.approval[data-inquiry="a1.__permission__.1"]')
      await form.waitFor({ timeout: 20_000 })
      await form.getByText("Edit the arguments").click()
      const area = form.getByRole("textbox", { name: "Edited arguments (JSON)" })
      expect(JSON.parse(await area.inputValue())).toStrictEqual({ name: "prod", mode: "slow" })
      const note = form.locator("details.edit [role=status]")
      await area.fill("{not json")
      await form.getByRole("button", { name: "Run edited" }).click()
      await expect.poll(() => note.textContent(), { timeout: 5000 }).toMatch(/^Not valid JSON/)
      await area.fill('["staging"]')
      await form.getByRole("button", { name: "Run edited" }).click()
      await expect.poll(() => note.textContent(), { timeout: 5000 }).toBe("The arguments must be a JSON object.")
      // Refused on the page: the approval is still open.
      expect(((await server.json("/api/questions")).body as Array<unknown>).length).toBe(1)
      await area.fill('{"name": "staging", "mode": "slow"}')
      await form.getByRole("button", { name: "Run edited" }).click()
      await page.locator("#live-status", { hasText: "Not running." }).waitFor({ timeout: 30_000 })
    })
    expect(effectsOf(p, "staging")).toBe(`"done"\n`)
    expect(effectsOf(p, "prod")).toBe("")
    expect(persisted(p).find((e) => e.type === "inquiry_response")).toMatchObject({
      id: "a1.__permission__.1",
      answer: true,
      metadata: { parley_arguments: { name: stored("staging"), mode: stored("slow") } }
    })
    expect(await server.stop()).toBe(143)
  })

  it("JP result = ask on the page: the result with Deliver / Skip and an Edit field; the edited result is what the model gets, recorded as edited", async () => {
    const { p, server } = await served('run = "unattended"\nresult = "ask"')
    const id = detached(p)
    await withPage(server, `${server.base}/conversations/${id}`, async (page) => {
      const form = page.locator('form.question.approval[data-inquiry="a1.__result__.1"]')
      await form.waitFor({ timeout: 20_000 })
      expect(await form.locator(".q-text").textContent()).toBe("deferrable: Deliver deferrable result to assistant?")
      expect(await form.locator(":scope > button").allTextContents()).toStrictEqual(["Deliver", "Skip"])
      expect(await form.locator("dd").first().textContent()).toBe('prod: "done"')
      await form.getByText("Edit the result").click()
      const area = form.getByRole("textbox", { name: "Edited result" })
      expect(await area.inputValue()).toBe('prod: "done"')
      await area.fill("prod: done, checked by hand")
      await form.getByRole("button", { name: "Deliver edited" }).click()
      await page.locator("#live-status", { hasText: "Not running." }).waitFor({ timeout: 30_000 })
    })
    expect(persisted(p).find((e) => e.type === "tool_call_response")).toMatchObject({
      content: stored("prod: done, checked by hand"),
      metadata: { parley_result_review: stored("edited") }
    })
    expect(persisted(p).find((e) => e.type === "inquiry_response")).toMatchObject({
      id: "a1.__result__.1",
      answer: true,
      metadata: { parley_arguments: { result: stored("prod: done, checked by hand") } }
    })
    expect(await server.stop()).toBe(143)
  })
})
