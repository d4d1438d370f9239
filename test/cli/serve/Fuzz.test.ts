// parley serve (docs/serve.md): `parley serve` survives 1,000 malformed requests — fuzzed paths,
// methods, headers and bodies, with and without the token, plus bytes that
// are not HTTP at all — with no crash, no 5xx for a client's mistake, and no
// file descriptor left open; stopping it leaves no process and no listener.
import * as fs from "node:fs"
import * as net from "node:net"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { exited, makeProject } from "../../support/Project.ts"
import * as Serve from "../../support/Serve.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
})

/** A small seeded generator: the same 1,000 requests on every run. */
const rng = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed / 0x7fffffff
}

const fds = (pid: number) => fs.readdirSync(`/proc/${pid}/fd`).length

/** Bytes sent on a raw connection, which is then closed; resolves when the server closed it or after a second. */
const rawBytes = (port: number, bytes: Buffer) =>
  new Promise<void>((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port }, () => socket.end(bytes))
    const done = () => {
      clearTimeout(timer)
      socket.destroy()
      resolve()
    }
    const timer = setTimeout(done, 1000)
    socket.on("data", () => undefined)
    socket.on("close", done)
    socket.on("error", done)
  })

describe("parley serve under malformed requests", () => {
  it("1,000 fuzzed requests: no crash, no 5xx, no leaked descriptor; SIGTERM leaves nothing behind", async () => {
    const p = makeProject()
    const server = await Serve.start(p)
    children.push(server.child)
    const pid = server.child.pid!
    const random = rng(23)
    const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(random() * xs.length)]!
    const junk = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256)))
    const paths = [
      "/api/conversations",
      "/api/conversations/17738399468",
      "/api/conversations/17738399468/events",
      "/api/questions",
      "/api/conversations/17738399468/questions/a1.confirm.1",
      "/api/openapi.json",
      "/",
      "/conversations/17738399468",
      "/app.js",
      "/api/conversations/%00",
      "/api/conversations/%ZZ",
      "/api/../../etc/passwd",
      "/api/conversations/" + "9".repeat(5000),
      "/api/conversations/jp-c17738399468",
      "//",
      "/?token=",
      "/?token=%",
      "/api/conversations/1/questions/%2e%2e",
      "*",
      "/%C3%A9%F0%9F%98%80",
      "/%FF%FE"
    ]
    const bodies = [
      "",
      "{",
      '{"answer":',
      "null",
      "[]",
      '{"answer":true}',
      '{"answer":{}}',
      '"x"',
      '{"answer":' + "[".repeat(100_000) + "]".repeat(100_000) + "}",
      '{"answer":"' + "x".repeat(1024 * 1024 + 1) + '"}',
      "\u0000\u0001",
      '{"__proto__":{"answer":1}}'
    ]
    const headerSets = (): Record<string, string> => {
      const h: Record<string, string> =
        random() < 0.8
          ? { ...server.auth }
          : pick([
              {},
              { authorization: "Bearer" },
              { authorization: "Basic Zm9vOmJhcg==" },
              { cookie: "parley_token" },
              { cookie: "=;;=" }
            ])
      if (random() < 0.3)
        h["content-type"] = pick([
          "application/json",
          "text/plain",
          "multipart/form-data; boundary=x",
          "application/x-www-form-urlencoded",
          "application/json; charset=utf-16",
          "garbage"
        ])
      if (random() < 0.1) h["last-event-id"] = pick(["-1", "abc", "1e400", "99999999999999999999", ""])
      if (random() < 0.1) h["origin"] = pick(["null", "http://evil.example", ""])
      if (random() < 0.05) h["x-long"] = "y".repeat(8000)
      if (random() < 0.05) h["host"] = pick(["", "evil", `127.0.0.1:${server.port}`])
      if (random() < 0.05) h["content-encoding"] = pick(["gzip", "br", "deflate"])
      return h
    }
    const before = fds(pid)
    const statuses = new Map<number, number>()
    // Each request that got no answer, named (a failure says which request and what the client saw).
    const dropped: Array<string> = []
    for (let i = 0; i < 1000; i++) {
      if (i % 10 === 9) {
        // Not HTTP, or HTTP cut short.
        await rawBytes(
          server.port,
          pick([
            junk(64),
            Buffer.from("GET / HTTP/1.1\r\nHost: x\r\n"),
            Buffer.from("POST /api/questions HTTP/1.1\r\nContent-Length: 99\r\n\r\n{"),
            junk(4000)
          ])
        )
        continue
      }
      const method = pick(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "POST"])
      const body =
        method === "GET" || method === "HEAD"
          ? undefined
          : random() < 0.2
            ? junk(Math.floor(random() * 2000))
            : pick(bodies)
      const path = pick(paths)
      const headers = headerSets()
      const r = await Serve.raw(server.port, { method, path, headers, ...(body !== undefined ? { body } : {}) })
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
      if (r.status < 0)
        dropped.push(
          `#${i} ${method} ${path.slice(0, 80)} headers ${Object.keys(headers).join(",")} ` +
            `(body ${body === undefined ? "none" : `${Buffer.byteLength(body)} bytes`}): ${r.body.slice(0, 200)}`
        )
    }
    console.log(
      `[serve fuzz] statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}; fds before ${before}`
    )
    // A client's mistake is a 4xx; a dropped connection (-1) would mean the server gave up on a request.
    expect(dropped).toStrictEqual([])
    expect([...statuses.keys()].filter((s) => s >= 500)).toStrictEqual([])
    // Still serving, and every connection closed again (keep-alive ones time out after 5 s).
    expect((await server.json("/api/conversations")).status).toBe(200)
    let after = fds(pid)
    for (let i = 0; i < 100 && after > before; i++) {
      await new Promise((res) => setTimeout(res, 100))
      after = fds(pid)
    }
    console.log(`[serve fuzz] fds after ${after}`)
    expect(after).toBeLessThanOrEqual(before)
    expect(await server.stop()).toBe(143)
    expect(server.child.exitCode).toBe(143)
    const refused = await Serve.raw(server.port, { path: "/api/conversations", headers: server.auth })
    expect(refused.status).toBe(-1)
    expect(await exited(server.child)).toBe(143)
  })
})
