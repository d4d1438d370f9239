/**
 * Issue 22's numbers, on a real host (`parley query` with a question open,
 * no terminal, `detached = "wait"`):
 *
 * - `conversation attach` to its first event on screen (the run so far,
 *   replayed), whole-process, vs `conversation print` of the same
 *   conversation to exit (goal ≤ 1.5×);
 * - an answer offered by a connected client → the tool runs again: from the
 *   offer leaving the client (over an open connection: no process start-up
 *   counted) to the tool's first instruction (it stamps the time as it
 *   starts), over 200 answers; goal p99 ≤ 50 ms;
 * - the host's RSS growth with 20 attached clients while 50 questions open
 *   and close under them (every event fanned out to 20); goal ≤ 20 MB.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as HostClient from "../src/layers/host/HostClient.ts"
import { type Goal, median } from "./Harness.ts"

const repo = path.resolve(import.meta.dirname, "..")
const bin = process.env["PARLEY_BENCH_BIN"] ?? path.join(repo, "dist", "parley.mjs")

/** A tool that stamps its start (ns, wall clock) and asks q<n> for its n-th run, up to COUNT. */
const TOOL = `#!/bin/sh
date +%s%N >> starts.log
cat > /dev/null
n=$(wc -l < starts.log)
if [ "$n" -gt "$COUNT" ]; then printf '{"type":"success","content":"done"}\\n'; exit 0; fi
printf '{"type":"needs_input","question":{"id":"q%d","text":"Go on?","answer_type":{"type":"boolean"}}}\\n' "$n"
`

const config = (count: number) => `
[conversation.tools.stamp]
source = "local"
command = "env COUNT=${count} sh stamp.sh"
description = "Stamps its start and asks."
parameters = { type = "object", properties = {} }
run = "unattended"

[conversation.inquiry]
detached = "wait"
wait_timeout = "10m"
`

interface Host {
  readonly root: string
  readonly storage: string
  readonly child: ChildProcess
  readonly id: string
  readonly socket: string
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Starts a host whose tool asks `count` questions in turn; resolves once the first is open. */
const startHost = async (count: number): Promise<Host> => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-attach-"))
  const storage = path.join(root, ".parley")
  fs.mkdirSync(storage)
  fs.writeFileSync(path.join(storage, "config.toml"), config(count))
  fs.writeFileSync(path.join(root, "stamp.sh"), TOOL)
  const script = path.join(root, "s.json")
  fs.writeFileSync(
    script,
    JSON.stringify({
      steps: [{ message: "Stamping.", tool_calls: [{ id: "t1", name: "stamp", arguments: {} }] }, { message: "Done." }]
    })
  )
  const child = spawn(process.execPath, [bin, "--storage", storage, "query", "--new", "go", "--script", script], {
    cwd: root,
    stdio: "ignore"
  })
  const run = path.join(storage, "run")
  const deadline = Date.now() + 20_000
  for (;;) {
    const sock = fs.existsSync(run) ? fs.readdirSync(run).find((n) => n.endsWith(".sock")) : undefined
    if (sock !== undefined && fs.existsSync(path.join(root, "starts.log"))) {
      return { root, storage, child, id: sock.replace(".sock", ""), socket: path.join(run, sock) }
    }
    if (Date.now() > deadline) throw new Error("the bench host did not start")
    await sleep(20)
  }
}

const stopHost = (host: Host) => {
  host.child.kill("SIGKILL")
  fs.rmSync(host.root, { recursive: true, force: true })
}

/**
 * ms from spawn to the first byte the command writes, or to its exit. At its first byte an attach is sent
 * SIGTERM (it detaches, as from a closed terminal: Ctrl-C would stop the run), and the figure is given once
 * it has exited, so none lingers into the next. Not kill -9: a run killed in its first seconds costs the
 * next one its code cache (src/layers/file/CodeCache.ts, guard).
 */
const firstOutput = (args: ReadonlyArray<string>, cwd: string, untilExit: boolean): Promise<number> =>
  new Promise((resolve, reject) => {
    const t0 = performance.now()
    let first: number | undefined
    const child = spawn(process.execPath, [bin, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] })
    const seen = () => {
      if (untilExit || first !== undefined) return
      first = performance.now() - t0
      child.kill("SIGTERM")
    }
    child.stdout!.once("data", seen)
    child.stderr!.once("data", seen)
    child.once("error", reject)
    child.once("exit", () => resolve(first ?? performance.now() - t0))
  })

const attachVsPrint = async (host: Host): Promise<Goal> => {
  const attach: Array<number> = []
  const print: Array<number> = []
  for (let i = 0; i < 12; i++) {
    // Interleaved: load from elsewhere weighs on both alike.
    attach.push(await firstOutput(["--storage", host.storage, "conversation", "attach", host.id], host.root, false))
    print.push(await firstOutput(["--storage", host.storage, "conversation", "print", host.id], host.root, true))
  }
  return {
    name: "conversation attach: first event on screen vs conversation print of the same conversation (whole process)",
    subject: { name: "attach, to its first output", medianMs: median(attach.slice(2)) },
    floor: { name: "print, to exit", medianMs: median(print.slice(2)) },
    maxRatio: 1.5
  }
}

const starts = (host: Host): Array<number> =>
  fs
    .readFileSync(path.join(host.root, "starts.log"), "utf8")
    .trim()
    .split("\n")
    .map((l) => Number(BigInt(l) / 1000n) / 1000)

/** Waits until the tool has stamped its n-th start. */
const until = async (host: Host, n: number) => {
  while (starts(host).length < n) await sleep(1)
}

/** Waits until question `n` is open: asked by the tool's n-th run, recorded and registered by the host. */
const opened = (host: Host, client: HostClient.Client, n: number) =>
  Effect.gen(function* () {
    yield* Effect.promise(() => until(host, n))
    for (;;) {
      const info = yield* client.Info()
      if (info.open.some((q) => q.inquiry_id === `t1.q${n}.1`)) return
      yield* Effect.sleep("1 millis")
    }
  })

const answerToRerun = async (host: Host, answers: number): Promise<{ goal: Goal; p50: number }> => {
  const latencies: Array<number> = []
  await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const client = yield* HostClient.connect(host.socket)
        for (let n = 1; n <= answers; n++) {
          yield* opened(host, client, n)
          const sent = performance.timeOrigin + performance.now()
          yield* client.Answer({ inquiry_id: `t1.q${n}.1`, answer: true })
          yield* Effect.promise(() => until(host, n + 1))
          latencies.push(starts(host)[n]! - sent)
        }
      })
    )
  )
  const sorted = [...latencies].sort((a, b) => a - b)
  const p99 = sorted[Math.ceil(sorted.length * 0.99) - 1]!
  const p50 = median(sorted)
  return {
    p50,
    goal: {
      name: `answer offered by a connected client → the tool runs again, p99 over ${answers} answers (goal: ≤ 50 ms)`,
      subject: { name: "p99", medianMs: p99 },
      floor: { name: "the goal", medianMs: 50 },
      maxRatio: 1,
      note: `p50 ${p50.toFixed(1)} ms, max ${sorted[sorted.length - 1]!.toFixed(1)} ms`
    }
  }
}

const rssOf = (pid: number): number =>
  Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024

const rssWithClients = async (host: Host, clients: number, questions: number): Promise<Goal> => {
  let before = 0
  let after = 0
  await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const answerer = yield* HostClient.connect(host.socket)
        // Warm the host up first (its first answers, its first client), then measure from there.
        yield* opened(host, answerer, 1)
        yield* answerer.Answer({ inquiry_id: "t1.q1.1", answer: true })
        yield* Effect.promise(() => until(host, 2))
        yield* Effect.sleep("300 millis")
        before = rssOf(host.child.pid!)
        const followers = yield* Effect.forEach(Array.from({ length: clients }), () =>
          Effect.flatMap(HostClient.connect(host.socket), (c) =>
            Effect.forkScoped(Stream.runDrain(c.Subscribe({ after: 0, attend: true })))
          )
        )
        for (let n = 2; n < 2 + questions; n++) {
          yield* opened(host, answerer, n)
          yield* answerer.Answer({ inquiry_id: `t1.q${n}.1`, answer: true })
        }
        yield* Effect.promise(() => until(host, 2 + questions))
        after = rssOf(host.child.pid!)
        yield* Effect.forEach(followers, Fiber.interrupt)
      })
    )
  )
  return {
    name: `host RSS growth with ${clients} attached clients while ${questions} questions open and close (goal: ≤ 20 MB)`,
    subject: { name: "RSS growth", medianMs: after - before },
    floor: { name: "the goal", medianMs: 20 },
    maxRatio: 1,
    unit: "MB",
    note: `RSS ${before.toFixed(1)} → ${after.toFixed(1)} MB`
  }
}

export const run = async (): Promise<ReadonlyArray<Goal>> => {
  const goals: Array<Goal> = []
  const first = await startHost(1000)
  try {
    goals.push(await attachVsPrint(first))
    goals.push((await answerToRerun(first, 200)).goal)
  } finally {
    stopHost(first)
  }
  const second = await startHost(1000)
  try {
    goals.push(await rssWithClients(second, 20, 50))
  } finally {
    stopHost(second)
  }
  return goals
}
