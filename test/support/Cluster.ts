/**
 * A parley cluster for tests and the bench (docs/cluster.md): a project directory
 * whose config points the OpenAI provider at a stateless fake model
 * (`ToolModel.ts`: each conversation's turn calls the `deferrable` tool,
 * which asks one boolean question, then says "Done"), questions that wait
 * for an answer (`detached = "wait"`), and `parley serve --cluster` runners
 * as child processes on one PostgreSQL database.
 *
 * @example
 * ```ts
 * const cluster = await Cluster.project(pgUrl)
 * const r = await cluster.runner()
 * await r.post("/api/conversations", { message: "deploy c1" })
 * await cluster.stop()
 * ```
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { binary } from "./Cli.ts"
import { tempDir } from "./Fixtures.ts"
import { afterAll, afterEach, beforeAll } from "@effect/vitest"
import { freePort, freshDatabase, type PgServer, pgSkip, startPg } from "./Pg.ts"
import { addDeferrable, WAITING } from "./Project.ts"
import * as ToolModel from "./ToolModel.ts"

/** At least 32 characters: `serve --cluster` refuses a shorter token. */
export const TOKEN = "cluster-test-token-0123456789abcdef"

export interface Runner {
  readonly child: ChildProcess
  readonly port: number
  readonly pid: number
  readonly base: string
  /** stdout and stderr so far. */
  readonly output: () => string
  readonly json: (path: string, timeoutMs?: number) => Promise<{ status: number; body: any }>
  readonly post: (path: string, body: unknown, timeoutMs?: number) => Promise<{ status: number; body: any }>
  readonly del: (path: string, timeoutMs?: number) => Promise<{ status: number; body: any }>
}

export interface Cluster {
  readonly root: string
  readonly url: string
  readonly model: ToolModel.ToolModel
  readonly runners: Array<Runner>
  /** Starts one more runner (on `port`, or a free one; `args` after `serve --cluster`) and waits for its first two lines. */
  readonly runner: (port?: number, args?: ReadonlyArray<string>) => Promise<Runner>
  /** `kill -9` of a runner; resolves once it is gone. */
  readonly kill: (r: Runner) => Promise<void>
  /** Every runner killed, the model closed, the directory removed. */
  readonly stop: () => Promise<void>
  /** How many times the tool of conversation `name` acted (lines of its effects file). */
  readonly effects: (name: string) => number
}

const gone = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()))

/**
 * Whether a GET failed on a kept-alive connection the runner had closed: a test that blocks its event loop
 * (`runParley` is `spawnSync`) past the server's keep-alive timeout (5 s) then sends on a socket whose
 * close it has not read yet ("other side closed"). A GET is safe to send again, so it is, once.
 */
const staleConnection = (method: string, e: unknown): boolean =>
  method === "GET" && (e as { cause?: { code?: string } })?.cause?.code === "UND_ERR_SOCKET"

const request = async (
  base: string,
  method: string,
  p: string,
  body: unknown,
  timeoutMs: number
): Promise<{ status: number; body: any }> => {
  // A failure names the request and the runner: a bare "The operation was aborted due to timeout" (an
  // AbortSignal's DOMException has no useful stack) did not say which of a test's requests timed out.
  const named = (e: unknown) => new Error(`${method} ${base}${p} (bounded at ${timeoutMs} ms): ${e}`, { cause: e })
  try {
    return await requestOnce(base, method, p, body, timeoutMs)
  } catch (e) {
    if (!staleConnection(method, e)) throw named(e)
    return requestOnce(base, method, p, body, timeoutMs).catch((again) => Promise.reject(named(again)))
  }
}

const requestOnce = async (base: string, method: string, p: string, body: unknown, timeoutMs: number) => {
  const r = await fetch(base + p, {
    method,
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(timeoutMs)
  })
  const text = await r.text()
  return { status: r.status, body: text === "" ? undefined : JSON.parse(text) }
}

/** An SSE stream of a runner: the `data:` of each event so far, parsed; `done` once the server ended it. */
export interface Sse {
  readonly status: number
  readonly events: Array<{ _tag: string } & Record<string, unknown>>
  readonly done: Promise<void>
  readonly close: () => void
}

/** Opens `GET path` as an event stream with the cluster's token (bounded: `timeoutMs`). */
export const sse = async (base: string, p: string, timeoutMs = 60_000): Promise<Sse> => {
  const abort = new AbortController()
  const timer = setTimeout(() => abort.abort(), timeoutMs)
  const r = await fetch(base + p, { headers: { authorization: `Bearer ${TOKEN}` }, signal: abort.signal })
  const events: Sse["events"] = []
  const read = async () => {
    if (r.body === null) return
    let buffer = ""
    const decoder = new TextDecoder()
    try {
      for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true })
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const data = buffer
            .slice(0, end)
            .split("\n")
            .filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5).trim())
            .join("\n")
          buffer = buffer.slice(end + 2)
          if (data !== "") events.push(JSON.parse(data))
        }
      }
    } catch {
      // closed by us, or the timeout
    } finally {
      clearTimeout(timer)
    }
  }
  return { status: r.status, events, done: read(), close: () => abort.abort() }
}

/** A project on database `url` with the fake model, the deferrable tool and `detached = "wait"`. */
export const project = async (
  url: string,
  env: Record<string, string> = {},
  bin: string = binary,
  /** The interpreter the tool runs with (default `python3` from PATH). */
  python = "python3",
  /** The tool's config and the detached policy (default: the deferrable tool, questions wait). */
  tools: string = WAITING
): Promise<Cluster> => {
  const root = tempDir("parley-cluster-")
  const model = await ToolModel.start()
  fs.mkdirSync(path.join(root, ".parley"))
  addDeferrable(root)
  fs.writeFileSync(
    path.join(root, ".parley", "config.toml"),
    `
[assistant]
model = "openai/tool-model"

[providers.openai]
base_url = "${model.baseUrl}"
${tools.replace('command = "python3 ', `command = "${python} `)}`
  )
  const runners: Array<Runner> = []
  // A free port found by binding 0 is free only until something else takes it: another test's client
  // connection gets its local port from the same range. A runner that lost its port says so (EADDRINUSE):
  // one chosen here is chosen again, one the test asked for is the test's.
  const runner = async (port?: number, args: ReadonlyArray<string> = []): Promise<Runner> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await start(port ?? (await freePort()), args)
      } catch (e) {
        if (port !== undefined || attempt >= 3 || !String(e).includes("EADDRINUSE")) throw e
      }
    }
  }
  const start = async (http: number, args: ReadonlyArray<string>): Promise<Runner> => {
    const argv = [bin, "--storage", url, "serve", "--cluster", "--port", String(http), ...args]
    const child = spawn(process.execPath, argv, {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        PARLEY_STORAGE: undefined,
        PARLEY_SCRIPT: undefined,
        PARLEY_TOKEN: TOKEN,
        OPENAI_API_KEY: "sk-test",
        ...env
      }
    })
    let out = ""
    child.stdout!.on("data", (d: Buffer) => (out += d.toString()))
    child.stderr!.on("data", (d: Buffer) => (out += d.toString()))
    const deadline = Date.now() + 60_000
    while (!/^runner \S+ \(cluster of \d+ runners?\)$/m.test(out)) {
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill("SIGKILL")
        throw new Error(`runner on ${http} did not start:\n${out}`)
      }
      await new Promise((r) => setTimeout(r, 50))
    }
    if (process.env["PARLEY_CLUSTER_DEBUG"] !== undefined)
      child.stderr!.on("data", (d: Buffer) => process.stderr.write(d))
    const base = `http://127.0.0.1:${http}`
    const r: Runner = {
      child,
      port: http,
      pid: child.pid!,
      base,
      output: () => out,
      json: (p, t = 30_000) => request(base, "GET", p, undefined, t),
      post: (p, b, t = 30_000) => request(base, "POST", p, b, t),
      del: (p, t = 30_000) => request(base, "DELETE", p, undefined, t)
    }
    runners.push(r)
    return r
  }
  const kill = async (r: Runner) => {
    r.child.kill("SIGKILL")
    await gone(r.child)
  }
  return {
    root,
    url,
    model,
    runners,
    runner,
    kill,
    stop: async () => {
      await Promise.all(runners.map(kill))
      await model.close()
      fs.rmSync(root, { recursive: true, force: true })
    },
    effects: (name) => {
      const file = path.join(root, `${name}.effects`)
      return fs.existsSync(file)
        ? fs
            .readFileSync(file, "utf8")
            .split("\n")
            .filter((l) => l !== "").length
        : 0
    }
  }
}

/**
 * All 60 shards held by `count` runners, each some, the split unchanged for a second (four assignment
 * refreshes): a split that still moves would move a turn's shard after the test chose its owner.
 */
export const settled = async (runner: Runner, count: number): Promise<void> => {
  let last = ""
  let since = Date.now()
  const deadline = Date.now() + 60_000
  for (;;) {
    const shards = ((await runner.json("/api/cluster")).body.runners as Array<{ shards: number }>).map((r) => r.shards)
    const split = shards.length === count && shards.every((n) => n > 0) && shards.reduce((a, b) => a + b, 0) === 60
    const now = split ? shards.join("/") : ""
    if (now === "" || now !== last) {
      last = now
      since = Date.now()
    } else if (Date.now() - since >= 1_000) return
    if (Date.now() > deadline) throw new Error(`the shards did not settle over ${count} runners: ${shards.join("/")}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/**
 * For a test file: one PostgreSQL server for its tests (none when `pgSkip` says why not), and each
 * test's clusters stopped after it. `cluster()` makes a project on a fresh database of that server.
 */
export const perTest = () => {
  let pg: PgServer | undefined
  const made: Array<Cluster> = []
  beforeAll(async () => {
    if (pgSkip === undefined) pg = await startPg()
  }, 120_000)
  afterAll(() => {
    pg?.stop()
  })
  afterEach(async () => {
    await Promise.all(made.splice(0).map((c) => c.stop()))
  })
  return {
    cluster: async (): Promise<Cluster> => {
      const cluster = await project(freshDatabase(pg!))
      made.push(cluster)
      return cluster
    }
  }
}
