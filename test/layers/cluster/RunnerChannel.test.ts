// The runner port's secure channel over real TCP on 127.0.0.1, with a
// recording proxy between the two ends: what crosses the wire is sealed
// (a secret answer's bytes never appear in clear), a peer without the key
// (or with another cluster's key) is refused at the handshake by both sides,
// and a frame altered on the way closes the connection. The web token (what
// the page's URL and the HTTP relay carry) opens no handshake, however used.
import * as net from "node:net"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as RunnerChannel from "../../../src/layers/cluster/RunnerChannel.ts"

const KEYS = RunnerChannel.keysOf("0123456789abcdef0123456789abcdef-test")
const OTHER = RunnerChannel.keysOf("fedcba9876543210fedcba9876543210-test")

const closers: Array<() => void> = []
afterEach(() => {
  for (const c of closers.splice(0)) c()
})

const listening = (server: net.Server): Promise<number> =>
  new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port))
    closers.push(() => server.close())
  })

/** A server that echoes the plain bytes of each sealed connection; `refused` collects why others were. */
const echoServer = async (keys: RunnerChannel.Keys) => {
  const refused: Array<string> = []
  const sockets = new Set<net.Socket>()
  const server = net.createServer((raw) => {
    sockets.add(raw)
    RunnerChannel.accept(raw, keys).then(
      (sealed) => sealed.on("data", (d: Buffer) => sealed.write(d)).on("error", () => {}),
      (e: Error) => refused.push(e.message)
    )
  })
  closers.push(() => {
    for (const s of sockets) s.destroy()
  })
  return { port: await listening(server), refused }
}

/** A TCP proxy to `target` recording both directions; `tamper` may change a chunk going to the server. */
const proxy = async (target: number, tamper?: (chunk: Buffer, index: number) => Buffer) => {
  const wire: Array<Buffer> = []
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    const upstream = net.createConnection({ host: "127.0.0.1", port: target })
    sockets.add(client).add(upstream)
    let n = 0
    client.on("data", (d: Buffer) => {
      wire.push(d)
      upstream.write(tamper === undefined ? d : tamper(d, n++))
    })
    upstream.on("data", (d: Buffer) => {
      wire.push(d)
      client.write(d)
    })
    client.on("close", () => upstream.destroy()).on("error", () => {})
    upstream.on("close", () => client.destroy()).on("error", () => {})
  })
  closers.push(() => {
    for (const s of sockets) s.destroy()
  })
  return { port: await listening(server), wire: () => Buffer.concat(wire) }
}

/** Writes `bytes` on `s` and collects what comes back until `length` bytes arrived or the stream ended (bounded). */
const roundTrip = (s: NodeJS.ReadWriteStream & { destroy: () => void }, bytes: Buffer, length: number) =>
  new Promise<{ got: Buffer; closed: boolean }>((resolve) => {
    const got: Array<Buffer> = []
    const done = (closed: boolean) => {
      clearTimeout(timer)
      resolve({ got: Buffer.concat(got), closed })
    }
    const timer = setTimeout(() => done(false), 5_000)
    s.on("data", (d: Buffer) => {
      got.push(d)
      if (Buffer.concat(got).length >= length) done(false)
    })
    s.on("close", () => done(true))
    s.on("error", () => {})
    s.write(bytes)
  })

const SECRET = Buffer.from('{"_tag":"AnswerSecret","answer":"hunter2-the-secret-answer"}')

describe("RunnerChannel: the runner port's handshake and sealed frames", () => {
  it("a secret crosses sealed: the proxy never sees it in clear, the other end gets it whole", async () => {
    const server = await echoServer(KEYS)
    const wire = await proxy(server.port)
    const sealed = await RunnerChannel.connect("127.0.0.1", wire.port, KEYS)
    closers.push(() => sealed.destroy())
    const { got } = await roundTrip(sealed, SECRET, SECRET.length)
    expect(got.toString()).toBe(SECRET.toString())
    const seen = wire.wire()
    expect(seen.length).toBeGreaterThan(2 * SECRET.length)
    expect(seen.includes(Buffer.from("hunter2"))).toBe(false)
    expect(seen.includes(Buffer.from("AnswerSecret"))).toBe(false)
    expect(server.refused).toStrictEqual([])
  })

  it("the same proxy sees an unsealed connection's bytes in clear (the check above can fail)", async () => {
    const plain = net.createServer((s) => s.on("data", (d: Buffer) => s.write(d)).on("error", () => {}))
    const wire = await proxy(await listening(plain))
    const s = net.createConnection({ host: "127.0.0.1", port: wire.port })
    closers.push(() => s.destroy())
    await roundTrip(s, SECRET, SECRET.length)
    expect(wire.wire().includes(Buffer.from("hunter2"))).toBe(true)
  })

  it("a client speaking without the handshake is closed at once and gets no byte", async () => {
    const server = await echoServer(KEYS)
    const s = net.createConnection({ host: "127.0.0.1", port: server.port })
    closers.push(() => s.destroy())
    const started = Date.now()
    const { got, closed } = await roundTrip(s, Buffer.from("\x00\x00\x00\x05\x81\xa4_tag\xa4Ping"), 1)
    expect({ closed, bytes: got.length }).toStrictEqual({ closed: true, bytes: 0 })
    expect(Date.now() - started).toBeLessThan(2_000)
    expect(server.refused).toHaveLength(1)
    expect(server.refused[0]).toMatch(/^not a parley runner/)
  })

  it("another cluster's key is refused by both sides: the client learns the server does not know its key", async () => {
    const server = await echoServer(KEYS)
    await expect(RunnerChannel.connect("127.0.0.1", server.port, OTHER)).rejects.toThrow(
      /does not know this cluster's \$PARLEY_TOKEN/
    )
    // A client that skips the server's proof and sends any 32 bytes as its own.
    const s = net.createConnection({ host: "127.0.0.1", port: server.port })
    closers.push(() => s.destroy())
    const hello = Buffer.concat([RunnerChannel.MAGIC, Buffer.alloc(32, 7)])
    const reply = await roundTrip(s, hello, 64)
    expect(reply.got.length).toBe(64)
    const end = await roundTrip(s, Buffer.alloc(32, 9), 1)
    expect(end).toStrictEqual({ got: Buffer.alloc(0), closed: true })
    await new Promise((r) => setTimeout(r, 50))
    expect(server.refused.filter((r) => /wrong key/.test(r))).toHaveLength(1)
  })

  it("a frame altered on the way does not open: the connection closes, nothing is delivered", async () => {
    const server = await echoServer(KEYS)
    // Chunks 0 and 1 are the handshake (hello, proof); the first frame is flipped in its last byte (the tag).
    const wire = await proxy(server.port, (chunk, i) => {
      if (i < 2) return chunk
      const c = Buffer.from(chunk)
      c[c.length - 1] = c[c.length - 1]! ^ 1
      return c
    })
    const sealed = await RunnerChannel.connect("127.0.0.1", wire.port, KEYS)
    closers.push(() => sealed.destroy())
    await new Promise((r) => setTimeout(r, 100))
    const { got, closed } = await roundTrip(sealed, SECRET, SECRET.length)
    expect({ closed, bytes: got.length }).toStrictEqual({ closed: true, bytes: 0 })
  })

  it("a peer that resets the connection (kill -9) ends the stream, with no error thrown where nobody listens", async () => {
    const raws: Array<net.Socket> = []
    const server = net.createServer((raw) => {
      raws.push(raw)
      RunnerChannel.accept(raw, KEYS).then(
        () => {},
        () => {}
      )
    })
    const port = await listening(server)
    const sealed = await RunnerChannel.connect("127.0.0.1", port, KEYS)
    closers.push(() => sealed.destroy())
    const closed = new Promise<void>((resolve) => sealed.once("close", () => resolve()))
    await new Promise((r) => setTimeout(r, 50))
    raws[0]!.resetAndDestroy()
    await closed
    expect(sealed.destroyed).toBe(true)
  })

  it("keys: one per purpose, the same for the same token", () => {
    expect(KEYS.mac.equals(KEYS.enc)).toBe(false)
    expect(RunnerChannel.keysOf("0123456789abcdef0123456789abcdef-test").mac.equals(KEYS.mac)).toBe(true)
    expect(OTHER.mac.equals(KEYS.mac)).toBe(false)
  })

  it("the web token is not the token, no runner key, and keys made from it are refused at the handshake", async () => {
    const token = "0123456789abcdef0123456789abcdef-test"
    const web = RunnerChannel.webTokenOf(token)
    expect(web).toMatch(/^[0-9a-f]{64}$/)
    expect(web).toBe(RunnerChannel.webTokenOf(token))
    expect(web).not.toBe(RunnerChannel.webTokenOf(`${token}x`))
    expect(web.includes(token)).toBe(false)
    const bytes = Buffer.from(web, "hex")
    expect([bytes.equals(KEYS.mac), bytes.equals(KEYS.enc)]).toStrictEqual([false, false])
    const server = await echoServer(KEYS)
    // Whoever holds the web token derives keys as a runner would, or uses its bytes as the keys: refused both ways.
    const tries: ReadonlyArray<RunnerChannel.Keys> = [
      RunnerChannel.keysOf(web),
      { mac: bytes, enc: bytes },
      RunnerChannel.keysOf(RunnerChannel.webTokenOf(web))
    ]
    for (const keys of tries)
      await expect(RunnerChannel.connect("127.0.0.1", server.port, keys)).rejects.toThrow(/does not know/)
    // The server saw each client give up on its proof: none got as far as proving anything.
    for (let i = 0; i < 50 && server.refused.length < tries.length; i++) await new Promise((r) => setTimeout(r, 20))
    expect(server.refused).toStrictEqual(tries.map(() => "closed during the handshake"))
    // The token's own keys get through (the checks above can fail).
    const sealed = await RunnerChannel.connect("127.0.0.1", server.port, RunnerChannel.keysOf(token))
    closers.push(() => sealed.destroy())
    expect((await roundTrip(sealed, SECRET, SECRET.length)).got.toString()).toBe(SECRET.toString())
  })
})
