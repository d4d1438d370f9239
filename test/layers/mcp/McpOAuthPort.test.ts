/**
 * The sign-in's callback port is held from the moment it is chosen (McpOAuth.make
 * for a client not registered yet) until the sign-in answers on it: a port only
 * probed free and listened on later was taken meanwhile by another sign-in that
 * chose it too (found in CI: two MCP conformance scenarios at once, EADDRINUSE).
 */
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as McpOAuth from "../../../src/layers/mcp/McpOAuth.ts"

const dirs: Array<string> = []
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})

/** Whether another listener can take `port` on the loopback now. */
const free = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = net.createServer()
    server.once("error", () => resolve(false))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
  })

describe("McpOAuth: the callback port", () => {
  it("is held from its choice through the sign-in, which answers on it; let go by close", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-oauth-port-"))
    dirs.push(dir)
    const signedIn: Array<URL> = []
    const provider = await McpOAuth.make({
      file: path.join(dir, "remote.json"),
      serverUrl: "http://127.0.0.1:9/mcp",
      clientName: "parley",
      signIn: (url) => signedIn.push(url)
    })
    const redirect = new URL(provider.redirectUrl)
    const port = Number(redirect.port)
    const before = await free(port)
    // Before a sign-in, a request on the port is refused as not found.
    const early = await fetch(new URL("/callback?code=x", redirect))
    const state = provider.state() // as the SDK asks for it before it redirects
    await provider.redirectToAuthorization(new URL(`http://127.0.0.1:9/authorize?state=${state}`))
    const waiting = provider.awaitCallback(5_000)
    const answer = await fetch(new URL(`/callback?code=abc&state=${state}`, redirect))
    const params = await waiting.catch((e: unknown) => String(e))
    provider.close()
    const after = await free(port)
    expect({ before, early: early.status, signedIn: signedIn.length, answer: answer.status, after }).toStrictEqual({
      before: false,
      early: 404,
      signedIn: 1,
      answer: 200,
      after: true
    })
    expect(params instanceof URLSearchParams ? params.get("code") : params).toBe("abc")
  })

  it("is let go when the server starts without a sign-in (releasePort), and a sign-in then listens on it as before", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-oauth-port-"))
    dirs.push(dir)
    const provider = await McpOAuth.make({
      file: path.join(dir, "remote.json"),
      serverUrl: "http://127.0.0.1:9/mcp",
      clientName: "parley",
      signIn: () => {}
    })
    const redirect = new URL(provider.redirectUrl)
    provider.releasePort()
    const released = await free(Number(redirect.port))
    const state = provider.state()
    await provider.redirectToAuthorization(new URL(`http://127.0.0.1:9/authorize?state=${state}`))
    const waiting = provider.awaitCallback(5_000)
    const forged = await fetch(new URL("/callback?code=abc&state=forged", redirect))
    const answer = await fetch(new URL(`/callback?code=abc&state=${state}`, redirect))
    await waiting
    provider.close()
    expect({ released, forged: forged.status, answer: answer.status }).toStrictEqual({
      released: true,
      forged: 400,
      answer: 200
    })
  })
})
