/**
 * `parley ask` benchmarks (docs/ask.md, docs/startup.md#start-up-of-parley-ask):
 * - start-up: `parley ask` started → its question listed (the conversation's
 *   host socket is up, so the inbox, `attach`, `serve` and its page list it),
 *   against `conversation ls` start-up to exit, interleaved: ≤ 2×. Whole
 *   processes, timed from outside; the socket is polled every millisecond.
 *
 * - answer POSTed (`parley serve`'s API) → `parley ask` exits with it: p99
 *   ≤ 2× the p99 of answer POSTed → a local tool's re-run starts, measured in
 *   the same run by `serve.ts`'s row (`answerGoal`), both runs watched by an
 *   SSE client (unwatched asks are said beside).
 *
 * `npm run bench -- ask` runs only these; `npm run bench -- ask startup` the first.
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type Goal, median } from "./Harness.ts"
import * as Serve from "./serve.ts"

const repo = path.resolve(import.meta.dirname, "..")
const bin = () => process.env["PARLEY_BENCH_BIN"] ?? path.join(repo, "dist", "parley.mjs")

/** One `parley ask --new`: ms from spawn until a socket appears in the storage's run directory; the asker is then stopped. */
const askOnce = (storage: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const run = path.join(storage, "run")
    fs.rmSync(run, { recursive: true, force: true })
    const t0 = performance.now()
    const child = spawn(
      process.execPath,
      [bin(), "--storage", storage, "ask", "Deploy?", "--new", "--timeout", "60s"],
      {
        cwd: storage,
        stdio: ["ignore", "ignore", "pipe"]
      }
    )
    let stderr = ""
    child.stderr.on("data", (b: Buffer) => void (stderr += b.toString()))
    const bound = setTimeout(() => child.kill("SIGKILL"), 30_000)
    let listedMs: number | undefined
    child.on("exit", (code) => {
      clearTimeout(bound)
      if (listedMs !== undefined) resolve(listedMs)
      else reject(new Error(`parley ask exited (${code}) before its question was listed: ${stderr}`))
    })
    const poll = () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      let up = false
      try {
        up = fs.readdirSync(run).some((f) => f.endsWith(".sock"))
      } catch {
        // The run directory is made with the socket.
      }
      if (!up) return void setTimeout(poll, 1)
      listedMs = performance.now() - t0
      child.kill("SIGTERM")
    }
    poll()
  })

/** One `conversation ls` of the same storage, spawn to exit. */
const lsOnce = (storage: string): number => {
  const t0 = performance.now()
  const r = spawnSync(process.execPath, [bin(), "--storage", storage, "conversation", "ls"], { encoding: "utf8" })
  if (r.status !== 0) throw new Error(`conversation ls failed: ${r.stderr}`)
  return performance.now() - t0
}

/** `parley ask` start-up to its question listed, against `conversation ls` start-up, interleaved. */
const askStartup = async (): Promise<Goal> => {
  // Short: the socket must sit in the storage's own run directory (a unix socket path is ≤ ~107 bytes).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pa-"))
  const storage = path.join(dir, ".parley")
  fs.mkdirSync(storage, { recursive: true })
  const ask: Array<number> = []
  const ls: Array<number> = []
  try {
    // Two warm-ups each (Node's compile cache is written on the first run), then interleaved rounds.
    for (let i = 0; i < 17; i++) {
      const a = await askOnce(storage)
      const l = lsOnce(storage)
      if (i >= 2) ask.push(a), ls.push(l)
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
  return {
    name: "start-up: parley ask → its question listed (host socket up), against conversation ls start-up",
    subject: { name: "parley ask, to question listed", medianMs: median(ask) },
    floor: { name: "parley conversation ls (a storage of asks)", medianMs: median(ls) },
    maxRatio: 2,
    note: `over ${ask.length} interleaved runs`
  }
}

const p99 = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.99) - 1]!

/** The open question `serve` lists, once it does (polled every 5 ms, bounded). */
const listedQuestion = async (s: Serve.Served): Promise<{ id: string; conversation_id: string }> => {
  for (let i = 0; i < 6000; i++) {
    const rows = (await (await fetch(`${s.base}/api/questions`, { headers: s.auth })).json()) as Array<{
      id: string
      conversation_id: string
    }>
    if (rows.length > 0) return rows[0]!
    await new Promise((r) => setTimeout(r, 5))
  }
  throw new Error("parley ask's question was never listed")
}

/** Watches the conversation `id` as the page does (the server then follows its run); resolves once the question is seen (bounded: 10 s). */
const follow = async (s: Serve.Served, id: string) => {
  let seen: () => void = () => {}
  const opened = new Promise<void>((resolve) => (seen = resolve))
  const stream = await Serve.collect(`${s.base}/api/conversations/${id}/events`, s.auth, (e) => {
    if (e._tag === "QuestionOpened") seen()
  })
  if (!stream.res.ok) throw new Error(`watching ${id}: ${stream.res.status}`)
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    opened,
    stream.done.then(() => Promise.reject(new Error(`watching ${id}: the stream ended before its question`))),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`watching ${id}: no question within 10 s`)), 10_000)
    })
  ]).finally(() => clearTimeout(timer))
  return stream
}

/** One `parley ask`, answered over the API once listed (and, `watched`, followed as the page follows it): POST → exit, ms. */
const askAnswered = async (s: Serve.Served, dir: string, storage: string, i: number, watched: boolean) => {
  const child = spawn(process.execPath, [bin(), "--storage", storage, "ask", `Go ${i}?`, "--timeout", "60s"], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  child.stdout.on("data", (b: Buffer) => void (out += b.toString()))
  child.stderr.on("data", (b: Buffer) => void (out += b.toString()))
  const exited = new Promise<number>((resolve) => child.on("exit", (code) => resolve(code ?? -1)))
  const q = await listedQuestion(s)
  const stream = watched ? await follow(s, q.conversation_id) : undefined
  const sent = performance.now()
  const res = await Serve.answer(s, q.conversation_id, q.id)
  if (res.status !== 200) throw new Error(`answer ${q.id}: ${res.status} ${await res.text()}`)
  const code = await exited
  const ms = performance.now() - sent
  if (code !== 0 || out !== "yes\n") throw new Error(`parley ask exited ${code}: ${out}`)
  await stream?.done
  return ms
}

const figures = (xs: ReadonlyArray<number>) => `p50 ${median(xs).toFixed(1)} ms, p99 ${p99(xs).toFixed(1)} ms`

/**
 * Answer POSTed → `parley ask` exits (the asker took the answer from its host,
 * recorded it and printed it), over `n` asks in one conversation, one at a
 * time; against the p99 of answer POSTed → a tool's re-run starts. That run
 * is watched (an SSE client: the server answers over its one connection), so
 * the goal's asks are watched too; unwatched ones, in turn with them, are
 * answered over a connection of the POST's own (its `Hello` and `Info` first)
 * and said beside.
 */
const answeredGoal = async (): Promise<Goal> => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "pa-"))
  try {
    const reRun = await Serve.answerGoal(root)
    const dir = path.join(root, "ask")
    const storage = path.join(dir, ".parley")
    fs.mkdirSync(storage, { recursive: true })
    const s = await Serve.serve(storage, dir)
    // As many as the floor's answers (100): a p99 over fewer samples is their maximum, which the floor's p99 drops.
    const n = 100
    const watched: Array<number> = []
    const unwatched: Array<number> = []
    try {
      for (let i = 0; i < 2 * n; i++) {
        const ms = await askAnswered(s, dir, storage, i, i % 2 === 0)
        ;(i % 2 === 0 ? watched : unwatched).push(ms)
      }
    } finally {
      await Serve.stop(s)
    }
    return {
      name: `answer POST → parley ask exits with it, p99 over ${n} watched asks, against answer POST → a watched tool's re-run starts (p99)`,
      subject: { name: `parley ask exits (${figures(watched)})`, medianMs: p99(watched) },
      floor: { name: `a tool's re-run starts (${reRun.subject.name})`, medianMs: reRun.subject.medianMs },
      maxRatio: 2,
      note: `unwatched asks, in turn with them (the POST opens a connection of its own): ${figures(unwatched)}, ${(p99(unwatched) / reRun.subject.medianMs).toFixed(2)}× the floor`
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
}

export const run = async (): Promise<ReadonlyArray<Goal>> => {
  if (!fs.existsSync(path.join(repo, "dist", "parley.mjs")))
    spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: repo })
  const goals = [await askStartup()]
  if (process.argv[3] !== "startup") goals.push(await answeredGoal())
  return goals
}
