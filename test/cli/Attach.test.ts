// Runs beyond the terminal (docs/questions-and-approvals.md#runs-beyond-the-terminal) on real terminals (tmux): `query --detach` with a tool that asks,
// `conversation attach` in two panes, one answers, the other shows who did;
// Ctrl-Z in a foreground `query` leaves the run going in the background and
// `attach` picks it up; the answer is recorded once and the tools' side
// effects happen once.
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
  onDisk,
  type Project,
  removeProjects,
  startParley,
  writeScript
} from "../support/TtyProject.ts"

if (Tmux.skipReason !== undefined) console.warn(`Attach.test.ts skipped: ${Tmux.skipReason}`)

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

const CONFIG = `
[conversation.inquiry]
detached = "wait"

${DEFERRABLE}`

const call = (id: string, name: string, mode: string, seconds?: number) => ({
  id,
  name: "deferrable",
  arguments: { name, mode, ...(seconds !== undefined ? { seconds } : {}) }
})

const project = (): Project => {
  const p = makeProject("parley-attach-", {
    "deferrable.py": fs.readFileSync(path.join(repoRoot, "test", "fixtures", "tools", "deferrable.py"), "utf8")
  })
  fs.writeFileSync(path.join(p.storage, "config.toml"), CONFIG)
  return p
}

const effects = (p: Project, name: string) => {
  const file = path.join(p.root, `${name}.effects`)
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
}

const waitUntil = async (what: string, check: () => boolean, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 300))
  }
}

/**
 * The recorded answers, once the run has folded its journal: an attach ends on the run's `Stopped` event, which
 * comes before the run closes its conversation (under load the fold was still to come).
 */
const responses = async (p: Project) => {
  await waitUntil("the run to fold its journal", () => {
    const dir = conversationDir(p.storage)
    return !fs.existsSync(path.join(dir, "events.json.journal"))
  })
  return onDisk(p.storage)
    .filter((e) => e["type"] === "inquiry_response")
    .map((e) => [e["id"], e["answer"]])
}

/** The questions the run of `id` waits on (`conversation ls`). */
const waitingOf = (p: Project, id: string): ReadonlyArray<string> => {
  const r = runParley(["--storage", p.storage, "conversation", "ls", "--format", "json"], { cwd: p.root })
  const row = (JSON.parse(r.stdout) as Array<{ id: string; running: { waiting?: Array<string> } | null }>).find(
    (c) => c.id === id
  )
  return row?.running?.waiting ?? []
}

/** Starts `query --detach`; returns the conversation id and the background run's pid. */
const detached = (p: Project, script: string): { id: string; pid: number } => {
  const r = runParley(
    ["--storage", p.storage, "query", "--detach", "--new", "go", "--model", "scripted", "--script", script],
    { cwd: p.root }
  )
  expect(r.code).toBe(0)
  const id = r.stdout.trim()
  const pid = Number(/\(pid (\d+)\)/.exec(r.stderr)![1])
  started.push(pid)
  expect(r.stderr).toContain(`conversation attach ${id}`)
  return { id, pid }
}

describe.skipIf(!Tmux.available)("conversation attach on real terminals (tmux)", () => {
  it("two attached terminals: one answers, the other's prompt closes and says another client answered; both exit 0; the answer is recorded once", async () => {
    const p = project()
    const script = writeScript(p, [
      { message: "Working.", tool_calls: [call("s1", "prod", "slow", 1), call("p1", "paint", "pick")] },
      { message: "All done." }
    ])
    const { id } = detached(p, script)
    const a = startParley(p, ["conversation", "attach", id])
    const b = startParley(p, ["conversation", "attach"])
    await a.waitFor(/Which color\?/)
    await b.waitFor(/Which color\?/)
    b.sendKeys("Down", "Enter")
    expect(await b.waitForExit()).toBe(0)
    expect(await a.waitForExit()).toBe(0)
    expect(b.pane()).toMatch(/Which color\? → green \(you\)/)
    expect(a.pane()).toMatch(/Which color\? → green \(other client\)/)
    // The prompt someone else answered ends its line saying so (not "(cancelled)").
    expect(a.pane()).toMatch(/answered elsewhere: green \(via attach\)/)
    expect(a.pane()).not.toContain("(cancelled)")
    for (const s of [a, b]) expect(s.pane()).toContain("All done.")
    expect(await responses(p)).toStrictEqual([["p1.color.1", "green"]])
    expect(effects(p, "paint")).toBe(`"green"\n`)
    expect(effects(p, "prod")).toBe(`"done"\n`)
    expect(fs.readdirSync(path.join(p.storage, "run")).filter((n) => n.endsWith(".sock"))).toStrictEqual([])
  })

  it("the prompt says who is asking, as query's does: ask_user's \"Assistant asks:\" and a configured prompt_label", async () => {
    const p = project()
    fs.appendFileSync(
      path.join(p.storage, "config.toml"),
      `\n[conversation.tools.deferrable.questions.confirm]\nprompt_label = "Deployer"\n`
    )
    const ask = {
      question: "Which way?",
      context: "Two ways are open.",
      answer_type: "select",
      options: ["backup", "abort"]
    }
    const script = writeScript(p, [
      { message: "Working.", tool_calls: [{ id: "u1", name: "ask_user", arguments: ask }, call("a1", "web", "ask")] },
      { message: "All done." }
    ])
    const { id } = detached(p, script)
    const s = startParley(p, ["conversation", "attach", id])
    const [, first] = await s.waitFor(/(Assistant|Deployer) asks:/)
    const answerOne = async (who: string) => {
      if (who === "Assistant") {
        await s.waitFor(/Assistant asks:\nTwo ways are open\.\n\? Which way\? › *\n❯ backup *\n  abort/)
        s.sendKeys("Enter")
      } else {
        await s.waitFor(/Deployer asks:\n(.*\n)?\? Deploy web\?/)
        s.sendKeys("y")
      }
    }
    await answerOne(first!)
    await answerOne(first === "Assistant" ? "Deployer" : "Assistant")
    expect(await s.waitForExit()).toBe(0)
    expect((await responses(p)).sort()).toStrictEqual([
      ["a1.confirm.1", true],
      ["u1.answer.1", "backup"]
    ])
  })

  it("two questions open at once are asked one after the other; Y answers the other one too; Ctrl-C at a prompt stops the run", async () => {
    const p = project()
    const script = writeScript(p, [
      { message: "Working.", tool_calls: [call("a1", "web", "ask"), call("a2", "db", "ask")] },
      { message: "All done." }
    ])
    const { id } = detached(p, script)
    const s = startParley(p, ["conversation", "attach", id])
    const [, first] = await s.waitFor(/Deploy (web|db)\?/)
    // Both open before the Y (a question that opens after it is answered as remembered, which is right too).
    await waitUntil("both questions open", () => waitingOf(p, id).length === 2, 30_000)
    s.sendKeys("Y")
    expect(await s.waitForExit()).toBe(0)
    const pane = s.pane()
    expect(pane).toMatch(new RegExp(`Deploy ${first}\\? → yes \\(you\\)`))
    expect(pane).toMatch(new RegExp(`Deploy ${first === "web" ? "db" : "web"}\\? → yes \\(you\\)`))
    expect((await responses(p)).sort()).toStrictEqual([
      ["a1.confirm.1", true],
      ["a2.confirm.1", true]
    ])

    const q = project()
    const stopped = detached(
      q,
      writeScript(q, [{ message: "Working.", tool_calls: [call("a1", "web", "ask")] }, { message: "All done." }])
    )
    const t = startParley(q, ["conversation", "attach", stopped.id])
    await t.waitFor(/Deploy web\?/)
    t.sendKeys("C-c")
    expect(await t.waitForExit()).toBe(130)
    expect(t.pane()).toContain(`resume with: parley query --continue-turn --id ${stopped.id}`)
    expect(effects(q, "web")).toBe("")
  })

  it("Ctrl-Z in a foreground query detaches it; the tools go on; attach picks it up and the turn completes", async () => {
    const p = project()
    const script = writeScript(p, [
      { message: "Working.", tool_calls: [call("s1", "prod", "slow", 2)] },
      { message: "Next.", tool_calls: [call("a1", "web", "ask")] },
      { message: "All done." }
    ])
    // An interactive shell with job control: Ctrl-Z gives it the terminal back.
    const shell = Tmux.start({ command: ["bash", "--norc", "--noprofile", "-i"], cwd: p.root, env: { PS1: "$ " } })
    const parley = [process.execPath, binary, "--storage", p.storage].map(Tmux.shellQuote).join(" ")
    shell.sendText(`${parley} query --new go --model scripted --script ${Tmux.shellQuote(script)}`)
    shell.sendKeys("Enter")
    await shell.waitFor(/deferrable \{"name":"prod"/)
    shell.sendKeys("C-z")
    const [, id] = await shell.waitFor(/detached; the run of (\d+) goes on in the background/)
    await shell.waitFor(/conversation attach \d+ .*Follow it here again\./)
    // The shell holds the run as a job: stopped, then running again once the waker continued it.
    await waitUntil("the job to run in the background", () => {
      shell.sendText("jobs")
      shell.sendKeys("Enter")
      return /\[1\]\+ +Running/.test(shell.pane())
    })
    shell.sendText(`${parley} conversation attach ${id}; echo ATTACH=$?`)
    shell.sendKeys("Enter")
    await shell.waitFor(/Deploy web\?/, { timeoutMs: 20_000 })
    shell.sendKeys("y")
    await shell.waitFor(/ATTACH=0/)
    expect(shell.pane()).toMatch(/Deploy web\? → yes \(you\)/)
    expect(shell.pane()).toContain("All done.")
    expect(effects(p, "prod")).toBe(`"done"\n`)
    expect(effects(p, "web")).toBe("true\n")
    expect(await responses(p)).toStrictEqual([["a1.confirm.1", true]])
    // The background run's output went to its log, not to the terminal it left.
    const logs = fs.readdirSync(path.join(p.storage, "run")).filter((n) => n.startsWith("detached-"))
    expect(logs.length).toBe(1)
    expect(fs.readFileSync(path.join(p.storage, "run", logs[0]!), "utf8")).toContain("All done.")
  })

  it("a SIGTSTP sent while a prompt is on screen does not detach (the prompt owns the terminal); the run goes on there", async () => {
    const p = project()
    const script = writeScript(p, [
      { message: "Working.", tool_calls: [call("a1", "web", "ask")] },
      { message: "All done." }
    ])
    const s = startParley(p, ["query", "--new", "go", "--model", "scripted", "--script", script])
    await s.waitFor(/Deploy web\?/)
    const pid = fs
      .readdirSync("/proc")
      .filter((n) => /^\d+$/.test(n))
      .find((n) => {
        try {
          const argv = fs.readFileSync(`/proc/${n}/cmdline`, "utf8").split("\0")
          return argv.includes("query") && argv.includes(p.storage)
        } catch {
          return false
        }
      })
    expect(pid).toBeDefined()
    process.kill(Number(pid), "SIGTSTP")
    await new Promise((resolve) => setTimeout(resolve, 500))
    s.sendKeys("y")
    expect(await s.waitForExit()).toBe(0)
    expect(s.pane()).not.toContain("detached")
    expect(s.pane()).toContain("All done.")
    expect(await responses(p)).toStrictEqual([["a1.confirm.1", true]])
  })
})
