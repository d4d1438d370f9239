// parley serve (docs/serve.md, docs/configuration.md): draft D16's `[server.web]` section —
// `bind` and `port` are where serve listens when --host/--port are not given; the flags win
// when they are; a bad value is a config error naming the key, before anything listens.
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { exited, makeProject, parley, type Project, spawnParley, waitFor } from "../../support/Project.ts"
import * as Serve from "../../support/Serve.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
})

/** A port free a moment ago (the kernel's pick for port 0, released). */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo // listen() on a TCP port: never a pipe name
      s.close(() => resolve(port))
    })
  })

const withWeb = (p: Project, table: string): void =>
  fs.appendFileSync(path.join(p.storage, "config.toml"), `\n[server.web]\n${table}\n`)

/** `parley serve` with no --host/--port; its output once its address line (or its exit) is there. */
const serveFromConfig = async (p: Project) => {
  const child = spawnParley(p, ["serve"])
  children.push(child)
  await waitFor(
    "the server's address",
    () => /\?token=[0-9a-f]+\n/.test(child.output()) || child.exitCode !== null,
    20_000
  )
  return child
}

describe("draft D16: [server.web] in config", () => {
  it("draft D16 [server.web]: bind and port from config are where serve listens (no flags given)", async () => {
    const p = makeProject()
    const port = await freePort()
    withWeb(p, `bind = "127.0.0.1"\nport = ${port}`)
    const child = await serveFromConfig(p)
    expect(child.output()).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/\\?token=[0-9a-f]{64}\\n`))
    const r = await Serve.raw(port, { path: "/api/conversations" })
    expect(r.status).toBe(401)
    child.kill("SIGTERM")
    expect(await exited(child)).not.toBe(1)
  })

  it("draft D16 [server.web]: a bind other than loopback from config warns exactly as --host does", async () => {
    const p = makeProject()
    // 127.0.0.2 is this machine (127/8) but not one of the names serve trusts as loopback: it warns.
    withWeb(p, `bind = "127.0.0.2"\nport = 0`)
    const child = await serveFromConfig(p)
    const fromConfig = /^(http:\/\/\S+)\n/m.exec(child.output())![1]!
    expect(fromConfig).toMatch(/^http:\/\/127\.0\.0\.2:\d+\//)
    await waitFor("the warning", () => child.output().includes("not only this machine"), 5_000)
    const warning = (out: string) => out.split("\n").find((l) => l.startsWith("parley: serving on"))!
    const byConfig = warning(child.output())
    child.kill("SIGTERM")
    await exited(child)

    const q = makeProject()
    const flagged = await Serve.start(q, ["--host", "127.0.0.2"])
    children.push(flagged.child)
    await waitFor("the warning", () => flagged.child.output().includes("not only this machine"), 5_000)
    const byFlag = warning(flagged.child.output())
    await flagged.stop()
    // The same sentence, apart from the port each was given and the storage each serves.
    const same = (line: string, s: string) => line.replace(/port \d+/, "port N").replace(s, "STORAGE")
    expect(same(byConfig, p.storage)).toBe(same(byFlag, q.storage))
    expect(byConfig).toMatch(/^parley: serving on 127\.0\.0\.2, not only this machine: anyone who can reach port \d+/)
  })

  it("draft D16 [server.web]: --host and --port win over the config's bind and port", async () => {
    const p = makeProject()
    // Port 1 is privileged and 127.0.0.2 would warn: neither happens when the flags are given.
    withWeb(p, `bind = "127.0.0.2"\nport = 1`)
    const server = await Serve.start(p, ["--host", "127.0.0.1"])
    children.push(server.child)
    expect(server.base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(server.port).not.toBe(1)
    expect((await server.json("/api/conversations")).status).toBe(200)
    expect(server.child.output()).not.toContain("not only this machine")
    await server.stop()
  })

  it("draft D16 [server.web]: a bad value is a config error naming server.web.port, and nothing listens", () => {
    const p = makeProject()
    withWeb(p, `port = "x"`)
    const r = parley(p, ["serve"])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe("")
    expect(r.stderr).toContain(`config.toml: server.web.port: expected number, got "x"`)
    const q = makeProject()
    withWeb(q, `port = 70000`)
    expect(parley(q, ["serve"]).stderr).toContain("server.web.port: expected a port number from 0 to 65535, got 70000")
  })

  it("a port another program holds: serve says it could not listen and why, and exits 1 (it used to exit 1 saying nothing)", async () => {
    const p = makeProject()
    const held = net.createServer()
    await new Promise<void>((resolve) => held.listen(0, "127.0.0.1", resolve))
    const { port } = held.address() as net.AddressInfo // listen() on a TCP port: never a pipe name
    try {
      const r = parley(p, ["serve", "--port", String(port)])
      expect({ code: r.code, stdout: r.stdout }).toStrictEqual({ code: 1, stdout: "" })
      expect(r.stderr).toBe(
        `parley: Could not listen (listen EADDRINUSE: address already in use 127.0.0.1:${port}). Another program listens there: stop it, or choose another --port (0: any free port).\n`
      )
    } finally {
      held.close()
    }
  })
})
