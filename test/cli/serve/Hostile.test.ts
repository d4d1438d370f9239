// Every malformed request to a real `parley serve` is a 4xx with its JSON
// error and the security headers, and holds nothing: its descriptors and the
// storage's files are the same after 1,000 hostile requests as before. The
// requests found by review: a NUL in `model` (a leaked descriptor, an empty
// served-*.log and an empty 500 without CSP each), JSON nested 5,000 deep (an
// empty 500), a `model` that a child read as a flag (`--wizard`: 50 s), an id
// with a stray space taken as the conversation. And the bounds on
// connections: the cap, idle connections closed first, then the oldest
// not past its headers, headers and bodies timed (408 with the headers), answers Node writes itself with the headers.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as path from "node:path"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as Guard from "../../../src/layers/serve/Guard.ts"
import * as Limits from "../../../src/layers/serve/Limits.ts"
import { binary } from "../../support/Cli.ts"
import { exited, makeProject } from "../../support/Project.ts"
import * as Serve from "../../support/Serve.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
const sockets: Array<net.Socket> = []
afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy()
  for (const c of children.splice(0)) c.kill("SIGKILL")
})

const fds = (pid: number) => fs.readdirSync(`/proc/${pid}/fd`).length

/**
 * The server's ends of the established TCP connections to `port` (from
 * /proc/net/tcp and tcp6), with how many bytes each holds that the server has
 * not read yet: a connection whose bytes were read has been through Node's
 * HTTP parser (it parses in the read's callback).
 */
const serverEnds = (port: number): Array<{ unread: number }> =>
  ["/proc/net/tcp", "/proc/net/tcp6"].flatMap((file) =>
    (fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").slice(1) : []).flatMap((line) => {
      const [, local, remote, state, queues] = line.trim().split(/\s+/)
      if (local === undefined || remote === undefined || queues === undefined) return []
      const established = state === "01"
      const ours = Number.parseInt(local.split(":")[1]!, 16) === port
      return established && ours ? [{ unread: Number.parseInt(queues.split(":")[1]!, 16) }] : []
    })
  )

/** Every file under `dir`, relative. */
const files = (dir: string): Array<string> =>
  (fs.readdirSync(dir, { recursive: true }) as Array<string>)
    .filter((f) => fs.statSync(path.join(dir, f)).isFile())
    .sort()

interface Answer {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/** One request on a connection of its own, with any path, headers and body. */
const request = (
  port: number,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string }
): Promise<Answer> =>
  new Promise((resolve) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        agent: false,
        method: options.method ?? "GET",
        path: options.path,
        headers: options.headers
      },
      (res) => {
        let body = ""
        res.on("data", (d: Buffer) => (body += d.toString()))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
      }
    )
    req.on("error", (e) => resolve({ status: -1, headers: {}, body: String(e) }))
    req.setTimeout(20_000, () => req.destroy(new Error("timeout")))
    req.end(options.body)
  })

/** Bytes on a raw connection: what came back before the server closed it (or `ms` passed), and when. */
const rawBytes = (port: number, bytes: string | undefined, ms = 5_000) =>
  new Promise<{ text: string; ms: number }>((resolve) => {
    const t0 = Date.now()
    let text = ""
    const socket = net.connect({ host: "127.0.0.1", port }, () => bytes !== undefined && socket.write(bytes))
    const done = () => {
      clearTimeout(timer)
      socket.destroy()
      resolve({ text, ms: Date.now() - t0 })
    }
    const timer = setTimeout(done, ms)
    socket.on("data", (d: Buffer) => (text += d.toString()))
    socket.on("close", done)
    socket.on("error", done)
  })

/** A raw HTTP answer's status, headers (lower case) and body. */
const parseRaw = (text: string) => {
  const [head = "", body = ""] = text.split("\r\n\r\n", 2)
  const [status, ...lines] = head.split("\r\n")
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()])
  )
  return { status: Number(status?.split(" ")[1]), headers, body }
}

/** `n` connections that send nothing, each open once the server took it. */
const idleConnections = (port: number, n: number) =>
  Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Socket>((resolve) => {
          const s = net.connect({ host: "127.0.0.1", port }, () => resolve(s))
          s.on("error", () => undefined)
          // Read what comes (a 408), so the server's end of the connection closes this one.
          s.resume()
          sockets.push(s)
        })
    )
  )

/** Runs `jobs` with at most `bound` at once. */
const bounded = async <A>(jobs: ReadonlyArray<() => Promise<A>>, bound: number): Promise<Array<A>> => {
  const results: Array<A> = new Array(jobs.length)
  let next = 0
  const worker = async () => {
    for (let i = next++; i < jobs.length; i = next++) results[i] = await jobs[i]!()
  }
  await Promise.all(Array.from({ length: bound }, worker))
  return results
}

const deep = (n: number) => "[".repeat(n) + "]".repeat(n)

/** The hostile requests: what is sent, and the status and `error` it is answered with. */
const hostile = (auth: Record<string, string>) => {
  const json = { ...auth, "content-type": "application/json" }
  const post = (p: string, body: string) => ({ method: "POST", path: p, headers: json, body })
  const ID = "17738399468"
  const cases: Array<{ name: string; req: Parameters<typeof request>[1]; status: number; error: string }> = []
  for (const model of [
    "a\u0000b",
    "--wizard",
    "-x",
    "anthropic/--help",
    "openai/ x",
    "scripted --help",
    "x".repeat(300),
    "",
    "gpt-5"
  ]) {
    cases.push({
      name: `create with model ${JSON.stringify(model.slice(0, 20))}`,
      req: post("/api/conversations", JSON.stringify({ message: "hi", model })),
      status: 400,
      error: "BadRequest"
    })
    cases.push({
      name: `message with model ${JSON.stringify(model.slice(0, 20))}`,
      req: post(`/api/conversations/${ID}/messages`, JSON.stringify({ message: "hi", model })),
      status: 400,
      error: "BadRequest"
    })
  }
  for (const [name, body] of [
    ["an answer nested 5,000 deep", `{"answer":${deep(5000)}}`],
    ["an answer of objects nested 10,000 deep", `{"answer":${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}}`],
    ["a message nested 5,000 deep", `{"message":${deep(5000)}}`]
  ] as const) {
    const target = name.includes("message") ? "/api/conversations" : `/api/conversations/${ID}/questions/a1.confirm.1`
    cases.push({ name, req: post(target, body), status: 400, error: "BadRequest" })
  }
  const badIds = [
    "%2017738399468",
    "17738399468%20",
    "%0917738399468",
    "jp-c",
    "jp-c%2017738399468",
    "-1",
    "%00",
    "1".repeat(20),
    "--help",
    "17738399468%00"
  ]
  for (const id of badIds) {
    const at = `/api/conversations/${id}`
    cases.push({ name: `GET ${at}`, req: { path: at, headers: auth }, status: 400, error: "BadRequest" })
    cases.push({
      name: `GET ${at}/events`,
      req: { path: `${at}/events`, headers: auth },
      status: 400,
      error: "BadRequest"
    })
    for (const action of ["continue", "discard", "stop"])
      cases.push({ name: `POST ${at}/${action}`, req: post(`${at}/${action}`, "{}"), status: 400, error: "BadRequest" })
    cases.push({
      name: `POST ${at}/messages`,
      req: post(`${at}/messages`, '{"message":"hi"}'),
      status: 400,
      error: "BadRequest"
    })
    cases.push({
      name: `POST ${at}/questions/q`,
      req: post(`${at}/questions/q`, '{"answer":true}'),
      status: 400,
      error: "BadRequest"
    })
    cases.push({
      name: `page /conversations/${id}`,
      req: { path: `/conversations/${id}`, headers: auth },
      status: 400,
      error: "BadRequest"
    })
  }
  return cases
}

describe("parley serve under hostile requests", () => {
  it("1,000 hostile requests: each a 4xx with its JSON error and the security headers; descriptors and files before = after", async () => {
    const p = makeProject()
    const server = await Serve.start(p)
    children.push(server.child)
    const pid = server.child.pid!
    expect((await server.json("/api/conversations")).status).toBe(200)
    const before = { fds: fds(pid), files: files(p.storage) }
    const cases = hostile(server.auth)
    const jobs = Array.from({ length: 1000 }, (_, i) => {
      const c = cases[i % cases.length]!
      return async () => ({ c, answer: await request(server.port, c.req) })
    })
    const t0 = Date.now()
    const results = await bounded(jobs, 16)
    const wrong = results
      .filter(({ c, answer }) => {
        const body = answer.headers["content-type"]?.startsWith("application/json") ? JSON.parse(answer.body) : {}
        return (
          answer.status !== c.status ||
          body.error !== c.error ||
          typeof body.message !== "string" ||
          answer.headers["content-security-policy"] !== Guard.CSP ||
          answer.headers["x-content-type-options"] !== "nosniff"
        )
      })
      .map(({ c, answer }) => `${c.name}: ${answer.status} ${answer.body.slice(0, 200)}`)
    console.log(`[serve hostile] ${results.length} requests in ${Date.now() - t0} ms; fds before ${before.fds}`)
    expect([...new Set(wrong)]).toStrictEqual([])
    // A model that reads as a flag is refused at once, not after a child ran with it.
    const flag = hostile(server.auth).find((c) => c.name.includes('"--wizard"'))!
    const t1 = Date.now()
    expect((await request(server.port, flag.req)).status).toBe(400)
    expect(Date.now() - t1).toBeLessThan(2_000)
    // The deep body's 400 says why.
    const deepAnswer = await request(server.port, cases.find((c) => c.name.includes("answer nested"))!.req)
    expect(JSON.parse(deepAnswer.body)).toStrictEqual({
      error: "BadRequest",
      kind: "Payload",
      message: "A JSON body is nested at most 64 deep."
    })

    // Answers Node writes itself carry the headers too: not HTTP, headers over its limit.
    for (const [bytes, status] of [
      ["\u0000\u0001 not http\r\n\r\n", 400],
      [`GET / HTTP/1.1\r\nHost: x\r\nX: ${"a".repeat(20_000)}\r\n\r\n`, 431]
    ] as const) {
      const got = parseRaw((await rawBytes(server.port, bytes)).text)
      expect([got.status, got.headers["content-security-policy"], got.headers["x-content-type-options"]]).toStrictEqual(
        [status, Guard.CSP, "nosniff"]
      )
      expect(JSON.parse(got.body).error).toMatch(/^(BadRequest|HeadersTooLarge)$/)
    }

    // 300 idle connections (the default cap is above them): a normal request is still answered.
    const idle = await idleConnections(server.port, 300)
    expect((await server.json("/api/conversations")).status).toBe(200)
    for (const s of idle) s.destroy()

    let after = fds(pid)
    for (let i = 0; i < 100 && after > before.fds; i++) {
      await new Promise((res) => setTimeout(res, 100))
      after = fds(pid)
    }
    console.log(`[serve hostile] fds after ${after}`)
    expect(after).toBeLessThanOrEqual(before.fds)
    expect(files(p.storage)).toStrictEqual(before.files)
    // Nothing failed inside the server: every answer was a refusal.
    expect(server.child.output()).not.toMatch(/failed:/)
    expect(await server.stop()).toBe(143)
  })

  it("a valid model is passed as --model=…: the run starts and its refusal comes back (422), its log not left behind", async () => {
    const p = makeProject()
    const server = await Serve.start(p, [], { OPENAI_API_KEY: "", OPENAI_BASE_URL: "" })
    children.push(server.child)
    const before = files(p.storage)
    const r = await server.post("/api/conversations", { message: "--help", model: "openai/gpt-4o-mini" })
    expect(r.status).toBe(422)
    expect(r.body).toMatchObject({ error: "RunNotStarted" })
    expect(r.body.output).toMatch(/OPENAI_API_KEY is not set/)
    expect(files(p.storage)).toStrictEqual(before)
    expect(await server.stop()).toBe(143)
  })

  it("bounded connections: headers and bodies timed (408 with the headers), the cap, idle connections closed first", async () => {
    const p = makeProject()
    const server = await Serve.start(p, ["--header-timeout", "1", "--body-timeout", "2", "--max-connections", "20"])
    children.push(server.child)
    const pid = server.child.pid!
    const before = fds(pid)
    const host = `Host: 127.0.0.1:${server.port}\r\nAuthorization: ${server.auth["authorization"]}\r\n`
    const timedOut = async (bytes: string | undefined, within: number) => {
      const got = await rawBytes(server.port, bytes, 10_000)
      const answer = parseRaw(got.text)
      expect([answer.status, answer.headers["content-security-policy"], JSON.parse(answer.body).error]).toStrictEqual([
        408,
        Guard.CSP,
        "RequestTimeout"
      ])
      expect(got.ms).toBeLessThan(within)
    }
    await timedOut(undefined, 3_500) // a connection that sends nothing
    await timedOut("GET /api/conversations HTTP/1.1\r\nHost: x\r\n", 3_500) // headers that never end
    await timedOut(
      `POST /api/conversations HTTP/1.1\r\n${host}content-type: application/json\r\nContent-Length: 100\r\n\r\n{`,
      4_500
    ) // a body that never ends

    // At the cap of connections that sent nothing (not past their headers), a new one closes the oldest …
    const open = fds(pid)
    const made = Date.now()
    const idle = await idleConnections(server.port, 20)
    // All accepted by the server before the next one comes (a connect completes before the server's accept: on a
    // loaded machine it accepted the 21st before the last idle ones, and no cap was reached).
    for (const until = Date.now() + 800; fds(pid) < open + 20 && Date.now() < until; )
      await new Promise((res) => setTimeout(res, 5))
    const t0 = Date.now()
    expect((await request(server.port, { path: "/api/conversations", headers: server.auth })).status).toBe(200)
    expect(Date.now() - t0).toBeLessThan(900) // before the header timeout (1 s) closed any
    // The oldest's end reaches this side as an event of its own, maybe after the answer: waited for, but only
    // until before the header timeout (1 s after the server took it, so after `made`) could have closed it.
    await Promise.race([
      new Promise((res) => (idle[0]!.destroyed ? res(undefined) : idle[0]!.once("close", res))),
      new Promise((res) => setTimeout(res, Math.max(0, made + 950 - Date.now())))
    ])
    expect(idle.map((s) => s.destroyed)).toStrictEqual([true, ...Array(19).fill(false)])
    await Promise.all(idle.map((s) => new Promise((res) => (s.destroyed ? res(undefined) : s.once("close", res)))))

    // … but requests past their headers (a body on its way) are never closed for another: a new one is, unanswered.
    const posting = await idleConnections(server.port, 20)
    for (const s of posting)
      s.write(
        `POST /api/conversations HTTP/1.1\r\n${host}content-type: application/json\r\nContent-Length: 100\r\n\r\n{`
      )
    // Every one of the 20 read by the server (so past its headers) before the next comes: a fixed wait was too short
    // on a loaded machine.
    for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((res) => setTimeout(res, 10))) {
      const ends = serverEnds(server.port)
      if (ends.length >= 20 && ends.every((e) => e.unread === 0)) break
    }
    const ends = serverEnds(server.port)
    expect([ends.length >= 20, ends.every((e) => e.unread === 0)]).toStrictEqual([true, true])
    const refused = await rawBytes(server.port, `GET /api/conversations HTTP/1.1\r\n${host}Connection: close\r\n\r\n`)
    expect(refused.text).toBe("")
    expect(posting.filter((s) => s.destroyed)).toStrictEqual([])
    // … until the body timeout closes them.
    await Promise.all(posting.map((s) => new Promise((res) => (s.destroyed ? res(undefined) : s.once("close", res)))))
    expect((await server.json("/api/conversations")).status).toBe(200)

    // At the cap of keep-alive connections idle between requests, those are closed for the new one.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 20 })
    await Promise.all(
      Array.from(
        { length: 20 },
        () =>
          new Promise((resolve) =>
            http
              .get(
                { host: "127.0.0.1", port: server.port, path: "/api/conversations", headers: server.auth, agent },
                (res) => {
                  res.resume()
                  res.on("end", resolve)
                }
              )
              .on("error", resolve)
          )
      )
    )
    expect((await request(server.port, { path: "/api/conversations", headers: server.auth })).status).toBe(200)
    agent.destroy()

    let after = fds(pid)
    for (let i = 0; i < 50 && after > before; i++) {
      await new Promise((res) => setTimeout(res, 100))
      after = fds(pid)
    }
    expect(after).toBeLessThanOrEqual(before)
    expect(await server.stop()).toBe(143)
  })

  it("a limit flag below 1 is refused with the flag named", async () => {
    const p = makeProject()
    const child = spawn(
      process.execPath,
      [binary, "--storage", p.storage, "serve", "--port", "0", "--max-connections", "0"],
      {
        stdio: ["ignore", "pipe", "pipe"]
      }
    )
    children.push(child)
    let err = ""
    child.stderr.on("data", (d: Buffer) => (err += d.toString()))
    expect(await exited(child)).toBe(2)
    expect(err).toMatch(/--max-connections takes a whole number of at least 1, not 0/)
  })
})

describe("Guard: a defect behind it", () => {
  it.effect("is a JSON 500 with the security headers, said on stderr in one line without the request's body", () => {
    const said: Array<string> = []
    // The server's fibers say it through the Console of the scope that served.
    const console = { ...globalThis.console, error: (...xs: Array<unknown>) => void said.push(xs.join(" ")) }
    return Effect.scoped(
      Effect.gen(function* () {
        const listening = yield* Layer.build(
          NodeHttpServer.layer(Limits.httpServer(Limits.defaults), { host: "127.0.0.1", port: 0 })
        )
        const address = (yield* HttpServer.HttpServer.pipe(Effect.provideContext(listening))).address
        const port = address._tag === "UnixPathAddress" ? 0 : address.port
        const routes = Layer.mergeAll(
          HttpRouter.add("POST", "/boom", Effect.die(new Error("the route broke\nsecond line"))),
          Guard.layer({ token: "t0k", hosts: Guard.hostsFor("127.0.0.1", port) })
        )
        yield* Layer.build(
          Layer.provide(
            HttpRouter.serve(routes, { disableLogger: true, disableListenLog: true }),
            Layer.succeedContext(listening)
          )
        )
        const answer = yield* Effect.promise(() =>
          request(port, {
            method: "POST",
            path: "/boom?x=1",
            headers: { authorization: "Bearer t0k", "content-type": "application/json" },
            body: '{"answer":"hunter2"}'
          })
        )
        expect([
          answer.status,
          answer.headers["content-security-policy"],
          answer.headers["x-content-type-options"]
        ]).toStrictEqual([500, Guard.CSP, "nosniff"])
        expect(JSON.parse(answer.body)).toStrictEqual({
          error: "InternalError",
          message: "The server failed to answer this request."
        })
        expect(said).toStrictEqual(["parley serve: POST /boom failed: Error: the route broke"])
      })
    ).pipe(Effect.provideService(Console.Console, console))
  })
})
