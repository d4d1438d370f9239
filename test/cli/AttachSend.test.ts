// `m` in `conversation attach` (docs/questions-and-approvals.md#runs-beyond-the-terminal) on a real terminal (tmux): the person
// types a message and picks when; it is queued as `conversation send` queues it (surface `attach`), the
// attached view says "1 message queued" and then that it was delivered; a second message sent at the same
// time from another terminal is delivered too, both in the order of their ids; the conversation stays valid.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { binary } from "../support/Cli.ts"
import {
  exited,
  hostSockets,
  makeProject,
  parley,
  persisted,
  type Project,
  spawnParley,
  waitFor,
  waitForLines,
  writeScript
} from "../support/Project.ts"
import * as Tmux from "../support/Tmux.ts"

if (Tmux.skipReason !== undefined) console.warn(`AttachSend.test.ts skipped: ${Tmux.skipReason}`)

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
afterEach(() => {
  Tmux.killAll()
  for (const c of children.splice(0)) c.kill("SIGKILL")
})

const slowCall = { id: "c1", name: "counter", arguments: { name: "slow" } }

/** A run whose tool `slow` blocks until `slow.block` is removed; its id once the tool runs and the host serves. */
const running = async (p: Project, steps: ReadonlyArray<unknown>) => {
  fs.writeFileSync(path.join(p.root, "slow.block"), "")
  const child = spawnParley(p, ["query", "--new", "go", "--script", writeScript(p, "s.json", steps)])
  children.push(child)
  await waitForLines("the tool to run", path.join(p.root, "slow.pid"), 1, 60_000)
  await waitFor("the host's socket", () => hostSockets(p).length === 1, 60_000)
  return { child, id: hostSockets(p)[0]!.replace(".sock", "") }
}

/** Who sent a request (its `parley_message` metadata; JP keeps a metadata string base64 on disk). */
const sentBy = (e: Record<string, unknown>) => {
  const m = (e["metadata"] as Record<string, { id: number; via: string }> | undefined)?.["parley_message"]
  return m === undefined ? undefined : { id: m.id, via: Buffer.from(m.via, "base64").toString("utf8") }
}

describe.skipIf(!Tmux.available)("conversation attach: m sends a message (tmux)", () => {
  it("m, the text, Enter, Enter (after): queued and shown; with a send from another terminal, both delivered in id order", async () => {
    const p = makeProject()
    const { child, id } = await running(p, [
      { message: "Working.", tool_calls: [slowCall] },
      { message: "Done." },
      { message: "One." },
      { message: "Two." }
    ])
    const s = Tmux.start({
      command: [process.execPath, binary, "--storage", p.storage, "conversation", "attach", id],
      cwd: p.root
    })
    await s.waitFor(/m sends a message/, { timeoutMs: 30_000 })
    s.sendKeys("m")
    await s.waitFor(/Message to the running turn/, { timeoutMs: 15_000 })
    // Another terminal sends meanwhile: whichever is logged first gets id 1.
    const other = spawnParley(p, ["conversation", "send", id, "from the terminal"])
    children.push(other)
    s.sendText("from attach")
    s.sendKeys("Enter")
    await s.waitFor(/When/, { timeoutMs: 15_000 })
    s.sendKeys("Enter")
    const said = await s.waitFor(/Queued message (\d): a new turn starts with it/, { timeoutMs: 30_000 })
    expect(await exited(other)).toBe(0)
    await s.waitFor(/\d messages? queued\./, { timeoutMs: 15_000 })
    const mine = Number(said[1])
    const theirs = Number(other.output().match(/^(\d+)$/m)![1])
    expect([mine, theirs].sort()).toStrictEqual([1, 2])
    fs.rmSync(path.join(p.root, "slow.block"), { force: true })
    expect(await exited(child)).toBe(0)
    expect(await s.waitForExit({ timeoutMs: 60_000 })).toBe(0)
    expect(s.pane(true)).toMatch(/message \d \(via attach\) delivered: from attach/)
    const requests = persisted(p).filter((e) => e.type === "chat_request")
    const inOrder = mine === 1 ? ["from attach", "from the terminal"] : ["from the terminal", "from attach"]
    expect(requests.map((e) => e["content"])).toStrictEqual(["go", ...inOrder])
    expect(requests.map(sentBy)).toStrictEqual([
      undefined,
      { id: 1, via: mine === 1 ? "attach" : "terminal" },
      { id: 2, via: mine === 1 ? "terminal" : "attach" }
    ])
    const check = parley(p, ["conversation", "check", id])
    expect(check.code, check.stdout + check.stderr).toBe(0)
  }, 180_000)
})
