/**
 * Notifications' cost to a run (docs/questions-and-approvals.md#notifications): the same
 * scripted `parley query` (one reply, its events told to a webhook) with the webhook's
 * receiver down (a refused connection: the worst a receiver can do short of hanging), vs
 * without `[notify]`. Delivery is spooled and done by fibers of its own, so the run must not
 * wait for it; goal ≤ 1.2×.
 */
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import type { Goal } from "./Harness.ts"
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

export const run = async (): Promise<ReadonlyArray<Goal>> => {
  const port = await freePort()
  const down = project(`[notify]\nwebhook = { url = "http://127.0.0.1:${port}/hook" }\n`)
  const plain = project("")
  const query = (p: { readonly storage: string; readonly script: string }) => () =>
    runNode([bin, "--storage", p.storage, "query", "--new", "hi", "--script", p.script])
  const [notified, without] = interleaved([{ run: query(down) }, { run: query(plain) }], 9)
  const spooled = fs.readdirSync(path.join(down.storage, "run", "notify")).filter((n) => n.endsWith(".json")).length
  for (const p of [down, plain]) fs.rmSync(path.dirname(p.storage), { recursive: true, force: true })
  return [
    {
      name: "a run whose webhook receiver is down vs the same run without [notify]",
      subject: { name: "query, webhook refused", medianMs: notified!.ms },
      floor: { name: "query, no [notify]", medianMs: without!.ms },
      maxRatio: 1.2,
      note: `${spooled} run_ended events left in the spool for the storage's next process`
    }
  ]
}
