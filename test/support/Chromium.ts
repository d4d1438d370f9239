/**
 * Headless Chromium (Debian's `chromium`, never a downloaded browser) driven
 * through the DevTools protocol over `--remote-debugging-pipe`: JSON messages
 * separated by NUL on file descriptors 3 (to the browser) and 4 (from it), so
 * no WebSocket client is needed. Used by the HTML viewer tests (docs/cli.md#viewing-a-conversation-as-a-page) to
 * open a page, read its DOM, see what it tried to load, and take
 * screenshots.
 *
 * The browser runs in its own process group, with its own throw-away profile;
 * `close()` asks it to quit, then ends the group, so no process is left.
 *
 * @example
 * ```ts
 * import * as Chromium from "../../support/Chromium.ts"
 * const browser = await Chromium.launch()
 * try {
 *   const page = await browser.open("file:///tmp/page.html")
 *   await page.evaluate<number>("document.querySelectorAll('details').length")
 * } finally {
 *   await browser.close()
 * }
 * ```
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Readable, Writable } from "node:stream"

/** The Chromium binary: `$CHROMIUM`, else the first of the usual names that runs. */
export const chromiumBinary: string | undefined = (() => {
  const candidates = [process.env["CHROMIUM"], "chromium", "chromium-browser", "/usr/bin/chromium", "google-chrome"]
  for (const c of candidates) {
    if (c === undefined || c === "") continue
    const r = spawnSync(c, ["--version"], { encoding: "utf8", timeout: 20_000 })
    if (r.status === 0 && /chrom/i.test(r.stdout)) return c
  }
  return undefined
})()

export const available = chromiumBinary !== undefined

/** Why the browser tests are skipped, for the skip message. */
export const missing =
  "Chromium not found (install Debian's `chromium`: apt-get update && apt-get install -y chromium; or set $CHROMIUM)"

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [k: string]: Json }

interface Message {
  readonly id?: number
  readonly method?: string
  readonly params?: Record<string, unknown>
  readonly result?: Record<string, unknown>
  readonly error?: { readonly message: string }
  readonly sessionId?: string
}

/** One tab. */
export interface Page {
  /** Every URL the page asked the network stack for, in order (the page itself included). */
  readonly requests: ReadonlyArray<string>
  /** Evaluates `expression` in the page and returns its JSON value. */
  readonly evaluate: <A>(expression: string) => Promise<A>
  /** Sends any DevTools command to this page. */
  readonly send: (method: string, params?: Record<string, Json>) => Promise<Record<string, unknown>>
  /** Writes a PNG of the full page (or of the viewport) to `file`. */
  readonly screenshot: (file: string, options?: { readonly fullPage?: boolean }) => Promise<void>
}

export interface Browser {
  readonly open: (
    url: string,
    options?: { readonly width?: number; readonly height?: number; readonly dark?: boolean; readonly mobile?: boolean }
  ) => Promise<Page>
  readonly close: () => Promise<void>
}

const connection = (child: ChildProcess) => {
  const input = child.stdio[3] as Writable
  const output = child.stdio[4] as Readable
  let nextId = 1
  const pending = new Map<number, { resolve: (r: Record<string, unknown>) => void; reject: (e: Error) => void }>()
  const listeners: Array<(m: Message) => void> = []
  let buffer = ""
  output.setEncoding("utf8")
  output.on("data", (chunk: string) => {
    buffer += chunk
    for (let end = buffer.indexOf("\0"); end >= 0; end = buffer.indexOf("\0")) {
      const message = JSON.parse(buffer.slice(0, end)) as Message
      buffer = buffer.slice(end + 1)
      if (message.id !== undefined) {
        const p = pending.get(message.id)
        pending.delete(message.id)
        if (message.error !== undefined) p?.reject(new Error(message.error.message))
        else p?.resolve(message.result ?? {})
      } else for (const l of listeners) l(message)
    }
  })
  const send = (method: string, params: Record<string, Json> = {}, sessionId?: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = nextId++
      pending.set(id, { resolve, reject })
      input.write(JSON.stringify({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) }) + "\0")
    })
  return { send, listen: (l: (m: Message) => void) => listeners.push(l) }
}

const openPage = async (
  conn: ReturnType<typeof connection>,
  url: string,
  options: Parameters<Browser["open"]>[1] = {}
): Promise<Page> => {
  const { targetId } = (await conn.send("Target.createTarget", { url: "about:blank" })) as { targetId: string }
  const { sessionId } = (await conn.send("Target.attachToTarget", { targetId, flatten: true })) as { sessionId: string }
  const send = (method: string, params: Record<string, Json> = {}) => conn.send(method, params, sessionId)
  const requests: Array<string> = []
  let loaded: () => void = () => {}
  const load = new Promise<void>((resolve) => (loaded = resolve))
  conn.listen((m) => {
    if (m.sessionId !== sessionId) return
    if (m.method === "Network.requestWillBeSent") requests.push(String((m.params!["request"] as { url: string }).url))
    if (m.method === "Page.loadEventFired") loaded()
  })
  await send("Page.enable")
  await send("Network.enable")
  await send("Emulation.setDeviceMetricsOverride", {
    width: options.width ?? 1000,
    height: options.height ?? 1400,
    deviceScaleFactor: 1,
    mobile: options.mobile ?? false
  })
  await send("Emulation.setEmulatedMedia", {
    features: [{ name: "prefers-color-scheme", value: options.dark === true ? "dark" : "light" }]
  })
  await send("Page.navigate", { url })
  await load
  const evaluate = async <A>(expression: string): Promise<A> => {
    const r = (await send("Runtime.evaluate", { expression, returnByValue: true })) as {
      result: { value: A }
      exceptionDetails?: { text: string }
    }
    if (r.exceptionDetails !== undefined)
      throw new Error(`evaluate failed: ${r.exceptionDetails.text} in ${expression}`)
    return r.result.value
  }
  // The load event seen may be about:blank's (the new tab's own, when it lands after Page.enable):
  // wait for the page asked for to be the document, fully loaded.
  for (
    let waited = 0;
    (await evaluate<string>(`document.readyState === "complete" ? location.href : ""`)) !== url;
    waited += 20
  ) {
    if (waited > 15_000) throw new Error(`${url} did not finish loading in 15 s`)
    await new Promise((r) => setTimeout(r, 20))
  }
  const screenshot = async (file: string, shot: { readonly fullPage?: boolean } = {}) => {
    const { data } = (await send("Page.captureScreenshot", {
      format: "png",
      captureBeyondViewport: shot.fullPage ?? false
    })) as { data: string }
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, Buffer.from(data, "base64"))
  }
  return { requests, evaluate, send, screenshot }
}

/** Starts a headless browser with a fresh profile. */
export const launch = async (): Promise<Browser> => {
  if (chromiumBinary === undefined) throw new Error(missing)
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "parley-chromium-"))
  const child = spawn(
    chromiumBinary,
    [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-extensions",
      "--disable-background-networking",
      "--disable-sync",
      "--mute-audio",
      "--hide-scrollbars",
      `--user-data-dir=${profile}`,
      "--remote-debugging-pipe",
      "about:blank"
    ],
    { stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"], detached: true }
  )
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const conn = connection(child)
  await conn.send("Browser.getVersion")
  const close = async () => {
    await Promise.race([conn.send("Browser.close").catch(() => {}), exited, new Promise((r) => setTimeout(r, 5_000))])
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))])
    try {
      process.kill(-child.pid!, "SIGKILL") // the browser's helpers, should any outlive it
    } catch {
      // already gone
    }
    fs.rmSync(profile, { recursive: true, force: true })
  }
  return { open: (url, options) => openPage(conn, url, options), close }
}
