// parley serve (docs/serve.md): /api/openapi.json says what the server answers. Every endpoint
// is driven to each status it can give here (a waiting turn on disk, a run
// hosted by `parley query`, a damaged conversation, runs the server starts,
// and every refusal of the guard); each status seen must be declared for its
// endpoint, and each declared one must be seen — but for the few named below
// that need a run to die mid-call.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { hostSockets, parley, spawnParley, waitFor, waitingProject, writeScript } from "../../support/Project.ts"
import * as Serve from "../../support/Serve.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
})

/**
 * Declared, but not reached here: a run's host that goes away in the middle
 * of a call (`RunLost`, 503), a `query --discard-turn` that fails on its own
 * (`RunNotStarted`, 422: the store failing under it; a lock's refusal is a
 * 409, even before the lock names its holder — Api.test), and a message to a
 * conversation a process holds without serving it (409, the same lock — Api.test:
 * a running turn queues it).
 */
const NOT_REACHED: Record<string, ReadonlyArray<string>> = {
  "POST /api/conversations/{id}/messages": ["409", "503"],
  "POST /api/conversations/{id}/questions/{inquiryId}": ["503"],
  "POST /api/conversations/{id}/answers": ["503"],
  "POST /api/conversations/{id}/stop": ["503"],
  "POST /api/conversations/{id}/discard": ["422"]
}

const call = (id: string, name: string, mode: string) => ({ id, name: "deferrable", arguments: { name, mode } })

describe("parley serve: the OpenAPI document against the server", () => {
  // Every run is awaited until its process is gone and its lock and socket with it, and a failure lists
  // every call with its answer. (Under load, a message with an unknown model once answered 200: the run made
  // itself known before it checked its model. It checks first now.)
  it("every status an endpoint answers is declared for it, and every declared one is answered", async () => {
    const p = waitingProject()
    // A waiting turn on disk (A).
    const script = writeScript(p, "s.json", [
      { message: "Working.", tool_calls: [call("a1", "prod", "ask")] },
      { message: "Done." }
    ])
    parley(p, ["query", "--new", "go", "--script", script, "--detached-policy", "defer"])
    const a = JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout)[0].id as string
    // A damaged conversation (C): a copy of A whose events are not JSON.
    const dirOf = (id: string) => fs.readdirSync(path.join(p.storage, "conversations")).find((n) => n.startsWith(id))!
    const c = String(Number(a) + 1)
    const cDir = path.join(p.storage, "conversations", dirOf(a).replace(a, c))
    fs.cpSync(path.join(p.storage, "conversations", dirOf(a)), cDir, { recursive: true })
    fs.writeFileSync(path.join(cDir, "events.json"), "{ not json")
    // The server's own runs reply at once.
    const quick = writeScript(p, "quick.json", [{ message: "Done." }])
    // No OpenAI key nor server: a run of `openai/nope` refuses its model (422) after it started.
    const server = await Serve.start(p, [], { PARLEY_SCRIPT: quick, OPENAI_API_KEY: "", OPENAI_BASE_URL: "" })
    children.push(server.child)
    // A run hosted by `parley query` (B), its question open.
    const hosted = spawnParley(p, [
      "query",
      "--new",
      "go",
      "--script",
      writeScript(p, "b.json", [{ message: "Working.", tool_calls: [call("b1", "bee", "ask")] }, { message: "Done." }])
    ])
    children.push(hosted)
    await waitFor("B's host", () => hostSockets(p).length === 1, 60_000)
    const b = hostSockets(p)[0]!.replace(".sock", "")
    for (let i = 0; (await server.json("/api/questions")).body.length === 0; i++) {
      if (i === 300) throw new Error("B's question never opened")
      await new Promise((r) => setTimeout(r, 100))
    }
    const x = "17738399468"

    const seen = new Map<string, Set<string>>()
    const note = (op: string, status: number) => seen.set(op, (seen.get(op) ?? new Set()).add(String(status)))
    // Every call and its answer, to say in a failure which call answered what.
    const calls: Array<string> = []
    const sample = (status: number, what: string) => void calls.push(`${status} ${what}`)
    const send = async (
      op: string,
      url: string,
      init: { method?: string; headers?: Record<string, string>; body?: string } = {}
    ) => {
      const method = init.method ?? "GET"
      const r = await Serve.raw(server.port, {
        method,
        path: url,
        headers: {
          ...server.auth,
          ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
          ...init.headers
        },
        ...(init.body !== undefined ? { body: init.body } : {})
      })
      note(op, r.status)
      sample(r.status, `${method} ${url}: ${r.body.slice(0, 300)}`)
      return r
    }
    const json = (v: unknown) => JSON.stringify(v)
    /** The refusals every endpoint shares: no token, a foreign Host; for a POST a foreign Origin and a body over 1 MiB. */
    const guarded = async (op: string, url: string, method: string) => {
      await send(op, url, { method, headers: { authorization: "Bearer nope" } })
      await send(op, url, { method, headers: { host: "evil.example" } })
      if (method === "POST") {
        await send(op, url, { method, headers: { origin: "http://evil.example" }, body: "{}" })
        await send(op, url, { method, body: json({ message: "x".repeat(1024 * 1024) }) })
      }
      // A DELETE takes no body: only its Origin is checked.
      if (method === "DELETE") await send(op, url, { method, headers: { origin: "http://evil.example" } })
    }

    const list = "GET /api/conversations"
    await send(list, "/api/conversations")
    await guarded(list, "/api/conversations", "GET")

    const get = "GET /api/conversations/{id}"
    for (const id of [a, x, c, `%20${a}`]) await send(get, `/api/conversations/${id}`)
    await guarded(get, `/api/conversations/${a}`, "GET")

    const events = "GET /api/conversations/{id}/events"
    for (const id of [a, x]) await send(events, `/api/conversations/${id}/events`)
    await send(events, `/api/conversations/${a}/events`, { headers: { "last-event-id": "abc" } })
    const streaming = new AbortController()
    const stream = await fetch(`${server.base}/api/conversations/${b}/events`, {
      headers: server.auth,
      signal: streaming.signal
    })
    note(events, stream.status)
    streaming.abort()
    await guarded(events, `/api/conversations/${a}/events`, "GET")

    const questions = "GET /api/questions"
    await send(questions, "/api/questions")
    await guarded(questions, "/api/questions", "GET")

    // A batch that does not fit, while A's question is open (nothing recorded).
    const answers = "POST /api/conversations/{id}/answers"
    const batch = (id: string) => `/api/conversations/${id}/answers`
    await send(answers, batch(a), { method: "POST", body: json({ answers: { "a1.confirm.1": "perhaps" } }) })

    const answer = "POST /api/conversations/{id}/questions/{inquiryId}"
    const q = (id: string, inquiry: string) => `/api/conversations/${id}/questions/${inquiry}`
    await send(answer, q(a, "a1.confirm.1"), { method: "POST", body: json({ answer: "perhaps" }) })
    await send(answer, q(a, "zz.nope.1"), { method: "POST", body: json({ answer: true }) })
    await send(answer, q(a, "a1.confirm.1"), { method: "POST", body: "{not json" })
    await send(answer, q(a, "a1.confirm.1"), {
      method: "POST",
      body: "hello",
      headers: { "content-type": "text/plain" }
    })
    expect((await send(answer, q(a, "a1.confirm.1"), { method: "POST", body: json({ answer: true }) })).status).toBe(
      200
    )
    await send(answer, q(a, "a1.confirm.1"), { method: "POST", body: json({ answer: false }) })
    await guarded(answer, q(a, "a1.confirm.1"), "POST")

    // A's question is answered now: a batch naming it is a 409; an empty batch has nothing to refuse (200).
    await send(answers, batch(a), { method: "POST", body: json({ answers: { "a1.confirm.1": true } }) })
    await send(answers, batch(a), { method: "POST", body: json({ answers: {} }) })
    await send(answers, batch(a), { method: "POST", body: json({ answers: { "zz.nope.1": true } }) })
    await send(answers, batch(x), { method: "POST", body: json({ answers: {} }) })
    await send(answers, batch(a), { method: "POST", body: "{not json" })
    await send(answers, batch(a), { method: "POST", body: "hello", headers: { "content-type": "text/plain" } })
    await guarded(answers, batch(a), "POST")

    const create = "POST /api/conversations"
    const created = await send(create, "/api/conversations", {
      method: "POST",
      body: json({ message: "hi", model: "scripted" })
    })
    const d = JSON.parse(created.body).conversation_id as string
    // A run's socket goes before its process lets go of the conversation: wait for the process, its lock and
    // its socket (else the next call finds the conversation held: a 409, rightly).
    const ended = (pid: number) => {
      try {
        process.kill(pid, 0)
        return false
      } catch {
        return true
      }
    }
    const released = (id: string, pid: number) => () =>
      ended(pid) &&
      !fs.existsSync(path.join(p.storage, "locks", `jp-c${id}.lock`)) &&
      hostSockets(p).every((s) => s !== `${id}.sock`)
    const pidOf = (r: { body: string }) => JSON.parse(r.body).pid as number
    const dRun = pidOf(created)
    // Not a model (400), and a model its run refuses (422).
    await send(create, "/api/conversations", { method: "POST", body: json({ message: "hi", model: "nope/nope" }) })
    await send(create, "/api/conversations", { method: "POST", body: json({ message: "hi", model: "openai/nope" }) })
    await send(create, "/api/conversations", { method: "POST", body: json({ nope: 1 }) })
    await send(create, "/api/conversations", {
      method: "POST",
      body: "hello",
      headers: { "content-type": "text/plain" }
    })
    await guarded(create, "/api/conversations", "POST")
    await waitFor("D's run to end", released(d, dRun), 60_000)

    const message = "POST /api/conversations/{id}/messages"
    for (const id of [x, b])
      await send(message, `/api/conversations/${id}/messages`, { method: "POST", body: json({ message: "more" }) })
    for (const model of ["nope/nope", "openai/nope"])
      await send(message, `/api/conversations/${d}/messages`, {
        method: "POST",
        body: json({ message: "more", model })
      })
    await send(message, `/api/conversations/${d}/messages`, { method: "POST", body: json({ message: 1 }) })
    await send(message, `/api/conversations/${d}/messages`, {
      method: "POST",
      body: "hello",
      headers: { "content-type": "text/plain" }
    })
    const dSecond = pidOf(
      await send(message, `/api/conversations/${d}/messages`, { method: "POST", body: json({ message: "more" }) })
    )
    await waitFor("D's second run to end", released(d, dSecond), 60_000)
    await guarded(message, `/api/conversations/${d}/messages`, "POST")

    // B's turn runs: the "more" sent to it above is its queued message 1.
    const withdraw = "DELETE /api/conversations/{id}/messages/{n}"
    const queued = (id: string, n: string) => `/api/conversations/${id}/messages/${n}`
    await guarded(withdraw, queued(b, "1"), "DELETE")
    for (const [id, n] of [
      [b, "1"],
      [b, "1"],
      [b, "7"],
      [x, "1"],
      [b, "0"],
      [b, "one"]
    ] as const)
      await send(withdraw, queued(id, n), { method: "DELETE" })

    const proceed = "POST /api/conversations/{id}/continue"
    for (const id of [x, b, d, `${d}%20`]) await send(proceed, `/api/conversations/${id}/continue`, { method: "POST" })
    const aRun = pidOf(await send(proceed, `/api/conversations/${a}/continue`, { method: "POST" }))
    await waitFor("A's continued run to end", released(a, aRun), 60_000)
    await guarded(proceed, `/api/conversations/${a}/continue`, "POST")

    const discard = "POST /api/conversations/{id}/discard"
    for (const id of [x, b, d, `-${d}`]) await send(discard, `/api/conversations/${id}/discard`, { method: "POST" })
    await guarded(discard, `/api/conversations/${d}/discard`, "POST")

    const stop = "POST /api/conversations/{id}/stop"
    for (const id of [x, d, b, `jp-c%20${d}`]) await send(stop, `/api/conversations/${id}/stop`, { method: "POST" })
    await guarded(stop, `/api/conversations/${d}/stop`, "POST")

    const doc = await server.json("/api/openapi.json")
    const declared = new Map<string, Set<string>>()
    for (const [route, ops] of Object.entries(
      doc.body.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>
    )) {
      for (const [method, op] of Object.entries(ops))
        declared.set(`${method.toUpperCase()} ${route}`, new Set(Object.keys(op.responses)))
    }
    const sorted = (xs: Iterable<string>) => [...xs].sort()
    const table = (m: Map<string, Set<string>>) =>
      Object.fromEntries(sorted(m.keys()).map((k) => [k, sorted(m.get(k)!)]))
    const expected = Object.fromEntries(
      [...declared].map(([op, statuses]) => [
        op,
        sorted([...statuses].filter((s) => !(NOT_REACHED[op] ?? []).includes(s)))
      ])
    )
    expect(table(seen), calls.join("\n")).toStrictEqual(expected)
    expect(await server.stop()).toBe(143)
  }, 300_000)
})
