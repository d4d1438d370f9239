// The connection cap cannot be used to lock users out: at the cap a new
// connection makes room by closing a connection idle between requests, else
// the oldest one that has not finished its request's headers (a slowloris),
// never one whose request is being answered (docs/serve.md#limits).
import * as http from "node:http"
import * as net from "node:net"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { makeProject } from "../../support/Project.ts"
import * as Serve from "../../support/Serve.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
let stopFlood: () => void = () => undefined
afterEach(() => {
  stopFlood()
  for (const c of children.splice(0)) c.kill("SIGKILL")
})

/**
 * `n` slowloris sockets with no token: each sends a request's headers one
 * byte a second, never ending them, and reconnects as soon as it is closed.
 */
const slowloris = (port: number, n: number, start = "") => {
  let stopped = false
  const live = new Set<net.Socket>()
  const timers = new Set<NodeJS.Timeout>()
  let connects = 0
  const open = () => {
    if (stopped) return
    connects++
    const bytes = `GET /api/conversations HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${"a".repeat(10_000)}`
    let at = 0
    const socket = net.connect({ host: "127.0.0.1", port })
    live.add(socket)
    const timer = setInterval(() => socket.writable && socket.write(bytes[at++ % bytes.length]!), 1_000)
    timers.add(timer)
    socket.on("connect", () => socket.write(start + bytes[at++]!))
    socket.on("error", () => undefined)
    socket.resume()
    socket.on("close", () => {
      clearInterval(timer)
      timers.delete(timer)
      live.delete(socket)
      open()
    })
  }
  for (let i = 0; i < n; i++) open()
  const stop = () => {
    stopped = true
    for (const t of timers) clearInterval(t)
    for (const s of live) s.destroy()
  }
  return { stop, connects: () => connects }
}

/** One authenticated GET on a connection of its own: its status (-1: reset, closed or over `ms`) and time. */
const timedGet = (port: number, headers: Record<string, string>, ms: number) =>
  new Promise<{ status: number; ms: number }>((resolve) => {
    const t0 = Date.now()
    const req = http.get({ host: "127.0.0.1", port, agent: false, path: "/api/conversations", headers }, (res) => {
      res.resume()
      res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: Date.now() - t0 }))
    })
    req.on("error", () => resolve({ status: -1, ms: Date.now() - t0 }))
    req.setTimeout(ms, () => req.destroy(new Error("timeout")))
  })

describe("parley serve: the connection cap under a slowloris flood", () => {
  const POST_BODY =
    "POST /api/conversations HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n"
  for (const [what, start] of [
    ["headers", ""],
    ["a body after whole headers", POST_BODY]
  ] as const)
    it(`40 slowloris sockets (${what}) at a cap of 8: each of 10 authenticated requests is answered 200 within 2 s`, async () => {
      const p = makeProject()
      const server = await Serve.start(p, ["--max-connections", "8", "--header-timeout", "3"])
      children.push(server.child)
      const flood = slowloris(server.port, 40, start)
      stopFlood = flood.stop
      // Let the flood fill the cap and churn.
      await new Promise((res) => setTimeout(res, 1_500))
      const answers: Array<{ status: number; ms: number }> = []
      for (let i = 0; i < 10; i++) {
        answers.push(await timedGet(server.port, server.auth, 2_000))
        await new Promise((res) => setTimeout(res, 200))
      }
      const connects = flood.connects()
      flood.stop()
      console.log(`[slowloris ${what}] ${connects} flood connects; answers ${JSON.stringify(answers)}`)
      // The flood was really at the cap: more connects than sockets (closed ones reconnected).
      expect(connects).toBeGreaterThan(40)
      expect(answers.map((a) => a.status)).toStrictEqual(Array(10).fill(200))
      for (const a of answers) expect(a.ms).toBeLessThanOrEqual(2_000)
      expect(await server.stop()).toBe(143)
    }, 60_000)
})
