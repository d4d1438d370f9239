// Any program asks (docs/ask.md, contract §8): `parley ask` run by a script with nobody at its terminal
// opens one question that the inbox, `conversation answer`, `parley serve`'s API and `conversation kill`
// reach over the conversation's host socket; it prints the answer and exits 0, 3 after --timeout, 130 when
// cancelled elsewhere; a killed asker's question is closed by the next inbox or conversation ls; a secret reaches stdout only.
import { treeBytes } from "../support/TreeBytes.ts"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { exited, makeProject, parley, persisted, type Project, spawnParley, waitFor } from "../support/Project.ts"
import * as HostPath from "../../src/layers/host/HostPath.ts"
import { binary } from "../support/Cli.ts"
import { repoRoot } from "../support/Fixtures.ts"
import { bodies, startReceiver } from "../support/Receiver.ts"
import * as Serve from "../support/Serve.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
})

const asker = (p: Project, args: ReadonlyArray<string>) => {
  const child = spawnParley(p, ["ask", ...args])
  children.push(child)
  let stdout = ""
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()))
  return Object.assign(child, { stdout: () => stdout })
}

interface Row {
  readonly kind: string
  readonly conversation_id: string
  readonly inquiry_id: string
  readonly tool: string
  readonly question: string
  readonly running: boolean
}

const inbox = (p: Project): Array<Row> => JSON.parse(parley(p, ["inbox", "--format", "json"]).stdout)

/** Waits until the inbox lists one running question, and returns it. */
const listed = async (p: Project): Promise<Row> => {
  let rows: Array<Row> = []
  await waitFor("the question in the inbox", () => (rows = inbox(p)).length === 1 && rows[0]!.running, 30_000)
  return rows[0]!
}

/** Every file under the project, as bytes (the storage, its journal, its sockets' directory). */
const allBytes = (p: Project): Buffer => treeBytes(p.root)

/** The recorded events of the project's one conversation. */
const recorded = (p: Project, _id: string): Array<Record<string, unknown>> => persisted(p)

describe("parley ask", () => {
  it("a script's question is listed by the inbox, conversation answer and GET /api/questions; answered through the API it prints yes and exits 0", async () => {
    const p = makeProject()
    const server = await Serve.start(p)
    children.push(server.child)
    const child = asker(p, ["Deploy to prod?", "--context", "v1.2 to eu"])
    const row = await listed(p)
    expect(row).toMatchObject({ tool: "ask", question: "Deploy to prod?", running: true })
    const id = row.conversation_id
    expect(parley(p, ["conversation", "answer", id]).stdout).toContain(row.inquiry_id)
    let api: Array<Record<string, unknown>> = []
    for (let i = 0; i < 200 && api.length === 0; i++) {
      api = (await server.json("/api/questions")).body
      if (api.length === 0) await new Promise((r) => setTimeout(r, 100))
    }
    expect(api).toMatchObject([{ inquiry_id: row.inquiry_id, conversation_id: id, kind: "question", tool: "ask" }])
    const post = await server.post(`/api/conversations/${id}/questions/${row.inquiry_id}`, { answer: true })
    expect(post.status).toBe(200)
    expect(await exited(child)).toBe(0)
    expect(child.stdout()).toBe("yes\n")
    expect(parley(p, ["conversation", "check", id]).code).toBe(0)
    // The recorded question reads as any tool's question: in print and on the HTML page.
    const printed = parley(p, ["conversation", "print", id]).stdout
    expect(printed).toContain("Deploy to prod?")
    expect(printed).toContain("v1.2 to eu")
    const page = parley(p, ["conversation", "print", id, "--format", "html"])
    expect(page.code).toBe(0)
    expect(page.stdout).toContain("Deploy to prod?")
    const title = JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout)[0].title
    expect(title).toBe(`questions from ${p.root}`)
    expect(await server.stop()).toBe(143)
  }, 120_000)

  it("--format json says who answered and through which surface; the turn is recorded whole and passes conversation check", async () => {
    const p = makeProject()
    const child = asker(p, [
      "Which region?",
      "--type",
      "select",
      "--option",
      "eu",
      "--option",
      "us",
      "--format",
      "json"
    ])
    const row = await listed(p)
    const answered = parley(p, ["conversation", "answer", row.conversation_id, row.inquiry_id, "us"])
    expect(answered.code).toBe(0)
    expect(await exited(child)).toBe(0)
    expect(JSON.parse(child.stdout())).toStrictEqual({
      answer: "us",
      answered_by: "other",
      via: "terminal",
      conversation_id: row.conversation_id,
      inquiry_id: row.inquiry_id
    })
    const types = recorded(p, row.conversation_id).map((e) => e["type"])
    expect(types).toStrictEqual([
      "turn_start",
      "chat_request",
      "tool_call_request",
      "inquiry_request",
      "inquiry_response",
      "tool_call_response",
      "chat_response"
    ])
    const request = recorded(p, row.conversation_id).find((e) => e["type"] === "inquiry_request")!
    expect(request["source"]).toStrictEqual({ source: "tool", name: "ask" })
    expect(parley(p, ["conversation", "check", row.conversation_id]).code).toBe(0)
  }, 120_000)

  it("--timeout 1s with nobody answering: exit 3, the question closed; usage errors: exit 2", async () => {
    const p = makeProject()
    const r = parley(p, ["ask", "Anyone?", "--timeout", "1s"])
    expect(r.code).toBe(3)
    expect(r.stdout).toBe("")
    expect(inbox(p)).toStrictEqual([])
    const d = parley(p, ["ask", "Anyone?", "--timeout", "1s", "--default", "no", "--on-timeout", "default"])
    expect([d.code, d.stdout]).toStrictEqual([0, "no\n"])
    expect(parley(p, ["ask", "Pick", "--type", "select"]).code).toBe(2)
    expect(parley(p, ["ask", "Soon?", "--timeout", "soon"]).code).toBe(2)
    expect(parley(p, ["ask"]).code).toBe(2)
  }, 120_000)

  it("answered from two places at once: one wins, the other is told who answered", async () => {
    const p = makeProject()
    const server = await Serve.start(p)
    children.push(server.child)
    const child = asker(p, ["Ship it?"])
    const row = await listed(p)
    const target = `/api/conversations/${row.conversation_id}/questions/${row.inquiry_id}`
    for (let i = 0; i < 200 && (await server.json("/api/questions")).body.length === 0; i++)
      await new Promise((r) => setTimeout(r, 100))
    const [a, b] = await Promise.all([server.post(target, { answer: true }), server.post(target, { answer: false })])
    expect([a.status, b.status].sort()).toStrictEqual([200, 409])
    const loser = a.status === 409 ? a : b
    expect(loser.body).toMatchObject({ error: "QuestionAlreadyAnswered" })
    expect(await exited(child)).toBe(0)
    expect(["yes\n", "no\n"]).toContain(child.stdout())
    expect(await server.stop()).toBe(143)
  }, 120_000)

  it("kill -9 of the asker: the next inbox closes its question as cancelled (user)", async () => {
    const p = makeProject()
    const child = asker(p, ["Still there?"])
    const row = await listed(p)
    child.kill("SIGKILL")
    await exited(child)
    expect(inbox(p)).toStrictEqual([])
    const response = recorded(p, row.conversation_id).find((e) => e["type"] === "inquiry_response")
    expect(response).toMatchObject({ id: row.inquiry_id, outcome: "cancelled", reason: "user" })
    expect(parley(p, ["conversation", "check", row.conversation_id]).code).toBe(0)
    // The next ask in the same directory takes the same conversation.
    expect(parley(p, ["ask", "Again?", "--timeout", "1s"]).code).toBe(3)
    expect(JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout)).toHaveLength(1)
  }, 120_000)

  it("kill -9 of the asker: the next conversation ls closes its question too, and never lists it as waiting; a live asker's stays", async () => {
    const p = makeProject()
    const live = asker(p, ["Still there?", "--new"])
    const row = await listed(p)
    const lsRows = () =>
      JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout) as Array<Record<string, unknown>>
    // The live asker's question is listed as waiting, and ls leaves it open.
    expect(lsRows()).toMatchObject([
      { id: row.conversation_id, incomplete: { state: "waiting-for-input", tool: "ask" } }
    ])
    expect(inbox(p)).toHaveLength(1)
    live.kill("SIGKILL")
    await exited(live)
    expect(lsRows()).toMatchObject([{ id: row.conversation_id, incomplete: null, running: null }])
    const response = recorded(p, row.conversation_id).find((e) => e["type"] === "inquiry_response")
    expect(response).toMatchObject({ id: row.inquiry_id, outcome: "cancelled", reason: "user" })
    expect(parley(p, ["conversation", "ls"]).stdout).not.toContain("incomplete")
    expect(inbox(p)).toStrictEqual([])
  }, 120_000)

  it("kill -9 of the asker, its socket gone too (a reboot empties the run directory): conversation ls still closes its question", async () => {
    const p = makeProject()
    const killed = asker(p, ["Gone?", "--new"])
    const row = await listed(p)
    killed.kill("SIGKILL")
    await exited(killed)
    // No socket to ask: the listing's row alone says an asker waited there (its fast path leaves it to the program).
    fs.rmSync(HostPath.of(p.storage, row.conversation_id))
    const rows = JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout) as Array<
      Record<string, unknown>
    >
    expect(rows).toMatchObject([{ id: row.conversation_id, incomplete: null, running: null }])
    const response = recorded(p, row.conversation_id).find((e) => e["type"] === "inquiry_response")
    expect(response).toMatchObject({ id: row.inquiry_id, outcome: "cancelled", reason: "user" })
  }, 120_000)

  it("cancelled from another surface (conversation kill): exit 130, recorded as cancelled (user)", async () => {
    const p = makeProject()
    const child = asker(p, ["Wait for me?"])
    const row = await listed(p)
    expect(parley(p, ["conversation", "kill", row.conversation_id]).code).toBe(0)
    expect(await exited(child)).toBe(130)
    const response = recorded(p, row.conversation_id).find((e) => e["type"] === "inquiry_response")
    expect(response).toMatchObject({ outcome: "cancelled", reason: "user" })
  }, 120_000)

  it("--key: asking again while it is open joins the same question; both print its answer", async () => {
    const p = makeProject()
    const first = asker(p, ["Release?", "--key", "release-42"])
    const row = await listed(p)
    const second = asker(p, ["Release?", "--key", "release-42"])
    // Give the second asker time to join; it must not open a question of its own.
    await new Promise((r) => setTimeout(r, 3000))
    expect(inbox(p).map((q) => q.inquiry_id)).toStrictEqual([row.inquiry_id])
    expect(parley(p, ["conversation", "answer", row.conversation_id, row.inquiry_id, "no"]).code).toBe(0)
    expect([await exited(first), await exited(second)]).toStrictEqual([0, 0])
    expect([first.stdout(), second.stdout()]).toStrictEqual(["no\n", "no\n"])
  }, 120_000)

  it("[notify] is told of an ask as of a run's question: question_opened with the command that answers it, question_closed with who answered", async () => {
    const r = await startReceiver()
    try {
      const p = makeProject()
      fs.appendFileSync(path.join(p.storage, "config.toml"), `\n[notify]\nwebhook = { url = "${r.url}" }\n`)
      const child = asker(p, ["Deploy to prod?"])
      const row = await listed(p)
      await waitFor("question_opened", () => bodies(r).some((b) => b["event"] === "question_opened"), 30_000)
      const opened = bodies(r).find((b) => b["event"] === "question_opened")!
      expect(opened).toMatchObject({
        conversation_id: row.conversation_id,
        inquiry_id: row.inquiry_id,
        kind: "question",
        tool: "ask",
        question: "Deploy to prod?"
      })
      expect(String(opened["answer_command"])).toContain(`conversation answer ${row.conversation_id} ${row.inquiry_id}`)
      expect(parley(p, ["conversation", "answer", row.conversation_id, row.inquiry_id, "yes"]).code).toBe(0)
      expect(await exited(child)).toBe(0)
      await waitFor("question_closed", () => bodies(r).some((b) => b["event"] === "question_closed"), 30_000)
      expect(bodies(r).find((b) => b["event"] === "question_closed")).toMatchObject({
        inquiry_id: row.inquiry_id,
        answered_by: "other",
        via: "terminal"
      })
    } finally {
      await r.close()
    }
  }, 120_000)

  it("a secret reaches the asker's stdout only: recorded redacted, 0 copies in the storage, notifications or any process's environment", async () => {
    const p = makeProject()
    const receiver = await startReceiver()
    fs.appendFileSync(path.join(p.storage, "config.toml"), `\n[notify]\nwebhook = { url = "${receiver.url}" }\n`)
    const server = await Serve.start(p)
    children.push(server.child)
    const secret = "s3cr3t-ask-v4lue-9431"
    const child = asker(p, ["API token?", "--type", "secret"])
    const row = await listed(p)
    for (let i = 0; i < 200 && (await server.json("/api/questions")).body.length === 0; i++)
      await new Promise((r) => setTimeout(r, 100))
    const post = await server.post(`/api/conversations/${row.conversation_id}/questions/${row.inquiry_id}`, {
      answer: secret
    })
    expect(post.status).toBe(200)
    expect(await exited(child)).toBe(0)
    expect(child.stdout()).toBe(`${secret}\n`)
    const response = recorded(p, row.conversation_id).find((e) => e["type"] === "inquiry_response")
    expect(response).toMatchObject({ outcome: "redacted" })
    expect(await server.stop()).toBe(143)
    // Neither as written nor as JP's storage encodes strings (base64), nor in what print decodes.
    expect(allBytes(p).indexOf(Buffer.from(secret))).toBe(-1)
    expect(allBytes(p).indexOf(Buffer.from(Buffer.from(secret).toString("base64")))).toBe(-1)
    expect(parley(p, ["conversation", "print", row.conversation_id]).stdout).not.toContain(secret)
    expect(server.child.output()).not.toContain(secret)
    // The notifications were sent (the question and its close), without the value.
    await waitFor("question_closed", () => bodies(receiver).some((b) => b["event"] === "question_closed"), 30_000)
    await receiver.close()
    expect(JSON.stringify(bodies(receiver))).not.toContain(secret)
    // No process of this machine that this user can read holds it in its environment.
    for (const pid of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
      let environ: Buffer
      try {
        environ = fs.readFileSync(`/proc/${pid}/environ`)
      } catch {
        continue // Gone, or another user's.
      }
      expect(environ.indexOf(Buffer.from(secret)), `/proc/${pid}/environ`).toBe(-1)
    }
  }, 120_000)
})

const fixture = (name: string): string =>
  fs.readFileSync(path.join(repoRoot, "test", "fixtures", "claude-code", `${name}.json`), "utf8")

/** `parley ask --claude-code-hook` with `input` on stdin, as Claude Code runs it (no terminal). */
const hook = (p: Project, input: string) => {
  const child = spawn(process.execPath, [binary, "--storage", p.storage, "ask", "--claude-code-hook"], {
    cwd: p.root,
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, PARLEY_STORAGE: undefined, PARLEY_CONFIG: undefined }
  })
  children.push(child)
  let stdout = ""
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
  child.stdin.end(input)
  return Object.assign(child, { stdout: () => stdout })
}

/** Runs the hook on `input`, answers its approval with `answer`, and returns the decision it printed. */
const decided = async (p: Project, input: string, answer: string) => {
  const child = hook(p, input)
  const row = await listed(p)
  expect(row).toMatchObject({ kind: "approval" })
  expect(parley(p, ["conversation", "answer", row.conversation_id, row.inquiry_id, answer]).code).toBe(0)
  expect(await exited(child)).toBe(0)
  return JSON.parse(child.stdout())
}

const hookProject = (): Project => {
  const p = makeProject()
  fs.appendFileSync(path.join(p.storage, "config.toml"), '\n[ask.claude_code]\ntools = ["Bash", "Write", "mcp__*"]\n')
  return p
}

describe("parley ask --claude-code-hook", () => {
  it("PreToolUse for Bash, Write and an MCP tool answered yes / no / always, and a PermissionRequest: the documented decision JSON", async () => {
    const p = hookProject()
    expect(await decided(p, fixture("pre-tool-use-bash"), "yes")).toStrictEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "allow",
        permissionDecisionReason: "Approved in parley by other via terminal."
      }
    })
    expect(await decided(p, fixture("pre-tool-use-write"), "no")).toStrictEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "Denied in parley by other via terminal."
      }
    })
    expect(await decided(p, fixture("pre-tool-use-mcp"), "always")).toMatchObject({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" }
    })
    // Remembered for the session: the next call of that tool is allowed at once, without a question.
    const again = hook(p, fixture("pre-tool-use-mcp"))
    expect(await exited(again)).toBe(0)
    expect(JSON.parse(again.stdout())).toMatchObject({
      hookSpecificOutput: {
        permissionDecision: "allow",
        permissionDecisionReason: expect.stringContaining("Remembered")
      }
    })
    expect(await decided(p, fixture("permission-request-bash"), "yes")).toStrictEqual({
      hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } }
    })
    // A tool the config does not name: no decision (Claude Code asks as it would without the hook).
    const read = hook(p, fixture("pre-tool-use-read"))
    expect(await exited(read)).toBe(0)
    expect(read.stdout()).toBe("")
    const rows = JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout) as Array<{
      id: string
      title: string
    }>
    expect(rows.map((r) => r.title)).toStrictEqual(["claude code session abc123-session"])
    expect(parley(p, ["conversation", "check", rows[0]!.id]).code).toBe(0)
    // The call's input is its arguments (JP's storage keeps argument strings base64-encoded).
    const approval = persisted(p).find((e) => e["type"] === "tool_call_request")!
    expect(approval["name"]).toBe("Bash")
    const command = (approval["arguments"] as Record<string, string>)["command"]!
    expect(Buffer.from(command, "base64").toString()).toBe("npm run deploy -- --prod")
    expect(parley(p, ["conversation", "print", rows[0]!.id]).stdout).toContain("npm run deploy -- --prod")
  }, 180_000)

  it("malformed stdin is a deny with the reason, exit 0, never an allow", async () => {
    const p = hookProject()
    for (const input of ["not json", "[]", "{}", '{"hook_event_name":"PreToolUse","session_id":"s"}', ""]) {
      const child = hook(p, input)
      expect(await exited(child)).toBe(0)
      const out = JSON.parse(child.stdout())
      expect(out.hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "deny" })
      expect(out.hookSpecificOutput.permissionDecisionReason).toMatch(/^parley: the hook input|^parley: parley decides/)
    }
    const permission = hook(p, '{"hook_event_name":"PermissionRequest","session_id":"s","tool_name":"Bash"}')
    expect(await exited(permission)).toBe(0)
    expect(JSON.parse(permission.stdout())).toStrictEqual({
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "deny", message: "parley: the hook input's tool_input is not an object." }
      }
    })
  }, 120_000)
})
