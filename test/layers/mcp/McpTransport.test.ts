// MCP over HTTP (docs/mcp.md): a request sent on a kept-alive connection the server has just
// dropped is sent again once; other failures are not retried.
import * as http from "node:http"
import type * as net from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { retryDroppedConnection } from "../../../src/layers/mcp/McpTransport.ts"

/** A server that drops the connection of the first `drop` requests without answering, then answers "ok". */
const server = async (drop: number) => {
  let seen = 0
  const s = http.createServer((req, res) => {
    seen++
    if (seen <= drop) return req.socket.destroy()
    res.end("ok")
  })
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()))
  return {
    url: `http://127.0.0.1:${(s.address() as net.AddressInfo).port}/`,
    seen: () => seen,
    close: () => new Promise<void>((r) => s.close(() => r()))
  }
}

describe("McpTransport.retryDroppedConnection", () => {
  it("a dropped connection is tried once more; the second answer is the answer", async () => {
    const s = await server(1)
    const response = await retryDroppedConnection(fetch)(s.url, { method: "POST", body: "{}" })
    expect(await response.text()).toBe("ok")
    expect(s.seen()).toBe(2)
    await s.close()
  })

  it("dropped twice: the error is the caller's, after exactly two tries; a refused connection is not retried", async () => {
    const s = await server(2)
    await expect(retryDroppedConnection(fetch)(s.url, { method: "POST", body: "{}" })).rejects.toThrow("fetch failed")
    expect(s.seen()).toBe(2)
    await s.close()
    let tries = 0
    const counting: typeof fetch = (input, init) => (tries++, fetch(input, init))
    await expect(retryDroppedConnection(counting)(s.url, { method: "POST", body: "{}" })).rejects.toThrow(
      "fetch failed"
    )
    expect(tries).toBe(1)
  })
})

describe("McpTransport: a stdio server's lines are read with JsonText.parse (docs/decisions.md#json-read-around-a-v8-bug)", () => {
  it("an escaped key in a tool result reads back as sent, after texts that make V8's JSON.parse misread it", async () => {
    const { make } = await import("../../../src/layers/mcp/McpTransport.ts")
    const made = await make("s", { command: "node", args: ["-e", ""] }, { root: process.cwd() })
    const buffer = (made.transport as unknown as { _readBuffer: { append(b: Buffer): void; readMessage(): unknown } })
      ._readBuffer
    // V8 takes a key from a map's only transition: the key before it makes that map this test's own.
    const line = (first: string, key: string) =>
      JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [], structuredContent: { [first]: 0, [key]: 1 } } })
    for (const [first, poison, key] of [
      ["mcp-a", "\\\\", "\\t"],
      ["mcp-b", "\\\\", "\t"],
      ["mcp-c", '\\"', '"']
    ] as const) {
      JSON.parse(line(first, poison)) // Node 24: the SDK's JSON.parse of `key` after `first` then gives `poison`
      buffer.append(Buffer.from(`not json\n${line(first, key)}\r\n`))
      const message = buffer.readMessage() as { result: { structuredContent: object } }
      expect(Object.keys(message.result.structuredContent)).toStrictEqual([first, key])
      expect(buffer.readMessage()).toBeNull()
    }
    buffer.append(Buffer.from('{"not":"json-rpc"}\n'))
    expect(() => buffer.readMessage()).toThrow()
    await made.transport.close()
  })
})
