// Runs beyond the terminal (docs/questions-and-approvals.md#runs-beyond-the-terminal): a running turn serves itself on a unix socket under
// the storage directory; `conversation answer` delivers answers (secrets too,
// never written) to it, `conversation ls` shows it running, `conversation
// kill` stops it like SIGTERM, and a killed host's socket is replaced.
import * as fs from "node:fs"
import * as path from "node:path"
import { spawn } from "node:child_process"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { binary } from "../support/Cli.ts"
import * as FakeLlmServer from "../support/FakeLlmServer.ts"
import {
  effectsOf,
  exited,
  hostSockets,
  killGroup,
  parley,
  persisted,
  type Project,
  spawnParley,
  waitFor,
  waitingProject,
  writeScript
} from "../support/Project.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
const groups: Array<number> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  for (const g of groups.splice(0)) killGroup(g)
})

const project = waitingProject

const runDir = (p: Project) => path.join(p.storage, "run")
const sockets = hostSockets
const ls = (p: Project) =>
  JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout) as Array<{
    id: string
    running: unknown
    incomplete: unknown
  }>
const effects = effectsOf

const call = (id: string, name: string, mode: string) => ({ id, name: "deferrable", arguments: { name, mode } })

/** Starts a run whose calls wait for answers (policy wait, no TTY); resolves once both questions are open. */
const waiting = async (p: Project, calls = [call("a1", "prod", "ask"), call("s1", "api", "secret")]) => {
  const script = writeScript(p, "s.json", [{ message: "Working.", tool_calls: calls }, { message: "Done." }])
  const child = spawnParley(p, ["query", "--new", "go", "--script", script])
  children.push(child)
  await waitFor(
    "the questions to open",
    () => persisted(p).filter((e) => e.type === "inquiry_request").length === calls.length
  )
  await waitFor("the host's socket", () => sockets(p).length === 1)
  return { child, id: sockets(p)[0]!.replace(".sock", "") }
}

describe("a running turn is a host (no TTY)", () => {
  it("answers from other processes reach the running tools; a secret is never written; ls shows the run; the socket goes with it", async () => {
    const p = project()
    const { child, id } = await waiting(p)
    expect(fs.statSync(runDir(p)).mode & 0o777).toBe(0o700)
    expect(fs.statSync(path.join(runDir(p), `${id}.sock`)).mode & 0o777).toBe(0o600)
    const row = ls(p).find((r) => r.id === id)!
    expect(row.running).toMatchObject({ pid: child.pid })
    expect([...(row.running as { waiting: Array<string> }).waiting].sort()).toStrictEqual([
      "a1.confirm.1",
      "s1.token.1"
    ])
    expect(parley(p, ["conversation", "ls"]).stdout).toContain("[running, waiting for input: deferrable]")

    const listed = parley(p, ["conversation", "answer", id])
    expect(listed.code).toBe(0)
    expect(listed.stdout).toContain(`(the turn is running: pid ${child.pid})`)
    const argvSecret = parley(p, ["conversation", "answer", id, "s1.token.1", "hunter2"])
    expect(argvSecret.code).toBe(2)
    const wrong = parley(p, ["conversation", "answer", id, "a1.confirm.1", "perhaps"])
    expect(wrong.code).toBe(2)
    const yes = parley(p, ["conversation", "answer", id, "a1.confirm.1", "yes"])
    expect(yes.code).toBe(0)
    expect(yes.stderr).toBe(`Answered a1.confirm.1; the running turn (pid ${child.pid}) goes on with it.\n`)
    const secret = parley(p, ["conversation", "answer", id, "s1.token.1", "--stdin"], "s3cr3t-t0ken\n")
    expect(secret.code).toBe(0)
    expect(await exited(child)).toBe(0)
    expect(effects(p, "prod")).toBe("true\n")
    expect(effects(p, "api")).toBe(`"12 chars"\n`)
    expect(sockets(p)).toStrictEqual([])
    const responses = persisted(p)
      .filter((e) => e.type === "inquiry_response")
      .map((e) => [e["id"], e["outcome"]])
      .sort()
    expect(responses).toStrictEqual([
      ["a1.confirm.1", "answered"],
      ["s1.token.1", "redacted"]
    ])
    const all = fs
      .readdirSync(p.storage, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => fs.readFileSync(path.join(d.parentPath, d.name), "utf8"))
      .join("\n")
    expect(all).not.toContain("s3cr3t-t0ken")
    expect(ls(p).find((r) => r.id === id)!.running).toBe(null)
    // Too late: the run recorded the first answer.
    const late = parley(p, ["conversation", "answer", id, "a1.confirm.1", "no"])
    expect(late.code).toBe(1)
    expect(late.stderr).toContain("was already answered")
  })

  it("conversation kill stops a run with a question open and a tool running: exit 0, the turn resumable, no tool left", async () => {
    const p = project()
    fs.writeFileSync(path.join(p.root, "slow.block"), "")
    const script = writeScript(p, "s.json", [
      {
        message: "Working.",
        tool_calls: [call("a1", "prod", "ask"), { id: "c1", name: "counter", arguments: { name: "slow" } }]
      }
    ])
    const child = spawnParley(p, ["query", "--new", "go", "--script", script])
    children.push(child)
    await waitFor(
      "the question and the slow tool",
      () =>
        persisted(p).some((e) => e.type === "inquiry_request") &&
        /^\d+\n$/.test(fs.readFileSync(path.join(p.root, "slow.pid"), "utf8"))
    )
    const toolPid = Number(fs.readFileSync(path.join(p.root, "slow.pid"), "utf8"))
    groups.push(toolPid)
    await waitFor("the host's socket", () => sockets(p).length === 1)
    const id = sockets(p)[0]!.replace(".sock", "")
    const killed = parley(p, ["conversation", "kill", id])
    expect(killed.stderr).toContain(`Stopped the run of jp-c${id} (pid ${child.pid}).`)
    expect(killed.code).toBe(0)
    expect(await exited(child)).toBe(143)
    // The tool's group was stopped with the run (an exited tool is reaped by init a moment later).
    await waitFor(
      "the tool to be gone",
      () => {
        try {
          process.kill(toolPid, 0)
          return fs.readFileSync(`/proc/${toolPid}/stat`, "utf8").includes(") Z ")
        } catch {
          return true
        }
      },
      3000
    )
    expect(sockets(p)).toStrictEqual([])
    expect(persisted(p).filter((e) => e.type === "inquiry_response")).toMatchObject([
      { id: "a1.confirm.1", outcome: "cancelled", reason: "user" }
    ])
    expect(ls(p)[0]!.incomplete).toStrictEqual({ state: "pending-tool-execution" })
    expect(parley(p, ["conversation", "kill", id]).code).toBe(1)
  })

  it("a killed host's socket is not a running turn: ls says so, answers go into the waiting turn, the next run replaces it", async () => {
    const p = project()
    const { child, id } = await waiting(p, [call("a1", "prod", "ask")])
    child.kill("SIGKILL")
    await exited(child)
    expect(sockets(p)).toStrictEqual([`${id}.sock`]) // left behind by kill -9
    expect(ls(p)[0]!.running).toBe(null)
    const answered = parley(p, ["conversation", "answer", id, "a1.confirm.1", "yes"])
    expect(answered.code).toBe(0)
    expect(answered.stderr).toContain("Recorded the answer to a1.confirm.1.")
    const resume = writeScript(p, "r.json", [{ message: "Done." }])
    const resumed = parley(p, ["query", "--continue-turn", "--id", id, "--script", resume])
    expect(resumed.stderr).not.toContain("Could not serve")
    expect(resumed.code).toBe(0)
    expect(effects(p, "prod")).toBe("true\n")
    expect(sockets(p)).toStrictEqual([])
  })

  it("query --detach returns at once with the conversation id; the background run waits for its answer and completes", async () => {
    const p = project()
    const script = writeScript(p, "s.json", [
      { message: "Working.", tool_calls: [call("a1", "prod", "ask")] },
      { message: "Done." }
    ])
    const started = Date.now()
    const r = parley(p, ["query", "--detach", "--new", "deploy", "--script", script])
    const took = Date.now() - started
    expect(r.code).toBe(0)
    const id = r.stdout.trim()
    expect(id).toMatch(/^\d{11}$/)
    const pid = Number(/\(pid (\d+)\)/.exec(r.stderr)![1])
    groups.push(pid)
    expect(r.stderr).toContain(`conversation answer ${id}`)
    expect(r.stderr).toContain(`conversation kill ${id}`)
    expect(took).toBeLessThan(15_000)
    await waitFor("the question to open", () => persisted(p).some((e) => e.type === "inquiry_request"))
    expect(ls(p)[0]!.running).toMatchObject({ pid, waiting: ["a1.confirm.1"] })
    expect(parley(p, ["conversation", "answer", id, "a1.confirm.1", "no"]).code).toBe(0)
    await waitFor("the background run to finish", () => sockets(p).length === 0 && effects(p, "prod") === "false\n")
    await waitFor("the reply", () => persisted(p).at(-1)?.type === "chat_response")
    const log = fs.readdirSync(runDir(p)).find((n) => n.startsWith("detached-"))!
    expect(fs.readFileSync(path.join(runDir(p), log), "utf8")).toContain("Done.")
  })

  it("query --detach of a run that cannot get under way fails with its reason and prints no id", async () => {
    const p = project()
    const quick = writeScript(p, "quick.json", [{ message: "Done." }])
    expect(parley(p, ["query", "--new", "hi", "--script", quick]).code).toBe(0)
    const id = JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout)[0].id as string
    // The conversation is known at once, but its model is not: the run must not be announced as started.
    const bad = parley(p, ["query", "--detach", "--id", id, "--model", "nope/nope", "more"])
    expect(bad.code).toBe(1)
    expect(bad.stdout).toBe("")
    expect(bad.stderr).toContain("The background run ended before it got under way (exit 2)")
    expect(bad.stderr).toContain("nope/nope")
    // Nothing to resume: the run ends at once, calling no model.
    const idle = parley(p, ["query", "--detach", "--continue-turn", "--id", id, "--script", quick])
    expect(idle.code).toBe(1)
    expect(idle.stdout).toBe("")
    expect(idle.stderr).toContain("ended before it got under way (exit 0)")
    expect(sockets(p)).toStrictEqual([])
  })

  it("query --detach --discard-turn, which calls no model, succeeds with the conversation id", async () => {
    const p = project()
    const script = writeScript(p, "s.json", [{ message: "Working.", tool_calls: [call("a1", "prod", "ask")] }])
    // A turn left waiting for its answer on disk (defer), then discarded by a background run.
    parley(p, ["query", "--new", "go", "--script", script, "--detached-policy", "defer"])
    const id = JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout)[0].id as string
    const r = parley(p, ["query", "--detach", "--discard-turn", "--id", id])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout.trim()).toBe(id)
    await waitFor("the discard", () => persisted(p).every((e) => e.type !== "inquiry_request"))
  })
})

describe("a secret answered into a running turn (real SDK, fake provider on 127.0.0.1)", () => {
  it.live(
    "reaches the tool; it is in no file under the storage, in no process's command line, and in no request the model got",
    () =>
      Effect.gen(function* () {
        const SECRET = "pq-7f3a-secret-91ce"
        const fake = yield* FakeLlmServer.make
        const p = project()
        fake.enqueueAnthropic(
          {
            blocks: [{ type: "tool_use", id: "toolu_s", name: "deferrable", input: { name: "api", mode: "secret" } }],
            stopReason: "tool_use"
          },
          { blocks: [{ type: "text", text: "Stored." }] }
        )
        const host = spawn(
          process.execPath,
          [binary, "--storage", p.storage, "query", "--new", "--model", "anthropic/claude-test", "store it"],
          {
            cwd: p.root,
            env: { ...process.env, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url, PARLEY_STORAGE: "" },
            stdio: ["ignore", "pipe", "pipe"]
          }
        )
        children.push(host)
        yield* Effect.promise(() =>
          waitFor(
            "the secret question and the socket",
            () => persisted(p).some((e) => e.type === "inquiry_request") && sockets(p).length === 1
          )
        )
        const id = sockets(p)[0]!.replace(".sock", "")
        // Every process's command line, sampled while the answer is delivered and the tool runs.
        let seen = false
        const scan = setInterval(() => {
          for (const pid of fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
            try {
              if (fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(SECRET)) seen = true
            } catch {
              // gone
            }
          }
        }, 5)
        const answered = parley(p, ["conversation", "answer", id, "toolu_s.token.1", "--stdin"], `${SECRET}\n`)
        expect(answered.code).toBe(0)
        expect(yield* Effect.promise(() => exited(host))).toBe(0)
        clearInterval(scan)
        expect(seen).toBe(false)
        expect(effects(p, "api")).toBe(`"${SECRET.length} chars"\n`)
        const files = fs.readdirSync(p.storage, { recursive: true, withFileTypes: true }).filter((d) => d.isFile())
        for (const d of files) {
          const text = fs.readFileSync(path.join(d.parentPath, d.name), "utf8")
          expect(text.includes(SECRET), d.name).toBe(false)
          for (const m of text.matchAll(/"([A-Za-z0-9+/]{8,}={0,2})"/g))
            expect(Buffer.from(m[1]!, "base64").toString("utf8").includes(SECRET), d.name).toBe(false)
        }
        expect(fake.requests.length).toBe(2)
        for (const request of fake.requests) expect(JSON.stringify(request.body).includes(SECRET)).toBe(false)
      }),
    60_000
  )
})
