/**
 * The page of `parley serve` in a real browser (Debian's Chromium through
 * playwright-core, headless), against floors measured in the same run:
 *
 * - first contentful paint of a 500-event conversation's page (served by
 *   `parley serve`, live script and all) vs the same conversation's `print
 *   --format html` served as a static file by a bare `node:http` server:
 *   ≤ 1.5× for its first view since the conversation changed (loaded and
 *   drawn); a view again of the unchanged conversation (the page the server
 *   kept) is in the note; medians, fresh tab each, interleaved;
 * - an event reaches the page (the page's `EventSource` dispatches it) vs the
 *   same event reaching a plain SSE client of the same run: p99 ≤ 2×, each
 *   timed from the answer POST that makes it (`QuestionClosed`), both
 *   clients on the stream at once;
 * - the home page (`GET /`, its first 100 rows: the page never draws 10,000)
 *   over 10,000 conversations, request to last byte on a warm server, vs
 *   `conversation ls` as a whole process (start-up included, as a person at
 *   a terminal waits for it; the same pairing as `serve list`): ≤ 1.5×.
 *
 * Skipped, said so, where no Chromium is installed. Every wait is bounded.
 */
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { type Browser, type BrowserContext, chromium } from "playwright-core"
import { type Goal, median } from "./Harness.ts"
import { eventsText } from "./listing.ts"
import { interleaved, runNode } from "./Process.ts"
import { collect, project, QUICK, QUICK_SH, type Served, serve, start, stop } from "./serve.ts"
import { listingStorage } from "./whole.ts"

const repo = path.resolve(import.meta.dirname, "..")
const bin = process.env["PARLEY_BENCH_BIN"] ?? path.join(repo, "dist", "parley.mjs")

/** Chromium from the system (never a downloaded one): `$CHROMIUM`, else the usual names. */
const chromiumPath = (): string | undefined => {
  for (const c of [process.env["CHROMIUM"], "/usr/bin/chromium", "chromium", "chromium-browser"]) {
    if (c === undefined || c === "") continue
    const found = spawnSync("sh", ["-c", 'command -v "$0"', c], { encoding: "utf8" }).stdout.trim()
    if (found !== "") return found
  }
  return undefined
}

const p99 = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.99) - 1]!
const ms = (xs: ReadonlyArray<number>) => `p50 ${median(xs).toFixed(1)} ms, p99 ${p99(xs).toFixed(1)} ms`

/** Bounded polling: `check` until it gives a value, else an error naming `what`. */
const until = async <A>(what: string, check: () => Promise<A | undefined>, ms = 20_000): Promise<A> => {
  const end = Date.now() + ms
  for (;;) {
    const v = await check()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 5))
  }
}

/** A browser context signed in to `s` (its `?token=` address once: the cookie carries it from then on). */
const signedIn = async (browser: Browser, s: Served): Promise<BrowserContext> => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  const page = await context.newPage()
  await page.goto(`${s.base}/?token=${s.auth["authorization"]!.slice("Bearer ".length)}`)
  await page.close()
  return context
}

const b64 = (text: string) => Buffer.from(text).toString("base64")

/**
 * 500 events, as a working session has them: 45 turns of a question, four
 * tool calls (a file read, its ~1 KB content) and a reply (11 events each),
 * and one short turn of 5.
 */
const fiveHundred = (): string => {
  const events: Array<Record<string, unknown>> = []
  let t = 0
  const at = () =>
    `2026-03-01 ${String(10 + Math.floor(t / 3600)).padStart(2, "0")}:${String(Math.floor(t / 60) % 60).padStart(2, "0")}:${String(t++ % 60).padStart(2, "0")}.0`
  for (let turn = 0; turn < 45; turn++) {
    events.push(
      { timestamp: at(), type: "turn_start" },
      {
        timestamp: at(),
        type: "chat_request",
        content: `Question ${turn}: ${"why does the build fail here? ".repeat(4)}`
      }
    )
    for (let c = 0; c < 4; c++) {
      const id = `toolu_${turn}_${c}`
      events.push(
        {
          timestamp: at(),
          type: "tool_call_request",
          id,
          name: "fs_read_file",
          arguments: { path: b64(`src/file_${c}.rs`) }
        },
        { timestamp: at(), type: "tool_call_response", id, content: b64("fn main() {}\n".repeat(80)), is_error: false }
      )
    }
    events.push({
      timestamp: at(),
      type: "chat_response",
      message: `Answer ${turn}: ${"the **build** fails because `x` is unset. ".repeat(12)}`
    })
  }
  events.push(
    { timestamp: at(), type: "turn_start" },
    { timestamp: at(), type: "chat_request", content: "last question" },
    {
      timestamp: at(),
      type: "tool_call_request",
      id: "toolu_last",
      name: "fs_read_file",
      arguments: { path: b64("README.md") }
    },
    { timestamp: at(), type: "tool_call_response", id: "toolu_last", content: b64("# readme\n"), is_error: false },
    { timestamp: at(), type: "chat_response", message: "last answer" }
  )
  if (events.length !== 500) throw new Error(`${events.length} events`)
  return `${JSON.stringify(events, null, 2)}\n`
}

/** The first contentful paint of `url` in a fresh tab, ms from the navigation's start. */
const fcp = async (context: BrowserContext, url: string): Promise<number> => {
  const page = await context.newPage()
  try {
    await page.goto(url, { waitUntil: "load", timeout: 30_000 })
    return await page.evaluate<number>(`new Promise((resolve) => {
      const seen = () => performance.getEntriesByName("first-contentful-paint")[0]
      if (seen()) return resolve(seen().startTime)
      new PerformanceObserver(() => seen() && resolve(seen().startTime)).observe({ type: "paint", buffered: true })
    })`)
  } finally {
    await page.close()
  }
}

const paintGoal = async (root: string, browser: Browser): Promise<Goal> => {
  const storage = listingStorage(path.join(root, "paint"), 1, fiveHundred())
  const id = "17000000000"
  const file = path.join(root, "print.html")
  fs.writeFileSync(
    file,
    execFileSync(process.execPath, [bin, "--storage", storage, "conversation", "print", id, "--format", "html"])
  )
  const statics = http.createServer((_, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
    fs.createReadStream(file).pipe(res)
  })
  await new Promise<void>((r) => statics.listen(0, "127.0.0.1", r))
  const s = await serve(storage, root)
  const context = await signedIn(browser, s)
  try {
    const page = `${s.base}/conversations/${id}`
    const plain = `http://127.0.0.1:${(statics.address() as AddressInfo).port}/print.html`
    const changed: Array<number> = []
    const again: Array<number> = []
    const printed: Array<number> = []
    // The conversation's log touched before each first view: its version changes, so the server loads
    // and draws the page again. Its time is set an hour back, so the view after it finds it settled
    // (a conversation changed a moment ago is drawn afresh each time) and gets the page kept.
    const events = path.join(storage, "conversations", "17000000000-synthetic-conversation-0", "events.json")
    let touched = Date.now() / 1000 - 3600
    const touch = () => fs.utimesSync(events, touched, ++touched)
    // Warm: the server's JIT and markdown renderer, the browser's cache of /app.js.
    for (let i = 0; i < 2; i++) {
      touch()
      await fcp(context, page)
      await fcp(context, page)
      await fcp(context, plain)
    }
    for (let i = 0; i < 9; i++) {
      touch()
      changed.push(await fcp(context, page))
      again.push(await fcp(context, page))
      printed.push(await fcp(context, plain))
    }
    return {
      name: "first contentful paint of a 500-event conversation: its page from parley serve (its first view since the conversation changed) vs its print --format html as a static file",
      subject: { name: "parley serve's page, loaded and drawn (median of 9)", medianMs: median(changed) },
      floor: { name: "print --format html, static (median of 9)", medianMs: median(printed) },
      maxRatio: 1.5,
      note:
        `page ${(fs.statSync(file).size / 1024).toFixed(0)} KB printed; fresh tab each, interleaved, Chromium headless; ` +
        `viewed again unchanged (the page the server kept): ${median(again).toFixed(0)} ms, ` +
        `${(median(again) / median(printed)).toFixed(2)}× the static file`
    }
  } finally {
    await context.close()
    await stop(s)
    await new Promise((r) => statics.close(r))
  }
}

/** The page records when its `EventSource` dispatches each `QuestionClosed` (before the page's own handler runs). */
const ARRIVALS = `(() => {
  const Real = window.EventSource
  window.__arrived = {}
  function Timed(url, options) {
    const source = new Real(url, options)
    source.addEventListener("message", (m) => {
      const e = JSON.parse(m.data)
      if (e._tag === "QuestionClosed") window.__arrived[e.inquiry_id] = performance.timeOrigin + performance.now()
    })
    return source
  }
  Object.assign(Timed, { CONNECTING: 0, OPEN: 1, CLOSED: 2 })
  window.EventSource = Timed
})()`

const eventGoal = async (root: string, browser: Browser): Promise<Goal> => {
  const dir = path.join(root, "events")
  fs.mkdirSync(dir)
  // A turn takes at most 100 steps: 80 questions, one a step.
  const n = 80
  const steps = [
    ...Array.from({ length: n }, (_, i) => ({
      message: `Step ${i}.`,
      tool_calls: [{ id: `q${i}`, name: "quick", arguments: { name: `q${i}` } }]
    })),
    { message: "Done." }
  ]
  const p = project(dir, steps)
  fs.appendFileSync(path.join(p.storage, "config.toml"), QUICK)
  fs.writeFileSync(path.join(dir, "quick.sh"), QUICK_SH)
  const s = await serve(p.storage, dir, { PARLEY_SCRIPT: p.script })
  const context = await signedIn(browser, s)
  try {
    await context.addInitScript(ARRIVALS)
    const id = await start(s)
    const opened = new Map<string, string>()
    const closedAt = new Map<string, number>()
    const stream = await collect(`${s.base}/api/conversations/${id}/events`, s.auth, (e) => {
      if (e._tag === "QuestionOpened") opened.set((e["call"] as { id: string }).id, e["inquiry_id"] as string)
      if (e._tag === "QuestionClosed")
        closedAt.set(e["inquiry_id"] as string, performance.timeOrigin + performance.now())
    })
    const page = await context.newPage()
    await page.goto(`${s.base}/conversations/${id}`)
    const toPage: Array<number> = []
    const toClient: Array<number> = []
    for (let i = 0; i < n; i++) {
      const inquiry = await until(`question ${i}`, async () => opened.get(`q${i}`))
      // The page has the question too (its form is drawn) before the answer is sent.
      await page.locator(`form.question[data-inquiry="${inquiry}"]`).waitFor({ timeout: 20_000 })
      const sent = performance.timeOrigin + performance.now()
      const res = await fetch(`${s.base}/api/conversations/${id}/questions/${inquiry}`, {
        method: "POST",
        headers: { ...s.auth, "content-type": "application/json" },
        body: JSON.stringify({ answer: true })
      })
      if (res.status !== 200) throw new Error(`answer ${inquiry}: ${res.status} ${await res.text()}`)
      const atClient = await until(`the client's ${inquiry}`, async () => closedAt.get(inquiry))
      const atPage = await until(`the page's ${inquiry}`, () =>
        page.evaluate<number | undefined>(`window.__arrived[${JSON.stringify(inquiry)}]`)
      )
      toClient.push(atClient - sent)
      toPage.push(atPage - sent)
    }
    await stream.done
    return {
      name: `an event reaches the page (its EventSource) vs the same event reaching an SSE client, p99 over ${n} answers (answer POST → QuestionClosed)`,
      subject: { name: `the page (${ms(toPage)})`, medianMs: p99(toPage) },
      floor: { name: `an SSE client (${ms(toClient)})`, medianMs: p99(toClient) },
      maxRatio: 2
    }
  } finally {
    await context.close()
    await stop(s)
  }
}

const homeGoal = async (root: string): Promise<Goal> => {
  const storage = listingStorage(path.join(root, "home"), 10_000, eventsText(1, 20_000))
  runNode([bin, "--storage", storage, "conversation", "ls"]) // the index, warm for both
  const s = await serve(storage, root)
  const get = async () => {
    const t0 = performance.now()
    const body = await (await fetch(`${s.base}/`, { headers: s.auth })).text()
    const rows = body.split("<tr data-id=").length - 1
    if (rows !== 100) throw new Error(`${rows} rows on the home page`)
    return performance.now() - t0
  }
  const home: Array<number> = []
  try {
    for (let i = 0; i < 2; i++) await get()
    for (let i = 0; i < 7; i++) home.push(await get())
  } finally {
    await stop(s)
  }
  const [ls] = interleaved([{ run: () => runNode([bin, "--storage", storage, "conversation", "ls"]) }], 7)
  return {
    name: "the home page over 10,000 conversations (GET /, warm index, its first 100 rows) vs conversation ls, whole process",
    subject: { name: "GET / (request to last byte)", medianMs: median(home) },
    floor: { name: "parley conversation ls", medianMs: ls!.ms },
    maxRatio: 1.5
  }
}

export const run = async (): Promise<ReadonlyArray<Goal>> => {
  const executablePath = chromiumPath()
  if (executablePath === undefined) {
    console.log("  skipped: no Chromium (install Debian's chromium, or set $CHROMIUM)")
    return []
  }
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-page-"))
  const browser = await chromium.launch({ executablePath, args: ["--no-sandbox"] })
  try {
    // `npm run bench -- page paint` (or `events`, `home`) runs one case.
    const only = process.argv[3]
    const goals: Array<Goal> = []
    if (only === undefined || only === "paint") goals.push(await paintGoal(root, browser))
    if (only === undefined || only === "events") goals.push(await eventGoal(root, browser))
    if (only === undefined || only === "home") goals.push(await homeGoal(root))
    return goals
  } finally {
    await browser.close()
    fs.rmSync(root, { recursive: true, force: true })
  }
}
