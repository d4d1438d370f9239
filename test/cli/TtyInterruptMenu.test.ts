// RFD 027 "Ctrl+C (interrupt)" on real terminals (tmux): the first Ctrl-C of a
// foreground `query` asks what to do — stop, abort, continue, detach — and a
// second Ctrl-C stops as it always did. SIGINT from outside (`kill -INT`) and a
// run without a terminal keep contract §3: the run stops, exit 130, with the
// resume command.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { binary, runParley } from "../support/Cli.ts"
import { repoRoot } from "../support/Fixtures.ts"
import { DEFERRABLE } from "../support/Project.ts"
import * as Tmux from "../support/Tmux.ts"
import {
  conversationDir,
  makeProject,
  parleyPid,
  type Project,
  removeProjects,
  startParley,
  writeScript
} from "../support/TtyProject.ts"

if (Tmux.skipReason !== undefined) console.warn(`TtyInterruptMenu.test.ts skipped: ${Tmux.skipReason}`)

const children: Array<ReturnType<typeof spawn>> = []
afterEach(() => {
  Tmux.killAll()
  for (const child of children.splice(0)) child.kill("SIGKILL")
  removeProjects()
})

const project = (): Project => {
  const p = makeProject("parley-interrupt-", {
    "deferrable.py": fs.readFileSync(path.join(repoRoot, "test", "fixtures", "tools", "deferrable.py"), "utf8")
  })
  fs.writeFileSync(path.join(p.storage, "config.toml"), DEFERRABLE)
  return p
}

/** A turn whose tool sleeps `seconds`, then the model's last word. */
const slowTurn = (p: Project, seconds: number) =>
  writeScript(p, [
    {
      message: "Working.",
      tool_calls: [{ id: "s1", name: "deferrable", arguments: { name: "prod", mode: "slow", seconds } }]
    },
    { message: "All done." }
  ])

const effects = (p: Project) => {
  const file = path.join(p.root, "prod.effects")
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
}

const query = (p: Project, script: string) =>
  startParley(p, ["query", "--new", "go", "--model", "scripted", "--script", script])

/** `conversation ls`'s row of the only conversation. */
const row = (p: Project) =>
  (
    JSON.parse(
      runParley(["--storage", p.storage, "conversation", "ls", "--format", "json"], { cwd: p.root }).stdout
    ) as Array<{ id: string; events: number; incomplete: unknown }>
  )[0]!

const MENU = /\[s\]top .*\[a\]bort .*\[c\]ontinue .*\[d\]etach/

describe.skipIf(!Tmux.available)("RFD 027 Ctrl-C menu of a foreground run at a terminal (tmux)", () => {
  it("RFD 027 Ctrl-C menu: 'continue' resumes as if nothing happened; the tool finishes and the turn completes (exit 0)", async () => {
    const p = project()
    const s = query(p, slowTurn(p, 2))
    await s.waitFor(/deferrable \{"name":"prod"/)
    s.sendKeys("C-c")
    await s.waitFor(MENU)
    s.sendKeys("c")
    expect(await s.waitForExit()).toBe(0)
    expect(s.pane()).toContain("All done.")
    expect(effects(p)).toBe(`"done"\n`)
  })

  it("RFD 027 Ctrl-C menu: 'stop' stops the run with exit 130 and the resume command; the turn stays resumable", async () => {
    const p = project()
    const s = query(p, slowTurn(p, 30))
    await s.waitFor(/deferrable \{"name":"prod"/)
    s.sendKeys("C-c")
    await s.waitFor(MENU)
    s.sendKeys("s")
    expect(await s.waitForExit()).toBe(130)
    const id = row(p).id
    expect(s.pane()).toContain(`resume with: parley query --continue-turn --id ${id}`)
    expect(row(p).incomplete).not.toBeNull()
  })

  it("RFD 027 Ctrl-C menu: 'abort' stops the run and discards the turn (exit 130; nothing incomplete is left)", async () => {
    const p = project()
    const s = query(p, slowTurn(p, 30))
    await s.waitFor(/deferrable \{"name":"prod"/)
    s.sendKeys("C-c")
    await s.waitFor(MENU)
    s.sendKeys("a")
    expect(await s.waitForExit()).toBe(130)
    expect(s.pane()).toMatch(/parley: aborted\. The turn is discarded/)
    expect(row(p).incomplete).toBeNull()
    expect(row(p).events).toBe(0)
  })

  it("RFD 027 Ctrl-C menu: a second Ctrl-C while the menu is shown stops the run (exit 130, resume command)", async () => {
    const p = project()
    const s = query(p, slowTurn(p, 30))
    await s.waitFor(/deferrable \{"name":"prod"/)
    s.sendKeys("C-c")
    await s.waitFor(MENU)
    s.sendKeys("C-c")
    expect(await s.waitForExit()).toBe(130)
    expect(s.pane()).toContain(`resume with: parley query --continue-turn --id ${row(p).id}`)
  })

  it("RFD 027 Ctrl-C menu: 'detach' does what Ctrl-Z does: the run goes on in the background and completes", async () => {
    const p = project()
    const script = slowTurn(p, 2)
    const shell = Tmux.start({ command: ["bash", "--norc", "--noprofile", "-i"], cwd: p.root, env: { PS1: "$ " } })
    const parley = [process.execPath, binary, "--storage", p.storage].map(Tmux.shellQuote).join(" ")
    shell.sendText(`${parley} query --new go --model scripted --script ${Tmux.shellQuote(script)}`)
    shell.sendKeys("Enter")
    await shell.waitFor(/deferrable \{"name":"prod"/)
    shell.sendKeys("C-c")
    await shell.waitFor(MENU)
    shell.sendKeys("d")
    await shell.waitFor(/detached; the run of (\d+) goes on in the background/)
    const deadline = Date.now() + 20_000
    while (effects(p) === "" || row(p).incomplete !== null) {
      if (Date.now() > deadline) throw new Error("timed out waiting for the background run to complete")
      await new Promise((resolve) => setTimeout(resolve, 300))
    }
    expect(effects(p)).toBe(`"done"\n`)
  })

  it("RFD 027 Ctrl-C menu: 'reply' asks for a message line, stops the turn as Ctrl-C does, and the turn goes on with the message (send --when now)", async () => {
    const p = project()
    // The run `send --when now` starts in the background follows $PARLEY_SCRIPT.
    const next = path.join(p.root, "next.json")
    fs.writeFileSync(next, JSON.stringify({ steps: [{ message: "Summarised instead." }] }))
    const s = startParley(p, ["query", "--new", "go", "--model", "scripted", "--script", slowTurn(p, 30)], {
      PARLEY_SCRIPT: next
    })
    await s.waitFor(/deferrable \{"name":"prod"/)
    s.sendKeys("C-c")
    await s.waitFor(/\[r\]eply/)
    s.sendKeys("r")
    await s.waitFor(/parley: reply \(Enter sends it/)
    s.sendText("summarise it instead")
    s.sendKeys("Enter")
    // Stopped from outside by `send --when now` (RunningTurn.interrupt: SIGTERM), not by this terminal's SIGINT.
    expect(await s.waitForExit()).toBe(143)
    expect(s.pane()).toContain("replying: the turn stops and goes on in the background with your message")
    const id = row(p).id
    const deadline = Date.now() + 60_000
    let printed = ""
    while (!printed.includes("Summarised instead.") || row(p).incomplete !== null) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for the reply's turn:\n${printed}`)
      await new Promise((resolve) => setTimeout(resolve, 300))
      printed = runParley(["--storage", p.storage, "conversation", "print", id], { cwd: p.root }).stdout
    }
    expect(printed).toContain("summarise it instead")
    // The slow tool was cut short: it never finished.
    expect(effects(p)).toBe("")
  })

  it("RFD 027 Ctrl-C menu: 'reply' with an empty line goes back to the run, which completes (exit 0)", async () => {
    const p = project()
    const s = query(p, slowTurn(p, 3))
    await s.waitFor(/deferrable \{"name":"prod"/)
    s.sendKeys("C-c")
    await s.waitFor(MENU)
    s.sendKeys("r")
    await s.waitFor(/parley: reply \(Enter sends it/)
    s.sendKeys("Enter")
    await s.waitFor(/no reply; continuing/)
    expect(await s.waitForExit()).toBe(0)
    expect(s.pane()).toContain("All done.")
  })

  it("RFD 027 Ctrl-C menu: kill -INT from outside a terminal run still stops it (contract §3: exit 130, no menu)", async () => {
    const p = project()
    const s = query(p, slowTurn(p, 30))
    await s.waitFor(/deferrable \{"name":"prod"/)
    process.kill(parleyPid(p), "SIGINT")
    expect(await s.waitForExit()).toBe(130)
    expect(s.pane()).not.toMatch(MENU)
    expect(s.pane()).toContain(`resume with: parley query --continue-turn --id ${row(p).id}`)
  })
})

describe("RFD 027 Ctrl-C menu: a run without a terminal", () => {
  it("RFD 027 Ctrl-C menu: without a terminal SIGINT stops the run (contract §3: exit 130 and the resume command)", async () => {
    const p = project()
    const child = spawn(
      process.execPath,
      [binary, "--storage", p.storage, "query", "--new", "go", "--model", "scripted", "--script", slowTurn(p, 30)],
      { cwd: p.root, stdio: ["pipe", "pipe", "pipe"] }
    )
    children.push(child)
    let stderr = ""
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()))
    const deadline = Date.now() + 20_000
    const toolRuns = () => {
      try {
        const dir = conversationDir(p.storage)
        return fs.readdirSync(dir).some((f) => fs.readFileSync(path.join(dir, f), "utf8").includes("tool_call_request"))
      } catch {
        return false
      }
    }
    while (!toolRuns()) {
      if (Date.now() > deadline) throw new Error("timed out waiting for the tool to start")
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    const code = new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)))
    child.kill("SIGINT")
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no exit")), 20_000))
    expect(await Promise.race([code, timeout])).toBe(130)
    expect(stderr).toContain(`resume with: parley query --continue-turn --id ${row(p).id}`)
  })
})
