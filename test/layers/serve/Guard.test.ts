// parley serve (docs/serve.md) "Security": what `parley serve` checks before any route, found by
// the review: the Host rule in every form a browser sends (a default port is
// left out, names are case-insensitive, IPv6 in brackets), and the answers
// that bypassed the guard's headers and JSON (an unknown path, a body over
// 1 MiB), the token redirect that could leave the server (`//host`), a 400
// that repeated the body it refused.
import * as http from "node:http"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Guard from "../../../src/layers/serve/Guard.ts"
import { makeProject } from "../../support/Project.ts"
import * as Serve from "../../support/Serve.ts"

describe("Guard.hostsFor: the Host headers a server answers (DNS rebinding)", () => {
  it("loopback: its address, localhost and [::1] at its port, any case; a default port may be left out; nothing else", () => {
    const at = Guard.hostsFor("127.0.0.1", 3141)
    for (const h of ["127.0.0.1:3141", "localhost:3141", "LOCALHOST:3141", "[::1]:3141"])
      expect([h, at(h)]).toStrictEqual([h, true])
    for (const h of [
      undefined,
      "",
      "127.0.0.1",
      "localhost",
      "127.0.0.1:80",
      "127.0.0.1:31410",
      "evil.example:3141",
      "localhost.evil.example:3141",
      "[::1]",
      "::1:3141",
      "127.0.0.1:3141:3141",
      "127.0.0.2:3141"
    ]) {
      expect([h, at(h)]).toStrictEqual([h, false])
    }
    const eighty = Guard.hostsFor("127.0.0.1", 80)
    for (const h of ["127.0.0.1", "localhost", "[::1]", "127.0.0.1:80", "localhost:80"])
      expect([h, eighty(h)]).toStrictEqual([h, true])
    expect(eighty("evil.example")).toBe(false)
  })

  it("IPv6: bound to ::1 or a global address, the bracketed form; bound to :: or 0.0.0.0, any IP literal and localhost, never a name", () => {
    const v6 = Guard.hostsFor("::1", 3141)
    expect([v6("[::1]:3141"), v6("localhost:3141"), v6("::1:3141"), v6("[::1]")]).toStrictEqual([
      true,
      true,
      false,
      false
    ])
    const global = Guard.hostsFor("2001:db8::5", 3141)
    expect([
      global("[2001:db8::5]:3141"),
      global("[2001:DB8::5]:3141"),
      global("localhost:3141"),
      global("[::1]:3141")
    ]).toStrictEqual([true, true, false, false])
    for (const wildcard of ["0.0.0.0", "::"]) {
      const any = Guard.hostsFor(wildcard, 3141)
      for (const h of ["192.168.1.5:3141", "[fe80::1]:3141", "localhost:3141", "0.0.0.0:3141"])
        expect([wildcard, h, any(h)]).toStrictEqual([wildcard, h, true])
      for (const h of [
        "evil.example:3141",
        "192.168.1.5:80",
        "192.168.1.5",
        "1.2.3.4.evil.example:3141",
        "[fe80::1%25eth0]:3141"
      ])
        expect([wildcard, h, any(h)]).toStrictEqual([wildcard, h, false])
    }
    const named = Guard.hostsFor("mybox.local", 3141)
    expect([named("mybox.local:3141"), named("MyBox.Local:3141"), named("evil.example:3141")]).toStrictEqual([
      true,
      true,
      false
    ])
  })
})

/** A request on a connection of its own: status, the headers looked at, body. */
const rawWithHeaders = (
  port: number,
  options: { method: string; path: string; headers: Record<string, string>; body: string }
) =>
  new Promise<{
    status: number
    csp: string | undefined
    type: string | undefined
    connection: string | undefined
    body: string
  }>((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port, agent: false, method: options.method, path: options.path, headers: options.headers },
      (res) => {
        let body = ""
        res.on("data", (d: Buffer) => (body += d.toString()))
        res.on("end", () =>
          resolve({
            status: res.statusCode!,
            csp: res.headers["content-security-policy"] as string | undefined,
            type: res.headers["content-type"],
            connection: String(res.headers["connection"]),
            body
          })
        )
      }
    )
    req.on("error", reject)
    req.end(options.body)
  })

describe("parley serve: answers that bypassed the guard", () => {
  const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
  afterEach(() => {
    for (const c of children.splice(0)) c.kill("SIGKILL")
  })

  it("an unknown path and a body over 1 MiB: JSON errors with the security headers; the token redirect stays on this server; a 400 does not repeat the body", async () => {
    const server = await Serve.start(makeProject())
    children.push(server.child)
    const headersOf = async (path: string, init: RequestInit = {}) => {
      const r = await fetch(server.base + path, {
        ...init,
        headers: { ...server.auth, ...init.headers },
        redirect: "manual"
      })
      return {
        status: r.status,
        csp: r.headers.get("content-security-policy"),
        type: r.headers.get("content-type"),
        location: r.headers.get("location"),
        body: await r.text()
      }
    }
    expect(await headersOf("/nothing/here")).toStrictEqual({
      status: 404,
      csp: Guard.CSP,
      type: "application/json",
      location: null,
      body: JSON.stringify({ error: "NotFound", message: "Nothing is at /nothing/here." })
    })
    expect(await headersOf("/api/questions", { method: "DELETE" })).toMatchObject({
      status: 404,
      csp: Guard.CSP,
      type: "application/json"
    })
    // On a connection of its own: the server closes it after a 413 (the rest of the body is not read).
    const big = await rawWithHeaders(server.port, {
      method: "POST",
      path: "/api/conversations/17738399468/questions/a1.confirm.1",
      headers: { ...server.auth, "content-type": "application/json" },
      body: JSON.stringify({ answer: "x".repeat(Guard.MAX_BODY_BYTES) })
    })
    expect(big).toStrictEqual({
      status: 413,
      csp: Guard.CSP,
      type: "application/json",
      connection: "close",
      body: JSON.stringify({ error: "PayloadTooLarge", message: "A request body is at most 1 MiB." })
    })
    // Exactly 1 MiB is taken (then refused for what it says, not for its size).
    const fits = JSON.stringify({ answer: "x" })
    const padded = fits.slice(0, -1) + " ".repeat(Guard.MAX_BODY_BYTES - fits.length) + "}"
    expect(Buffer.byteLength(padded)).toBe(Guard.MAX_BODY_BYTES)
    expect((await server.post("/api/conversations/17738399468/questions/a1.confirm.1", padded)).status).toBe(404)

    for (const [path, location] of [
      ["//evil.example/?token=", "/evil.example/"],
      ["/\\evil.example?token=", "/evil.example"],
      ["/conversations/1?token=", "/conversations/1"]
    ] as const) {
      const r = await fetch(`${server.base}${path}${server.token}`, { redirect: "manual" })
      expect([path, r.status, r.headers.get("location")]).toStrictEqual([path, 303, location])
    }

    // A body that is not JSON by its type: a JSON error too; a Last-Event-ID that is not a sequence number: 400, not an empty stream.
    const typed = await headersOf("/api/conversations", {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "hello"
    })
    expect(typed).toMatchObject({ status: 415, csp: Guard.CSP, type: "application/json" })
    expect(JSON.parse(typed.body)).toMatchObject({ error: "UnsupportedMediaType" })
    for (const id of ["abc", "-1", "1.5", "1e400"]) {
      const r = await fetch(`${server.base}/api/conversations/17738399468/events`, {
        headers: { ...server.auth, "last-event-id": id }
      })
      expect([id, r.status, ((await r.json()) as { error: string }).error]).toStrictEqual([id, 400, "BadRequest"])
    }

    const refused = await server.post(
      "/api/conversations/17738399468/questions/a1.confirm.1",
      JSON.stringify("s3cr3t-t0ken")
    )
    expect(refused.status).toBe(400)
    expect(JSON.stringify(refused.body)).not.toContain("s3cr3t")
    const shape = await server.post("/api/conversations", { message: 42, model: "s3cr3t-t0ken" })
    expect(shape.status).toBe(400)
    expect(JSON.stringify(shape.body)).not.toContain("42")
    expect(await server.stop()).toBe(143)
  })

  it("a browser asking for a page without its token gets a small page that says where the token is; the API keeps its JSON 401", async () => {
    const server = await Serve.start(makeProject())
    children.push(server.child)
    const html = { accept: "text/html,application/xhtml+xml,*/*;q=0.8" }
    for (const path of ["/", "/conversations/17738399468", "/?token=wrong"]) {
      const r = await fetch(server.base + path, { headers: html, redirect: "manual" })
      const body = await r.text()
      expect([path, r.status, r.headers.get("content-type"), r.headers.get("content-security-policy")]).toStrictEqual([
        path,
        401,
        "text/html",
        Guard.CSP
      ])
      expect(body).toContain("first line")
      expect(body).toContain("<code>&lt;storage&gt;/serve-token</code>")
      // It says nothing of this server: no token, no path of its storage.
      expect(body).not.toContain(server.token)
    }
    const api = await fetch(`${server.base}/api/conversations`, { headers: html })
    expect([api.status, await api.json()]).toStrictEqual([
      401,
      { error: "Unauthorized", message: "A valid token is needed." }
    ])
  })
})
