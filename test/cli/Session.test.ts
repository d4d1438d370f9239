/**
 * The file store (docs/storage.md#durable-appends) from outside: the built binary, real processes, real signals.
 * Nothing that reached the disk is lost (SIGINT the moment an event lands,
 * kill -9 after the journal holds a whole turn), parallel runs never share a
 * conversation, a half-made conversation never breaks `check`, and one
 * damaged conversation never takes the others down.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { binary, withoutRunHeader } from "../support/Cli.ts"
import {
  conversationDir,
  exited,
  makeProject,
  parley,
  persisted,
  type Project,
  spawnParley,
  waitFor,
  writeScript
} from "../support/Project.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
})

type Entry = { type: string; id?: string; content?: string }
const eventsOf = (dir: string): Array<Entry> =>
  JSON.parse(fs.readFileSync(path.join(dir, "events.json"), "utf8")) as Array<Entry>
const conversationDirs = (p: Project) =>
  fs
    .readdirSync(path.join(p.storage, "conversations"))
    .filter((n) => /^\d/.test(n))
    .map((n) => path.join(p.storage, "conversations", n))

/** Runs parley asynchronously (so many can run at once); resolves with its exit code and output. */
const runAsync = (
  p: Project,
  args: ReadonlyArray<string>
): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [binary, "--storage", p.storage, ...args], {
      cwd: p.root,
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(child)
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe("nothing that reached the disk is lost", () => {
  it("SIGINT the moment a tool's response lands on disk, 30 times: the response is in events.json every time", async () => {
    const p = makeProject()
    const script = writeScript(p, "s.json", [
      {
        tool_calls: [
          { id: "fast_1", name: "counter", arguments: { name: "fast" } },
          { id: "slow_1", name: "counter", arguments: { name: "slow" } }
        ]
      }
    ])
    fs.writeFileSync(path.join(p.root, "slow.block"), "")
    let lost = 0
    for (let trial = 0; trial < 30; trial++) {
      const child = spawnParley(p, ["query", `trial ${trial}`, "--new", "--script", script])
      children.push(child)
      const journal = () => conversationDirs(p).map((d) => path.join(d, "events.json.journal"))
      // Strike as soon as the fast tool's response is in a journal line.
      await waitFor(
        "the fast tool's response on disk",
        () => journal().some((f) => fs.existsSync(f) && fs.readFileSync(f, "utf8").includes(`"id":"fast_1","content"`)),
        20_000
      )
      child.kill("SIGINT")
      expect(await exited(child)).toBe(130)
    }
    for (const dir of conversationDirs(p)) {
      expect(fs.existsSync(path.join(dir, "events.json.journal"))).toBe(false)
      if (!eventsOf(dir).some((e) => e.type === "tool_call_response" && e.id === "fast_1")) lost++
    }
    expect(conversationDirs(p).length).toBe(30)
    expect(lost).toBe(0)
    // 30 whole processes, each killed at one instant: about 1 s each when quiet, 8 s under a parallel suite on 2 cores.
  }, 600_000)

  it("kill -9 once the journal holds the whole turn: the next --continue-turn folds it into a plain events.json", async () => {
    const p = makeProject()
    const script = writeScript(p, "s.json", [
      { tool_calls: [{ id: "c1", name: "counter", arguments: { name: "one" } }] },
      { message: "All done." }
    ])
    const child = spawnParley(p, ["query", "go", "--script", script])
    children.push(child)
    // Strike when the final reply is journaled (if the run folds first, the check below holds all the same).
    await waitFor(
      "the final reply on disk",
      () => persisted(p).some((e) => e.type === "chat_response" && String(e["message"]).length > 0),
      20_000
    )
    child.kill("SIGKILL")
    await exited(child)
    const whole = persisted(p).map((e) => e.type)
    expect(whole).toStrictEqual([
      "turn_start",
      "chat_request",
      "tool_call_request",
      "tool_call_response",
      "chat_response"
    ])
    // What JP would see right now may be `[]`; the next command that opens the conversation heals it.
    const r = parley(p, [
      "query",
      "--continue-turn",
      "--id",
      path.basename(conversationDir(p)).split("-")[0]!,
      "--script",
      script
    ])
    expect(r.code).toBe(0)
    expect(r.stderr).toContain("nothing to resume")
    expect(fs.existsSync(path.join(conversationDir(p), "events.json.journal"))).toBe(false)
    expect(eventsOf(conversationDir(p)).map((e) => e.type)).toStrictEqual(whole)
    expect(fs.readFileSync(path.join(p.root, "one.count"), "utf8").trim()).toBe("1")
  })
})

describe("SIGHUP and SIGTERM interrupt like SIGINT", () => {
  for (const [signal, code] of [
    ["SIGHUP", 129],
    ["SIGTERM", 143]
  ] as const) {
    it(`${signal} while a tool runs: exit ${code}, journal folded, lock released, the turn resumable`, async () => {
      const p = makeProject()
      fs.writeFileSync(path.join(p.root, "slow.block"), "")
      const script = writeScript(p, "s.json", [
        { tool_calls: [{ id: "slow_1", name: "counter", arguments: { name: "slow" } }] },
        { message: "ok" }
      ])
      const child = spawnParley(p, ["query", "run it", "--script", script])
      children.push(child)
      await waitFor("the tool running", () => fs.existsSync(path.join(p.root, "slow.pid")))
      child.kill(signal)
      expect(await exited(child)).toBe(code)
      expect(fs.readdirSync(path.join(p.storage, "locks"))).toStrictEqual([])
      expect(fs.existsSync(path.join(conversationDir(p), "events.json.journal"))).toBe(false)
      const ls = JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout) as Array<{
        incomplete: unknown
      }>
      expect(ls[0]!.incomplete).toStrictEqual({ state: "pending-tool-execution" })
      fs.rmSync(path.join(p.root, "slow.block"))
      const resumed = parley(p, [
        "query",
        "--continue-turn",
        "--id",
        path.basename(conversationDir(p)).split("-")[0]!,
        "--script",
        script
      ])
      expect([resumed.code, resumed.stdout]).toStrictEqual([0, "ok\n"])
    })
  }
})

describe("a reader that stops reading", () => {
  it("`parley query … | head -c 3`: the run ends like an interrupt (journal folded, lock released, the reply kept), exit 0", async () => {
    const p = makeProject()
    fs.writeFileSync(path.join(p.root, "slow.block"), "")
    const script = writeScript(p, "s.json", [
      { message: "line1\nline2\n", tool_calls: [{ id: "c1", name: "counter", arguments: { name: "slow" } }] },
      { message: "after the tool\n".repeat(2000) }
    ])
    const child = spawn(process.execPath, [binary, "--storage", p.storage, "query", "go", "--script", script], {
      cwd: p.root,
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(child)
    // Once the tool runs, close the pipe as `head -c 3` does: the reply that follows the tool meets EPIPE.
    await waitFor("the tool running", () => /^\d+\n$/.test(fs.readFileSync(path.join(p.root, "slow.pid"), "utf8")))
    child.stdout.destroy()
    fs.rmSync(path.join(p.root, "slow.block"))
    expect(await exited(child)).toBe(0)
    const dir = conversationDir(p)
    expect(fs.readdirSync(dir).sort()).toStrictEqual(["base_config.json", "events.json", "metadata.json"])
    expect(fs.readdirSync(path.join(p.storage, "locks"))).toStrictEqual([])
    expect(eventsOf(dir).map((e) => e.type)).toStrictEqual([
      "turn_start",
      "chat_request",
      "chat_response",
      "tool_call_request",
      "tool_call_response",
      "chat_response"
    ])
  })
})

describe("parallel runs", () => {
  it("16 concurrent `query --new` in one storage directory: 16 distinct conversations, each with exactly its own message", async () => {
    const p = makeProject()
    const script = writeScript(p, "s.json", [{ message: "ok" }])
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) => runAsync(p, ["query", `msg-${i}`, "--new", "--script", script]))
    )
    expect(results.map((r) => [r.code, withoutRunHeader(r.stderr)])).toStrictEqual(results.map(() => [0, ""]))
    const dirs = conversationDirs(p)
    expect(dirs.length).toBe(16)
    const ids = new Set(dirs.map((d) => path.basename(d).split("-")[0]))
    expect(ids.size).toBe(16)
    const messages = dirs.map((d) =>
      eventsOf(d)
        .filter((e) => e.type === "chat_request")
        .map((e) => e.content)
    )
    expect(messages.map((m) => m.length)).toStrictEqual(dirs.map(() => 1))
    expect(messages.map((m) => m[0]).sort()).toStrictEqual(Array.from({ length: 16 }, (_, i) => `msg-${i}`).sort())
    for (const d of dirs)
      expect(path.basename(d)).toBe(
        `${path.basename(d).split("-")[0]}-${JSON.parse(fs.readFileSync(path.join(d, "metadata.json"), "utf8")).title}`
      )
  })

  it("kill -9 at random instants during `query --new`: check stays ok and a new query works", async () => {
    const p = makeProject()
    const script = writeScript(p, "s.json", [{ message: "ok" }])
    for (let trial = 0; trial < 12; trial++) {
      const child = spawnParley(p, ["query", `kill ${trial}`, "--new", "--script", script])
      children.push(child)
      await sleep(40 + ((trial * 37) % 260))
      child.kill("SIGKILL")
      await exited(child)
    }
    const check = parley(p, ["conversation", "check"])
    expect(withoutRunHeader(check.stderr)).toBe("")
    expect(check.code).toBe(0)
    const after = parley(p, ["query", "after the kills", "--new", "--script", script])
    expect(after.code).toBe(0)
    expect(after.stdout).toContain("ok")
    expect(parley(p, ["conversation", "check"]).code).toBe(0)
  })
})

describe("damage stays local", () => {
  /** One good conversation made by parley, copied `n` times under new ids. */
  const storageWith = (n: number): Project => {
    const p = makeProject()
    const script = writeScript(p, "s.json", [
      { tool_calls: [{ id: "c1", name: "counter", arguments: { name: "x" } }] },
      { message: "ok" }
    ])
    expect(parley(p, ["query", "good", "--new", "--script", script]).code).toBe(0)
    const source = conversationDir(p)
    for (let i = 1; i < n; i++)
      fs.cpSync(source, path.join(p.storage, "conversations", `${17000000000 + i}-good`), { recursive: true })
    return p
  }

  const damages: Array<[string, (dir: string) => void]> = [
    ["a journal line `null`", (dir) => fs.writeFileSync(path.join(dir, "events.json.journal"), "null\n")]
  ]
  // Deep nesting (docs/decisions.md#json-depth): any depth JSON.parse reads is decoded, listed and checked (it is not damage any more).
  const nest = (dir: string) => {
    const events = JSON.parse(fs.readFileSync(path.join(dir, "events.json"), "utf8")) as Array<Record<string, unknown>>
    const call = events.find((e) => e["type"] === "tool_call_request")!
    const deep = "[".repeat(3000) + "]".repeat(3000)
    fs.writeFileSync(
      path.join(dir, "events.json"),
      JSON.stringify(events, null, 2).replace(
        JSON.stringify(call["arguments"], null, 2).replaceAll("\n", "\n    "),
        `{"deep": ${deep}}`
      )
    )
  }
  it("arguments nested 3,000 deep among 40 good: ls lists all 41, check decodes it (its hand-made layout would change on re-save)", () => {
    const p = storageWith(40)
    const bad = path.join(p.storage, "conversations", "17999999999-bad")
    fs.cpSync(conversationDirs(p)[0]!, bad, { recursive: true })
    nest(bad)
    const ls = parley(p, ["conversation", "ls", "--format", "json"])
    expect([ls.code, ls.stderr]).toStrictEqual([0, ""])
    expect((JSON.parse(ls.stdout) as Array<unknown>).length).toBe(41)
    const check = parley(p, ["conversation", "check", "--format", "json"])
    const rows = JSON.parse(check.stdout) as Array<{ id: string; ok: boolean; roundtrip?: string }>
    expect(rows.length).toBe(41)
    expect(rows.filter((r) => !r.ok)).toStrictEqual([])
    expect(rows.filter((r) => r.roundtrip !== "identical").map((r) => r.id)).toStrictEqual(["17999999999"])
  })
  for (const [name, damage] of damages) {
    it(`${name} among 40 good: ls lists 40 and the damaged one, names it, check JSON is whole with 41 rows, query --new works`, () => {
      const p = storageWith(40)
      const bad = path.join(p.storage, "conversations", "17999999999-bad")
      fs.cpSync(conversationDirs(p)[0]!, bad, { recursive: true })
      damage(bad)
      const ls = parley(p, ["conversation", "ls", "--format", "json"])
      expect(ls.code).toBe(0)
      const listed = JSON.parse(ls.stdout) as Array<{ id: string; damaged: string | null }>
      expect(listed.length).toBe(41)
      expect(listed.filter((r) => r.damaged !== null).map((r) => r.id)).toStrictEqual(["17999999999"])
      expect(ls.stderr.trim().split("\n")).toHaveLength(1)
      expect(ls.stderr).toContain("17999999999")
      const check = parley(p, ["conversation", "check", "--format", "json"])
      expect(check.code).toBe(1)
      const rows = JSON.parse(check.stdout) as Array<{ id: string; ok: boolean; error?: string }>
      expect(rows.length).toBe(41)
      expect(rows.filter((r) => !r.ok).map((r) => r.id)).toStrictEqual(["17999999999"])
      const script = writeScript(p, "n.json", [{ message: "fine" }])
      const q = parley(p, ["query", "still works", "--new", "--script", script])
      expect([q.code, q.stdout.trim()]).toStrictEqual([0, "fine"])
    })
  }

  it("check --format json piped is whole even when it is large and exits 1", () => {
    const p = storageWith(600)
    fs.writeFileSync(path.join(conversationDirs(p)[3]!, "events.json.journal"), "null\n")
    const check = parley(p, ["conversation", "check", "--format", "json"])
    expect(check.code).toBe(1)
    expect(check.stdout.length).toBeGreaterThan(65_536)
    expect((JSON.parse(check.stdout) as Array<unknown>).length).toBe(600)
  })
})
