// Any program asks (docs/ask.md, contract §8): `parley ask` run by a script with nobody at its terminal
// opens one question that the inbox, `conversation answer`, `parley serve`'s API and `conversation kill`
// reach over the conversation's host socket; it prints the answer and exits 0, 3 after --timeout, 130 when
// cancelled elsewhere; a killed asker's question is closed by the next inbox; a secret reaches stdout only.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { exited, makeProject, parley, persisted, type Project, spawnParley, waitFor } from "../support/Project.ts"
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
const allBytes = (p: Project): Buffer =>
  Buffer.concat(
    fs
      .readdirSync(p.root, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => fs.readFileSync(path.join(d.parentPath, d.name)))
  )

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
    const title = JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout)[0].title
    expect(title).toBe(`questions from ${p.root}`)
    expect(await server.stop()).toBe(143)
  }, 120_000)

  it("--format json says who answered and through which surface; the turn is recorded whole and passes conversation check", async () => {
    const p = makeProject()
    const child = asker(p, ["Which region?", "--type", "select", "--option", "eu", "--option", "us", "--format", "json"])
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

  it("a secret reaches the asker's stdout only: recorded redacted, 0 copies in the storage", async () => {
    const p = makeProject()
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
    expect(allBytes(p).indexOf(Buffer.from(secret))).toBe(-1)
    expect(server.child.output()).not.toContain(secret)
  }, 120_000)
})
