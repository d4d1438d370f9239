/**
 * Notifications' numbers (docs/questions-and-approvals.md#notifications):
 *
 * - their cost to a run: the same scripted `parley query` (one reply, its events told to a
 *   webhook) with the webhook's receiver down (a refused connection: the worst a receiver can
 *   do short of hanging), vs without `[notify]`. Delivery is spooled and done by fibers of its
 *   own, so the run must not wait for it; goal ≤ 1.2×;
 * - how soon a person hears of a question: question opened → its `question_opened` webhook
 *   received, p99, against the same run's question opened → an attached client (what
 *   `conversation attach` prompts from) has it; goal ≤ 2×. Both are timed from the tool's own
 *   start stamp, just before it asks, so both include the host's recording of the question.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as HostClient from "../src/layers/host/HostClient.ts"
import { type Goal, median } from "./Harness.ts"
import { interleaved, runNode } from "./Process.ts"

const repo = path.resolve(import.meta.dirname, "..")
const bin = process.env["PARLEY_BENCH_BIN"] ?? path.join(repo, "dist", "parley.mjs")

/** A port nothing listens on (taken, then freed). */
const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo // a TCP listen always has one
      server.close(() => resolve(port))
    })
  })

const project = (notify: string): { readonly storage: string; readonly script: string } => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-notify-"))
  const storage = path.join(root, ".parley")
  fs.mkdirSync(storage)
  fs.writeFileSync(path.join(storage, "config.toml"), notify)
  const script = path.join(root, "s.json")
  fs.writeFileSync(script, JSON.stringify({ steps: [{ message: "Hello." }] }))
  return { storage, script }
}

/** Wall-clock ms with sub-ms precision (the tool's stamps are wall-clock ns). */
const wall = () => performance.timeOrigin + performance.now()

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

interface Hook {
  readonly url: string
  /** When each question_opened arrived (its headers), by inquiry id. */
  readonly arrived: Map<string, number>
  readonly close: () => void
}

/** A webhook receiver on 127.0.0.1 that stamps each question_opened as its request arrives. */
const hook = (): Promise<Hook> =>
  new Promise((resolve) => {
    const arrived = new Map<string, number>()
    const server = http.createServer((req, res) => {
      const at = wall()
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>
        if (body["event"] === "question_opened" && !arrived.has(String(body["inquiry_id"])))
          arrived.set(String(body["inquiry_id"]), at)
        res.writeHead(200).end()
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo // a TCP listen always has one
      resolve({
        url: `http://127.0.0.1:${port}/hook`,
        arrived,
        close: () => {
          server.closeAllConnections()
          server.close()
        }
      })
    })
  })

/** A tool that stamps its start (ns, wall clock) and asks q<n> on its n-th run. */
const TOOL = `#!/bin/sh
date +%s%N >> starts.log
cat > /dev/null
n=$(wc -l < starts.log)
printf '{"type":"needs_input","question":{"id":"q%d","text":"Go on?","answer_type":{"type":"boolean"}}}\\n' "$n"
`

/** A run whose tool asks question after question, told to `url`; resolves once its host listens. */
const startAsker = async (url: string) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-notify-"))
  const storage = path.join(root, ".parley")
  fs.mkdirSync(storage)
  fs.writeFileSync(
    path.join(storage, "config.toml"),
    `[conversation.tools.stamp]\nsource = "local"\ncommand = "sh stamp.sh"\ndescription = "Stamps its start and asks."\nparameters = { type = "object", properties = {} }\nrun = "unattended"\n\n[conversation.inquiry]\ndetached = "wait"\nwait_timeout = "10m"\n\n[notify]\nwebhook = { url = "${url}", events = ["question_opened"] }\n`
  )
  fs.writeFileSync(path.join(root, "stamp.sh"), TOOL)
  const script = path.join(root, "s.json")
  const steps = [
    { message: "Stamping.", tool_calls: [{ id: "t1", name: "stamp", arguments: {} }] },
    { message: "Done." }
  ]
  fs.writeFileSync(script, JSON.stringify({ steps }))
  const child: ChildProcess = spawn(
    process.execPath,
    [bin, "--storage", storage, "query", "--new", "go", "--script", script],
    { cwd: root, stdio: "ignore" }
  )
  const runDir = path.join(storage, "run")
  const deadline = Date.now() + 20_000
  for (;;) {
    const sock = fs.existsSync(runDir) ? fs.readdirSync(runDir).find((n) => n.endsWith(".sock")) : undefined
    if (sock !== undefined) return { root, child, socket: path.join(runDir, sock) }
    if (Date.now() > deadline) throw new Error("the bench run did not start")
    await sleep(20)
  }
}

const p99Of = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.99) - 1]!

/** Question opened → webhook received vs → an attached client has it, over `count` questions of one run. */
const openedToTold = async (count: number): Promise<Goal> => {
  const receiver = await hook()
  const asker = await startAsker(receiver.url)
  const webhook: Array<number> = []
  const attached: Array<number> = []
  try {
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const client = yield* HostClient.connect(asker.socket)
          const seen = new Map<string, number>()
          yield* Effect.forkScoped(
            Stream.runForEach(client.Subscribe({ after: 0, attend: true }), (s) =>
              Effect.sync(() => {
                if (s.event._tag === "QuestionOpened") seen.set(s.event.inquiry_id, wall())
              })
            )
          )
          for (let n = 1; n <= count; n++) {
            const id = `t1.q${n}.1`
            const deadline = Date.now() + 30_000
            while (!(seen.has(id) && receiver.arrived.has(id))) {
              if (Date.now() > deadline) return yield* Effect.die(new Error(`question ${n} was not told in 30 s`))
              yield* Effect.sleep("1 millis")
            }
            const stamps = fs.readFileSync(path.join(asker.root, "starts.log"), "utf8").trim().split("\n")
            const opened = Number(BigInt(stamps[n - 1]!) / 1000n) / 1000
            webhook.push(receiver.arrived.get(id)! - opened)
            attached.push(seen.get(id)! - opened)
            yield* client.Answer({ inquiry_id: id, answer: true })
          }
        })
      )
    )
  } finally {
    asker.child.kill("SIGKILL")
    receiver.close()
    fs.rmSync(asker.root, { recursive: true, force: true })
  }
  // The first questions warm both paths up (the first connection, the first spool entry).
  const [told, prompted] = [webhook.slice(5), attached.slice(5)]
  return {
    name: `question opened → webhook received vs → an attached client has it, p99 over ${told.length} questions of one run`,
    subject: { name: "webhook, p99", medianMs: p99Of(told) },
    floor: { name: "attached client, p99", medianMs: p99Of(prompted) },
    maxRatio: 2,
    note: `p50 webhook ${median(told).toFixed(1)} ms, attached ${median(prompted).toFixed(1)} ms (from the tool's start stamp)`
  }
}

export const run = async (): Promise<ReadonlyArray<Goal>> => {
  const port = await freePort()
  const down = project(`[notify]\nwebhook = { url = "http://127.0.0.1:${port}/hook" }\n`)
  const plain = project("")
  const query = (p: { readonly storage: string; readonly script: string }) => () =>
    runNode([bin, "--storage", p.storage, "query", "--new", "hi", "--script", p.script])
  const [notified, without] = interleaved([{ run: query(down) }, { run: query(plain) }], 9)
  const spooled = fs.readdirSync(path.join(down.storage, "run", "notify")).filter((n) => n.endsWith(".json")).length
  for (const p of [down, plain]) fs.rmSync(path.dirname(p.storage), { recursive: true, force: true })
  const told = await openedToTold(105)
  return [
    told,
    {
      name: "a run whose webhook receiver is down vs the same run without [notify]",
      subject: { name: "query, webhook refused", medianMs: notified!.ms },
      floor: { name: "query, no [notify]", medianMs: without!.ms },
      maxRatio: 1.2,
      note: `${spooled} run_ended events left in the spool for the storage's next process`
    }
  ]
}
