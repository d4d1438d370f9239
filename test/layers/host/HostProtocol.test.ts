// RFD 027 (client-server query architecture): the host handshake's version field. A run's host says its
// protocol version first (`Hello`); a client of another version refuses with one line instead of a decode
// error; a host that predates `Hello` is read as version 1. The host of another version here is built by
// the test from parley's own RPC group (no hook in parley for it): what a newer parley's host would answer.
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as RpcServer from "effect/rpc/RpcServer"
import * as HostClient from "../../../src/layers/host/HostClient.ts"
import * as HostPath from "../../../src/layers/host/HostPath.ts"
import * as HostSerialization from "../../../src/layers/host/HostSerialization.ts"
import { HostRpcs } from "../../../src/services/RunHost.ts"
import { PROTOCOL } from "../../../src/domain/run/HostProtocol.ts"
import { VERSION } from "../../../src/cli/Version.ts"
import { binary } from "../../support/Cli.ts"
import {
  makeProject,
  parley,
  persisted,
  type Project,
  spawnParley,
  waitFor,
  waitingProject,
  writeScript
} from "../../support/Project.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
const scopes: Array<Scope.Closeable> = []
afterEach(async () => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  for (const s of scopes.splice(0)) await Effect.runPromise(Scope.close(s, Exit.void))
})

/** The built binary, run without blocking this process (the hosts these tests serve live in it). */
const cli = (p: Project, args: ReadonlyArray<string>): Promise<{ code: number; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [binary, "--storage", p.storage, ...args],
      { cwd: p.root, timeout: 30_000, env: { ...process.env, PARLEY_STORAGE: "", PARLEY_SCRIPT: "" } },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr })
    )
  })

/** A conversation that ran one turn and ended (nothing runs it). */
const finished = (): { p: Project; id: string } => {
  const p = makeProject()
  const script = writeScript(p, "s.json", [{ message: "Done." }])
  expect(parley(p, ["query", "--new", "hi", "--script", script]).code).toBe(0)
  const rows = JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout) as Array<{ id: string }>
  return { p, id: rows[0]!.id }
}

/** Serves `handlers` of `group` on `socketPath` as a host does (private directory, 0600 socket), until the test ends. */
const host = async <L>(
  socketPath: string,
  server: (path: string) => Layer.Layer<never, unknown, L>,
  handlers: Layer.Layer<L>
) => {
  fs.mkdirSync(path.dirname(socketPath), { recursive: true, mode: 0o700 })
  const scope = Effect.runSync(Scope.make())
  scopes.push(scope)
  await Effect.runPromise(Layer.buildWithScope(Layer.provide(server(socketPath), handlers), scope))
  fs.chmodSync(socketPath, 0o600)
}

const socketServer = (path: string) =>
  Layer.unwrap(
    Effect.map(
      Effect.promise(() => import("@effect/platform-node/NodeSocketServer")),
      (NodeSocketServer) => Layer.mergeAll(NodeSocketServer.layer({ path }), HostSerialization.layer)
    )
  )

const dies = (what: string) => Effect.die(`a client of another protocol version must not call ${what}`)

describe("RFD 027: the host handshake's version field", () => {
  it("RFD 027 host version: a real run's host says its protocol version, parley version and conversation", async () => {
    const p = waitingProject()
    const script = writeScript(p, "w.json", [
      { message: "Working.", tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "prod", mode: "ask" } }] },
      { message: "Done." }
    ])
    const child = spawnParley(p, ["query", "--new", "go", "--script", script])
    children.push(child)
    await waitFor("the question to open", () => persisted(p).some((e) => e.type === "inquiry_request"))
    await waitFor(
      "the host's socket",
      () => fs.existsSync(path.join(p.storage, "run")) && fs.readdirSync(path.join(p.storage, "run")).length === 1
    )
    const id = fs.readdirSync(path.join(p.storage, "run"))[0]!.replace(".sock", "")
    const hello = await Effect.runPromise(
      Effect.scoped(Effect.flatMap(HostClient.connect(HostPath.of(p.storage, id)), (client) => client.Hello()))
    )
    expect(hello).toStrictEqual({ protocol: PROTOCOL, parley: VERSION, conversation_id: id })
    expect(PROTOCOL).toBe(1)
  })

  /** A host of protocol 2 on conversation `id`'s socket, every call but Hello a defect. */
  const otherProtocol = async (p: Project, id: string) => {
    const server = (path: string) =>
      RpcServer.layer(HostRpcs, { disableTracing: true }).pipe(
        Layer.provide(RpcServer.layerProtocolSocketServer),
        Layer.provide(socketServer(path))
      )
    const handlers = HostRpcs.toLayer(
      HostRpcs.of({
        Hello: () => Effect.succeed({ protocol: 2, parley: "9.0.0", conversation_id: id }),
        Info: () => dies("Info"),
        Subscribe: () => Stream.die("a client of another protocol version must not call Subscribe"),
        Answer: () => dies("Answer"),
        AnswerAll: () => dies("AnswerAll"),
        Interrupt: () => dies("Interrupt")
      })
    )
    await host(HostPath.of(p.storage, id), server, handlers)
  }

  it("RFD 027 host version: attach, answer and kill refuse a host of another protocol version with one line, before any other call; ls lists it as a run of another parley version", async () => {
    const { p, id } = finished()
    await otherProtocol(p, id)
    const line = `The run of conversation ${id} speaks host protocol 2 (parley 9.0.0); this parley speaks host protocol 1: attach to it, answer it or stop it with the parley version that runs it.`
    for (const args of [
      ["conversation", "attach", id],
      ["conversation", "answer", id, "a1.confirm.1", "yes"],
      ["conversation", "kill", id]
    ]) {
      const r = await cli(p, args)
      expect(r.code, args.join(" ")).toBe(1)
      expect(r.stderr.trimEnd().split("\n"), args.join(" ")).toStrictEqual([`parley: ${line}`])
    }
    // ls does not call it not running: it says a run of another parley version holds it.
    const ls = await cli(p, ["conversation", "ls"])
    expect(ls.code, ls.stderr).toBe(0)
    expect(ls.stdout).toMatch(/ {2}\[running: other parley version \(parley 9\.0\.0, host protocol 2\)\]\n$/)
    const json = await cli(p, ["conversation", "ls", "--format", "json"])
    expect(JSON.parse(json.stdout)[0].running).toStrictEqual({
      pid: null,
      waiting: [],
      host_protocol: 2,
      parley: "9.0.0"
    })
  })

  it("RFD 027 host version: serve's answer path (Hello and Info asked together) refuses a host of another protocol, though its Info dies", async () => {
    const { p, id } = finished()
    await otherProtocol(p, id)
    const refused = await Effect.runPromise(
      Effect.scoped(Effect.flip(HostClient.connectRunningWithInfo(HostPath.of(p.storage, id), "1 second")))
    )
    expect(refused._tag).toBe("HostProtocolMismatch")
  })

  it("RFD 027 host version: a host that predates Hello (no version field) is read as version 1 and spoken to", async () => {
    const { p, id } = finished()
    const Old = HostRpcs.omit("Hello")
    const server = (path: string) =>
      RpcServer.layer(Old, { disableTracing: true }).pipe(
        Layer.provide(RpcServer.layerProtocolSocketServer),
        Layer.provide(socketServer(path))
      )
    const handlers = Old.toLayer(
      Old.of({
        Info: () => Effect.succeed({ pid: process.pid, conversation_id: id, open: [], latest: 0 }),
        Subscribe: () => Stream.empty,
        Answer: () => Effect.void,
        AnswerAll: () => Effect.void,
        Interrupt: () => Effect.void
      })
    )
    await host(HostPath.of(p.storage, id), server, handlers)
    const info = await Effect.runPromise(
      Effect.scoped(Effect.flatMap(HostClient.connect(HostPath.of(p.storage, id)), (client) => client.Info()))
    )
    expect(info.pid).toBe(process.pid)
    const r = await cli(p, ["conversation", "answer", id])
    expect(r.stderr).toBe("")
    expect(r.stdout).toContain(`(the turn is running: pid ${process.pid})`)
  })
})
