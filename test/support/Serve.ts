/**
 * `parley serve` for tests (docs/serve.md): starts the built binary on a free
 * port, reads the address and token from its first line, and speaks to it
 * with `fetch` and raw `node:http` requests (for headers fetch will not
 * send: a foreign `Host`), plus a small SSE reader.
 *
 * @example
 * ```ts
 * import * as Serve from "../../support/Serve.ts"
 * const server = await Serve.start(p)
 * const rows = await server.json("/api/conversations")
 * await server.stop()
 * ```
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as http from "node:http"
import { binary } from "./Cli.ts"
import { exited, type Project, waitFor } from "./Project.ts"

export interface Server {
  readonly child: ChildProcess & { output: () => string }
  readonly base: string
  readonly port: number
  readonly token: string
  readonly url: string
  readonly auth: Record<string, string>
  /** A GET with the token; the parsed JSON body and the status. */
  readonly json: (path: string) => Promise<{ status: number; body: any }>
  /** A POST of `body` (a string as given, anything else as JSON) with the token. */
  readonly post: (
    path: string,
    body: unknown,
    headers?: Record<string, string>
  ) => Promise<{ status: number; body: any }>
  /** SIGTERM, then its exit code. */
  readonly stop: () => Promise<number | null>
}

/** Starts `parley serve --port 0` for project `p` (with `env` added to this process's environment). */
export const start = async (
  p: Project,
  args: ReadonlyArray<string> = [],
  env: Record<string, string> = {}
): Promise<Server> => {
  const spawned = spawn(process.execPath, [binary, "--storage", p.storage, "serve", "--port", "0", ...args], {
    cwd: p.root,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PARLEY_STORAGE: undefined, PARLEY_SCRIPT: undefined, ...env }
  })
  let out = ""
  spawned.stdout!.on("data", (d: Buffer) => (out += d.toString()))
  spawned.stderr!.on("data", (d: Buffer) => (out += d.toString()))
  const child = Object.assign(spawned, { output: () => out })
  await waitFor("the server's address", () => /\?token=[0-9a-f]+\n/.test(child.output()), 20_000)
  const url = /^(http:\/\/\S+)\n/m.exec(child.output())![1]!
  const parsed = new URL(url)
  const token = parsed.searchParams.get("token")!
  const base = `${parsed.protocol}//${parsed.host}`
  const auth = { authorization: `Bearer ${token}` }
  const json = async (path: string) => {
    const r = await fetch(base + path, { headers: auth })
    const text = await r.text()
    return { status: r.status, body: text === "" ? undefined : JSON.parse(text) }
  }
  const post = async (path: string, body: unknown, headers: Record<string, string> = auth) => {
    const r = await fetch(base + path, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body)
    })
    const text = await r.text()
    return { status: r.status, body: text === "" ? undefined : JSON.parse(text) }
  }
  const stop = async () => {
    child.kill("SIGTERM")
    return exited(child)
  }
  return { child, base, port: Number(parsed.port), token, url, auth, json, post, stop }
}

/** A raw request (any headers, any body), its status and body; never rejects on a server's odd answer. */
export const raw = (
  port: number,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer }
): Promise<{ status: number; body: string }> =>
  new Promise((resolve) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        agent: false,
        method: options.method ?? "GET",
        path: options.path,
        headers: options.headers ?? {},
        setHost: !(options.headers !== undefined && "host" in options.headers)
      },
      (res) => {
        let body = ""
        res.on("data", (d: Buffer) => (body += d.toString()))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
        res.on("error", () => resolve({ status: res.statusCode ?? -1, body }))
      }
    )
    req.on("error", (e: NodeJS.ErrnoException) =>
      resolve({ status: -1, body: `${String(e)} (${e.code ?? "no code"})` })
    )
    // Longer than a run may take to start (`Runs.ts` READY_MS, 20 s): a call that starts one waits for it.
    req.setTimeout(30_000, () => req.destroy(new Error("timeout")))
    if (options.body !== undefined) req.write(options.body)
    req.end()
  })

/** One SSE frame. */
export interface Frame {
  readonly id?: string
  readonly event?: string
  readonly data: string
}

/** An open SSE stream: its frames as they come (bounded waits), and how to drop it. */
export const sse = async (url: string, headers: Record<string, string>) => {
  const ctrl = new AbortController()
  const res = await fetch(url, { headers: { ...headers, accept: "text/event-stream" }, signal: ctrl.signal })
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buf = ""
  let ended = false
  const frame = async (): Promise<Frame | undefined> => {
    for (;;) {
      const end = buf.indexOf("\n\n")
      if (end >= 0) {
        const text = buf.slice(0, end)
        buf = buf.slice(end + 2)
        const fields: Record<string, string> = {}
        for (const line of text.split("\n")) {
          if (line.startsWith(":")) continue
          const at = line.indexOf(":")
          const key = at < 0 ? line : line.slice(0, at)
          const value = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "")
          fields[key] = key === "data" && fields["data"] !== undefined ? `${fields["data"]}\n${value}` : value
        }
        if (fields["data"] === undefined) continue
        return fields as unknown as Frame
      }
      if (ended) return undefined
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }))
      if (done) ended = true
      else buf += value
    }
  }
  /** The next frame, or undefined when the stream ended; fails after `ms`. */
  const next = (ms = 20_000) =>
    Promise.race([
      frame(),
      new Promise<never>((_, rej) => setTimeout(() => rej(new Error(`no SSE frame in ${ms} ms`)), ms))
    ])
  return { res, next, close: () => ctrl.abort() }
}
