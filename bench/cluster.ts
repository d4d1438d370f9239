/**
 * `parley serve --cluster` (issue 25): 3 runners on this machine, one
 * throwaway PostgreSQL. `npm run bench -- cluster [steady|paced|chaos|failover]`, or
 * `node --import tsx bench/cluster.ts [N] [steady|paced|chaos|failover]`; N conversations
 * (default 300, `$BENCH_CLUSTER_N` under `npm run bench`); needs
 * PostgreSQL's server binaries (test/support/Pg.ts). Without a name, the
 * first three runs, each on a fresh database:
 *
 * 1. steady: N conversations, each a turn whose tool asks one question
 *    (`detached = "wait"`), created and answered through random runners:
 *    all complete; answer → the tool's re-run (its effect on disk, timed on
 *    its own, not after the POST's reply) p50/p99, and answer → the POST's
 *    reply; conversations per second.
 * 2. paced: the same, an answer every 100 ms (10 a second): the latency
 *    when the cluster is not saturated (printed, not a goal).
 * 3. chaos: paced, with one runner `kill -9`'d and restarted on its port
 *    every 5 s while the answers go in: stuck turns (not complete within
 *    30 s of their answer), lost events (a conversation whose log lacks one
 *    of its turn's entries), answers recorded twice, conversations whose
 *    `check` fails, and tools that acted twice.
 *
 * Goals (steady): answer → re-run p50 ≤ 100 ms and p99 ≤ 300 ms, the POST's
 * reply p99 ≤ 100 ms; every run: 0 stuck, 0 lost, 0 answers recorded twice.
 * `failover`: the worst kill ≤ 2 s, the health check's runner among them. Tools that acted twice are counted, not a
 * goal: a kill between a tool's end and its recorded response runs it again
 * (RFD 023). The turns' tool is a sh script ({@link DEFERRABLE_SH});
 * `$BENCH_CLUSTER_TOOL=python` runs `deferrable.py` instead.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import * as Cluster from "../test/support/Cluster.ts"
import { freshDatabase, pgSkip, psql, startPg } from "../test/support/Pg.ts"
import { WAITING } from "../test/support/Project.ts"
import { type Goal, none } from "./Harness.ts"

const repo = path.resolve(import.meta.dirname, "..")
/** `$BENCH_PARLEY_BIN`: another build to compare with (paired runs). */
const bin = process.env["BENCH_PARLEY_BIN"] ?? path.join(repo, "dist", "parley.mjs")
const main = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href
const N = Number((main ? process.argv[2] : undefined) ?? process.env["BENCH_CLUSTER_N"] ?? "300")
const CONCURRENCY = Number(process.env["BENCH_CONCURRENCY"] ?? "10")
/** Connections per runner's store pool: a build before shared lock connections (`$BENCH_PARLEY_BIN`) holds one per waiting turn. */
const POOL = Math.ceil(N / 2) + 20

const pct = (xs: ReadonlyArray<number>, p: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const live = (c: Cluster.Cluster) => c.runners.filter((r) => r.child.exitCode === null && r.child.signalCode === null)
const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(Math.random() * xs.length)]!

/** Runs `f` over `items`, `n` at a time. */
const pool = async <A, B>(
  items: ReadonlyArray<A>,
  n: number,
  f: (a: A, i: number) => Promise<B>
): Promise<Array<B>> => {
  const out: Array<B> = new Array(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) {
        const i = next++
        out[i] = await f(items[i]!, i)
      }
    })
  )
  return out
}

/** A request to a live runner, tried on another one when the runner it went to is gone (bounded: 60 s). */
const retried = async <T>(c: Cluster.Cluster, call: (r: Cluster.Runner) => Promise<T>): Promise<T> => {
  const deadline = Date.now() + 60_000
  for (;;) {
    try {
      return await call(pick(live(c)))
    } catch (e) {
      if (Date.now() > deadline) throw e
      await sleep(100)
    }
  }
}

interface Outcome {
  readonly label: Mode
  readonly seconds: number
  readonly postMs: ReadonlyArray<number>
  readonly effectMs: ReadonlyArray<number>
  readonly stuck: number
  readonly lost: number
  readonly twiceAnswered: number
  readonly checkFailed: number
  readonly toolTwice: number
  readonly refused: Record<string, number>
  readonly kills: number
}

/** A turn's log has each of its entries: the message, the tool call, its question and answer, its response, the reply. */
const whole = (entries: ReadonlyArray<{ type: string }>): boolean => {
  const count = (type: string) => entries.filter((e) => e.type === type).length
  return (
    count("chat_request") === 1 &&
    count("tool_call_request") === 1 &&
    count("inquiry_request") >= 1 &&
    count("inquiry_response") >= 1 &&
    count("tool_call_response") === 1 &&
    count("chat_response") >= 1
  )
}

/**
 * The interpreter behind `python3`: on a machine where `python3` is a
 * version manager's shim (pyenv: a bash script that starts pyenv, about
 * 250 ms), the tool's start would be measured, not the cluster. Run
 * without `site`, for the same reason.
 */
const python = (): string => {
  const r = spawnSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8", timeout: 30_000 })
  // -S: no `site` (the tool needs only the standard library). A machine's site-packages may hold `.pth` files
  // that import at every start: here one imports `certifi` (90 ms of CPU per start, 200–300 ms under load),
  // which the re-run's time measured as the cluster's.
  return `${r.status === 0 && r.stdout.trim() !== "" ? r.stdout.trim() : "python3"} -S`
}

/**
 * The tool the bench's turns call: `deferrable.py`'s `ask` mode (asks
 * `confirm`, then appends the answer to `<root>/<name>.effects`) as a sh
 * script, as the local benches' tools are (`bench/attach.ts`, `serve.ts`):
 * the row measures parley's path from an answer to the tool's re-run, not
 * an interpreter's start. `python3 -S deferrable.py` costs 22 ms of CPU
 * per start here, as much as the three runners spend on an answer; with
 * ten answers in flight on two cores it was most of the re-run's p50.
 * `$BENCH_CLUSTER_TOOL=python` runs the Python tool instead. The request
 * on stdin is parley's one-line JSON (`requestJson`): its fields are
 * taken by pattern, enough for what the bench's turns send (`mode` "ask",
 * a name and a root without quotes or backslashes, a boolean `confirm`);
 * any other mode is refused loudly.
 */
const DEFERRABLE_SH = `IFS= read -r request || [ -n "$request" ]
args=\${request#*'"arguments":{'}; args=\${args%%\\}*}
case "$args" in
  *'"mode":"ask"'*) ;;
  *) echo "deferrable.sh: only mode ask: $args" >&2; exit 2 ;;
esac
name=\${args#*'"name":"'}; name=\${name%%'"'*}
answers=\${request#*'"answers":{'}; answers=\${answers%%\\}*}
root=\${request#*'"root":"'}; root=\${root%%'"'*}
case "$answers" in
  *'"confirm":'*) ;;
  *) printf '{"type":"needs_input","question":{"id":"confirm","text":"Deploy %s?","answer_type":{"type":"boolean"}}}\\n' "$name"; exit 0 ;;
esac
answer=\${answers#*'"confirm":'}; answer=\${answer%%[,\\}]*}
printf '%s\\n' "$answer" >> "$root/$name.effects"
printf '{"type":"success","content":"%s: %s"}\\n' "$name" "$answer"
`

const TOOL = process.env["BENCH_CLUSTER_TOOL"] ?? "sh"
if (TOOL !== "sh" && TOOL !== "python")
  throw new Error(`$BENCH_CLUSTER_TOOL: "sh" or "python", not ${JSON.stringify(TOOL)}`)

/** A cluster project whose tool is {@link DEFERRABLE_SH} (or, with `$BENCH_CLUSTER_TOOL=python`, `deferrable.py`). */
const clusterProject = async (url: string, env: Record<string, string>): Promise<Cluster.Cluster> => {
  if (TOOL === "python") return Cluster.project(url, env, bin, python())
  const tools = WAITING.replace('command = "python3 deferrable.py"', 'command = "sh deferrable.sh"')
  if (tools === WAITING) throw new Error("bench/cluster.ts: the deferrable tool's command in WAITING changed")
  const cluster = await Cluster.project(url, env, bin, "python3", tools)
  fs.writeFileSync(path.join(cluster.root, "deferrable.sh"), DEFERRABLE_SH)
  return cluster
}

/** `$BENCH_CLUSTER_LOGS`: each runner's output (with `$PARLEY_CLUSTER_DEBUG`, its trace lines) kept in that directory. */
const dumpLogs = (runners: ReadonlyArray<Cluster.Runner>, label: string) => {
  const dir = process.env["BENCH_CLUSTER_LOGS"]
  if (dir === undefined) return
  fs.mkdirSync(dir, { recursive: true })
  for (const r of runners) fs.writeFileSync(path.join(dir, `${label}-${r.pid}.log`), r.output())
}

/** CPU time (user + system, ms) a process has used, from /proc (0 where there is none: not Linux, or it exited). */
const cpuMs = (pid: number): number => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return 0
  }
}

/** The PostgreSQL server's processes: its postmaster (`postmaster.pid` in its data directory) and the postmaster's children. */
export const pgPids = (dir: string): Array<number> => {
  let master: number
  try {
    master = Number(fs.readFileSync(path.join(dir, "data", "postmaster.pid"), "utf8").split("\n")[0])
  } catch {
    return []
  }
  const children = fs
    .readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8")
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === master
      } catch {
        return false
      }
    })
    .map(Number)
  return [master, ...children]
}

/**
 * What an idle cluster costs: the CPU the runners and PostgreSQL use over
 * `ms` while every turn waits for its answer (nothing asked of them), in
 * per cent of one core. Polling by the waiting turns, the liveness looks,
 * the assignment refresh and the message storage's reads all show here.
 */
const idleCpu = async (runners: ReadonlyArray<Cluster.Runner>, pgDir: string, ms: number) => {
  const pids = { runners: runners.map((r) => r.pid), pg: pgPids(pgDir) }
  const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, p) => a + cpuMs(p), 0)
  const before = { runners: runners.map((r) => cpuMs(r.pid)), pg: sum(pids.pg) }
  await sleep(ms)
  const runnersPct = runners.map((r, i) => ((cpuMs(r.pid) - before.runners[i]!) / ms) * 100)
  const pgPct = ((sum(pids.pg) - before.pg) / ms) * 100
  return { runnersPct, pgPct }
}

/** The data directory of the PostgreSQL server the run uses (for {@link idleCpu}). */
let pgDir = ""

/** The paced and chaos runs send an answer every PACE_MS (10 a second; at most {@link CONCURRENCY} in flight still). */
const PACE_MS = 100

/**
 * steady: {@link CONCURRENCY} answers kept in flight (the cluster at its full throughput: the latency goals);
 * paced: an answer every {@link PACE_MS} (10 a second, about a sixth of what three runners take here), the
 * latency a person feels when the cluster is not saturated (printed, not a goal); chaos: paced, with a runner
 * killed every 5 s.
 */
type Mode = "steady" | "paced" | "chaos"

const scenario = async (label: Mode, url: string): Promise<Outcome> => {
  const chaos = label === "chaos"
  const cluster = await clusterProject(url, { PARLEY_PG_POOL: String(POOL) })
  try {
    for (let i = 0; i < 3; i++) await cluster.runner()
    await sleep(3000) // shards spread over the three
    const names = Array.from({ length: N }, (_, i) => `c${i}`)
    const started = Date.now()
    const ids = await pool(names, CONCURRENCY, (name) =>
      retried(cluster, async (r) => {
        const res = await r.post("/api/conversations", { message: `deploy ${name}` }, 60_000)
        if (res.status !== 200) throw new Error(`create ${name}: ${res.status} ${JSON.stringify(res.body)}`)
        return res.body.conversation_id as string
      })
    )
    // Every question open (bounded: 120 s).
    const deadline = Date.now() + 120_000
    let open: Array<{ id: string; conversation_id: string }> = []
    while (open.length < N) {
      if (Date.now() > deadline) throw new Error(`${label}: only ${open.length} of ${N} questions opened`)
      await sleep(500)
      open = (await retried(cluster, (r) => r.json("/api/questions", 60_000))).body
    }
    const byConversation = new Map(open.map((q) => [q.conversation_id, q]))
    if (label === "steady") {
      const idle = await idleCpu(live(cluster), pgDir, 5000)
      console.log(
        `  idle with ${N} waiting turns (5 s): runners ${idle.runnersPct.map((p) => `${p.toFixed(1)} %`).join(", ")} of a core; PostgreSQL ${idle.pgPct.toFixed(1)} %; load average ${os.loadavg()[0]!.toFixed(1)}`
      )
    }

    let kills = 0
    let stop = false
    const chaosLoop = chaos
      ? (async () => {
          while (!stop) {
            await sleep(5000)
            if (stop) break
            const victim = pick(live(cluster))
            await cluster.kill(victim)
            kills++
            await cluster.runner(victim.port).catch((e) => console.error(`restart failed: ${e}`))
          }
        })()
      : Promise.resolve()

    const postMs: Array<number> = []
    const effectMs: Array<number> = []
    const cpuAt = () => ({
      runners: live(cluster).reduce((a, r) => a + cpuMs(r.pid), 0),
      pg: pgPids(pgDir).reduce((a, p) => a + cpuMs(p), 0)
    })
    const cpu0 = cpuAt()
    const answeredAt = new Map<string, number>()
    const refused: Record<string, number> = {}
    // The effect files are seen through inotify (fs.watch on the root; a look every 50 ms besides, in case an event
    // is missed): a 5 ms poll added up to 5 ms to each re-run's time, a third of a paced one.
    const awaited = new Map<string, () => void>()
    const watcher = fs.watch(cluster.root, (_, file) => {
      if (file !== null) awaited.get(file)?.()
    })
    const effectOf = (name: string): Promise<void> =>
      new Promise((resolve) => {
        const file = `${name}.effects`
        const since = performance.now()
        const done = () => {
          if (!awaited.delete(file)) return
          clearInterval(look)
          resolve()
        }
        const look = setInterval(() => {
          if (fs.existsSync(path.join(cluster.root, file)) || performance.now() - since > 30_000) done()
        }, 50)
        awaited.set(file, done)
        if (fs.existsSync(path.join(cluster.root, file))) done()
      })
    const began = performance.now()
    try {
      await pool(names, CONCURRENCY, async (name, i) => {
        const q = byConversation.get(ids[i]!)!
        // Paced and chaos: one answer every PACE_MS. Under chaos the kills (every 5 s) so land among the answers however
        // fast the cluster answers: unpaced, 300 answers took 5 s here and met one kill.
        if (label !== "steady") await sleep(Math.max(0, began + i * PACE_MS - performance.now()))
        const t0 = performance.now()
        answeredAt.set(name, Date.now())
        if (process.env["PARLEY_CLUSTER_DEBUG"] !== undefined)
          console.error(`bench: ${Date.now()} POST ${q.conversation_id}`)
        // The tool's re-run is timed on its own: it starts when the owner takes the answer, before the reply goes back.
        const ran = effectOf(name).then(() => effectMs.push(performance.now() - t0))
        const res = await retried(cluster, (r) =>
          r.post(`/api/conversations/${q.conversation_id}/questions/${q.id}`, { answer: true }, 60_000)
        )
        postMs.push(performance.now() - t0)
        if (process.env["PARLEY_CLUSTER_DEBUG"] !== undefined)
          console.error(`bench: ${Date.now()} replied ${q.conversation_id}`)
        if (res.status !== 200)
          refused[`${res.status} ${res.body?.error}`] = (refused[`${res.status} ${res.body?.error}`] ?? 0) + 1
        await ran
      })
    } finally {
      // Also when an answer fails: the kills and the watch end with the answers.
      stop = true
      watcher.close()
    }
    await chaosLoop
    const cpu1 = cpuAt()
    if (label === "steady")
      console.log(
        `  CPU while answering, per answer: runners ${((cpu1.runners - cpu0.runners) / N).toFixed(1)} ms, PostgreSQL ${((cpu1.pg - cpu0.pg) / N).toFixed(1)} ms; load average ${os.loadavg()[0]!.toFixed(1)}`
      )

    // Complete: the last entry is the final reply (bounded: 30 s after its answer, plus the time to look).
    let stuck = 0
    let lost = 0
    let twiceAnswered = 0
    let ended = started
    await pool(names, CONCURRENCY, async (name, i) => {
      const limit = (answeredAt.get(name) ?? Date.now()) + 30_000
      for (;;) {
        const res = await retried(cluster, (r) => r.json(`/api/conversations/${ids[i]}`, 60_000))
        const entries = res.body as Array<{ type: string; message?: string; id?: string }>
        if (entries.at(-1)?.type === "chat_response" && String(entries.at(-1)?.message).startsWith("Done:")) {
          ended = Math.max(ended, Date.now())
          if (entries.filter((e) => e.type === "inquiry_response").length !== 1) twiceAnswered++
          if (!whole(entries)) {
            lost++
            console.error(`${label}: events missing in ${ids[i]} (${name}): ${entries.map((e) => e.type).join(" ")}`)
          }
          return
        }
        if (Date.now() > limit) {
          stuck++
          console.error(`${label}: stuck ${ids[i]} (${name}): ${JSON.stringify(entries.at(-1))}`)
          return
        }
        await sleep(200)
      }
    })
    const check = spawnSync(process.execPath, [bin, "--storage", url, "conversation", "check", "--format", "json"], {
      cwd: cluster.root,
      encoding: "utf8",
      timeout: 120_000,
      maxBuffer: 64 * 1024 * 1024
    })
    const rows = JSON.parse(check.stdout || "[]") as Array<{ ok: boolean; roundtrip: string }>
    const checkFailed = N - rows.filter((r) => r.ok && r.roundtrip === "identical").length
    const toolTwice = names.filter((n) => cluster.effects(n) > 1).length
    return {
      label,
      seconds: (ended - started) / 1000,
      postMs,
      effectMs,
      stuck,
      lost,
      twiceAnswered,
      checkFailed,
      toolTwice,
      refused,
      kills
    }
  } finally {
    dumpLogs(cluster.runners, label)
    await cluster.stop()
  }
}

const print = (o: Outcome) => {
  console.log(
    `\n## ${o.label}: ${N} conversations, 3 runners, the tool in ${TOOL === "sh" ? "sh" : "python -S"}${o.label === "steady" ? `, ${CONCURRENCY} answers in flight` : `, an answer every ${PACE_MS} ms (at most ${CONCURRENCY} in flight)`}${o.kills > 0 ? `, ${o.kills} kill -9 + restart (every 5 s)` : ""}`
  )
  console.log(
    `  all complete in ${o.seconds.toFixed(1)} s: ${(N / o.seconds).toFixed(1)} conversations/s (create → last reply${o.label === "steady" ? "" : `; bounded by the pace, ${(N * PACE_MS) / 1000} s of answers`})`
  )
  console.log(
    `  answer POST → tool re-run's effect on disk: p50 ${pct(o.effectMs, 50).toFixed(0)} ms, p99 ${pct(o.effectMs, 99).toFixed(0)} ms, max ${Math.max(...o.effectMs).toFixed(0)} ms`
  )
  console.log(
    `  answer POST → its reply: p50 ${pct(o.postMs, 50).toFixed(0)} ms, p99 ${pct(o.postMs, 99).toFixed(0)} ms, max ${Math.max(...o.postMs).toFixed(0)} ms`
  )
  console.log(
    `  stuck (not complete 30 s after the answer): ${o.stuck}; lost events: ${o.lost}; answers recorded twice: ${o.twiceAnswered}; check not ok: ${o.checkFailed}; tools that acted twice: ${o.toolTwice}`
  )
  if (Object.keys(o.refused).length > 0) console.log(`  answers refused: ${JSON.stringify(o.refused)}`)
}

const goalsOf = (o: Outcome): Array<Goal> => [
  ...(o.label === "steady"
    ? [
        {
          name: `cluster ${o.label}: answer → tool re-run p50 ≤ 100 ms across runners (${N} conversations, ${CONCURRENCY} in flight)`,
          subject: { name: "p50", medianMs: pct(o.effectMs, 50) },
          floor: { name: "the issue's goal", medianMs: 100 },
          maxRatio: 1,
          note: `${(N / o.seconds).toFixed(1)} conversations/s`
        } satisfies Goal,
        {
          name: `cluster ${o.label}: answer → tool re-run p99 ≤ 300 ms across runners`,
          subject: { name: "p99", medianMs: pct(o.effectMs, 99) },
          floor: { name: "the issue's goal", medianMs: 300 },
          maxRatio: 1
        } satisfies Goal,
        {
          name: `cluster ${o.label}: answer → the POST's own reply p99 ≤ 100 ms`,
          subject: { name: "p99", medianMs: pct(o.postMs, 99) },
          floor: { name: "the issue's goal", medianMs: 100 },
          maxRatio: 1,
          note: `p50 ${pct(o.postMs, 50).toFixed(0)} ms`
        } satisfies Goal
      ]
    : []),
  none(`cluster ${o.label}: turns stuck (not complete 30 s after the answer)`, o.stuck),
  none(`cluster ${o.label}: conversations with lost events or failing check`, o.lost + o.checkFailed),
  none(
    `cluster ${o.label}: answers recorded twice`,
    o.twiceAnswered,
    `tools that acted twice: ${o.toolTwice}${o.kills > 0 ? ` (${o.kills} kills)` : ""}`
  )
]

/**
 * Failover: 30 waiting turns over 3 runners; `KILLS` times a runner is
 * `kill -9`'d — every other time the one running the engine's health check
 * (a singleton: the worst case, its peers must notice without it), else the
 * one running the most turns — and the time until every one of its turns
 * runs on another runner (`GET /api/conversations`, every 50 ms) is taken;
 * then it is restarted on its port and the shards settle.
 */
const KILLS = 6
/**
 * How long the shards settle after a restart before the next kill
 * (`$BENCH_FAILOVER_SETTLE_MS`, 4 s): shorter, a kill lands while turns are
 * still being handed to the restarted runner.
 */
const SETTLE_MS = Number(process.env["BENCH_FAILOVER_SETTLE_MS"] ?? "4000")
/**
 * `$BENCH_FAILOVER_KILL=restarted`: from the second kill on, the runner
 * restarted last is the one killed, as soon as it has taken a turn (a
 * runner that dies again while the turns of its shards are still being
 * handed to it).
 */
const KILL_RESTARTED = process.env["BENCH_FAILOVER_KILL"] === "restarted"

interface Kill {
  readonly ms: number
  readonly healthCheck: boolean
}

const failover = async (url: string): Promise<Array<Kill>> => {
  const cluster = await clusterProject(url, { PARLEY_PG_POOL: "60" })
  try {
    for (let i = 0; i < 3; i++) await cluster.runner()
    await sleep(3000)
    for (let i = 0; i < 30; i++)
      await retried(cluster, (r) => r.post("/api/conversations", { message: `deploy f${i}` }))
    const rows = async () =>
      (await retried(cluster, (r) => r.json("/api/conversations"))).body as Array<{
        id: string
        running: { pid: number } | null
      }>
    /** The live runner that runs the health check now (each runner says so in `parley_cluster_shards` every sweep). */
    const checker = async (): Promise<Cluster.Runner | undefined> => {
      const address = psql(
        url,
        "SELECT runner FROM parley_cluster_shards WHERE health_check AND at > now() - interval '3 seconds'"
      )
        .trim()
        .split("\n")[0]
      for (const r of live(cluster)) if ((await r.json("/api/cluster")).body.runner === address) return r
      return undefined
    }
    const kills: Array<Kill> = []
    let restarted: Cluster.Runner | undefined
    for (let k = 0; k < KILLS; k++) {
      let now = await rows()
      // The restarted runner is killed as soon as it has taken a turn (bounded: 10 s).
      for (const until = Date.now() + 10_000; KILL_RESTARTED && restarted !== undefined && Date.now() < until; ) {
        if (now.some((r) => r.running?.pid === restarted?.pid)) break
        await sleep(50)
        now = await rows()
      }
      const byPid = new Map<number, Array<string>>()
      for (const r of now) if (r.running !== null) byPid.set(r.running.pid, [...(byPid.get(r.running.pid) ?? []), r.id])
      const holder = KILL_RESTARTED && restarted !== undefined ? undefined : k % 2 === 0 ? await checker() : undefined
      const victim =
        (KILL_RESTARTED ? restarted : undefined) ??
        holder ??
        live(cluster).sort((a, b) => (byPid.get(b.pid)?.length ?? 0) - (byPid.get(a.pid)?.length ?? 0))[0]!
      const turns = new Set(byPid.get(victim.pid) ?? [])
      // Rows naming another process than the one holding the conversation's lock (parley_locks): that one runs the turn.
      const misnamed = psql(
        url,
        "SELECT t.pid FROM parley_cluster_turns t JOIN parley_locks l USING (conversation_id) WHERE t.pid <> l.pid"
      )
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map(Number)
      const t0 = Date.now()
      if (process.env["PARLEY_CLUSTER_DEBUG"] !== undefined) console.error(`bench: ${t0} kill ${victim.pid}`)
      await cluster.kill(victim)
      for (;;) {
        const all = await rows()
        const moved = all.filter((r) => turns.has(r.id) && r.running !== null && r.running.pid !== victim.pid)
        if (moved.length === turns.size) break
        if (Date.now() - t0 > 60_000) {
          // Which way each one is stuck: its row still names the dead runner, or it has no row (its turn ended or failed).
          const left = all
            .filter((r) => turns.has(r.id) && !moved.includes(r))
            .map((r) => `${r.id}: ${r.running === null ? "no row" : `row of pid ${r.running.pid}`}`)
          throw new Error(
            `failover: ${turns.size - moved.length} turns did not move (killed pid ${victim.pid}; ${left.join(", ")}; rows naming another runner than the lock's holder at the kill: ${misnamed.join(", ")})`
          )
        }
        await sleep(50)
      }
      kills.push({ ms: Date.now() - t0, healthCheck: holder !== undefined })
      console.log(
        `  kill -9 of a runner with ${turns.size} waiting turns${holder !== undefined ? ", running the health check" : ""}: all running elsewhere ${Date.now() - t0} ms later (rows naming another runner than the lock's holder at the kill: ${misnamed.length}, ${misnamed.filter((p) => p === victim.pid).length} of them the victim's)`
      )
      dumpLogs([victim], "failover")
      cluster.runners.splice(cluster.runners.indexOf(victim), 1)
      restarted = await cluster.runner(victim.port)
      await sleep(SETTLE_MS)
    }
    return kills
  } finally {
    dumpLogs(cluster.runners, "failover")
    await cluster.stop()
  }
}

const RUNS = ["steady", "paced", "chaos", "failover"] as const

/** `npm run bench -- cluster [steady|paced|chaos|failover]`: steady, paced and chaos by default. */
export const run = async (which = process.argv[3] ?? "all"): Promise<ReadonlyArray<Goal>> => {
  if (which !== "all" && !(RUNS as ReadonlyArray<string>).includes(which))
    throw new Error(
      `bench/cluster.ts: no run ${JSON.stringify(which)}; one of ${RUNS.join(", ")} (or none: the first three)`
    )
  if (pgSkip !== undefined) {
    console.log(`  skipped: ${pgSkip}`)
    return []
  }
  const pg = await startPg({ maxConnections: 3 * (POOL + 15) + 20 })
  pgDir = pg.dir
  try {
    const goals: Array<Goal> = []
    if (which === "failover") {
      const kills = await failover(freshDatabase(pg))
      const all = kills.map((k) => k.ms)
      const checks = kills.filter((k) => k.healthCheck).map((k) => k.ms)
      console.log(
        `\n## failover: ${kills.length} kills: ${all.join(", ")} ms (median ${pct(all, 50)} ms; health-check holder: ${checks.join(", ")} ms)`
      )
      return [
        {
          name: "cluster failover: kill -9 → every turn of the dead runner running on another, worst case ≤ 2 s",
          subject: { name: "worst", medianMs: Math.max(...all) },
          floor: { name: "the issue's goal", medianMs: 2000 },
          maxRatio: 1,
          note: `each: ${kills.map((k) => `${k.ms}${k.healthCheck ? " (health check)" : ""}`).join(", ")} ms; median ${pct(all, 50)} ms`
        }
      ]
    }
    for (const label of ["steady", "paced", "chaos"] as const) {
      if (which !== "all" && which !== label) continue
      const o = await scenario(label, freshDatabase(pg))
      print(o)
      goals.push(...goalsOf(o))
    }
    return goals
  } finally {
    pg.stop()
  }
}

if (main) {
  const { report } = await import("./Harness.ts")
  process.exitCode = report(await run(process.argv[3] ?? "all")) ? 0 : 1
}
