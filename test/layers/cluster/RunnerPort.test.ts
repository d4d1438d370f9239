// The runner port of `parley serve --cluster` against real runners on a
// throwaway PostgreSQL: a client without the cluster's key — Effect's own
// cluster client, raw bytes of a genuine Ping and of an entity message, and
// another local user of this machine — is refused (closed, no byte back),
// the runner logs it once and keeps serving; a client with the key gets its
// Pong (the same calls can succeed). A token under 32 characters is refused
// with a command that makes one; `--runner-host` decides where the port
// listens and what the runner announces, and two runners on different
// addresses still answer a question posted to the one that does not run it.
// The page URL carries the web token, which opens the HTTP API (as
// `Bearer $PARLEY_TOKEN` does) but not the runner port; handshakes in
// progress are capped (in total and per address): connections beyond the cap
// are closed at once while a runner's handshake still completes.
import { execFileSync, spawnSync } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as EntityAddress from "effect/cluster/EntityAddress"
import * as EntityId from "effect/cluster/EntityId"
import * as EntityType from "effect/cluster/EntityType"
import type * as Envelope from "effect/cluster/Envelope"
import * as RunnerAddress from "effect/cluster/RunnerAddress"
import * as Runners from "effect/cluster/Runners"
import * as ShardId from "effect/cluster/ShardId"
import * as Snowflake from "effect/cluster/Snowflake"
import * as Headers from "effect/http/Headers"
import * as RpcClient from "effect/rpc/RpcClient"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import * as RunnerChannel from "../../../src/layers/cluster/RunnerChannel.ts"
import * as RunnerTransport from "../../../src/layers/cluster/RunnerTransport.ts"
import { runParley } from "../../support/Cli.ts"
import * as Cluster from "../../support/Cluster.ts"
import { tempDir } from "../../support/Fixtures.ts"
import { freshDatabase, type PgServer, pgSkip, startPg } from "../../support/Pg.ts"

let pg: PgServer | undefined
const clusters: Array<Cluster.Cluster> = []
beforeAll(async () => {
  if (pgSkip === undefined) pg = await startPg()
}, 60_000)
afterAll(async () => {
  await Promise.all(clusters.map((c) => c.stop()))
  pg?.stop()
}, 60_000)

const until = async <A>(what: string, check: () => Promise<A | undefined>, ms: number): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const got = await check().catch(() => undefined)
    if (got !== undefined) return got
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

type Protocol = Layer.Layer<Runners.RpcClientProtocol, never, RpcSerialization.RpcSerialization>

/** An entity message as another runner sends it: `Stop` to a conversation, in an `Effect` runner RPC. */
const stopMessage = {
  request: {
    _tag: "Request",
    requestId: Snowflake.Snowflake(1n),
    address: EntityAddress.make({
      shardId: ShardId.make("default", 1),
      entityType: EntityType.make("Conversation"),
      entityId: EntityId.make("17738399468")
    }),
    tag: "Stop",
    // The payload as the binary serialization carries it: MessagePack nil (Stop has none).
    payload: new Uint8Array([0xc0]),
    headers: Headers.empty
    // The envelope's schema is opaque (a class over this struct): this literal is what it encodes.
  } as unknown as Envelope.PartialRequest,
  persisted: false
}

/** One runner RPC through `protocol` to the runner port at `port` (bounded): its exit. */
const call = (
  protocol: Protocol,
  host: string,
  port: number,
  what: "Ping" | "Stop",
  signal?: AbortSignal,
  ms = 3_000
) =>
  Effect.gen(function* () {
    const clients = yield* Runners.RpcClientProtocol
    const p = yield* clients.make(RunnerAddress.make(host, port))
    const client = yield* Runners.makeRpcClient.pipe(Effect.provideService(RpcClient.Protocol, p))
    const sent: Effect.Effect<unknown, unknown> = what === "Ping" ? client.Ping() : client.Effect(stopMessage)
    return yield* sent.pipe(Effect.timeout(ms), Effect.exit)
  }).pipe(Effect.scoped, Effect.provide(protocol), Effect.provide(RpcSerialization.layerSchemaBinary({})), (e) =>
    Effect.runPromise(e, { signal })
  )

/** The first bytes Effect's plain cluster client sends for `what`, caught by a listener that never answers. */
const genuineBytes = async (what: "Ping" | "Stop"): Promise<Buffer> => {
  const got: Array<Buffer> = []
  const sockets: Array<net.Socket> = []
  const sent = new AbortController()
  const server = net.createServer((s) => {
    sockets.push(s)
    s.on("data", (d: Buffer) => {
      got.push(d)
      // One request is one write; the call ends once it is here.
      sent.abort()
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  const port = (server.address() as net.AddressInfo).port
  // Bounded generously: on a loaded machine the client's first write took over 3 s.
  await call(NodeClusterSocket.layerClientProtocol, "127.0.0.1", port, what, sent.signal, 20_000).catch(() => undefined)
  for (const s of sockets) s.destroy()
  server.close()
  return Buffer.concat(got)
}

/** Sends `bytes` to 127.0.0.1:`port` and waits (bounded) for the close: what came back, and whether it closed. */
const send = (port: number, bytes: Buffer) =>
  new Promise<{ bytes: number; closed: boolean }>((resolve) => {
    let n = 0
    const s = net.createConnection({ host: "127.0.0.1", port }, () => s.write(bytes))
    const timer = setTimeout(() => {
      s.destroy()
      resolve({ bytes: n, closed: false })
    }, 5_000)
    s.on("data", (d: Buffer) => (n += d.length))
    s.on("error", () => {})
    s.on("close", () => {
      clearTimeout(timer)
      resolve({ bytes: n, closed: true })
    })
  })

const refusals = (r: Cluster.Runner) =>
  r
    .output()
    .split("\n")
    .filter((l) => / refused /.test(l))

/** This runner's runner port in `/proc/net/tcp`: the listening address, as dotted IPv4. */
const listeningOn = (port: number): Array<string> =>
  fs
    .readFileSync("/proc/net/tcp", "utf8")
    .split("\n")
    .slice(1)
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f[3] === "0A" && Number.parseInt(f[1]!.split(":")[1]!, 16) === port)
    .map((f) => {
      const hex = f[1]!.split(":")[0]!
      return [6, 4, 2, 0].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)).join(".")
    })

/**
 * Posts a conversation to `on`; its question is answered through the runner
 * that does not run its turn (the posted reply names the turn's pid), so the
 * answer crosses the runner port. The turn completes.
 */
const askAndAnswer = (
  on: Cluster.Runner,
  runners: ReadonlyArray<Cluster.Runner>,
  name: string,
  /** A `secret` question (answered with this), instead of a boolean one. */
  secret?: string
) =>
  (async () => {
    const message = secret === undefined ? `deploy ${name}` : `secret ${name}`
    const posted = await on.post("/api/conversations", { message }, 60_000)
    expect(posted.status, JSON.stringify(posted.body)).toBe(200)
    const id = posted.body.conversation_id as string
    const via = runners.find((r) => r.pid !== posted.body.pid)!
    expect(runners.map((r) => r.pid)).toContain(posted.body.pid)
    const q = await until(
      `the question of ${name}`,
      async () =>
        (await via.json("/api/questions")).body.find((x: { conversation_id: string }) => x.conversation_id === id),
      60_000
    )
    const answered = await via.post(`/api/conversations/${id}/questions/${q.id}`, { answer: secret ?? true }, 60_000)
    expect(answered.status, JSON.stringify(answered.body)).toBe(200)
    return await until(
      `${name} complete`,
      async () => {
        const last = (await via.json(`/api/conversations/${id}`)).body.at(-1)
        return last?.type === "chat_response" && String(last.message).startsWith("Done:") ? last.message : undefined
      },
      60_000
    )
  })().catch((e) => {
    throw new Error(`${name}: ${e}\n${runners.map((r) => r.output()).join("\n---\n")}`)
  })

const isRoot = process.getuid?.() === 0

/** A connection to 127.0.0.1:`port` from `from` that sends `hello` and nothing more: when it closed, if it did. */
const halfOpen = (port: number, from: string, hello: Buffer) =>
  new Promise<{ socket: net.Socket; closedAt: () => number | undefined }>((resolve, reject) => {
    let closedAt: number | undefined
    const socket = net.createConnection({ host: "127.0.0.1", port, localAddress: from }, () => {
      socket.write(hello)
      resolve({ socket, closedAt: () => closedAt })
    })
    socket.on("error", () => {})
    socket.once("close", () => {
      closedAt = Date.now()
      reject(new Error(`${from} could not connect`))
    })
  })

/** A handshake with the cluster's key from `from` (bounded): whether it completed. */
const handshakeFrom = (port: number, from: string, keys: RunnerChannel.Keys) =>
  new Promise<boolean>((resolve) => {
    const raw = net.createConnection({ host: "127.0.0.1", port, localAddress: from }, () =>
      RunnerChannel.offer(raw, keys).then(
        (sealed) => {
          sealed.destroy()
          resolve(true)
        },
        () => resolve(false)
      )
    )
    raw.on("error", () => resolve(false))
    setTimeout(() => {
      raw.destroy()
      resolve(false)
    }, 3_000).unref()
  })

describe.skipIf(pgSkip !== undefined)("the runner port of parley serve --cluster", () => {
  it("a token under 32 characters is refused, with a command that makes one (it works when pasted)", () => {
    const dir = tempDir("parley-runner-token-")
    const short = runParley(["--storage", freshDatabase(pg!), "serve", "--cluster", "--port", "0"], {
      cwd: dir,
      env: { PARLEY_TOKEN: "0123456789abcdef0123456789abcde" },
      timeoutMs: 30_000
    })
    fs.rmSync(dir, { recursive: true, force: true })
    expect(short.code).toBe(2)
    expect(short.stderr).toContain("$PARLEY_TOKEN has 31 characters, fewer than 32")
    expect(short.stderr).not.toContain("0123456789abcdef0123456789abcde")
    // Each suggested command, pasted into a shell, sets a token the cluster takes.
    const commands = short.stderr.split(/make one with: |\s{3}or\s{3}/).slice(1)
    expect(commands).toHaveLength(2)
    for (const c of commands) {
      const out = execFileSync("sh", ["-c", `${c.trim()}; printf %s "$PARLEY_TOKEN"`], { encoding: "utf8" })
      expect([c, out]).toStrictEqual([c, expect.stringMatching(/^[0-9a-f]{64}$/)])
    }
  }, 60_000)

  it("refuses a client without the key (Ping, an entity message, another user), logs it once, keeps serving", async () => {
    const cluster = await Cluster.project(freshDatabase(pg!))
    clusters.push(cluster)
    const a = await cluster.runner()
    const port = a.port + 10000
    const keys = RunnerChannel.keysOf(Cluster.TOKEN)
    // The same calls with the key: answered.
    const keyed = RunnerTransport.layerClientProtocol(keys)
    expect(Exit.isSuccess(await call(keyed, "127.0.0.1", port, "Ping"))).toBe(true)
    // (The entity layer's reply: this hand-made Stop is malformed for the entity, but it got there.)
    const stopped = await call(keyed, "127.0.0.1", port, "Stop")
    expect(Exit.isSuccess(stopped)).toBe(true)

    // Effect's own cluster client, without the key: no answer.
    const plain = NodeClusterSocket.layerClientProtocol
    for (const what of ["Ping", "Stop"] as const) {
      const exit = await call(plain, "127.0.0.1", port, what)
      expect([what, Exit.isSuccess(exit)]).toStrictEqual([what, false])
    }
    // A genuine Ping and a genuine entity message as bytes: closed at once, not a byte back.
    for (const what of ["Ping", "Stop"] as const) {
      const bytes = await genuineBytes(what)
      expect(bytes.length).toBeGreaterThan(8)
      expect([what, await send(port, bytes)]).toStrictEqual([what, { bytes: 0, closed: true }])
    }
    // Another key (another cluster's token) cannot even finish the handshake.
    const other = RunnerChannel.keysOf(crypto.randomBytes(32).toString("hex"))
    await expect(RunnerChannel.connect("127.0.0.1", port, other)).rejects.toThrow(/does not know/)

    expect(a.child.exitCode).toBeNull()
    const lines = refusals(a)
    expect(lines, a.output()).toHaveLength(1)
    expect(lines[0]).toMatch(
      new RegExp(
        `^parley\\[${a.pid}\\]: runner port 127\\.0\\.0\\.1:${port} refused 127\\.0\\.0\\.1:\\d+: not a parley runner`
      )
    )
    // Legitimate runners still form a cluster and answer across it.
    const b = await cluster.runner()
    expect(b.output().split("\n")[1]).toMatch(/ \(cluster of 2 runners\)$/)
    expect(Exit.isSuccess(await call(keyed, "127.0.0.1", port, "Ping"))).toBe(true)
    await askAndAnswer(a, [a, b], "c1")
    expect(refusals(a)).toHaveLength(1)
    expect(refusals(b)).toHaveLength(0)
  }, 180_000)

  it("the page URL's token is not $PARLEY_TOKEN: it opens the HTTP API, not the runner port; Bearer $PARLEY_TOKEN works too", async () => {
    const cluster = await Cluster.project(freshDatabase(pg!))
    clusters.push(cluster)
    const a = await cluster.runner()
    const url = a.output().split("\n")[0]!
    const web = new URL(url).searchParams.get("token")!
    expect(web).toMatch(/^[0-9a-f]{64}$/)
    expect(web).toBe(RunnerChannel.webTokenOf(Cluster.TOKEN))
    expect(a.output()).not.toContain(Cluster.TOKEN)
    const status = async (headers: Record<string, string>, p = "/api/cluster") =>
      (await fetch(`${a.base}${p}`, { headers, redirect: "manual", signal: AbortSignal.timeout(30_000) })).status
    expect({
      raw: await status({ authorization: `Bearer ${Cluster.TOKEN}` }),
      web: await status({ authorization: `Bearer ${web}` }),
      webCookie: await status({ cookie: `parley_token=${web}` }),
      rawCookie: await status({ cookie: `parley_token=${Cluster.TOKEN}` }),
      other: await status({ authorization: `Bearer ${crypto.randomBytes(32).toString("hex")}` }),
      none: await status({}),
      // $PARLEY_TOKEN is a bearer only: never in an address (nor, then, a cookie).
      rawInUrl: await status({}, `/?token=${Cluster.TOKEN}`)
    }).toStrictEqual({
      raw: 200,
      web: 200,
      webCookie: 200,
      rawCookie: 401,
      other: 401,
      none: 401,
      rawInUrl: 401
    })
    // Opening the page's URL sets the web token as the cookie.
    const opened = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(30_000) })
    expect(opened.status).toBe(303)
    expect(opened.headers.get("set-cookie")).toBe(`parley_token=${web}; Path=/; HttpOnly; SameSite=Strict`)
    // Whoever has the page URL cannot join the runner port, with keys made from its token as a runner makes them.
    const port = a.port + 10000
    await expect(RunnerChannel.connect("127.0.0.1", port, RunnerChannel.keysOf(web))).rejects.toThrow(/does not know/)
    // The cluster's own key does (the check above can fail).
    const sealed = await RunnerChannel.connect("127.0.0.1", port, RunnerChannel.keysOf(Cluster.TOKEN))
    sealed.destroy()
    expect(a.child.exitCode).toBeNull()
  }, 120_000)

  it("handshakes in progress are capped: the extra half-open connections are closed at once, a runner's handshake completes", async () => {
    const cluster = await Cluster.project(freshDatabase(pg!))
    clusters.push(cluster)
    const a = await cluster.runner()
    const port = a.port + 10000
    const keys = RunnerChannel.keysOf(Cluster.TOKEN)
    // A half-open handshake: the marker and half a nonce, then silence (held up to HANDSHAKE_MS).
    const hello = Buffer.concat([RunnerChannel.MAGIC, Buffer.alloc(16, 1)])
    const per = RunnerTransport.MAX_HANDSHAKES_PER_ADDRESS
    const closedOf = (cs: ReadonlyArray<{ closedAt: () => number | undefined }>) =>
      cs.filter((c) => c.closedAt() !== undefined).length

    // From one address, 3 × the per-address cap: all but the cap closed at once.
    const started = Date.now()
    const one = await Promise.all(
      Array.from({ length: 3 * per }, () => halfOpen(port, "127.0.0.3", hello).catch(() => undefined))
    )
    const held = one.filter((c) => c !== undefined)
    // (A connection closed before its connect callback counts as closed too.)
    const closedEarly = one.length - held.length
    await until(
      "the extra connections closed",
      async () => (closedOf(held) + closedEarly >= 2 * per ? true : undefined),
      4_000
    )
    const first = Date.now() - started
    expect(first).toBeLessThan(RunnerChannel.HANDSHAKE_MS)
    expect(closedOf(held) + closedEarly).toBe(2 * per)
    // A runner on another address completes its handshake and is answered while those are held.
    expect(await handshakeFrom(port, "127.0.0.1", keys)).toBe(true)
    expect(Exit.isSuccess(await call(RunnerTransport.layerClientProtocol(keys), "127.0.0.1", port, "Ping"))).toBe(true)
    expect(held.length - closedOf(held)).toBe(per)
    for (const c of held) c?.socket.destroy()

    // From many addresses, past the total cap: the extra ones closed at once; once those give up, a runner gets in.
    await new Promise((r) => setTimeout(r, 200))
    const addresses = Math.ceil(RunnerTransport.MAX_HANDSHAKES / per) + 2
    const many = (
      await Promise.all(
        Array.from({ length: addresses * per }, (_, i) =>
          halfOpen(port, `127.0.1.${1 + Math.floor(i / per)}`, hello).catch(() => undefined)
        )
      )
    ).filter((c) => c !== undefined)
    const extra = addresses * per - RunnerTransport.MAX_HANDSHAKES
    await until(
      "the connections past the total cap closed",
      async () => (closedOf(many) + (addresses * per - many.length) >= extra ? true : undefined),
      4_000
    )
    expect(many.length - closedOf(many)).toBe(RunnerTransport.MAX_HANDSHAKES)
    for (const c of many) c.socket.destroy()
    await until(
      "a handshake once the slots are free",
      async () => ((await handshakeFrom(port, "127.0.0.1", keys)) ? true : undefined),
      10_000
    )

    // One line for the first refusal; the rest counted for the next.
    expect(a.child.exitCode).toBeNull()
    const lines = refusals(a)
    expect(lines.length, a.output()).toBeGreaterThanOrEqual(1)
    expect(lines[0]).toMatch(
      new RegExp(
        `^parley\\[${a.pid}\\]: runner port 127\\.0\\.0\\.1:${port} refused 127\\.0\\.0\\.3:\\d+: too many handshakes in progress \\(at most 64, 8 from one address\\)$`
      )
    )
  }, 120_000)

  it.skipIf(!isRoot)(
    "another local user's genuine Ping is refused (skipped unless root: it needs useradd)",
    async () => {
      const cluster = await Cluster.project(freshDatabase(pg!))
      clusters.push(cluster)
      const a = await cluster.runner()
      const port = a.port + 10000
      const ping = await genuineBytes("Ping")
      expect(ping.length).toBeGreaterThan(8)
      const user = `parley-t-${crypto.randomBytes(4).toString("hex")}`
      execFileSync("useradd", ["-M", "-s", "/bin/sh", user])
      try {
        // python3 from PATH: any user can run it, unlike this test's Node under /root.
        const script = [
          "import socket,sys",
          `s=socket.create_connection(("127.0.0.1",${port}),timeout=5)`,
          `s.sendall(bytes.fromhex("${ping.toString("hex")}"))`,
          "n=0",
          "while True:",
          "  d=s.recv(4096)",
          "  if not d: break",
          "  n+=len(d)",
          "print(n)"
        ].join("\n")
        const r = spawnSync("runuser", ["-u", user, "--", "python3", "-c", script], {
          encoding: "utf8",
          timeout: 15_000
        })
        expect({ status: r.status, out: r.stdout.trim(), err: r.stderr }).toStrictEqual({
          status: 0,
          out: "0",
          err: ""
        })
        await until("the refusal's line", async () => (refusals(a).length > 0 ? true : undefined), 5_000)
        expect(refusals(a)).toHaveLength(1)
        expect(refusals(a)[0]).toMatch(/ refused 127\.0\.0\.1:\d+: not a parley runner/)
        expect(a.child.exitCode).toBeNull()
        expect(
          Exit.isSuccess(
            await call(
              RunnerTransport.layerClientProtocol(RunnerChannel.keysOf(Cluster.TOKEN)),
              "127.0.0.1",
              port,
              "Ping"
            )
          )
        ).toBe(true)
      } finally {
        execFileSync("userdel", ["-r", user], { stdio: "ignore" })
      }
    },
    120_000
  )

  it("--runner-host binds where asked and is announced; by default 127.0.0.1, even with --host 0.0.0.0", async () => {
    const cluster = await Cluster.project(freshDatabase(pg!))
    clusters.push(cluster)
    const a = await cluster.runner(undefined, ["--host", "0.0.0.0"])
    expect(listeningOn(a.port + 10000)).toStrictEqual(["127.0.0.1"])
    expect(listeningOn(a.port)).toStrictEqual(["0.0.0.0"])
    const b = await cluster.runner(undefined, ["--runner-host", "127.0.0.2"])
    expect(listeningOn(b.port + 10000)).toStrictEqual(["127.0.0.2"])
    expect(b.output().split("\n")[1]).toBe(`runner 127.0.0.2:${b.port + 10000} (cluster of 2 runners)`)
    await until(
      "both runners with shards",
      async () => {
        const shards = (await a.json("/api/cluster")).body.runners.map((r: { shards: number }) => r.shards)
        return shards.length === 2 && shards.every((n: number) => n > 0) ? true : undefined
      },
      30_000
    )
    // Each question is answered through the runner that does not run its turn; a secret answer too
    // (it crosses as a volatile entity message, sealed on the runner port: RunnerChannel.test).
    for (let i = 0; i < 3; i++) await askAndAnswer(i % 2 === 0 ? a : b, [a, b], `h${i}`)
    const secret = "hunter2-cluster-secret"
    expect(await askAndAnswer(b, [a, b], "s1", secret)).toBe(`Done: s1: "${secret.length} chars"`)
    for (const r of [a, b]) expect(r.output()).not.toContain("hunter2")
    const ran = (await a.json("/api/cluster")).body.runners
    expect(ran.map((r: { address: string }) => r.address).sort()).toStrictEqual([
      `127.0.0.1:${a.port + 10000}`,
      `127.0.0.2:${b.port + 10000}`
    ])
  }, 180_000)
})
