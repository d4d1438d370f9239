// RFD 027 "Context on attach": `conversation attach --tail=N` shows only the
// last N events the run kept, then follows it live.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { runParley } from "../support/Cli.ts"
import { repoRoot } from "../support/Fixtures.ts"
import { DEFERRABLE } from "../support/Project.ts"
import * as Tmux from "../support/Tmux.ts"
import { makeProject, type Project, removeProjects, startParley, writeScript } from "../support/TtyProject.ts"

if (Tmux.skipReason !== undefined) console.warn(`AttachTail.test.ts skipped: ${Tmux.skipReason}`)

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
  const p = makeProject("parley-attach-tail-", {
    "deferrable.py": fs.readFileSync(path.join(repoRoot, "test", "fixtures", "tools", "deferrable.py"), "utf8")
  })
  fs.writeFileSync(path.join(p.storage, "config.toml"), `[conversation.inquiry]\ndetached = "wait"\n\n${DEFERRABLE}`)
  return p
}

/** Starts `query --detach` on a turn that says something, runs a tool, then waits on a question. */
const detached = (p: Project): string => {
  const script = writeScript(p, [
    {
      message: "First words of the turn.",
      tool_calls: [{ id: "s1", name: "deferrable", arguments: { name: "prod", mode: "slow", seconds: 0 } }]
    },
    { message: "Next.", tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "web", mode: "ask" } }] },
    { message: "All done." }
  ])
  const r = runParley(
    ["--storage", p.storage, "query", "--detach", "--new", "go", "--model", "scripted", "--script", script],
    { cwd: p.root }
  )
  expect(r.code).toBe(0)
  started.push(Number(/\(pid (\d+)\)/.exec(r.stderr)![1]))
  return r.stdout.trim()
}

describe.skipIf(!Tmux.available)("RFD 027 conversation attach --tail=N (tmux)", () => {
  it("RFD 027 attach --tail=N: --tail=3 shows only the last 3 kept events, then the live ones; without it the whole run is replayed", async () => {
    const p = project()
    const id = detached(p)
    // Without --tail (the control): the run's first words are replayed.
    const whole = startParley(p, ["conversation", "attach", id])
    await whole.waitFor(/Deploy web\?/, { timeoutMs: 20_000 })
    expect(whole.pane()).toContain("First words of the turn.")
    Tmux.killAll()

    const s = startParley(p, ["conversation", "attach", "--tail=3", id])
    await s.waitFor(/Deploy web\?/, { timeoutMs: 20_000 })
    const before = s.pane()
    expect(before).not.toContain("First words of the turn.")
    expect(before).not.toContain("prod")
    s.sendKeys("y")
    expect(await s.waitForExit()).toBe(0)
    // What follows the answer is live.
    expect(s.pane()).toMatch(/Deploy web\? → yes \(you\)/)
    expect(s.pane()).toContain("All done.")
  })

  it("RFD 027 attach --tail=N: a negative N is a usage error (exit 2)", () => {
    const p = project()
    const r = runParley(["--storage", p.storage, "conversation", "attach", "--tail=-1", "17000000001"], { cwd: p.root })
    expect(r.code).toBe(2)
  })
})
