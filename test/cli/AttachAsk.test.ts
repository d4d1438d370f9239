// Any program asks (docs/ask.md) and a person follows it on a real terminal (tmux): a script's
// `parley ask` serves its question on the conversation's host socket, `conversation attach ID`
// shows it as a run's question and answers it; the asker prints the answer and exits 0, the
// answer is recorded once, and the attached terminal says so and exits 0.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { binary, runParley } from "../support/Cli.ts"
import * as Tmux from "../support/Tmux.ts"
import { makeProject, onDisk, type Project, removeProjects, startParley } from "../support/TtyProject.ts"

if (Tmux.skipReason !== undefined) console.warn(`AttachAsk.test.ts skipped: ${Tmux.skipReason}`)

const children: Array<ReturnType<typeof spawn>> = []
afterEach(() => {
  Tmux.killAll()
  for (const c of children.splice(0)) c.kill("SIGKILL")
  removeProjects()
})

const waitUntil = async (what: string, check: () => boolean, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/** A script's `parley ask` (no terminal of its own): its stdout and exit code as they come. */
const asker = (p: Project, args: ReadonlyArray<string>) => {
  const child = spawn(process.execPath, [binary, "--storage", p.storage, "ask", ...args], {
    cwd: p.root,
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.push(child)
  const out = { stdout: "", stderr: "", code: undefined as number | null | undefined }
  child.stdout!.on("data", (d: Buffer) => (out.stdout += d.toString()))
  child.stderr!.on("data", (d: Buffer) => (out.stderr += d.toString()))
  child.on("exit", (code) => (out.code = code))
  return out
}

/** The conversation whose live host waits on a question (`conversation ls`), once there is one. */
const waitingConversation = async (p: Project): Promise<string> => {
  let id: string | undefined
  await waitUntil("the asker's question to be listed", () => {
    const r = runParley(["--storage", p.storage, "conversation", "ls", "--format", "json"], { cwd: p.root })
    const rows = JSON.parse(r.stdout) as Array<{ id: string; running: { waiting?: Array<string> } | null }>
    id = rows.find((c) => (c.running?.waiting ?? []).length > 0)?.id
    return id !== undefined
  })
  return id!
}

describe.skipIf(!Tmux.available)("conversation attach to a parley ask (tmux)", () => {
  it("the attached terminal shows the script's question and answers it: the asker prints yes and exits 0, recorded once", async () => {
    const p = makeProject("parley-attach-ask-")
    const asked = asker(p, ["Deploy to prod?", "--context", "Build 42 passed.", "--new"])
    const id = await waitingConversation(p)
    const s = startParley(p, ["conversation", "attach", id])
    await s.waitFor(/Deploy to prod\?/, { timeoutMs: 30_000 })
    s.sendKeys("y")
    await waitUntil("the asker to exit", () => asked.code !== undefined)
    expect(asked.code, asked.stderr).toBe(0)
    expect(asked.stdout).toBe("yes\n")
    expect(await s.waitForExit()).toBe(0)
    expect(s.pane()).toMatch(/Deploy to prod\? .*yes/)
    expect(s.pane()).toContain("Build 42 passed.")
    const answers = onDisk(p.storage)
      .filter((e) => e["type"] === "inquiry_response")
      .map((e) => e["answer"])
    expect(answers).toStrictEqual([true])
    expect(fs.readdirSync(path.join(p.storage, "run")).filter((n) => n.endsWith(".sock"))).toStrictEqual([])
  }, 120_000)
})
