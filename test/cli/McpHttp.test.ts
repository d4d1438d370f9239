// MCP servers (docs/mcp.md) over streamable HTTP: the test starts server-everything in its
// streamableHttp mode on a free 127.0.0.1 port; parley connects by url. The
// same scripted turn as over stdio, and SIGINT mid-form (the server sees
// cancel). parley does not own an HTTP server: it must still be running after.
import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { withoutRunHeader } from "../support/Cli.ts"
import { exited, makeProject, persisted, type Project, spawnParley, waitFor, writeScript } from "../support/Project.ts"
import {
  ACCEPTED_CONTENT,
  callResults,
  elicitResults,
  FORM,
  formAnswersToml,
  type HttpServer,
  killMarked,
  marked,
  newMark,
  readTrace,
  startHttp
} from "../layers/mcp/everything.ts"

const b64 = (s: string) => Buffer.from(s).toString("base64")

const marks: Array<string> = []
const servers: Array<HttpServer> = []
const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
const projects: Array<string> = []
afterEach(async () => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  for (const s of servers.splice(0)) await s.stop()
  for (const m of marks.splice(0)) killMarked(m)
  for (const d of projects.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})

/** A pass-through proxy in front of `target` that notes each request's method and test header. */
const recordingProxy = async (target: string) => {
  const seen: Array<string> = []
  const upstream = new URL(target)
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.headers["x-parley-test"] ?? "-"}`)
    const out = http.request(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers)
        r.pipe(res)
      }
    )
    out.on("error", () => res.destroy())
    req.pipe(out)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    seen,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())))
  }
}

const TOOL = "trigger-elicitation-request"
const SOURCE = { source: "tool", name: TOOL }

const httpProject = async (toml: string): Promise<{ p: Project; server: HttpServer; trace: string }> => {
  const mark = newMark()
  marks.push(mark)
  const server = await startHttp(mark)
  servers.push(server)
  const p = makeProject()
  projects.push(p.root)
  fs.writeFileSync(
    path.join(p.storage, "config.toml"),
    `[mcp.servers.remote]\nurl = "${server.url}"\nheaders = { X-Parley-Test = "1" }\n\n${toml}`
  )
  return { p, server, trace: path.join(p.root, "trace.jsonl") }
}

const strip = (events: ReadonlyArray<Record<string, unknown>>) => events.map(({ timestamp: _, ...rest }) => rest)

describe("MCP over streamable HTTP (server-everything, streamableHttp mode)", () => {
  it("the scripted turn: get-sum, echo and the form, one inquiry pair per field; headers on every request, the session ended; the server keeps running", async () => {
    const { p, server, trace } = await httpProject(formAnswersToml({ toAssistant: ["name"] }))
    const proxy = await recordingProxy(server.url)
    const configFile = path.join(p.storage, "config.toml")
    fs.writeFileSync(configFile, fs.readFileSync(configFile, "utf8").replace(server.url, proxy.url))
    const script = writeScript(p, "s.json", [
      {
        message: "Calling three tools.",
        tool_calls: [
          { id: "call_1", name: "get-sum", arguments: { a: 2, b: 3 } },
          { id: "call_2", name: "echo", arguments: { message: "hi" } },
          { id: "call_3", name: TOOL, arguments: {} }
        ]
      },
      { structured: { answer: "Ada Lovelace" } },
      { message: "Done." }
    ])
    // Asynchronously: the proxy lives in this process.
    process.env["PARLEY_MCP_TRACE"] = trace
    const child = spawnParley(p, ["query", "go", "--script", script])
    delete process.env["PARLEY_MCP_TRACE"]
    children.push(child)
    expect(await exited(child)).toBe(0)
    expect(withoutRunHeader(child.output())).toBe("Calling three tools.\nDone.\n")
    const events = strip(persisted(p))
    const of = (call: string) =>
      events.filter(
        (e) => e["type"] !== "tool_call_request" && (e["id"] === call || String(e["id"]).startsWith(`${call}.`))
      )
    expect(of("call_1")).toStrictEqual([
      { type: "tool_call_response", id: "call_1", content: b64("The sum of 2 and 3 is 5."), is_error: false }
    ])
    expect(of("call_2")).toStrictEqual([
      { type: "tool_call_response", id: "call_2", content: b64("Echo: hi"), is_error: false }
    ])
    const form = of("call_3")
    expect(form.filter((e) => e["type"] === "inquiry_request").map((e) => [e["id"], e["source"]])).toStrictEqual(
      ["elicitation", ...FORM.map(([f]) => f)].map((f) => [`call_3.${f}.1`, SOURCE])
    )
    expect(form.filter((e) => e["type"] === "inquiry_response").map((e) => [e["id"], e["answer"]])).toStrictEqual([
      ["call_3.elicitation.1", true],
      ...FORM.map(([f, a]) => [`call_3.${f}.1`, a])
    ])
    expect(Buffer.from(String(form.at(-1)!["content"]), "base64").toString()).toContain("- Name: Ada Lovelace\n")
    expect(elicitResults(readTrace(trace))).toStrictEqual([{ action: "accept", content: ACCEPTED_CONTENT }])
    await proxy.close()
    expect(proxy.seen.length).toBeGreaterThan(3)
    expect(proxy.seen.filter((r) => !r.endsWith(" 1"))).toStrictEqual([])
    expect(proxy.seen.at(-1)).toBe("DELETE 1")
    expect(server.child.exitCode).toBeNull()
  })

  it("SIGINT mid-form: Cancelled{user}, the server sees cancel, exit 130", async () => {
    const { p, server, trace } = await httpProject(formAnswersToml({ toAssistant: ["name"] }))
    const script = writeScript(p, "s.json", [
      { message: "Calling.", tool_calls: [{ id: "call_1", name: TOOL, arguments: {} }] },
      { delay_ms: 60_000, structured: { answer: "never" } }
    ])
    process.env["PARLEY_MCP_TRACE"] = trace
    const child = spawnParley(p, ["query", "go", "--script", script])
    delete process.env["PARLEY_MCP_TRACE"]
    children.push(child)
    await waitFor("the name question", () => persisted(p).some((e) => e["id"] === "call_1.name.1"))
    child.kill("SIGINT")
    expect(await exited(child)).toBe(130)
    expect(strip(persisted(p)).at(-1)).toStrictEqual({
      type: "inquiry_response",
      outcome: "cancelled",
      id: "call_1.name.1",
      reason: "user"
    })
    const t = readTrace(trace)
    expect(elicitResults(t)).toStrictEqual([{ action: "cancel" }])
    expect(callResults(t)).toStrictEqual([
      '⚠️ User cancelled the elicitation dialog.\n\nRaw result: {\n  "action": "cancel"\n}'
    ])
    expect(server.child.exitCode).toBeNull()
    expect(marked(marks[0]!)).toStrictEqual([server.child.pid])
  })
})
