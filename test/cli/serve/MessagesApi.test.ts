// Messages to a running turn through `parley serve`'s API (docs/cli.md#talk-to-a-running-turn): one sent from the
// API and one from a terminal at the same moment are both delivered, each its own turn, in the order of the ids the
// sends returned; `DELETE …/messages/:n` withdraws a queued message (200), says so again for one withdrawn already,
// and is a typed 404 for one delivered or never queued, behind the token and the Origin check as every POST is.
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HostClient from "../../../src/layers/host/HostClient.ts"
import {
  exited,
  killGroup,
  parley,
  persisted,
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

/** A server, and a turn run by `query --detach` that waits on its tool's question `a1.confirm.1`. */
const waitingTurn = async (replies: ReadonlyArray<string>) => {
  const p = waitingProject()
  const server = await Serve.start(p, [], { OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "", PARLEY_MODEL: "" })
  children.push(server.child)
  const script = writeScript(p, "s.json", [
    { message: "Asking.", tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "prod", mode: "ask" } }] },
    ...replies.map((message) => ({ message }))
  ])
  const r = parley(p, ["query", "--detach", "--new", "deploy", "--script", script, "--detached-policy", "wait"])
  expect(r.code, r.stderr).toBe(0)
  groups.push(Number(/\(pid (\d+)\)/.exec(r.stderr)![1]))
  const id = r.stdout.trim()
  await expect.poll(async () => (await server.json("/api/questions")).body.length, { timeout: 30_000 }).toBe(1)
  return { p, server, id }
}

/** `DELETE path` with the token (and any `headers`): the status and the parsed body. */
const del = async (server: Serve.Server, path: string, headers: Record<string, string> = server.auth) => {
  const r = await fetch(server.base + path, { method: "DELETE", headers, signal: AbortSignal.timeout(30_000) })
  const text = await r.text()
  return { status: r.status, body: text === "" ? undefined : JSON.parse(text) }
}

const requests = (entries: ReadonlyArray<Record<string, unknown>>) =>
  entries.filter((e) => e["type"] === "chat_request")
/** Who sent a request (its `parley_message` metadata; a metadata string is base64 on disk). */
const sentBy = (e: Record<string, unknown>) => {
  const m = (e["metadata"] as Record<string, { id: number; via: string }> | undefined)?.["parley_message"]
  return m === undefined ? undefined : { id: m.id, via: Buffer.from(m.via, "base64").toString("utf8") }
}

describe("parley serve: messages to a running turn", () => {
  it("from the API and from a terminal at once: both delivered, in the order of the ids the sends returned", async () => {
    const { p, server, id } = await waitingTurn(["Done.", "One.", "Two."])
    const terminal = spawnParley(p, ["conversation", "send", id, "from the terminal"])
    children.push(terminal)
    const [api, code] = await Promise.all([
      server.post(`/api/conversations/${id}/messages`, { message: "from the api" }),
      exited(terminal)
    ])
    expect(api.status, JSON.stringify(api.body)).toBe(200)
    expect(code, terminal.output()).toBe(0)
    const ids = { api: api.body.queued as number, terminal: Number(/^(\d+)$/m.exec(terminal.output())![1]) }
    expect([ids.api, ids.terminal].sort()).toStrictEqual([1, 2])
    expect((await server.post(`/api/conversations/${id}/questions/a1.confirm.1`, { answer: true })).status).toBe(200)
    await expect.poll(() => persisted(p).at(-1)?.["message"], { timeout: 60_000 }).toBe("Two.")
    const expected = [
      ["from the api", { id: ids.api, via: "api" }],
      ["from the terminal", { id: ids.terminal, via: "terminal" }]
    ].sort((x, y) => (x[1] as { id: number }).id - (y[1] as { id: number }).id)
    expect(requests(persisted(p)).map((e) => [e["content"], sentBy(e)])).toStrictEqual([
      ["deploy", undefined],
      ...expected
    ])
    const check = parley(p, ["conversation", "check", id])
    expect(check.code, check.stdout + check.stderr).toBe(0)
    expect(await server.stop()).toBe(143)
  }, 120_000)

  it("a message sent while a run that ended still lingers (a terminal attached to it stopped reading): not queued for it, a new turn is asked for once it is gone", async () => {
    const { p, server, id } = await waitingTurn(["Done."])
    const frozen = spawnParley(p, ["conversation", "attach", id])
    children.push(frozen)
    await waitFor("the attached terminal to show the run", () => frozen.output().includes("Asking."))
    frozen.kill("SIGSTOP")
    try {
      expect((await server.post(`/api/conversations/${id}/questions/a1.confirm.1`, { answer: true })).status).toBe(200)
      // The host says its run ended, and stays a while for the stopped terminal (Following.ts's STALL_MS).
      const socket = path.join(p.storage, "run", `${id}.sock`)
      const info = () => Effect.runPromise(Effect.scoped(Effect.flatMap(HostClient.connect(socket), (c) => c.Info())))
      await expect.poll(async () => (await info()).ended, { timeout: 20_000 }).toBeGreaterThan(0)
      const sent = await server.post(`/api/conversations/${id}/messages`, { message: "one more thing" })
      // Not queued for a run that reads no more messages: the server waited for it to go and started a new
      // turn of the conversation, which says it needs its script (the scripted model's steps) and ends.
      expect(sent.body, JSON.stringify(sent.body)).not.toHaveProperty("queued")
      expect(sent.body).toMatchObject({ error: "RunNotStarted", code: 1 })
      expect(sent.body.output).toContain(`conversation ${id}\nparley: This conversation runs on the scripted model`)
    } finally {
      frozen.kill("SIGCONT")
    }
    expect(await server.stop()).toBe(143)
  }, 120_000)

  it("DELETE …/messages/:n: withdrawn (200), again (200), delivered or unknown (404), guarded as a POST", async () => {
    const { p, server, id } = await waitingTurn(["Done.", "Second kept."])
    const at = (n: number | string) => `/api/conversations/${id}/messages/${n}`
    for (const message of ["never mind", "keep this one"])
      expect((await server.post(`/api/conversations/${id}/messages`, { message })).status).toBe(200)
    // Refused before anything is withdrawn: no token, a page of another site.
    expect((await del(server, at(1), {})).status).toBe(401)
    expect((await del(server, at(1), { ...server.auth, origin: "http://evil.example" })).status).toBe(403)
    expect(await del(server, at(1))).toStrictEqual({
      status: 200,
      body: { conversation_id: id, queued: 1, outcome: "withdrawn" }
    })
    expect(await del(server, at(1))).toStrictEqual({
      status: 200,
      body: { conversation_id: id, queued: 1, outcome: "already_withdrawn" }
    })
    expect(await del(server, at(9))).toStrictEqual({
      status: 404,
      body: { error: "MessageNotQueued", message: `${id} has no queued message 9.`, id, queued: 9, state: "unknown" }
    })
    expect(await del(server, "/api/conversations/17738399468/messages/1")).toMatchObject({
      status: 404,
      body: { error: "ConversationNotFound" }
    })
    expect(await del(server, at(0))).toMatchObject({ status: 400, body: { error: "BadRequest" } })
    expect((await server.post(`/api/conversations/${id}/questions/a1.confirm.1`, { answer: true })).status).toBe(200)
    await expect.poll(() => persisted(p).at(-1)?.["message"], { timeout: 60_000 }).toBe("Second kept.")
    expect(requests(persisted(p)).map((e) => e["content"])).toStrictEqual(["deploy", "keep this one"])
    expect(await del(server, at(2))).toMatchObject({
      status: 404,
      body: { error: "MessageNotQueued", message: "Message 2 was already delivered.", state: "delivered" }
    })
    expect(await server.stop()).toBe(143)
  }, 120_000)
})
