// parley serve (docs/serve.md): `parley serve`'s HTTP API against runs hosted by other parley
// processes (the server is one more client of their sockets): the token,
// Host and Origin checks, the rows, open questions, answers (first valid wins,
// 409 / 422), SSE with Last-Event-ID resume, secrets nowhere, a run started by
// `query --detach` answered through the API.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
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
} from "../../support/Project.ts"
import * as Serve from "../../support/Serve.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
const groups: Array<number> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  for (const g of groups.splice(0)) killGroup(g)
})

const project = waitingProject

const sockets = hostSockets
const effects = effectsOf
const call = (id: string, name: string, mode: string) => ({ id, name: "deferrable", arguments: { name, mode } })

const start = async (p: Project) => {
  const server = await Serve.start(p)
  children.push(server.child)
  return server
}

/** Every file under the project, as text. */
const allFiles = (p: Project) =>
  fs
    .readdirSync(p.root, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => fs.readFileSync(path.join(d.parentPath, d.name), "utf8"))
    .join("\n")

describe("parley serve: security", () => {
  it("401 without or with a wrong token (and nothing else said); 421 on a foreign Host; 403 on a foreign Origin; the token file is 0600", async () => {
    const p = project()
    const server = await start(p)
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64}$/)
    expect(fs.statSync(path.join(p.storage, "serve-token")).mode & 0o777).toBe(0o600)
    expect(fs.readFileSync(path.join(p.storage, "serve-token"), "utf8")).toBe(`${server.token}\n`)
    for (const headers of [
      {},
      { authorization: "Bearer nope" },
      { authorization: `Bearer ${server.token}x` },
      { cookie: "parley_token=nope" }
    ]) {
      for (const url of [
        "/api/conversations",
        "/api/questions",
        "/api/openapi.json",
        "/",
        "/conversations/17738399468",
        "/nothing/here"
      ]) {
        const r = await Serve.raw(server.port, { path: url, headers })
        expect([url, r.status, JSON.parse(r.body)]).toStrictEqual([
          url,
          401,
          { error: "Unauthorized", message: "A valid token is needed." }
        ])
      }
    }
    expect((await Serve.raw(server.port, { path: "/?token=wrong" })).status).toBe(401)
    const good = await Serve.raw(server.port, { path: "/api/conversations", headers: server.auth })
    expect(good.status).toBe(200)
    for (const host of ["evil.example:" + server.port, "127.0.0.1:1", "localhost.evil.example:" + server.port, ""]) {
      const r = await Serve.raw(server.port, { path: "/api/conversations", headers: { ...server.auth, host } })
      expect([host, r.status]).toStrictEqual([host, 421])
    }
    expect(
      (
        await Serve.raw(server.port, {
          path: "/api/conversations",
          headers: { ...server.auth, host: `localhost:${server.port}` }
        })
      ).status
    ).toBe(200)
    const foreign = await server.post(
      "/api/conversations/17738399468/questions/a1.confirm.1",
      { answer: true },
      { ...server.auth, origin: "http://evil.example" }
    )
    expect(foreign.status).toBe(403)
    // The page's cookie: opening it with ?token= sets it and sends the browser to the address without the token.
    const opened = await fetch(`${server.base}/?token=${server.token}`, { redirect: "manual" })
    expect(opened.status).toBe(303)
    expect(opened.headers.get("location")).toBe("/")
    expect(opened.headers.get("set-cookie")).toBe(`parley_token=${server.token}; Path=/; HttpOnly; SameSite=Strict`)
    const csp = opened.headers.get("content-security-policy")!
    expect(csp).toContain("script-src 'self'")
    expect(csp).not.toContain("unsafe-inline'; script")
    expect(
      (await fetch(`${server.base}/api/conversations`, { headers: { cookie: `parley_token=${server.token}` } })).status
    ).toBe(200)
    expect(await server.stop()).toBe(143)
    expect(server.child.output()).not.toContain("nope")
  })

  it("the OpenAPI document lists every endpoint with its errors", async () => {
    const server = await start(project())
    const doc = await server.json("/api/openapi.json")
    expect(doc.status).toBe(200)
    expect(Object.keys(doc.body.paths).sort()).toStrictEqual([
      "/api/conversations",
      "/api/conversations/{id}",
      "/api/conversations/{id}/answers",
      "/api/conversations/{id}/continue",
      "/api/conversations/{id}/discard",
      "/api/conversations/{id}/events",
      "/api/conversations/{id}/messages",
      "/api/conversations/{id}/messages/{n}",
      "/api/conversations/{id}/questions/{inquiryId}",
      "/api/conversations/{id}/stop",
      "/api/questions"
    ])
    expect(
      Object.keys(doc.body.paths["/api/conversations/{id}/questions/{inquiryId}"].post.responses).sort()
    ).toStrictEqual(["200", "400", "401", "403", "404", "409", "413", "415", "421", "422", "503"])
    await server.stop()
  })

  it("bad JSON, a wrong shape, an oversized body, an unknown id: 4xx JSON errors, never a crash", async () => {
    const p = project()
    const server = await start(p)
    const target = "/api/conversations/17738399468/questions/a1.confirm.1"
    expect(await server.post(target, "{not json")).toStrictEqual({
      status: 400,
      body: { error: "BadRequest", kind: "Payload", message: "Expected a valid JSON body" }
    })
    const shape = await server.post(target, { nope: 1 })
    expect(shape.status).toBe(400)
    expect(shape.body.error).toBe("BadRequest")
    const big = await Serve.raw(server.port, {
      method: "POST",
      path: target,
      headers: { ...server.auth, "content-type": "application/json" },
      body: JSON.stringify({ answer: "x".repeat(1024 * 1024 + 10) })
    })
    expect(big.status).toBeGreaterThanOrEqual(400)
    expect(big.status).toBeLessThan(500)
    expect(await server.json("/api/conversations/17738399468")).toMatchObject({
      status: 404,
      body: { error: "ConversationNotFound", id: "17738399468" }
    })
    // Not an id at all: a malformed request, not a missing conversation.
    expect(await server.json("/api/conversations/..%2F..%2Fetc")).toMatchObject({
      status: 400,
      body: { error: "BadRequest", kind: "Params" }
    })
    expect(await server.json("/api/conversations/17738399468/events")).toMatchObject({
      status: 404,
      body: { error: "ConversationNotFound" }
    })
    expect(await server.post(target, { answer: true })).toMatchObject({
      status: 404,
      body: { error: "ConversationNotFound" }
    })
    expect((await server.json("/api/conversations")).body).toStrictEqual([])
    expect(await server.stop()).toBe(143)
  })
})

describe("parley serve: runs hosted by parley query", () => {
  it("lists the run and its questions, answers them (409 / 422), streams its events with resume, keeps the secret out of everything", async () => {
    const p = project()
    const server = await start(p)
    const script = writeScript(p, "s.json", [
      {
        message: "Working.",
        tool_calls: [call("a1", "prod", "ask"), call("c1", "paint", "pick"), call("s1", "api", "secret")]
      },
      { message: "All done." }
    ])
    const child = spawnParley(p, ["query", "--new", "go", "--script", script])
    children.push(child)
    await waitFor("the three questions", () => persisted(p).filter((e) => e.type === "inquiry_request").length === 3)
    await waitFor("the host's socket", () => sockets(p).length === 1)
    const id = sockets(p)[0]!.replace(".sock", "")

    const rows = (await server.json("/api/conversations")).body
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ id, running: { pid: child.pid } })
    expect([...rows[0].running.waiting].sort()).toStrictEqual(["a1.confirm.1", "c1.color.1", "s1.token.1"])
    const lsRow = JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout)[0]
    expect({ ...rows[0], running: null, tokens: null }).toStrictEqual({ ...lsRow, running: null, tokens: null })

    const questions = (await server.json("/api/questions")).body as Array<Record<string, unknown>>
    const byId = Object.fromEntries(questions.map((q) => [q["id"], q]))
    expect(Object.keys(byId).sort()).toStrictEqual(["a1.confirm.1", "c1.color.1", "s1.token.1"])
    expect(byId["c1.color.1"]).toStrictEqual({
      id: "c1.color.1",
      inquiry_id: "c1.color.1",
      kind: "question",
      conversation_id: id,
      tool: "deferrable",
      arguments: expect.any(Object),
      tool_call_id: "c1",
      question: "Which color?",
      answer_type: "select",
      options: ["red", "green"],
      default: null,
      since: expect.stringMatching(/^\d{4}-\d\d-\d\d[ T]\d\d:\d\d/),
      running: true
    })
    expect(byId["s1.token.1"]).toMatchObject({ answer_type: "secret", options: null })

    // The events: the current run replayed from the start.
    const first = await Serve.sse(`${server.base}/api/conversations/${id}/events`, server.auth)
    expect(first.res.status).toBe(200)
    expect(first.res.headers.get("content-type")).toMatch(/^text\/event-stream/)
    const seen: Array<Serve.Frame> = []
    for (;;) {
      const f = (await first.next())!
      seen.push(f)
      if (seen.filter((s) => JSON.parse(s.data)._tag === "QuestionOpened").length === 3) break
    }
    expect(seen.map((f) => Number(f.id))).toStrictEqual(seen.map((_, i) => i + 1))
    expect(seen.map((f) => JSON.parse(f.data)).find((e) => e._tag === "ConversationKnown")).toStrictEqual({
      _tag: "ConversationKnown",
      conversation_id: id,
      created: true,
      // The run's policy (config's "wait") travels with the event: the watcher knows its questions wait.
      detached_policy: "wait",
      // A new conversation is titled by its message's first line.
      title: "go"
    })
    first.close() // dropped

    const target = (q: string) => `/api/conversations/${id}/questions/${q}`
    expect(await server.post(target("a1.confirm.1"), { answer: "perhaps" })).toStrictEqual({
      status: 422,
      body: {
        error: "AnswerDoesNotFit",
        inquiry_id: "a1.confirm.1",
        reason: '"perhaps" is not a yes/no answer',
        expected: "yes or no",
        message: 'That answer does not fit question a1.confirm.1: "perhaps" is not a yes/no answer; expected yes or no.'
      }
    })
    expect(await server.post(target("c1.color.1"), { answer: "blue" })).toMatchObject({
      status: 422,
      body: { expected: "one of: red, green" }
    })
    const oddSecret = await server.post(target("s1.token.1"), { answer: 424242 })
    expect(oddSecret).toMatchObject({
      status: 422,
      body: { error: "AnswerDoesNotFit", reason: "the answer is not text" }
    })
    expect(JSON.stringify(oddSecret.body)).not.toContain("424242")
    expect(await server.post(target("zz.nope.1"), { answer: true })).toMatchObject({
      status: 404,
      body: { error: "QuestionNotOpen" }
    })
    expect(await server.post(target("a1.confirm.1"), { answer: true })).toStrictEqual({
      status: 200,
      body: { id: "a1.confirm.1", outcome: "delivered" }
    })
    const second = await server.post(target("a1.confirm.1"), { answer: false })
    expect(second).toMatchObject({
      status: 409,
      body: { error: "QuestionAlreadyAnswered", inquiry_id: "a1.confirm.1", by: "other" }
    })

    // Resumed after the last frame seen: no gap, no duplicate.
    const last = seen.at(-1)!.id!
    const resumed = await Serve.sse(`${server.base}/api/conversations/${id}/events`, {
      ...server.auth,
      "last-event-id": last
    })
    const after = (await resumed.next())!
    expect(Number(after.id)).toBe(Number(last) + 1)
    const rest: Array<Serve.Frame> = [after]
    expect(await server.post(target("c1.color.1"), { answer: "green" })).toMatchObject({ status: 200 })
    expect(await server.post(target("s1.token.1"), { answer: "s3cr3t-t0ken" })).toStrictEqual({
      status: 200,
      body: { id: "s1.token.1", outcome: "delivered" }
    })
    for (;;) {
      const f = await resumed.next()
      if (f === undefined) break
      rest.push(f)
    }
    expect(rest.map((f) => Number(f.id))).toStrictEqual(rest.map((_, i) => Number(last) + 1 + i))
    const tags = rest.map((f) => JSON.parse(f.data)._tag)
    expect(tags.at(-1)).toBe("Stopped")
    expect(JSON.parse(rest.at(-1)!.data)).toStrictEqual({ _tag: "Stopped", ending: "completed", incomplete: null })
    const closed = rest.map((f) => JSON.parse(f.data)).filter((e) => e._tag === "QuestionClosed")
    expect(closed.map((e) => [e.inquiry_id, e.by, e.outcome])).toStrictEqual([
      ["a1.confirm.1", "other", { _tag: "Answered", answer: true }],
      ["c1.color.1", "other", { _tag: "Answered", answer: "green" }],
      ["s1.token.1", "other", { _tag: "Redacted" }]
    ])
    expect(tags).toContain("TextDelta")
    expect(rest.map((f) => f.data).join("\n")).not.toContain("s3cr3t-t0ken")
    expect(await exited(child)).toBe(0)
    expect(effects(p, "prod")).toBe("true\n")
    expect(effects(p, "paint")).toBe('"green"\n')
    expect(effects(p, "api")).toBe('"12 chars"\n')

    // After the run: the answer recorded on disk still wins; the secret is in no file, no response, no log line.
    await waitFor("the socket to go", () => sockets(p).length === 0)
    expect(await server.post(target("a1.confirm.1"), { answer: false })).toMatchObject({
      status: 409,
      body: { error: "QuestionAlreadyAnswered", inquiry_id: "a1.confirm.1" }
    })
    const doc = await server.json(`/api/conversations/${id}`)
    expect(doc.status).toBe(200)
    expect(JSON.stringify(doc.body)).toContain("All done.")
    expect(JSON.stringify(doc.body)).not.toContain("s3cr3t-t0ken")
    expect((await server.json("/api/conversations")).body[0].running).toBe(null)
    expect((await server.json("/api/questions")).body).toStrictEqual([])
    expect(await server.json(`/api/conversations/${id}/events`)).toStrictEqual({ status: 204, body: undefined })
    expect(allFiles(p)).not.toContain("s3cr3t-t0ken")
    expect(await server.stop()).toBe(143)
    expect(server.child.output()).not.toContain("s3cr3t-t0ken")
  })

  it("a run started by query --detach in another process is answered through the API", async () => {
    const p = project()
    const server = await start(p)
    const script = writeScript(p, "s.json", [
      { message: "Working.", tool_calls: [call("a1", "prod", "ask")] },
      { message: "Done." }
    ])
    const r = parley(p, ["query", "--detach", "--new", "deploy", "--script", script])
    expect(r.code).toBe(0)
    const id = r.stdout.trim()
    groups.push(Number(/\(pid (\d+)\)/.exec(r.stderr)![1]))
    let open: Array<{ id: string; conversation_id: string }> = []
    for (let i = 0; i < 100 && open.length === 0; i++) {
      open = (await server.json("/api/questions")).body
      if (open.length === 0) await new Promise((res) => setTimeout(res, 100))
    }
    expect(open.map((q) => [q.id, q.conversation_id])).toStrictEqual([["a1.confirm.1", id]])
    expect(await server.post(`/api/conversations/${id}/questions/a1.confirm.1`, { answer: false })).toMatchObject({
      status: 200,
      body: { outcome: "delivered" }
    })
    await waitFor("the detached run to finish", () => sockets(p).length === 0 && effects(p, "prod") === "false\n")
    await waitFor("the reply", () => persisted(p).at(-1)?.type === "chat_response")
    expect(await server.stop()).toBe(143)
  })

  it("a waiting turn with no run: the answer goes into the turn on disk; a second one is a 409", async () => {
    const p = project()
    const script = writeScript(p, "s.json", [{ message: "Working.", tool_calls: [call("a1", "prod", "ask")] }])
    const deferred = parley(p, ["query", "--new", "go", "--script", script, "--detached-policy", "defer"])
    expect(deferred.code).not.toBe(-1)
    const id = JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout)[0].id
    const server = await start(p)
    // Listed with the running turns' questions, as waiting on disk.
    expect((await server.json("/api/questions")).body).toMatchObject([
      { id: "a1.confirm.1", conversation_id: id, tool: "deferrable", running: false }
    ])
    const target = `/api/conversations/${id}/questions/a1.confirm.1`
    expect(await server.post(target, { answer: "perhaps" })).toMatchObject({ status: 422 })
    expect(await server.post(target, { answer: true })).toStrictEqual({
      status: 200,
      body: { id: "a1.confirm.1", outcome: "recorded" }
    })
    expect(await server.post(target, { answer: false })).toMatchObject({
      status: 409,
      body: { error: "QuestionAlreadyAnswered" }
    })
    expect((await server.json("/api/questions")).body).toStrictEqual([])
    expect(await server.stop()).toBe(143)
  })
})

describe("parley serve: runs the server starts", () => {
  const open = async (server: Serve.Server, want: number) => {
    for (let i = 0; i < 200; i++) {
      const rows = (await server.json("/api/questions")).body as Array<{ id: string; conversation_id: string }>
      if (rows.length === want) return rows
      await new Promise((res) => setTimeout(res, 100))
    }
    throw new Error(`not ${want} open questions`)
  }

  it("start, 409 while it runs, stop, continue, answer, discard, a new message; stopping the server stops its runs (recorded, resumable)", async () => {
    const p = project()
    const script = path.join(p.root, "s.json")
    const steps = (s: ReadonlyArray<unknown>) => fs.writeFileSync(script, JSON.stringify({ steps: s }))
    steps([{ message: "Working.", tool_calls: [call("a1", "prod", "ask")] }, { message: "Done." }])
    const server = await Serve.start(p, [], { PARLEY_SCRIPT: script, OPENAI_API_KEY: "", OPENAI_BASE_URL: "" })
    children.push(server.child)

    // Not a model: refused before any run; a model the run cannot call: the run's refusal.
    expect(await server.post("/api/conversations", { message: "deploy", model: "nope/nope" })).toMatchObject({
      status: 400,
      body: { error: "BadRequest", kind: "Payload" }
    })
    expect(await server.post("/api/conversations", { message: "deploy", model: "openai/nope" })).toMatchObject({
      status: 422,
      body: { error: "RunNotStarted" }
    })
    const created = await server.post("/api/conversations", { message: "deploy", model: "scripted" })
    expect(created.status).toBe(200)
    const id = created.body.conversation_id as string
    expect(created.body.pid).toBeGreaterThan(0)
    expect((await open(server, 1)).map((q) => [q.id, q.conversation_id])).toStrictEqual([["a1.confirm.1", id]])
    // A message for the running turn is queued for it (docs/cli.md#talk-to-a-running-turn): its id comes back.
    expect(await server.post(`/api/conversations/${id}/messages`, { message: "more" })).toStrictEqual({
      status: 200,
      body: { conversation_id: id, pid: created.body.pid, queued: 1 }
    })
    // The page's box offers when, and says what waits; an empty message is refused naming the field.
    const page = await (await fetch(`${server.base}/conversations/${id}`, { headers: server.auth })).text()
    expect(page).toContain('<select name="when"')
    expect(page).toContain('data-count="1">1 message queued</p>')
    const empty = await server.post(`/api/conversations/${id}/messages`, { message: "" })
    expect(empty).toMatchObject({ status: 400, body: { error: "BadRequest", kind: "Payload" } })
    expect(empty.body.message).toContain("message")
    expect(await server.post(`/api/conversations/${id}/continue`, {})).toMatchObject({
      status: 409,
      body: { error: "ConversationBusy" }
    })
    expect(await server.post(`/api/conversations/${id}/stop`, {})).toStrictEqual({
      status: 200,
      body: { id, pid: created.body.pid }
    })
    await waitFor("the run to stop", () => sockets(p).length === 0)
    expect((await server.json("/api/conversations")).body[0]).toMatchObject({
      id,
      running: null,
      incomplete: { state: "pending-tool-execution" }
    })

    // Continued: the tool asks again; answered through the API; the run completes.
    // The queued message is delivered once the continued turn ends: a turn of its own.
    steps([{ message: "Done after all." }, { message: "More done." }])
    const continued = await server.post(`/api/conversations/${id}/continue`, {})
    expect(continued).toMatchObject({ status: 200, body: { conversation_id: id } })
    const [asked] = await open(server, 1)
    expect(asked!.id).toBe("a1.confirm.2") // the tool asks again in the resumed turn
    expect(await server.post(`/api/conversations/${id}/questions/a1.confirm.2`, { answer: true })).toMatchObject({
      status: 200
    })
    await waitFor(
      "the continued run to finish",
      () => sockets(p).length === 0 && persisted(p).at(-1)?.type === "chat_response"
    )
    expect(effects(p, "prod")).toBe("true\n")
    expect(await server.post(`/api/conversations/${id}/discard`, {})).toStrictEqual({
      status: 200,
      body: { id, ending: "nothing_to_discard" }
    })

    // A new message in the same conversation, then the server stops with the run waiting: the run is stopped with it.
    steps([{ message: "Again.", tool_calls: [call("a2", "again", "ask")] }, { message: "Again done." }])
    // A message that looks like flags is the message, not flags.
    const again = await server.post(`/api/conversations/${id}/messages`, { message: "--new --storage /tmp --help" })
    expect(again).toMatchObject({ status: 200, body: { conversation_id: id } })
    await open(server, 1)
    expect(await server.stop()).toBe(143)
    await waitFor(
      "the hosted run to end",
      () => {
        try {
          process.kill(again.body.pid, 0)
          return false
        } catch {
          return true
        }
      },
      15_000
    )
    expect(sockets(p)).toStrictEqual([])
    const responses = persisted(p)
      .filter((e) => e.type === "inquiry_response")
      .map((e) => [e["id"], e["outcome"], e["reason"] ?? null])
    expect(responses.at(-1)).toStrictEqual(["a2.confirm.1", "cancelled", "user"])
    const rows = JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout)
    expect(rows).toHaveLength(1)
    expect(rows[0].incomplete).toStrictEqual({ state: "pending-tool-execution" })
    const requests = (
      JSON.parse(parley(p, ["conversation", "print", id, "--format", "json"]).stdout) as Array<{
        type: string
        content?: string
      }>
    ).filter((e) => e.type === "chat_request")
    expect(requests.at(-1)!.content).toBe("--new --storage /tmp --help")
  }, 120_000)
  it("a discard refused by a lock whose holder is not known yet is a 409, not a 422 (the lock is being written or unreadable)", async () => {
    const p = project()
    const script = writeScript(p, "s.json", [
      { message: "Working.", tool_calls: [call("a1", "prod", "ask")] },
      { message: "Done." }
    ])
    // A waiting turn on disk: discarding it writes, so it needs the lock.
    parley(p, ["query", "--new", "go", "--script", script, "--detached-policy", "defer"])
    const id = JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout)[0].id as string
    const server = await Serve.start(p, [], { PARLEY_SCRIPT: script })
    children.push(server.child)
    // A lock file that names no pid yet: FileLock treats it as held while it is young, without knowing by whom
    // (dated an hour ahead, so a slow machine cannot age it past that grace during the test).
    const lock = path.join(p.storage, "locks", `jp-c${id}.lock`)
    fs.mkdirSync(path.dirname(lock), { recursive: true })
    fs.writeFileSync(lock, "")
    const ahead = new Date(Date.now() + 3_600_000)
    fs.utimesSync(lock, ahead, ahead)
    const busy = {
      status: 409,
      body: {
        error: "ConversationBusy",
        id,
        holder: "another parley process",
        message: `Conversation ${id} is running in another parley process.`
      }
    }
    expect(await server.post(`/api/conversations/${id}/discard`, {})).toStrictEqual(busy)
    // Not served by a run, so not queued: a new turn, refused by the lock.
    expect(await server.post(`/api/conversations/${id}/messages`, { message: "more" })).toStrictEqual(busy)
    // Nothing was discarded: the turn still waits.
    expect(JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout)[0].incomplete).toStrictEqual({
      state: "waiting-for-input",
      tool: "deferrable"
    })
  })
})

describe("parley serve: many watchers of one run", () => {
  it("50 SSE clients of one run each get every event, through the Stopped (the host waits for its subscribers before it closes)", async () => {
    const p = project()
    const server = await start(p)
    const script = writeScript(p, "s.json", [
      { message: "Working. " + "word ".repeat(150), tool_calls: [call("a1", "prod", "ask")] },
      { message: "Done. " + "word ".repeat(300) }
    ])
    const child = spawnParley(p, ["query", "--new", "go", "--script", script])
    children.push(child)
    await waitFor("the question", () => persisted(p).some((e) => e.type === "inquiry_request"))
    await waitFor("the host's socket", () => sockets(p).length === 1)
    const id = sockets(p)[0]!.replace(".sock", "")
    const clients = await Promise.all(
      Array.from({ length: 50 }, () => Serve.sse(`${server.base}/api/conversations/${id}/events`, server.auth))
    )
    const read = async (c: Awaited<ReturnType<typeof Serve.sse>>) => {
      const ids: Array<number> = []
      let last = ""
      for (let f = await c.next(); f !== undefined; f = await c.next()) {
        ids.push(Number(f.id))
        last = JSON.parse(f.data)._tag
      }
      return { ids, last }
    }
    const reading = clients.map(read)
    expect(await server.post(`/api/conversations/${id}/questions/a1.confirm.1`, { answer: true })).toMatchObject({
      status: 200
    })
    const all = await Promise.all(reading)
    expect(await exited(child)).toBe(0)
    const n = all[0]!.ids.length
    expect(n).toBeGreaterThan(400)
    for (const r of all) expect(r).toStrictEqual({ ids: Array.from({ length: n }, (_, i) => i + 1), last: "Stopped" })
    expect(await server.stop()).toBe(143)
  })
})
