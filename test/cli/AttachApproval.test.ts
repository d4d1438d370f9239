// An approval at an attached terminal (docs/questions-and-approvals.md#approvals), on real terminals
// (tmux): a `run = "ask"` tool in a `query --detach --detached-policy wait` run opens an approval;
// `conversation attach` shows it as the permission prompt does (the call's arguments, y/Y/n/N); `y`
// runs the tool once, `n` skips it with the recorded response, `Y` answers the tool's later
// approvals of the turn. A prompt someone else answered ends its line saying so, not "(cancelled)".
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { runParley } from "../support/Cli.ts"
import { repoRoot } from "../support/Fixtures.ts"
import { DEFERRABLE } from "../support/Project.ts"
import * as Tmux from "../support/Tmux.ts"
import { makeProject, onDisk, type Project, removeProjects, startParley, writeScript } from "../support/TtyProject.ts"

if (Tmux.skipReason !== undefined) console.warn(`AttachApproval.test.ts skipped: ${Tmux.skipReason}`)

const started: Array<number> = []
afterEach(() => {
  Tmux.killAll()
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // Gone already.
    }
  }
  removeProjects()
})

const project = (): Project => {
  const p = makeProject("parley-approval-", {
    "deferrable.py": fs.readFileSync(path.join(repoRoot, "test", "fixtures", "tools", "deferrable.py"), "utf8")
  })
  fs.writeFileSync(path.join(p.storage, "config.toml"), DEFERRABLE.replace('run = "unattended"', 'run = "ask"'))
  return p
}

const call = (id: string, name: string) => ({ id, name: "deferrable", arguments: { name, mode: "slow", seconds: 0 } })

const effects = (p: Project, name: string) => {
  const file = path.join(p.root, `${name}.effects`)
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
}

const detached = (p: Project, script: string) => {
  const r = runParley(
    ["--storage", p.storage, "query", "--detach", "--new", "go", "--script", script, "--detached-policy", "wait"],
    { cwd: p.root }
  )
  expect(r.code).toBe(0)
  started.push(Number(/\(pid (\d+)\)/.exec(r.stderr)![1]))
  return r.stdout.trim()
}

/** The recorded entries once the run has folded its journal (an attach ends before the run closes its conversation). */
const folded = async (p: Project) => {
  const deadline = Date.now() + 10_000
  for (;;) {
    try {
      return onDisk(p.storage)
    } catch (e) {
      if (Date.now() > deadline) throw e
      await new Promise((r) => setTimeout(r, 200))
    }
  }
}

const content = (e: Record<string, unknown>) => Buffer.from(String(e["content"]), "base64").toString("utf8")

describe.skipIf(!Tmux.available)("an approval at an attached terminal (tmux)", () => {
  it("shows the call's arguments; y runs the tool once, n skips it with the recorded response", async () => {
    const p = project()
    const script = writeScript(p, [
      { message: "First.", tool_calls: [call("a1", "one")] },
      { message: "Second.", tool_calls: [call("a2", "two")] },
      { message: "All done." }
    ])
    const id = detached(p, script)
    const a = startParley(p, ["conversation", "attach", id])
    await a.waitFor(/"name": "one"[\s\S]*Run local deferrable tool\? \[y\/Y\/n\/N/)
    expect(effects(p, "one")).toBe("")
    a.sendKeys("y")
    await a.waitFor(/"name": "two"[\s\S]*Run local deferrable tool\? \[y\/Y\/n\/N/)
    expect(effects(p, "one")).toBe(`"done"\n`)
    a.sendKeys("n")
    expect(await a.waitForExit()).toBe(0)
    expect(a.pane()).toContain("All done.")
    expect(effects(p, "two")).toBe("")
    const entries = await folded(p)
    expect(entries.filter((e) => e["type"] === "inquiry_response").map((e) => [e["id"], e["answer"]])).toStrictEqual([
      ["a1.__permission__.1", true],
      ["a2.__permission__.1", false]
    ])
    const skipped = entries.find((e) => e["type"] === "tool_call_response" && e["id"] === "a2")!
    expect(content(skipped)).toBe("Tool skipped by user.")
  })

  it("Y answers the tool's later approvals of the turn: the second call runs without being asked", async () => {
    const p = project()
    const script = writeScript(p, [
      { message: "First.", tool_calls: [call("a1", "one")] },
      { message: "Second.", tool_calls: [call("a2", "two")] },
      { message: "All done." }
    ])
    const id = detached(p, script)
    const a = startParley(p, ["conversation", "attach", id])
    await a.waitFor(/Run local deferrable tool\? \[y\/Y\/n\/N/)
    a.sendKeys("Y")
    expect(await a.waitForExit()).toBe(0)
    expect([effects(p, "one"), effects(p, "two")]).toStrictEqual([`"done"\n`, `"done"\n`])
    const entries = await folded(p)
    expect(entries.filter((e) => e["type"] === "inquiry_request").map((e) => e["id"])).toStrictEqual([
      "a1.__permission__.1"
    ])
    expect(entries.find((e) => e["type"] === "inquiry_response")).toMatchObject({
      answer: true,
      metadata: { parley_remembered: true }
    })
  })

  it("a prompt answered from elsewhere says so: answered elsewhere: yes (via …), not (cancelled)", async () => {
    const p = project()
    const script = writeScript(p, [{ message: "First.", tool_calls: [call("a1", "one")] }, { message: "All done." }])
    const id = detached(p, script)
    const a = startParley(p, ["conversation", "attach", id])
    await a.waitFor(/Run local deferrable tool\? \[y\/Y\/n\/N/)
    const answered = runParley(["--storage", p.storage, "conversation", "answer", id, "a1.__permission__.1", "yes"], {
      cwd: p.root
    })
    expect(answered.code).toBe(0)
    expect(await a.waitForExit()).toBe(0)
    expect(a.pane()).toMatch(/Run local deferrable tool\? \[y\/Y\/n\/N[^\n]*answered elsewhere: yes \(via terminal\)/)
    expect(a.pane()).not.toContain("(cancelled)")
    expect(effects(p, "one")).toBe(`"done"\n`)
  })
})
