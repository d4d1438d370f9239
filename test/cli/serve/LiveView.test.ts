// The live view never drops or stalls (domain/run/LiveView.ts): a run of a few thousand events watched by
// one reader and 20 clients that connect and never read, over `parley serve`'s SSE endpoint and over the
// run's host socket (what `conversation attach` speaks). The reader gets every event in order through the
// run's end, the clients that never read are closed, and one that drops and resumes after the last event
// it got (`Last-Event-ID`, `Subscribe({ after })`) gets the rest without a gap or a duplicate.
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type * as RunEvent from "../../../src/domain/run/RunEvent.ts"
import * as HostClient from "../../../src/layers/host/HostClient.ts"
import {
  exited,
  hostSockets,
  persisted,
  type Project,
  spawnParley,
  waitFor,
  waitingProject,
  writeScript
} from "../../support/Project.ts"
import * as Serve from "../../support/Serve.ts"

const children: Array<ChildProcess> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
})

/** Words of 2 KB: the reply streams as `WORDS` deltas, some 12 MB: more than a client that stopped reading can be sent before it falls `LiveView.BEHIND` behind (the kernel takes up to 4 MB of it). */
const WORDS = 6000
const longReply = () =>
  Array.from({ length: WORDS }, (_, i) => `${String(i).padStart(6, "0")}${"x".repeat(2040)} `).join("")

/**
 * Clients that connect, send one request and never read, with a 4 KB receive
 * buffer (the kernel's would otherwise take megabytes of what the server
 * sends): Python, which can set it before connecting. On a line on stdin each
 * says how the server left it: `closed` (the connection ended), `lagged` (an
 * HTTP response that ended normally after its `lagged` frame: the server's
 * send buffer took what it was sent, as a 6.x kernel's does), `ended` (one
 * that ended normally without it), `open`.
 */
const STUCK = `
import json, socket, sys
kind, target, request, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
socks = []
for _ in range(n):
    s = socket.socket(socket.AF_INET if kind == "tcp" else socket.AF_UNIX, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((target.split(":")[0], int(target.split(":")[1])) if kind == "tcp" else target)
    s.sendall(request.encode())
    socks.append(s)
print("connected", flush=True)
sys.stdin.readline()
fates = []
for s in socks:
    s.settimeout(15)
    tail, fate, lagged = b"", "open", False
    try:
        while True:
            d = s.recv(1 << 20)
            if not d:
                fate = "closed"
                break
            lagged = lagged or b"event: lagged" in tail + d
            tail = (tail + d)[-16:]
            if kind == "tcp" and tail.endswith(b"\\r\\n0\\r\\n\\r\\n"):
                fate = "lagged" if lagged else "ended"
                break
    except (ConnectionResetError, BrokenPipeError):
        fate = "closed"
    except socket.timeout:
        pass
    fates.append(fate)
print(json.dumps(fates), flush=True)
`

const stuckClients = async (p: Project, kind: "tcp" | "unix", target: string, request: string, n: number) => {
  const file = path.join(p.root, "stuck.py")
  fs.writeFileSync(file, STUCK)
  const child = spawn("python3", [file, kind, target, request, String(n)], { stdio: ["pipe", "pipe", "inherit"] })
  children.push(child)
  let out = ""
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()))
  await waitFor("the clients that never read to connect", () => out.startsWith("connected\n"))
  return {
    /** How the server left each, once it has read what is there. */
    fates: async (): Promise<Array<string>> => {
      child.stdin!.write("look\n")
      await waitFor("the clients' fates", () => out.split("\n").length > 2, 60_000)
      return JSON.parse(out.split("\n")[1]!) as Array<string>
    }
  }
}

/** A run whose first step waits for an answer and whose second streams the long reply. */
const startRun = async (p: Project) => {
  const script = writeScript(p, "s.json", [
    { message: "Asking.", tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "prod", mode: "ask" } }] },
    { message: longReply() }
  ])
  const child = spawnParley(p, ["query", "--new", "go", "--script", script])
  children.push(child)
  await waitFor("the question", () => persisted(p).some((e) => e.type === "inquiry_request"))
  await waitFor("the host's socket", () => hostSockets(p).length === 1)
  const id = hostSockets(p)[0]!.replace(".sock", "")
  return { child, id, socket: path.join(p.storage, "run", `${id}.sock`) }
}

/**
 * Reads SSE frames until the stream ends; `stopAfter`: drops the connection
 * after that many. Told it fell behind (`lagged`), it reconnects after the
 * last event it got, as an `EventSource` does: `reconnects` counts those.
 */
const readFrames = async (url: string, headers: Record<string, string>, stopAfter = Infinity) => {
  const frames: Array<Serve.Frame> = []
  let reconnects = 0
  let stream = await Serve.sse(url, headers)
  for (;;) {
    if (frames.length >= stopAfter) {
      stream.close()
      return Object.assign(frames, { reconnects })
    }
    const f = await stream.next(60_000)
    if (f?.event === "lagged") {
      reconnects++
      stream = await Serve.sse(url, { ...headers, "last-event-id": frames.at(-1)?.id ?? "0" })
      continue
    }
    if (f === undefined) return Object.assign(frames, { reconnects })
    frames.push(f)
  }
}

const expectWhole = (seqs: ReadonlyArray<number>, from: number, lastTag: string | undefined) => {
  expect(seqs.length).toBeGreaterThan(WORDS)
  expect(seqs).toStrictEqual(seqs.map((_, i) => from + i))
  expect(lastTag).toBe("Stopped")
}

describe("the live view: one reader and 20 clients that never read", () => {
  it("over SSE: the reader gets every event through the end, the others are closed, a resume has no gap or duplicate", async () => {
    const p = waitingProject()
    const server = await Serve.start(p)
    children.push(server.child)
    const run = await startRun(p)
    const url = `${server.base}/api/conversations/${run.id}/events`
    const host = new URL(server.base).host
    const stuck = await stuckClients(
      p,
      "tcp",
      host,
      `GET /api/conversations/${run.id}/events HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${server.token}\r\nAccept: text/event-stream\r\n\r\n`,
      20
    )
    const reading = readFrames(url, server.auth)
    // One that drops 500 events into the reply, then resumes after the last one it got.
    const dropping = readFrames(url, server.auth, 520)
    expect((await server.post(`/api/conversations/${run.id}/questions/a1.confirm.1`, { answer: true })).status).toBe(
      200
    )
    const first = await dropping
    const resumed = await readFrames(url, { ...server.auth, "last-event-id": first.at(-1)!.id! })

    const frames = await reading
    expect(frames.every((f) => f.event === undefined)).toBe(true) // no gone frame
    expectWhole(
      frames.map((f) => Number(f.id)),
      1,
      JSON.parse(frames.at(-1)!.data)._tag
    )
    const whole = [...first, ...resumed]
    expectWhole(
      whole.map((f) => Number(f.id)),
      1,
      JSON.parse(whole.at(-1)!.data)._tag
    )
    expect(whole.map((f) => f.data)).toStrictEqual(frames.map((f) => f.data))
    expect(await exited(run.child)).toBe(0)
    // Each fell behind (12 MB is more than the kernel's buffers take): closed, or, when the server's
    // send buffer had room for its `lagged` frame, told so and ended. None is left hanging or given the run.
    const fates = await stuck.fates()
    expect(fates.filter((f) => f !== "closed" && f !== "lagged")).toStrictEqual([])
    // The server goes on: a client resuming just after the run ended still gets the rest.
    const late = await readFrames(url, { ...server.auth, "last-event-id": "3" })
    expect(late.map((f) => f.data)).toStrictEqual(frames.slice(3).map((f) => f.data))
    expect(await server.stop()).toBe(143)
  }, 120_000)

  it("over the host's socket (what attach speaks): the same, and the run does not wait for the clients that never read", async () => {
    const p = waitingProject()
    const run = await startRun(p)
    const request = `${JSON.stringify({ _tag: "Request", id: "1", tag: "Subscribe", payload: { after: 0 }, headers: [] })}\n`
    const stuck = await stuckClients(p, "unix", run.socket, request, 20)
    // As attach follows: told it fell behind, it subscribes again after the last event it got.
    const follow = (after: number, take = Infinity) =>
      Effect.scoped(
        Effect.gen(function* () {
          const client = yield* HostClient.connect(run.socket)
          const got: Array<RunEvent.Sequenced> = []
          for (;;) {
            const lagged = yield* Stream.runForEach(
              Stream.take(client.Subscribe({ after: got.at(-1)?.seq ?? after }), take - got.length),
              (e) => Effect.sync(() => void got.push(e))
            ).pipe(
              Effect.as(false),
              Effect.catchTag("LiveViewLagged", () => Effect.succeed(true))
            )
            if (!lagged) return got
          }
        })
      )
    const reading = Effect.runPromise(follow(0))
    const dropping = Effect.runPromise(follow(0, 520))
    const answered = Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(HostClient.connect(run.socket), (c) => c.Answer({ inquiry_id: "a1.confirm.1", answer: true }))
      )
    )
    await answered
    const first = await dropping
    const resumed = await Effect.runPromise(follow(first.at(-1)!.seq))
    const events = await reading
    expectWhole(
      events.map((e) => e.seq),
      1,
      events.at(-1)?.event._tag
    )
    const whole = [...first, ...resumed]
    expectWhole(
      whole.map((e) => e.seq),
      1,
      whole.at(-1)?.event._tag
    )
    // The run ends and its process exits without waiting for the clients that never read.
    const t0 = Date.now()
    expect(await exited(run.child)).toBe(0)
    expect(Date.now() - t0).toBeLessThan(10_000)
    expect(await stuck.fates()).toStrictEqual(Array.from({ length: 20 }, () => "closed"))
    // A real `conversation attach` of a finished run says there is none (its end is on disk).
    expect(persisted(p).some((e) => e.type === "chat_response")).toBe(true)
  }, 120_000)
})
