// Tool processes (docs/tools.md#tool-processes-are-bounded) from outside: the built binary, the scripted model,
// and local tools configured in <storage>/config.toml.
// - Whatever kills parley (SIGKILL, SIGHUP), its tool's whole process group
//   is gone 1.5 s later, the tool's end-of-run side effect never happens, and
//   --continue-turn runs the tool exactly once more.
// - A tool that leaves a background job holding its stdout does not hang
//   `query`; the job is stopped.
// - A tool printing forever is stopped at max_output_bytes with a tool
//   error that says so, and parley's memory stays flat.
import * as fs from "node:fs"
import * as path from "node:path"
import { spawnSync } from "node:child_process"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { binary, runParley, withoutRunHeader } from "../support/Cli.ts"
import { tempDir } from "../support/Fixtures.ts"
import {
  conversationIdOf,
  exited,
  killGroup,
  parley,
  persisted,
  type Project,
  spawnParley,
  waitForLines,
  writeScript
} from "../support/Project.ts"

const CONFIG = `
[conversation.tools.slow]
command = "sh slow_tool.sh"
run = "unattended"

[conversation.tools.bg]
command = "sh bg_tool.sh"
run = "unattended"

[conversation.tools.spew]
command = "echo $$ > spew.pid; exec yes parley-output-line"
run = "unattended"
timeout_ms = 3000

[conversation.tools.spew_small]
command = "echo $$ > spew_small.pid; exec yes parley-output-line"
run = "unattended"
timeout_ms = 3000
max_output_bytes = 5000
`

// Records "<its pid> <a child's pid>", marks that it started, blocks while
// `hold` exists, then records its side effect.
const SLOW_TOOL = `cat > /dev/null
sleep 1000 > /dev/null 2>&1 &
echo "$$ $!" >> pids
echo started >> started
while [ -f hold ]; do sleep 0.05; done
echo done >> effects
printf '{"type":"success","content":"slow done"}\\n'
`

// Leaves a job that holds stdout for 1000 s and returns at once.
const BG_TOOL = `cat > /dev/null
sleep 1000 &
echo $! > bg.pid
printf '{"type":"success","content":"bg done"}\\n'
`

// Loaded with --require: records parley's peak RSS (KiB) when it exits.
const RSS_PROBE = `process.on("exit", () => require("fs").writeFileSync(process.env.RSS_FILE, String(process.resourceUsage().maxRSS)))`

const makeProject = (): Project => {
  const root = fs.realpathSync(tempDir("parley-toolproc-"))
  const storage = path.join(root, ".parley")
  fs.mkdirSync(storage)
  fs.writeFileSync(path.join(storage, "config.toml"), CONFIG)
  fs.writeFileSync(path.join(root, "slow_tool.sh"), SLOW_TOOL)
  fs.writeFileSync(path.join(root, "bg_tool.sh"), BG_TOOL)
  return { root, storage }
}

const at = (p: Project, name: string) => path.join(p.root, name)
const read = (p: Project, name: string) => fs.readFileSync(at(p, name), "utf8")
const unb64 = (s: unknown) => Buffer.from(String(s), "base64").toString("utf8")
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Running (not zombie) processes of group `pgid`, from /proc. */
const groupMembers = (pgid: number): Array<string> => {
  const found: Array<string> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X")
        found.push(stat.slice(0, stat.lastIndexOf(")") + 1))
    } catch {
      // went away while we looked
    }
  }
  return found
}
/** Whether `pid` runs (a zombie does not). */
const running = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2))
  } catch {
    return false
  }
}
const pgidOf = (pid: number): number => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2])
}

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
const groups: Array<number> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  // Only after a failure is anything left; never leave it running.
  for (const g of groups.splice(0)) killGroup(g)
})

const toolResponses = (p: Project) =>
  persisted(p)
    .filter((e) => e.type === "tool_call_response")
    .map((e) => ({ id: e["id"], content: unb64(e["content"]), is_error: e["is_error"] }))

/** Starts a slow tool, strikes parley with `signal`, and checks that nothing of the tool survives and that resuming runs it once. */
const strikeAndResume = async (signal: NodeJS.Signals) => {
  const p = makeProject()
  fs.writeFileSync(at(p, "hold"), "")
  const child = spawnParley(p, [
    "query",
    "run the slow tool",
    "--script",
    writeScript(p, "s1.json", [{ message: "Running.", tool_calls: [{ id: "slow_1", name: "slow", arguments: {} }] }])
  ])
  children.push(child)
  await waitForLines("the tool to start", at(p, "started"))
  const pids = read(p, "pids").trim().split(" ").map(Number)
  const pgid = pgidOf(pids[0]!)
  groups.push(pgid)
  expect(pids.map(running)).toStrictEqual([true, true])

  child.kill(signal)
  await exited(child)
  await sleep(1500)
  expect(groupMembers(pgid)).toStrictEqual([])
  // Were any of it alive, releasing the hold would now let it record its effect.
  fs.rmSync(at(p, "hold"))
  expect(fs.existsSync(at(p, "effects"))).toBe(false)

  const r = parley(p, [
    "query",
    "--continue-turn",
    "--id",
    conversationIdOf(p),
    "--script",
    writeScript(p, "s2.json", [{ message: "Finished." }])
  ])
  expect(withoutRunHeader(r.stderr)).toBe("")
  expect(r.code).toBe(0)
  expect(r.stdout).toBe("Finished.\n")
  expect(read(p, "started")).toBe("started\nstarted\n")
  expect(read(p, "effects")).toBe("done\n")
  expect(toolResponses(p)).toStrictEqual([{ id: "slow_1", content: "slow done", is_error: false }])
}

describe("tool processes die with parley (built binary)", () => {
  it("kill -9 while a tool runs, three times: its group is gone, its effect never happens, --continue-turn runs it once", async () => {
    for (let i = 0; i < 3; i++) await strikeAndResume("SIGKILL")
  })

  it("SIGHUP while a tool runs, twice: the same", async () => {
    for (let i = 0; i < 2; i++) await strikeAndResume("SIGHUP")
  })
})

describe("bounded tools (built binary)", () => {
  it("a tool that leaves a background job holding its stdout: query finishes and the job is stopped", () => {
    const p = makeProject()
    const script = writeScript(p, "s.json", [
      { message: "Running.", tool_calls: [{ id: "bg_1", name: "bg", arguments: {} }] },
      { message: "Done." }
    ])
    // Before tool processes were bounded (docs/tools.md#tool-processes-are-bounded) this waited for `sleep 1000` to close the pipe: killed at 30 s, code null.
    const r = runParley(["--storage", p.storage, "query", "go", "--script", script], {
      cwd: p.root,
      env: { PARLEY_STORAGE: undefined, PARLEY_SCRIPT: undefined },
      timeoutMs: 30_000
    })
    if (fs.existsSync(at(p, "bg.pid"))) groups.push(Number(read(p, "bg.pid")))
    expect(withoutRunHeader(r.stderr)).toBe("")
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("Running.\nDone.\n")
    expect(toolResponses(p)).toStrictEqual([{ id: "bg_1", content: "bg done", is_error: false }])
    expect(running(Number(read(p, "bg.pid")))).toBe(false)
  })

  it("tools printing forever stop at max_output_bytes (default 1 MiB) with an error that says so; parley stays small", () => {
    const p = makeProject()
    const script = writeScript(p, "s.json", [
      {
        message: "Spewing.",
        tool_calls: [
          { id: "big", name: "spew", arguments: {} },
          { id: "small", name: "spew_small", arguments: {} }
        ]
      },
      { message: "Done." }
    ])
    const probe = at(p, "rss-probe.cjs")
    fs.writeFileSync(probe, RSS_PROBE)
    const r = spawnSync(
      process.execPath,
      ["--require", probe, binary, "--storage", p.storage, "query", "go", "--script", script],
      {
        cwd: p.root,
        env: { ...process.env, PARLEY_STORAGE: "", PARLEY_SCRIPT: "", RSS_FILE: at(p, "rss") },
        encoding: "utf8",
        timeout: 60_000
      }
    )
    expect(withoutRunHeader(r.stderr)).toBe("")
    expect(r.status).toBe(0)
    expect(r.stdout).toBe("Spewing.\nDone.\n")
    const peakKiB = Number(read(p, "rss"))
    expect(peakKiB).toBeGreaterThan(0)
    expect(peakKiB).toBeLessThan(600 * 1024)

    // Recorded as they finish: in either order.
    const responses = toolResponses(p).sort((a, b) => String(a.id).localeCompare(String(b.id)))
    expect(responses.map((x) => [x.id, x.is_error])).toStrictEqual([
      ["big", true],
      ["small", true]
    ])
    for (const [response, limit] of [
      [responses[0]!, 1_048_576],
      [responses[1]!, 5000]
    ] as const) {
      expect(response.content.length).toBeLessThan(1.1 * 1024 * 1024)
      const content = JSON.parse(response.content) as { message: string; stdout: string; stderr: string }
      expect(content.message).toBe(
        `Tool '${response.id === "big" ? "spew" : "spew_small"}' printed more than ${limit} bytes (max_output_bytes) and was stopped; below is the start of its stdout and stderr (at most 1024 characters each).`
      )
      expect(content.stdout.startsWith("parley-output-line\nparley-output-line\n")).toBe(true)
    }
    for (const name of ["spew.pid", "spew_small.pid"]) {
      expect(running(Number(read(p, name)))).toBe(false)
    }
  })
})
