/**
 * The runner port's secure channel: what a runner of a cluster must prove
 * before the cluster's protocol (`SocketRunner`) reads a byte from it, and
 * how every frame after that is sealed. Anyone who can reach the port (another
 * user of the machine; the network with `--runner-host 0.0.0.0`) could
 * otherwise ping a runner, send entity messages, or read a `secret` answer
 * crossing between runners.
 *
 * Keys (HKDF-SHA256 over `$PARLEY_TOKEN`, salt {@link SALT}): a MAC key for
 * the handshake and an encryption key from which each connection's two
 * direction keys are derived, so no key serves two purposes. The HTTP side
 * never carries `$PARLEY_TOKEN` itself: the page's URL and cookie and the
 * relay between runners carry the web token ({@link webTokenOf}), another
 * HKDF output of the token, from which no runner key can be computed (HKDF
 * is one-way, and keys derived from the web token are another cluster's).
 *
 * Handshake (mutual challenge-response, HMAC-SHA256):
 *
 * 1. client → server: `MAGIC` ‖ client nonce (32 random bytes)
 * 2. server → client: server nonce (32) ‖ HMAC(mac, "server" ‖ nc ‖ ns)
 * 3. client → server: HMAC(mac, "client" ‖ nc ‖ ns)
 *
 * Each side checks the other's proof in constant time; the labels keep a
 * server's proof from serving as a client's. Then both derive the
 * connection's keys, HKDF(enc, salt nc ‖ ns, "c2s" / "s2c"): fresh per
 * connection, so nothing recorded from another connection can be replayed.
 *
 * Frames: a 4-byte length, then AES-256-GCM of the bytes with that length as
 * associated data, under a nonce counting the frames of that direction from 0:
 * a frame altered, dropped, reordered or replayed fails to open and closes
 * the connection.
 *
 * @example
 * ```ts
 * import * as RunnerChannel from "parley/layers/cluster/RunnerChannel"
 * const keys = RunnerChannel.keysOf(process.env["PARLEY_TOKEN"]!)
 * const sealed = RunnerChannel.connect("127.0.0.1", 13141, keys) // a Promise of a Duplex of plain bytes
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as crypto from "node:crypto"
import * as net from "node:net"
import { Duplex } from "node:stream"

/** The shortest `$PARLEY_TOKEN` a cluster takes: the keys are only as strong as the token. */
export const MIN_TOKEN = 32

/** How to make a token, for the error line (both work when pasted into a POSIX shell). */
export const MAKE_TOKEN =
  "export PARLEY_TOKEN=$(openssl rand -hex 32)   or   export PARLEY_TOKEN=$(node -p \"require('crypto').randomBytes(32).toString('hex')\")"

const SALT = "parley cluster runner port v1"
/** What a client sends first: a runner protocol of another version, or anything else, is told apart at once. */
export const MAGIC = Buffer.from("PARLEYR1")
const NONCE = 32
const MAC = 32
const TAG = 16
/** Bigger frames are refused: the cluster's messages are far smaller. */
const MAX_FRAME = 64 * 1024 * 1024
/** What is read ahead of the handshake's messages (a client's first frames follow its proof at once). */
const HANDSHAKE_BUFFER = 64 * 1024
/** A peer that has not finished the handshake by then is dropped. */
export const HANDSHAKE_MS = 5_000

/** The keys of one cluster, derived from its token. */
export interface Keys {
  readonly mac: Buffer
  readonly enc: Buffer
}

const hkdf = (key: crypto.BinaryLike, salt: crypto.BinaryLike, info: string): Buffer =>
  Buffer.from(crypto.hkdfSync("sha256", key, salt, info, 32))

export const keysOf = (token: string): Keys => ({
  mac: hkdf(token, SALT, "handshake mac"),
  enc: hkdf(token, SALT, "frame encryption")
})

/**
 * The token the cluster's HTTP side shows and sends — the page's URL and
 * cookie, the relay of live events between runners (plain HTTP) — instead of
 * `$PARLEY_TOKEN`: whoever sees it can use the HTTP API, but cannot join the
 * runner port (its keys come from `$PARLEY_TOKEN` with other labels).
 */
export const webTokenOf = (token: string): string => hkdf(token, SALT, "parley web").toString("hex")

const proof = (keys: Keys, label: "server" | "client", nc: Buffer, ns: Buffer): Buffer =>
  crypto.createHmac("sha256", keys.mac).update(label).update(nc).update(ns).digest()

const sessionKeys = (keys: Keys, nc: Buffer, ns: Buffer) => {
  const salt = Buffer.concat([nc, ns])
  return { c2s: hkdf(keys.enc, salt, "c2s"), s2c: hkdf(keys.enc, salt, "s2c") }
}

/** Why a peer was refused: a line for the runner's log. */
export class Refusal extends Error {}

/**
 * Reads the handshake's fixed-size messages off a raw socket (bounded by
 * {@link HANDSHAKE_MS}); `release` stops reading and returns the bytes that
 * came after, the first frames.
 */
const handshakeReader = (raw: net.Socket) => {
  let buffered = Buffer.alloc(0)
  let want: { n: number; resolve: (b: Buffer) => void; reject: (e: Error) => void } | undefined
  let failure: Error | undefined
  const settle = () => {
    if (want === undefined) return
    if (buffered.length >= want.n) {
      const { n, resolve } = want
      want = undefined
      const got = buffered.subarray(0, n)
      buffered = buffered.subarray(n)
      resolve(got)
    } else if (failure !== undefined) {
      const { reject } = want
      want = undefined
      reject(failure)
    }
  }
  const onData = (d: Buffer) => {
    buffered = Buffer.concat([buffered, d])
    // An unauthenticated peer gets a bounded buffer: the rest waits in the kernel.
    if (buffered.length >= HANDSHAKE_BUFFER) raw.pause()
    settle()
  }
  const onEnd = () => {
    failure ??= new Refusal("closed during the handshake")
    settle()
  }
  const onError = (e: Error) => {
    failure ??= new Refusal(`during the handshake: ${e.message}`)
    settle()
  }
  raw.on("data", onData)
  raw.on("end", onEnd)
  raw.on("close", onEnd)
  raw.on("error", onError)
  const timer = setTimeout(() => {
    failure ??= new Refusal(`no handshake within ${HANDSHAKE_MS / 1000} s`)
    settle()
  }, HANDSHAKE_MS)
  return {
    take: (n: number): Promise<Buffer> =>
      new Promise((resolve, reject) => {
        want = { n, resolve, reject }
        raw.resume()
        settle()
      }),
    release: (): Buffer => {
      clearTimeout(timer)
      raw.pause()
      raw.off("data", onData)
      raw.off("end", onEnd)
      raw.off("close", onEnd)
      raw.off("error", onError)
      return buffered
    }
  }
}

/** Runs `steps` over a handshake reader; on any failure the raw socket is destroyed and the refusal rethrown. */
const withReader = async <A>(
  raw: net.Socket,
  steps: (take: (n: number) => Promise<Buffer>) => Promise<A>
): Promise<{ value: A; rest: Buffer }> => {
  const reader = handshakeReader(raw)
  try {
    const value = await steps(reader.take)
    return { value, rest: reader.release() }
  } catch (e) {
    reader.release()
    raw.destroy()
    throw e instanceof Refusal ? e : new Refusal(String(e))
  }
}

/** The server's side of the handshake on a fresh connection: its sealed duplex, or a {@link Refusal}. */
export const accept = async (raw: net.Socket, keys: Keys): Promise<Sealed> => {
  const { value, rest } = await withReader(raw, async (take) => {
    // Checked before the nonce is awaited: a client speaking the cluster protocol unsealed is closed at once.
    if (!(await take(MAGIC.length)).equals(MAGIC))
      throw new Refusal("not a parley runner (no runner handshake; a runner proves $PARLEY_TOKEN before anything else)")
    const nc = Buffer.from(await take(NONCE))
    const ns = crypto.randomBytes(NONCE)
    raw.write(Buffer.concat([ns, proof(keys, "server", nc, ns)]))
    const theirs = await take(MAC)
    if (!crypto.timingSafeEqual(theirs, proof(keys, "client", nc, ns)))
      throw new Refusal("wrong key (its $PARLEY_TOKEN is not this cluster's)")
    return sessionKeys(keys, nc, ns)
  })
  return new Sealed(raw, value.s2c, value.c2s, rest)
}

/** The client's side of the handshake on a connected socket. */
export const offer = async (raw: net.Socket, keys: Keys): Promise<Sealed> => {
  const nc = crypto.randomBytes(NONCE)
  raw.write(Buffer.concat([MAGIC, nc]))
  const { value, rest } = await withReader(raw, async (take) => {
    const reply = await take(NONCE + MAC)
    const ns = Buffer.from(reply.subarray(0, NONCE))
    if (!crypto.timingSafeEqual(reply.subarray(NONCE), proof(keys, "server", nc, ns)))
      throw new Refusal("the runner there does not know this cluster's $PARLEY_TOKEN")
    raw.write(proof(keys, "client", nc, ns))
    return sessionKeys(keys, nc, ns)
  })
  return new Sealed(raw, value.c2s, value.s2c, rest)
}

/** Connects to a runner and runs the client's handshake. */
export const connect = (host: string, port: number, keys: Keys): Promise<Sealed> =>
  new Promise((resolve, reject) => {
    const raw = net.createConnection({ host, port })
    raw.once("error", reject)
    raw.once("connect", () => {
      raw.off("error", reject)
      offer(raw, keys).then(resolve, reject)
    })
  })

const nonceOf = (n: bigint): Buffer => {
  const b = Buffer.alloc(12)
  b.writeBigUInt64BE(n, 4)
  return b
}

/**
 * The plain bytes of a connection whose frames are sealed (AES-256-GCM,
 * one key per direction, counted nonces). Backpressure passes through: a
 * write completes when the raw socket took its frame, and the raw socket is
 * read only while this stream wants more.
 */
export class Sealed extends Duplex {
  private buffered: Buffer
  private sent = 0n
  private received = 0n
  // Each key as a KeyObject, made once: given a Buffer, every frame's cipher made and checked a KeyObject
  // of its own (3–4 s of three runners' time in a 100-conversation bench run, about 2 % of it).
  private readonly sendKey: crypto.KeyObject
  private readonly receiveKey: crypto.KeyObject

  constructor(
    readonly raw: net.Socket,
    sendKey: Buffer,
    receiveKey: Buffer,
    rest: Buffer
  ) {
    super()
    this.sendKey = crypto.createSecretKey(sendKey)
    this.receiveKey = crypto.createSecretKey(receiveKey)
    this.buffered = rest
    // A peer that dies (kill -9: ECONNRESET) must not crash the runner while nobody reads this stream:
    // the socket's reader, when there is one, gets the error through its own listener.
    this.on("error", () => {})
    raw.on("data", (d: Buffer) => {
      this.buffered = this.buffered.length === 0 ? d : Buffer.concat([this.buffered, d])
      this.open()
    })
    raw.on("end", () => this.push(null))
    raw.on("error", (e) => this.destroy(e))
    raw.on("close", () => this.destroy())
    this.open()
  }

  /** Opens every whole frame buffered; a frame that does not open closes the connection. */
  private open(): void {
    while (this.buffered.length >= 4) {
      const size = this.buffered.readUInt32BE(0)
      if (size < TAG || size > MAX_FRAME) return void this.destroy(new Error(`a frame of ${size} bytes`))
      if (this.buffered.length < 4 + size) return
      const header = this.buffered.subarray(0, 4)
      const body = this.buffered.subarray(4, 4 + size - TAG)
      const tag = this.buffered.subarray(4 + size - TAG, 4 + size)
      let plain: Buffer
      try {
        const d = crypto.createDecipheriv("aes-256-gcm", this.receiveKey, nonceOf(this.received))
        d.setAAD(header)
        d.setAuthTag(tag)
        plain = Buffer.concat([d.update(body), d.final()])
      } catch {
        return void this.destroy(new Error("a frame that does not open (altered, replayed or out of order)"))
      }
      this.received += 1n
      this.buffered = this.buffered.subarray(4 + size)
      if (!this.push(plain)) this.raw.pause()
    }
  }

  private seal(chunk: Buffer): Buffer {
    const header = Buffer.alloc(4)
    header.writeUInt32BE(chunk.length + TAG)
    const c = crypto.createCipheriv("aes-256-gcm", this.sendKey, nonceOf(this.sent))
    this.sent += 1n
    c.setAAD(header)
    const body = Buffer.concat([c.update(chunk), c.final()])
    return Buffer.concat([header, body, c.getAuthTag()])
  }

  override _read(): void {
    this.raw.resume()
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (e?: Error | null) => void): void {
    this.raw.write(this.seal(chunk), done)
  }

  override _final(done: (e?: Error | null) => void): void {
    this.raw.end(done)
  }

  override _destroy(error: Error | null, done: (e?: Error | null) => void): void {
    this.raw.destroy()
    done(error)
  }
}
