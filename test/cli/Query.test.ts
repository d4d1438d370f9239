import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { bundle, runParley, withoutRunHeader } from "../support/Cli.ts"
import { repoRoot } from "../support/Fixtures.ts"
import {
  conversationDir,
  conversationIdOf,
  copyProject,
  exited,
  killGroup,
  makeProject,
  parley,
  persisted,
  type Project,
  spawnParley,
  waitFor,
  writeScript
} from "../support/Project.ts"

const b64 = (s: string) => Buffer.from(s).toString("base64")
const unb64 = (s: unknown) => Buffer.from(String(s), "base64").toString("utf8")
const types = (p: Project) => persisted(p).map((e) => e.type)

const children: Array<{ pid?: number | undefined; kill: (s: NodeJS.Signals) => boolean }> = []
const groups: Array<number> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  for (const g of groups.splice(0)) killGroup(g)
})

const ls = (p: Project) => {
  const r = parley(p, ["conversation", "ls", "--format", "json"])
  expect(r.code).toBe(0)
  return JSON.parse(r.stdout) as Array<{
    id: string
    events: number
    incomplete: { state: string; tool?: string } | null
  }>
}

describe("parley query (built binary, no TTY)", () => {
  it("scripted model + a local tool that asks `overwrite`: exactly the events of RFD 082", () => {
    const p = makeProject()
    fs.writeFileSync(path.join(p.root, "a.txt"), "old")
    const script = writeScript(p, "script.json", [
      {
        message: "I'll write the note.",
        tool_calls: [{ name: "write_note", arguments: { path: "a.txt", text: "new" } }]
      },
      { structured: { answer: true } },
      { message: "Done." }
    ])
    const r = parley(p, ["query", "Write new to a.txt", "--script", script])
    expect(withoutRunHeader(r.stderr)).toBe("")
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("I'll write the note.\nDone.\n")
    expect(fs.readFileSync(path.join(p.root, "a.txt"), "utf8")).toBe("new")
    const dir = conversationDir(p)
    expect(fs.existsSync(path.join(dir, "events.json.journal"))).toBe(false) // folded: plain JP format at rest
    const events = JSON.parse(fs.readFileSync(path.join(dir, "events.json"), "utf8")) as Array<Record<string, unknown>>
    expect(events.map((e) => e["type"])).toStrictEqual([
      "turn_start",
      "chat_request",
      "chat_response",
      "tool_call_request",
      "inquiry_request",
      "inquiry_response",
      "tool_call_response",
      "chat_response"
    ])
    expect(events[3]).toMatchObject({
      id: "call_1",
      name: "write_note",
      arguments: { path: b64("a.txt"), text: b64("new") }
    })
    expect(events[4]).toMatchObject({
      id: "call_1.overwrite.1",
      source: { source: "tool", name: "write_note" },
      question: { answer_type: { type: "boolean" } }
    })
    // Today's JP writer shape: the entry's own id first (JP RFD 097), unique in the stream.
    expect(Object.keys(events[5]!)).toStrictEqual(["event_id", "timestamp", "type", "outcome", "id", "answer"])
    const ids = events.map((e) => e["event_id"])
    for (const id of ids) expect(id).toMatch(/^[0-9a-z]{7}$/)
    expect(new Set(ids).size).toBe(ids.length)
    expect(events[5]).toMatchObject({ outcome: "answered", id: "call_1.overwrite.1", answer: true })
    expect(unb64(events[6]!["content"])).toContain("a.txt")
    expect(events[6]!["is_error"]).toBe(false)
    const meta = JSON.parse(fs.readFileSync(path.join(dir, "metadata.json"), "utf8"))
    expect(meta.title).toBe("Write new to a.txt")
    expect(path.basename(dir)).toMatch(/^\d{11}-write-new-to-a-txt$/)
  })

  it("kill -9 while the slow of two tools runs; --continue-turn runs only the slow one; --discard-turn drops the tail", async () => {
    const p = makeProject()
    fs.writeFileSync(path.join(p.root, "slow.block"), "")
    const script = writeScript(p, "s1.json", [
      {
        message: "Running both.",
        tool_calls: [
          { id: "fast_1", name: "counter", arguments: { name: "fast" } },
          { id: "slow_1", name: "counter", arguments: { name: "slow" } }
        ]
      }
    ])
    const child = spawnParley(p, ["query", "run both", "--script", script])
    children.push(child)
    await waitFor(
      "the fast tool's response and the slow tool running",
      () =>
        persisted(p).some((e) => e.type === "tool_call_response" && e["id"] === "fast_1") &&
        /^\d+\n$/.test(fs.readFileSync(path.join(p.root, "slow.pid"), "utf8"))
    )
    groups.push(Number(fs.readFileSync(path.join(p.root, "slow.pid"), "utf8")))
    child.kill("SIGKILL")
    await exited(child)
    killGroup(groups[0]!) // the orphaned tool (its own process group)
    expect(ls(p)[0]!.incomplete).toStrictEqual({ state: "pending-tool-execution" })
    const copy = copyProject(p)

    fs.rmSync(path.join(p.root, "slow.block"))
    const resume = writeScript(p, "s2.json", [{ message: "Both finished." }])
    const r = parley(p, ["query", "--continue-turn", "--script", resume])
    expect(withoutRunHeader(r.stderr)).toBe("")
    expect(r.stdout).toBe("Both finished.\n")
    expect(r.code).toBe(0)
    expect(fs.readFileSync(path.join(p.root, "fast.count"), "utf8").trim()).toBe("1") // not re-run
    expect(fs.readFileSync(path.join(p.root, "slow.count"), "utf8").trim()).toBe("2")
    expect(types(p)).toStrictEqual([
      "turn_start",
      "chat_request",
      "chat_response",
      "tool_call_request",
      "tool_call_request",
      "tool_call_response",
      "tool_call_response",
      "chat_response"
    ])
    expect(ls(p)[0]!.incomplete).toBeNull()

    const d = parley(copy, ["query", "--discard-turn"])
    expect(d.code).toBe(0)
    expect(d.stderr).toContain("Discarded the incomplete turn")
    expect(JSON.parse(fs.readFileSync(path.join(conversationDir(copy), "events.json"), "utf8"))).toStrictEqual([])
    expect(ls(copy)[0]!.incomplete).toBeNull()
  })

  it("kill -9 during an inquiry; --continue-turn asks again under the recorded id and completes", async () => {
    const p = makeProject()
    fs.writeFileSync(path.join(p.root, "a.txt"), "old")
    const script = writeScript(p, "s1.json", [
      { message: "Writing.", tool_calls: [{ name: "write_note", arguments: { path: "a.txt", text: "new" } }] },
      { delay_ms: 60_000, structured: { answer: true } }
    ])
    const child = spawnParley(p, ["query", "write it", "--script", script])
    children.push(child)
    await waitFor("the inquiry request", () => persisted(p).some((e) => e.type === "inquiry_request"))
    child.kill("SIGKILL")
    await exited(child)
    expect(ls(p)[0]!.incomplete).toStrictEqual({ state: "waiting-for-input", tool: "write_note" })
    const resume = writeScript(p, "s2.json", [{ structured: { answer: true } }, { message: "Written." }])
    const r = parley(p, ["query", "--continue-turn", "--script", resume])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("Written.\n")
    const events = persisted(p)
    expect(events.filter((e) => e.type === "inquiry_request").map((e) => e["id"])).toStrictEqual(["call_1.overwrite.1"])
    expect(
      events.filter((e) => e.type === "inquiry_response").map((e) => [e["id"], e["outcome"], e["answer"]])
    ).toStrictEqual([["call_1.overwrite.1", "answered", true]])
    expect(fs.readFileSync(path.join(p.root, "a.txt"), "utf8")).toBe("new")
    expect(ls(p)[0]!.incomplete).toBeNull()
  })

  it("kill -9 during streaming; --continue-turn retries the model call", async () => {
    const p = makeProject()
    const script = writeScript(p, "s1.json", [{ delay_ms: 60_000, message: "never seen" }])
    const child = spawnParley(p, ["query", "hello?", "--script", script])
    children.push(child)
    await waitFor("the chat request", () => persisted(p).some((e) => e.type === "chat_request"))
    child.kill("SIGKILL")
    await exited(child)
    expect(ls(p)[0]!.incomplete).toStrictEqual({ state: "pending-llm-response" })
    const r = parley(p, ["query", "--continue-turn", "--script", writeScript(p, "s2.json", [{ message: "Hello!" }])])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("Hello!\n")
    expect(types(p)).toStrictEqual(["turn_start", "chat_request", "chat_response"])
  })

  it("RFD 023 --continue-turn MESSAGE: the resumed turn completes first, then the message is sent as a new turn", async () => {
    const p = makeProject()
    const script = writeScript(p, "s1.json", [{ delay_ms: 60_000, message: "never seen" }])
    const child = spawnParley(p, ["query", "hello?", "--script", script])
    children.push(child)
    await waitFor("the chat request", () => persisted(p).some((e) => e.type === "chat_request"))
    child.kill("SIGKILL")
    await exited(child)
    const next = writeScript(p, "s2.json", [{ message: "Hello!" }, { message: "Next step done." }])
    const r = parley(p, ["query", "--continue-turn", "next step", "--script", next])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain("Next step done.")
    expect(types(p)).toStrictEqual([
      "turn_start",
      "chat_request",
      "chat_response",
      "turn_start",
      "chat_request",
      "chat_response"
    ])
  })

  it("an incomplete turn without a TTY and without a flag is an error naming both flags and the id", async () => {
    const p = makeProject()
    const child = spawnParley(p, [
      "query",
      "hello?",
      "--script",
      writeScript(p, "s1.json", [{ delay_ms: 60_000, message: "x" }])
    ])
    children.push(child)
    await waitFor("the chat request", () => persisted(p).some((e) => e.type === "chat_request"))
    child.kill("SIGKILL")
    await exited(child)
    const id = conversationIdOf(p)
    const before = persisted(p)
    const r = parley(p, ["query", "next question", "--script", writeScript(p, "s2.json", [{ message: "y" }])])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`Conversation jp-c${id} has an incomplete turn (waiting for the assistant's reply).`)
    expect(r.stderr).toContain(`parley query --continue-turn --id ${id}`)
    expect(r.stderr).toContain(`parley query --discard-turn --id ${id}`)
    // Nothing was added or dropped; opening the conversation folded what the killed run journaled.
    expect(fs.existsSync(path.join(conversationDir(p), "events.json.journal"))).toBe(false)
    expect(persisted(p)).toStrictEqual(before)
  })

  it("two runs on one conversation at once: the second fails fast naming the conversation and the holder; the first completes", async () => {
    const p = makeProject()
    // The first run holds the conversation until the test lets its tool finish (a delay would race a slow machine).
    fs.writeFileSync(path.join(p.root, "hold.block"), "")
    const first = spawnParley(p, [
      "query",
      "slow one",
      "--script",
      writeScript(p, "s1.json", [
        { tool_calls: [{ id: "hold_1", name: "counter", arguments: { name: "hold" } }] },
        { message: "First done." }
      ])
    ])
    children.push(first)
    await waitFor("the first run's tool running", () =>
      /^\d+\n$/.test(fs.readFileSync(path.join(p.root, "hold.pid"), "utf8"))
    )
    groups.push(Number(fs.readFileSync(path.join(p.root, "hold.pid"), "utf8")))
    const id = conversationIdOf(p)
    const t0 = Date.now()
    const second = parley(p, [
      "query",
      "--id",
      id,
      "second",
      "--script",
      writeScript(p, "s2.json", [{ message: "Second." }])
    ])
    expect(Date.now() - t0).toBeLessThan(5000)
    expect(second.code).toBe(1)
    expect(second.stderr).toContain(`Conversation ${id} is being written by another parley process (pid ${first.pid})`)
    fs.rmSync(path.join(p.root, "hold.block"))
    expect(await exited(first)).toBe(0)
    expect(first.output()).toContain("First done.")
    expect(types(p)).toStrictEqual([
      "turn_start",
      "chat_request",
      "tool_call_request",
      "tool_call_response",
      "chat_response"
    ])
  })

  it("continues the most recent conversation by default, --new starts another, and --id picks one", () => {
    const p = makeProject()
    const s = (n: string, text: string) => writeScript(p, n, [{ message: text }])
    expect(parley(p, ["query", "one", "--script", s("a.json", "A")]).code).toBe(0)
    expect(parley(p, ["query", "two", "--script", s("b.json", "B")]).code).toBe(0)
    expect(ls(p).length).toBe(1)
    expect(ls(p)[0]!.events).toBe(6)
    expect(parley(p, ["query", "three", "--new", "--script", s("c.json", "C")]).code).toBe(0)
    const rows = ls(p)
    expect(rows.length).toBe(2)
    const oldest = rows.find((r) => r.events === 6)!
    expect(parley(p, ["query", "four", "--id", `jp-c${oldest.id}`, "--script", s("d.json", "D")]).code).toBe(0)
    expect(ls(p).find((r) => r.id === oldest.id)!.events).toBe(9)
  })

  it("clear errors: bad model, no model, missing script, malformed config (no conversation touched), provider errors", () => {
    const p = makeProject()
    expect(parley(p, ["query", "hi", "--model", "gpt-5"]).stderr).toContain(`Unknown model "gpt-5"`)
    const none = parley(p, ["query", "hi"])
    expect(none.code).toBe(1)
    expect(none.stderr).toContain("No model chosen")
    expect(parley(p, ["query", "hi", "--model", "scripted"]).stderr).toContain("--script FILE")
    // A provider error leaves a resumable turn and says how to retry.
    const err = parley(p, ["query", "hi", "--script", writeScript(p, "e.json", [{ error: "provider unavailable" }])])
    expect(err.code).toBe(1)
    expect(err.stderr).toContain("provider unavailable")
    expect(err.stderr).toContain("--continue-turn --id")
    const snapshot = fs.readFileSync(path.join(conversationDir(p), "events.json"), "utf8")
    fs.writeFileSync(path.join(p.storage, "config.toml"), '[conversation.tools.write_note]\nrun = "sometimes"\n')
    const cfg = parley(p, ["query", "hi", "--script", writeScript(p, "ok.json", [{ message: "x" }])])
    expect(cfg.code).toBe(1)
    expect(cfg.stderr).toContain("config.toml")
    expect(cfg.stderr).toContain("conversation.tools.write_note.run")
    expect(fs.readFileSync(path.join(conversationDir(p), "events.json"), "utf8")).toBe(snapshot)
  })

  it("reads the message from stdin when none is given", () => {
    const p = makeProject()
    const r = runParley(
      ["--storage", p.storage, "query", "--script", writeScript(p, "s.json", [{ message: "Got it." }])],
      { cwd: p.root, input: "piped question\n" }
    )
    expect(r.code).toBe(0)
    expect(persisted(p).find((e) => e.type === "chat_request")!["content"]).toBe("piped question")
  })

  it("parley demo (what npm start runs) works offline with no API key", () => {
    // As npm start runs it: the bundle by its path, no `parley` on the PATH.
    const env: Record<string, string> = { ...(process.env as Record<string, string>) }
    delete env["ANTHROPIC_API_KEY"]
    delete env["OPENAI_API_KEY"]
    const run = spawnSync(process.execPath, [bundle, "demo"], { cwd: repoRoot, env, encoding: "utf8" })
    const r = { code: run.status, stdout: run.stdout, stderr: run.stderr }
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("Answer: true")
    expect(r.stdout).toContain('"incomplete": null')
    const project = /project:\s+(\S+)/.exec(r.stderr)![1]!
    expect(fs.readFileSync(path.join(project, "notes.txt"), "utf8")).toContain("Demo note")
    // The command it suggests works when pasted, though `parley` is not on the PATH of a clone.
    const tryLine = /try:\s+(.+)/.exec(r.stderr)![1]!
    const pasted = spawnSync("sh", ["-c", tryLine], {
      encoding: "utf8",
      env: { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin` }
    })
    expect([pasted.status, pasted.stderr]).toStrictEqual([0, ""])
    expect((JSON.parse(pasted.stdout) as Array<{ type: string }>).map((e) => e.type)).toContain("inquiry_response")
    // The store's own hints too, with no --storage given: they name parley as it was started.
    const missing = spawnSync(process.execPath, [bundle, "conversation", "print", "17000000001"], {
      cwd: project,
      encoding: "utf8"
    })
    expect([missing.status, missing.stderr]).toStrictEqual([
      1,
      `parley: No conversation with id 17000000001. Run \`node ${bundle} conversation ls --archived\` to see the ids.\n`
    ])
    fs.rmSync(project, { recursive: true, force: true })
  })
})

describe("Ctrl-C (SIGINT) during a turn", () => {
  it("while tools run: exits 130 with a --continue-turn hint; finished tools saved, unfinished left pending, files folded", async () => {
    const p = makeProject()
    fs.writeFileSync(path.join(p.root, "slow.block"), "")
    const script = writeScript(p, "s1.json", [
      {
        tool_calls: [
          { id: "fast_1", name: "counter", arguments: { name: "fast" } },
          { id: "slow_1", name: "counter", arguments: { name: "slow" } }
        ]
      }
    ])
    const child = spawnParley(p, ["query", "run both", "--script", script])
    children.push(child)
    await waitFor(
      "the fast tool's response and the slow tool running",
      () =>
        persisted(p).some((e) => e.type === "tool_call_response" && e["id"] === "fast_1") &&
        /^\d+\n$/.test(fs.readFileSync(path.join(p.root, "slow.pid"), "utf8"))
    )
    const toolPid = Number(fs.readFileSync(path.join(p.root, "slow.pid"), "utf8"))
    child.kill("SIGINT")
    expect(await exited(child)).toBe(130)
    expect(child.output()).toContain(`resume with: parley query --continue-turn --id ${conversationIdOf(p)}`)
    // The interrupted tool's whole process group is gone.
    await waitFor(
      "the tool process to end",
      () => {
        try {
          process.kill(toolPid, 0)
          return fs.readFileSync(`/proc/${toolPid}/stat`, "utf8").split(" ")[2] === "Z"
        } catch {
          return true
        }
      },
      5000
    )
    const dir = conversationDir(p)
    expect(fs.existsSync(path.join(dir, "events.json.journal"))).toBe(false)
    const events = JSON.parse(fs.readFileSync(path.join(dir, "events.json"), "utf8")) as Array<{
      type: string
      id?: string
    }>
    expect(events.filter((e) => e.type === "tool_call_response").map((e) => e.id)).toStrictEqual(["fast_1"])
    expect(ls(p)[0]!.incomplete).toStrictEqual({ state: "pending-tool-execution" })
  })
})

describe("nothing is created when the model cannot be called", () => {
  it("a missing API key or a broken script fails before any conversation exists", () => {
    const p = makeProject()
    const noKey = runParley(["--storage", p.storage, "query", "hi", "--model", "anthropic/claude-sonnet-4-5"], {
      cwd: p.root,
      env: { ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: undefined }
    })
    expect(noKey.code).toBe(1)
    expect(noKey.stderr).toBe(
      "parley: ANTHROPIC_API_KEY is not set. Export it, or run with --model scripted --script FILE to work offline.\n"
    )
    const badScript = parley(p, ["query", "hi", "--script", writeScript(p, "bad.json", [{ mesage: "typo" }])])
    expect(badScript.code).toBe(1)
    expect(badScript.stderr).toContain("bad.json")
    expect(badScript.stderr).toContain("mesage")
    expect(fs.existsSync(path.join(p.storage, "conversations"))).toBe(false)
  })
})

describe("resume edge cases (found in review)", () => {
  const writeEvents = (p: Project, id: string, entries: Array<Record<string, unknown>>) => {
    const dir = path.join(p.storage, "conversations", `${id}-case`)
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(
      path.join(dir, "metadata.json"),
      JSON.stringify({ title: "case", last_activated_at: "2026-03-01 10:00:00.0" }, null, 2) + "\n"
    )
    fs.writeFileSync(path.join(dir, "base_config.json"), "{}\n")
    fs.writeFileSync(path.join(dir, "events.json"), JSON.stringify(entries, null, 2) + "\n")
  }

  it("a turn followed by a bare turn_start resumes: the tool runs once and the turn completes", () => {
    const p = makeProject()
    writeEvents(p, "17000000001", [
      { timestamp: "2026-03-01 10:00:00.1", type: "turn_start" },
      { timestamp: "2026-03-01 10:00:00.2", type: "chat_request", content: "count" },
      {
        timestamp: "2026-03-01 10:00:00.3",
        type: "tool_call_request",
        id: "c1",
        name: "counter",
        arguments: { name: b64("x") }
      },
      { timestamp: "2026-03-01 10:00:00.4", type: "turn_start" }
    ])
    expect(ls(p)[0]!.incomplete).toStrictEqual({ state: "pending-tool-execution" })
    const r = parley(p, ["query", "--continue-turn", "--script", writeScript(p, "s.json", [{ message: "Counted." }])])
    expect(withoutRunHeader(r.stderr)).toBe("")
    expect(r.code).toBe(0)
    expect(fs.readFileSync(path.join(p.root, "x.count"), "utf8").trim()).toBe("1")
    // The resumed run names a model the conversation did not remember: it is recorded where the run began.
    expect(types(p)).toStrictEqual([
      "turn_start",
      "chat_request",
      "tool_call_request",
      "config_delta",
      "tool_call_response",
      "chat_response"
    ])
    expect(ls(p)[0]!.incomplete).toBeNull()
  })

  it("--discard-turn and --continue-turn are no-ops (exit 0) without an incomplete turn", () => {
    const p = makeProject()
    expect(parley(p, ["query", "hi", "--script", writeScript(p, "s.json", [{ message: "Hello." }])]).code).toBe(0)
    const before = fs.readFileSync(path.join(conversationDir(p), "events.json"), "utf8")
    const d = parley(p, ["query", "--discard-turn"])
    expect(d.code).toBe(0)
    expect(d.stderr).toContain("has no incomplete turn; nothing to discard.")
    const c = parley(p, ["query", "--continue-turn", "--script", writeScript(p, "t.json", [{ message: "x" }])])
    expect(c.code).toBe(0)
    expect(c.stderr).toContain("has no incomplete turn; nothing to resume.")
    expect(fs.readFileSync(path.join(conversationDir(p), "events.json"), "utf8")).toBe(before)
  })
})
