/**
 * `parley serve` (issue 23), against goals measured in the same run:
 *
 * - `GET /api/conversations` over 10,000 conversations (warm index), as a
 *   client sees it, vs `conversation ls --format json` as a whole process:
 *   ≤ 1.5×;
 * - 100 SSE clients on one run: every event reaches every client (checked),
 *   and the server's resident memory grows by at most 50 MB;
 * - an answer POSTed → the run takes it (its `QuestionClosed` on the event
 *   stream, in the step that starts the tool's re-run): p99 ≤ 50 ms over 100
 *   questions, one after another;
 * - a request on a connection of its own while 300 idle connections are
 *   held open (they send nothing) vs the same request without them: ≤ 2×.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as HostPath from "../src/layers/host/HostPath.ts"
import * as HostClient from "../src/layers/host/HostClient.ts"
import { median, type Goal } from "./Harness.ts"
import { eventsText } from "./listing.ts"
import { interleaved, runNode } from "./Process.ts"
import { listingStorage } from "./whole.ts"
import { addDeferrable, WAITING } from "../test/support/Project.ts"

const repo = path.resolve(import.meta.dirname, "..")
const bin = process.env["PARLEY_BENCH_BIN"] ?? path.join(repo, "dist", "parley.mjs")

export interface Served {
  readonly child: ChildProcess
  readonly base: string
  readonly auth: Record<string, string>
}

/** `parley serve --port 0` on `storage`, once it printed its address. */
export const serve = (storage: string, cwd: string, env: Record<string, string> = {}): Promise<Served> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, "--storage", storage, "serve", "--port", "0"], {
      cwd,
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, ...env }
    })
    let out = ""
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString()
      const m = /^(http:\/\/\S+)\n/m.exec(out)
      if (m !== null) {
        const url = new URL(m[1]!)
        resolve({
          child,
          base: `${url.protocol}//${url.host}`,
          auth: { authorization: `Bearer ${url.searchParams.get("token")}` }
        })
      }
    })
    child.once("exit", (code) => reject(new Error(`serve exited ${code}`)))
  })

export const stop = (s: Served) =>
  new Promise<void>((resolve) => {
    s.child.once("exit", () => resolve())
    s.child.kill("SIGTERM")
  })

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024

/** An SSE client that collects `{ id, data }` frames until the stream ends. */
export const collect = async (
  url: string,
  headers: Record<string, string>,
  onFrame?: (data: { _tag: string; [k: string]: unknown }) => void
) => {
  const res = await fetch(url, { headers: { ...headers, accept: "text/event-stream" } })
  const frames: Array<{ id: number; tag: string }> = []
  let buf = ""
  const decoder = new TextDecoder()
  const reader = res.body!.getReader()
  const opened = { res }
  const done = (async () => {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return frames
      buf += decoder.decode(value, { stream: true })
      for (let end = buf.indexOf("\n\n"); end >= 0; end = buf.indexOf("\n\n")) {
        const text = buf.slice(0, end)
        buf = buf.slice(end + 2)
        const id = /^id: ?(.*)$/m.exec(text)?.[1]
        const data = /^data: ?(.*)$/m.exec(text)?.[1]
        if (id === undefined || data === undefined) continue
        const event = JSON.parse(data) as { _tag: string }
        frames.push({ id: Number(id), tag: event._tag })
        onFrame?.(event)
      }
    }
  })()
  return { ...opened, done }
}

/** A project whose tool asks yes/no questions, and a script of `steps`. */
export const project = (root: string, steps: ReadonlyArray<unknown>) => {
  const storage = path.join(root, ".parley")
  fs.mkdirSync(storage, { recursive: true })
  fs.writeFileSync(path.join(storage, "config.toml"), WAITING)
  addDeferrable(root)
  const script = path.join(root, "script.json")
  fs.writeFileSync(script, JSON.stringify({ steps }))
  return { storage, script }
}

/** Starts a scripted conversation through the API (`POST /api/conversations`); its id. */
export const start = async (s: Served): Promise<string> => {
  const response = await fetch(`${s.base}/api/conversations`, {
    method: "POST",
    headers: { ...s.auth, "content-type": "application/json" },
    body: JSON.stringify({ message: "go", model: "scripted" })
  })
  return ((await response.json()) as { conversation_id: string }).conversation_id
}

const waitForQuestions = async (s: Served, want: number) => {
  for (let i = 0; i < 600; i++) {
    const rows = (await (await fetch(`${s.base}/api/questions`, { headers: s.auth })).json()) as Array<{
      id: string
      conversation_id: string
    }>
    if (rows.length >= want) return rows
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error("no question opened")
}

export const answer = (s: Served, id: string, inquiry: string) =>
  fetch(`${s.base}/api/conversations/${id}/questions/${inquiry}`, {
    method: "POST",
    headers: { ...s.auth, "content-type": "application/json" },
    body: JSON.stringify({ answer: true })
  })

/** GET /api/conversations vs `ls --format json`, 10,000 conversations. */
const listGoal = async (root: string): Promise<Goal> => {
  const storage = listingStorage(root, 10_000, eventsText(1, 20_000))
  runNode([bin, "--storage", storage, "conversation", "ls", "--format", "json"]) // the index, warm for both
  const s = await serve(storage, root)
  const get = async () => {
    const t0 = performance.now()
    const rows = (await (await fetch(`${s.base}/api/conversations`, { headers: s.auth })).json()) as Array<unknown>
    if (rows.length !== 10_000) throw new Error(`${rows.length} rows`)
    return performance.now() - t0
  }
  for (let i = 0; i < 2; i++) await get()
  const api: Array<number> = []
  for (let i = 0; i < 7; i++) api.push(await get())
  await stop(s)
  const [ls] = interleaved(
    [{ run: () => runNode([bin, "--storage", storage, "conversation", "ls", "--format", "json"]) }],
    7
  )
  fs.rmSync(storage, { recursive: true, force: true })
  return {
    name: "GET /api/conversations over 10,000 conversations (warm index) vs conversation ls --format json, whole process",
    subject: { name: "GET /api/conversations (request to last byte, parsed)", medianMs: median(api) },
    floor: { name: "parley conversation ls --format json", medianMs: ls!.ms },
    maxRatio: 1.5
  }
}

/** 100 SSE clients on one run: all events to all, memory growth. */
const fanOutGoal = async (root: string): Promise<Goal> => {
  const dir = path.join(root, "fanout")
  fs.mkdirSync(dir)
  const steps = [
    {
      message: "Working. " + "word ".repeat(200),
      tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "prod", mode: "ask" } }]
    },
    { message: "Done. " + "word ".repeat(400) }
  ]
  const p = project(dir, steps)
  const s = await serve(p.storage, dir, { PARLEY_SCRIPT: p.script })
  const id = await start(s)
  await waitForQuestions(s, 1)
  const before = rssMb(s.child.pid!)
  const clients = await Promise.all(
    Array.from({ length: 100 }, () => collect(`${s.base}/api/conversations/${id}/events`, s.auth))
  )
  let peak = rssMb(s.child.pid!)
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(s.child.pid!))), 20)
  await answer(s, id, "a1.confirm.1")
  const all = await Promise.all(clients.map((c) => c.done))
  clearInterval(sampler)
  peak = Math.max(peak, rssMb(s.child.pid!))
  await stop(s)
  const first = all[0]!
  const complete = first.length > 10 && first.at(-1)!.tag === "Stopped" && first.every((f, i) => f.id === i + 1)
  const same = all.every(
    (frames) =>
      frames.length === first.length && frames.every((f, i) => f.id === first[i]!.id && f.tag === first[i]!.tag)
  )
  if (!complete || !same) {
    const describe = (frames: Array<{ id: number; tag: string }>) => {
      const gap = frames.findIndex((f, i) => f.id !== i + 1)
      return `${frames.length} frames, last ${frames.at(-1)?.id}:${frames.at(-1)?.tag}, first gap at ${gap}${gap >= 0 ? ` (${frames[gap - 1]?.id}→${frames[gap]?.id})` : ""}`
    }
    throw new Error(`not every client got every event:\n${[...new Set(all.map(describe))].join("\n")}`)
  }
  return {
    name: "100 SSE clients on one run: every event reached every client; server resident memory growth",
    subject: {
      name: `growth (${before.toFixed(0)} → ${peak.toFixed(0)} MB; ${first.length} events × 100 clients)`,
      medianMs: peak - before
    },
    floor: { name: "the goal's bound", medianMs: 50 },
    maxRatio: 1,
    unit: "MB"
  }
}

/** A socket that asks for the events of `id` and never reads: a client that stopped reading. */
const nonReader = (s: Served, id: string) =>
  new Promise<net.Socket>((resolve, reject) => {
    const url = new URL(s.base)
    const socket = net.connect({ host: url.hostname, port: Number(url.port) }, () => {
      socket.write(
        `GET /api/conversations/${id}/events HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${s.auth["authorization"]}\r\nAccept: text/event-stream\r\n\r\n`
      )
      socket.pause()
      resolve(socket)
    })
    socket.once("error", reject)
  })

/**
 * How the server left a client that never read: `closed` (the connection,
 * when it fell behind and its last frame could not be written), `lagged`
 * (its response ended after a `lagged` frame: the kernel's send buffer took
 * it, as a 6.x kernel's does), or `ended` (its response ended without one:
 * the run ended before it fell behind), read now; `open` when none within 10 s.
 */
export const fateOf = (socket: net.Socket) =>
  new Promise<"closed" | "lagged" | "ended" | "open">((resolve) => {
    let tail = ""
    let lagged = false
    const timer = setTimeout(() => resolve("open"), 10_000)
    const done = (fate: "closed" | "lagged" | "ended") => {
      clearTimeout(timer)
      resolve(fate)
    }
    socket.on("data", (d: Buffer) => {
      const seen = tail + d.toString("latin1")
      lagged ||= seen.includes("event: lagged")
      tail = seen.slice(-16)
      if (tail.endsWith("\r\n0\r\n\r\n")) done(lagged ? "lagged" : "ended")
    })
    socket.once("close", () => done("closed"))
    socket.once("error", () => done("closed"))
    socket.resume()
  })

/**
 * A reader of the whole run: it follows the SSE stream and, told it fell
 * behind (a `lagged` frame), reconnects with `Last-Event-ID` as an
 * `EventSource` does. Its frames, and how many times it reconnected.
 */
const readWhole = async (s: Served, id: string) => {
  const frames: Array<{ id: number; tag: string }> = []
  let reconnects = 0
  for (;;) {
    const last = frames.at(-1)?.id
    const headers = last === undefined ? s.auth : { ...s.auth, "last-event-id": String(last) }
    const res = await fetch(`${s.base}/api/conversations/${id}/events`, {
      headers: { ...headers, accept: "text/event-stream" }
    })
    const text = await res.text()
    let lagged = false
    for (const frame of text.split("\n\n")) {
      const fid = /^id: ?(.*)$/m.exec(frame)?.[1]
      const event = /^event: ?(.*)$/m.exec(frame)?.[1]
      const data = /^data: ?(.*)$/m.exec(frame)?.[1]
      if (event === "lagged") lagged = true
      if (event === "gone") throw new Error(`the reader was told the events are gone: ${data}`)
      if (fid === undefined || data === undefined) continue
      frames.push({ id: Number(fid), tag: (JSON.parse(data) as { _tag: string })._tag })
    }
    if (!lagged) return { frames, reconnects }
    reconnects++
  }
}

/**
 * The live view of a run of 100,000 events (a reply streamed as 100,000
 * deltas) with one reader and 20 clients that never read: the reader gets
 * every event in order through the run's `Stopped`, and the server's
 * resident memory stays within the bound (the relay keeps at most
 * `LiveView.REPLAY`, each client at most `LiveView.BEHIND`).
 *
 * The bound, 256 MB: the relay's replay (16 MiB of JSON, about 100,000
 * events, some four times that as objects with their cached SSE frames),
 * about 1.5 MiB for each client that stopped reading (its queue, and the
 * chunk its connection is stuck on) until it is closed, and the garbage of
 * decoding 100,000 events that the collector has not returned yet
 * (measured on a loaded 2-core machine: 135–224 MB).
 */
const LIVE_RSS_BOUND_MB = 256
const liveGoal = async (root: string): Promise<Goal> => {
  const dir = path.join(root, "live")
  fs.mkdirSync(dir)
  const n = 100_000
  const steps = [
    { message: "Asking.", tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "prod", mode: "ask" } }] },
    { message: Array.from({ length: n }, (_, i) => `w${i} `).join("") }
  ]
  const p = project(dir, steps)
  const s = await serve(p.storage, dir, { PARLEY_SCRIPT: p.script })
  const id = await start(s)
  await waitForQuestions(s, 1)
  const before = rssMb(s.child.pid!)
  const stuck = await Promise.all(Array.from({ length: 20 }, () => nonReader(s, id)))
  const reading = readWhole(s, id)
  await new Promise((r) => setTimeout(r, 300))
  let peak = rssMb(s.child.pid!)
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(s.child.pid!))), 20)
  const t0 = performance.now()
  let got: Awaited<typeof reading>
  let fates: Array<string> = []
  try {
    await answer(s, id, "a1.confirm.1")
    got = await reading
    clearInterval(sampler)
    fates = await Promise.all(stuck.map(fateOf))
  } finally {
    clearInterval(sampler)
    for (const c of stuck) c.destroy()
    await stop(s)
  }
  const count = (fate: string) => fates.filter((f) => f === fate).length
  if (fates.includes("open")) throw new Error(`a client that never read was left open: ${fates.join(", ")}`)
  const { frames, reconnects } = got
  const ms = performance.now() - t0
  const inOrder = frames.every((f, i) => f.id === frames[0]!.id + i)
  if (!inOrder || frames.at(-1)?.tag !== "Stopped" || frames.filter((f) => f.tag === "TextDelta").length < n)
    throw new Error(
      `the reader did not get every event: ${frames.length} frames, last ${JSON.stringify(frames.at(-1))}`
    )
  return {
    name: `the live view of a run of ${n.toLocaleString("en")} deltas, 1 reader + 20 clients that never read: every event reached the reader; serve resident memory growth (bound ${LIVE_RSS_BOUND_MB} MB)`,
    subject: { name: `growth (${before.toFixed(0)} → ${peak.toFixed(0)} MB)`, medianMs: peak - before },
    floor: { name: "the bound", medianMs: LIVE_RSS_BOUND_MB },
    maxRatio: 1,
    unit: "MB",
    note: `${frames.length} frames in order through Stopped in ${(ms / 1000).toFixed(1)} s, ${reconnects} reconnect(s) after a lagged frame; of 20 clients that never read, ${count("closed")} closed for falling behind, ${count("lagged")} told so (a lagged frame) and ended, ${count("ended")} given the whole run`
  }
}

/**
 * A tool that costs next to nothing and stamps the moment its re-run starts
 * (its first instruction, ns wall clock), as issue 22's bench times an
 * answer: a `sh` script that asks `go` until it has an answer.
 */
export const QUICK = `
[conversation.tools.quick]
source = "local"
command = "sh quick.sh"
description = "Asks, then acts."
parameters = { type = "object", properties = { name = { type = "string" } }, required = ["name"] }
run = "unattended"
`
export const QUICK_SH = `request=$(cat)
case "$request" in
  *'"go"'*) date +%s%N >> starts.log; printf '{"type":"success","content":"done"}\\n' ;;
  *) printf '{"type":"needs_input","question":{"id":"go","text":"Go?","answer_type":{"type":"boolean"}}}\\n' ;;
esac
`

const p99 = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.99) - 1]!
const ms = (xs: ReadonlyArray<number>) => `p50 ${median(xs).toFixed(1)} ms, p99 ${p99(xs).toFixed(1)} ms`

/**
 * POST an answer → the tool's re-run starts (its first instruction), over
 * 100 questions; in the same run, 100 more answered by a client connected to
 * the run's host directly (issue 22's path, no HTTP): what the server adds.
 */
export const answerGoal = async (root: string): Promise<Goal> => {
  const dir = path.join(root, "answers")
  fs.mkdirSync(dir)
  const n = 100
  // Two calls a step (a turn takes at most 100 steps): one answered over HTTP, the other over the host's socket.
  const steps = [
    ...Array.from({ length: n }, (_, i) => ({
      message: `Step ${i}.`,
      tool_calls: [
        { id: `p${i}`, name: "quick", arguments: { name: `p${i}` } },
        { id: `h${i}`, name: "quick", arguments: { name: `h${i}` } }
      ]
    })),
    { message: "Done." }
  ]
  const p = project(dir, steps)
  fs.appendFileSync(path.join(p.storage, "config.toml"), QUICK)
  fs.writeFileSync(path.join(dir, "quick.sh"), QUICK_SH)
  const s = await serve(p.storage, dir, { PARLEY_SCRIPT: p.script })
  const id = await start(s)
  const opened = new Map<string, string>()
  let wake: (() => void) | undefined
  const stream = await collect(`${s.base}/api/conversations/${id}/events`, s.auth, (e) => {
    if (e._tag === "QuestionOpened") opened.set((e["call"] as { id: string }).id, e["inquiry_id"] as string)
    wake?.()
  })
  const until = async (ready: () => boolean) => {
    while (!ready()) await new Promise<void>((r) => (wake = r))
  }
  const starts = (): Array<number> => {
    const file = path.join(dir, "starts.log")
    if (!fs.existsSync(file)) return []
    return fs
      .readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => Number(BigInt(l) / 1000n) / 1000)
  }
  const viaPost: Array<number> = []
  const viaHost: Array<number> = []
  const answered: Array<number> = []
  const scope = await Effect.runPromise(Scope.make())
  const client = await Effect.runPromise(Scope.provide(scope)(HostClient.connect(HostPath.of(p.storage, id))))
  try {
    for (let i = 0; i < 2 * n; i++) {
      const call = `${i % 2 === 0 ? "p" : "h"}${i >> 1}`
      await until(() => opened.has(call))
      const inquiry = opened.get(call)!
      const sent = performance.timeOrigin + performance.now()
      if (i % 2 === 0) {
        const res = await answer(s, id, inquiry)
        if (res.status !== 200) throw new Error(`answer ${inquiry}: ${res.status} ${await res.text()}`)
        answered.push(performance.timeOrigin + performance.now() - sent)
      } else {
        await Effect.runPromise(client.Answer({ inquiry_id: inquiry, answer: true }))
      }
      while (starts().length <= i) await new Promise((r) => setTimeout(r, 1))
      ;(i % 2 === 0 ? viaPost : viaHost).push(starts()[i]! - sent)
    }
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
  await stream.done
  await stop(s)
  return {
    name: `answer POST → the tool's re-run starts (its first instruction), p99 over ${n} answers`,
    subject: { name: `p99 (${ms(viaPost)})`, medianMs: p99(viaPost) },
    floor: { name: "the goal's bound", medianMs: 50 },
    maxRatio: 1,
    note: `the same run, answered by a client connected to the host (no HTTP, issue 22's path): ${ms(viaHost)}; the POST's response: ${ms(answered)}`
  }
}

/** `GET path` on a connection of its own (a new client's first request), to its last byte. */
const once = (s: Served, pathname: string) =>
  new Promise<number>((resolve, reject) => {
    const url = new URL(s.base)
    const t0 = performance.now()
    http
      .get({ host: url.hostname, port: url.port, path: pathname, headers: s.auth, agent: false }, (res) => {
        res.resume()
        res.on("end", () =>
          res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`${res.statusCode}`))
        )
      })
      .on("error", reject)
  })

/** 300 connections that send nothing (a flood the connection cap and the header timeout bound) vs none. */
const floodGoal = async (root: string): Promise<Goal> => {
  const dir = path.join(root, "flood")
  fs.mkdirSync(dir)
  const storage = listingStorage(dir, 100, eventsText(1, 2_000))
  const s = await serve(storage, dir)
  const url = new URL(s.base)
  const sample = async (n: number) => {
    const times: Array<number> = []
    for (let i = 0; i < n; i++) times.push(await once(s, "/api/conversations"))
    return times
  }
  const fds = () => fs.readdirSync(`/proc/${s.child.pid}/fd`).length
  const settled = async (ready: () => boolean) => {
    for (let i = 0; i < 200 && !ready(); i++) await new Promise((r) => setTimeout(r, 25))
  }
  await sample(5) // warm: the index, the JIT
  // Rounds of each, one after the other: the machine's load drifts (other processes), not one case.
  const quiet: Array<number> = []
  const flooded: Array<number> = []
  let held = Number.POSITIVE_INFINITY
  for (let round = 0; round < 3; round++) {
    quiet.push(...(await sample(7)))
    const base = fds()
    const flood = await Promise.all(
      Array.from(
        { length: 300 },
        () =>
          new Promise<net.Socket>((resolve, reject) => {
            const socket = net.connect({ host: url.hostname, port: Number(url.port) }, () => resolve(socket))
            socket.on("error", reject)
          })
      )
    )
    // Connected is not yet accepted: measured once the server holds all 300.
    await settled(() => fds() >= base + 300)
    // Well within the header timeout (10 s), so the 300 stay open while it is measured.
    flooded.push(...(await sample(7)))
    held = Math.min(held, flood.filter((c) => !c.destroyed).length)
    for (const c of flood) c.destroy()
    await settled(() => fds() <= base)
  }
  await stop(s)
  if (held !== 300) throw new Error(`only ${held} of the 300 idle connections stayed open`)
  return {
    name: "GET /api/conversations (100 conversations, a new connection) while 300 idle connections are held, vs without",
    subject: { name: "with 300 idle connections", medianMs: median(flooded) },
    floor: { name: "without", medianMs: median(quiet) },
    maxRatio: 2
  }
}

export const run = async (): Promise<ReadonlyArray<Goal>> => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-serve-"))
  try {
    // `npm run bench -- serve fanout` (or `list`, `answer`, `flood`) runs one case.
    const only = process.argv[3]
    const goals: Array<Goal> = []
    if (only === undefined || only === "list") goals.push(await listGoal(root))
    if (only === undefined || only === "fanout") goals.push(await fanOutGoal(root))
    if (only === undefined || only === "answer") goals.push(await answerGoal(root))
    if (only === undefined || only === "flood") goals.push(await floodGoal(root))
    if (only === undefined || only === "live") goals.push(await liveGoal(root))
    return goals
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
}
