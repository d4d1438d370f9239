// The conversation page's message box while a turn runs (docs/serve.md#the-page, docs/cli.md#talk-to-a-running-turn),
// in headless Chromium: it offers when the turn gets the message, says what the queued message will do and how
// to withdraw it, and shows "1 message queued"; the turn then records it, as sent from the page. Each queued message
// is listed with a Withdraw button that takes it back (`DELETE …/messages/:n`), and the turn never gets it.
import { execFileSync } from "node:child_process"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { chromium } from "playwright-core"
import * as Chromium from "../../support/Chromium.ts"
import { killGroup, parley, persisted, waitingProject, writeScript } from "../../support/Project.ts"
import * as Serve from "../../support/Serve.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
const groups: Array<number> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  for (const g of groups.splice(0)) killGroup(g)
})

const executable = (): string => {
  const name = Chromium.chromiumBinary!
  return path.isAbsolute(name) ? name : execFileSync("sh", ["-c", 'command -v "$0"', name], { encoding: "utf8" }).trim()
}

describe.skipIf(!Chromium.available)("parley serve: the page's message box while a turn runs", () => {
  it("next: queued with what it will do and the count, then recorded after the tool's result, via page", async () => {
    const p = waitingProject()
    const server = await Serve.start(p, [], { OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "", PARLEY_MODEL: "" })
    children.push(server.child)
    const script = writeScript(p, "s.json", [
      { message: "Asking.", tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "prod", mode: "ask" } }] },
      { message: "Done with the page's note." }
    ])
    const r = parley(p, ["query", "--detach", "--new", "deploy", "--script", script, "--detached-policy", "wait"])
    expect(r.code, r.stderr).toBe(0)
    groups.push(Number(/\(pid (\d+)\)/.exec(r.stderr)![1]))
    const id = r.stdout.trim()
    await expect.poll(async () => (await server.json("/api/questions")).body.length, { timeout: 30_000 }).toBe(1)
    const browser = await chromium.launch({ executablePath: executable(), args: ["--no-sandbox"] })
    try {
      const context = await browser.newContext()
      const page = await context.newPage()
      const problems: Array<string> = []
      page.on("pageerror", (e) => problems.push(String(e)))
      await page.goto(server.url)
      await page.goto(`${server.base}/conversations/${id}`)
      await page.locator('#send select[name="when"]').selectOption("next")
      await page.locator("#send textarea").fill("use the blue one")
      await page.locator('#send button[type="submit"]').click()
      await expect
        .poll(() => page.locator("#send .q-note").first().textContent(), { timeout: 20_000 })
        .toContain(`Queued as message 1: the running turn gets it with its next request to the model.`)
      // Where to withdraw it, without a command line the page cannot get right (the server's --storage).
      expect(await page.locator("#send .q-note").first().textContent()).toContain(
        "Until then it can be withdrawn here or at a terminal: send --withdraw 1."
      )
      expect(await page.locator("#queued").textContent()).toBe("1 message queued")
      expect((await server.post(`/api/conversations/${id}/questions/a1.confirm.1`, { answer: true })).status).toBe(200)
      await expect.poll(() => persisted(p).at(-1)?.["message"], { timeout: 30_000 }).toBe("Done with the page's note.")
      const entries = persisted(p)
      const at = entries.findIndex((e) => e.type === "chat_request" && e["content"] === "use the blue one")
      expect(entries[at - 1]?.type).toBe("tool_call_response")
      const via = (entries[at]!["metadata"] as { parley_message: { via: string } }).parley_message.via
      expect(Buffer.from(via, "base64").toString("utf8")).toBe("page")
      expect(problems).toStrictEqual([])
      await context.close()
    } finally {
      await browser.close()
    }
    expect(await server.stop()).toBe(143)
  }, 120_000)

  it("Withdraw: each queued message listed (drawn by the server or added as sent) is taken back; the turn never gets it", async () => {
    const p = waitingProject()
    const server = await Serve.start(p, [], { OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "", PARLEY_MODEL: "" })
    children.push(server.child)
    const script = writeScript(p, "s.json", [
      { message: "Asking.", tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "prod", mode: "ask" } }] },
      { message: "Done, nothing else." },
      { message: "Never." }
    ])
    const r = parley(p, ["query", "--detach", "--new", "deploy", "--script", script, "--detached-policy", "wait"])
    expect(r.code, r.stderr).toBe(0)
    groups.push(Number(/\(pid (\d+)\)/.exec(r.stderr)![1]))
    const id = r.stdout.trim()
    await expect.poll(async () => (await server.json("/api/questions")).body.length, { timeout: 30_000 }).toBe(1)
    expect((await server.post(`/api/conversations/${id}/messages`, { message: "from the api" })).body.queued).toBe(1)
    const browser = await chromium.launch({ executablePath: executable(), args: ["--no-sandbox"] })
    try {
      const context = await browser.newContext()
      const page = await context.newPage()
      const problems: Array<string> = []
      page.on("pageerror", (e) => problems.push(String(e)))
      await page.goto(server.url)
      await page.goto(`${server.base}/conversations/${id}`)
      const items = page.locator("#queued-list li")
      expect(await items.allTextContents()).toStrictEqual(["Message 1 (after): from the api Withdraw "])
      await page.locator("#send textarea").fill("from the page")
      await page.locator('#send button[type="submit"]').click()
      await expect.poll(() => items.count(), { timeout: 20_000 }).toBe(2)
      expect(await page.locator("#queued").textContent()).toBe("2 messages queued")
      await page.locator('#queued-list button[data-n="1"]').click()
      await expect
        .poll(() => items.allTextContents(), { timeout: 20_000 })
        .toStrictEqual(["Message 2 (after): from the page Withdraw "])
      await page.locator('#queued-list button[data-n="2"]').click()
      await expect.poll(() => items.count(), { timeout: 20_000 }).toBe(0)
      expect(await page.locator("#queued").textContent()).toBe("")
      expect((await server.post(`/api/conversations/${id}/questions/a1.confirm.1`, { answer: true })).status).toBe(200)
      await expect.poll(() => persisted(p).at(-1)?.["message"], { timeout: 30_000 }).toBe("Done, nothing else.")
      // The run ended without another turn: nothing was left for it to deliver.
      await expect
        .poll(
          async () => (await server.json("/api/conversations")).body.find((c: { id: string }) => c.id === id)?.running,
          {
            timeout: 30_000
          }
        )
        .toBe(null)
      expect(
        persisted(p)
          .filter((e) => e.type === "chat_request")
          .map((e) => e["content"])
      ).toStrictEqual(["deploy"])
      expect(problems).toStrictEqual([])
      await context.close()
    } finally {
      await browser.close()
    }
    expect(await server.stop()).toBe(143)
  }, 120_000)
})
