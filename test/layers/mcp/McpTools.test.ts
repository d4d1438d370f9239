// MCP servers (docs/mcp.md): which MCP tools are offered, by name (McpTools.resolve). The
// servers here are plain lists of tool names — name resolution is pure; the
// MCP behaviour itself is tested against server-everything in McpExecutor.test.ts.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as ConfigData from "../../../src/domain/tool/Config.ts"
import * as McpTools from "../../../src/layers/mcp/McpTools.ts"
import type * as McpServer from "../../../src/layers/mcp/McpServer.ts"
import { error } from "../../../src/services/Executor.ts"

const server = (name: string, tools: ReadonlyArray<string>) =>
  ({
    name,
    tools: tools.map((t) => ({ name: t, description: `${t} from ${name}`, inputSchema: { type: "object" } }))
  }) as unknown as McpServer.Connection

const runtime = (
  servers: ReadonlyArray<McpServer.Connection>,
  problems: Array<string> = [],
  failed: ReadonlyArray<string> = []
): McpTools.Runtime => ({
  servers,
  failed,
  onProblem: (m) => void problems.push(m),
  execute: () => Effect.succeed(error("not run here"))
})

const config = (tools: Record<string, unknown>, servers: ReadonlyArray<string> = ["a", "b"]): ConfigData.Config => {
  const decoded = ConfigData.decode({
    mcp: { servers: Object.fromEntries(servers.map((s) => [s, { command: "x" }])) },
    conversation: { tools }
  })
  if (Result.isFailure(decoded)) throw new Error(JSON.stringify(decoded.failure))
  return decoded.success
}

const offered = (r: McpTools.Resolved) =>
  r.tools.map((t) => [t.definition.name, t.serverName, t.definition.description])

describe("McpTools.resolve", () => {
  it("offers each server's tools under their names; a tool table needs no source", () => {
    const r = McpTools.resolve(
      config({ echo: { run: "unattended", description: "Say it back." } }),
      runtime([server("a", ["echo", "sum"])]),
      new Set()
    )
    expect(r.problems).toStrictEqual([])
    expect(offered(r)).toStrictEqual([
      ["echo", "a", "Say it back."],
      ["sum", "a", "sum from a"]
    ])
  })

  it('a name on two servers is a problem naming both; source = "mcp.NAME" picks one', () => {
    const servers = runtime([server("a", ["echo", "sum"]), server("b", ["echo"])])
    const clash = McpTools.resolve(config({}), servers, new Set())
    expect(clash.problems).toStrictEqual([
      {
        path: "conversation.tools.echo",
        message:
          'the tool name "echo" is offered by MCP server "a" and MCP server "b"; pick one with source = "mcp.a" or source = "mcp.b" under [conversation.tools."echo"]'
      }
    ])
    expect(offered(clash)).toStrictEqual([["sum", "a", "sum from a"]])
    const pinned = McpTools.resolve(config({ echo: { source: "mcp.b" } }), servers, new Set())
    expect(pinned.problems).toStrictEqual([])
    expect(offered(pinned)).toStrictEqual([
      ["echo", "b", "echo from b"],
      ["sum", "a", "sum from a"]
    ])
  })

  it("a name shared with a built-in is a problem unless a source picks; a local tool or enable = false hides the MCP one", () => {
    const servers = runtime([server("a", ["read_file", "note", "off"])])
    const builtins = new Set(["read_file"])
    expect(McpTools.resolve(config({}), servers, builtins).problems.map((p) => p.message)).toStrictEqual([
      'the tool name "read_file" is offered by the built-in tools and MCP server "a"; pick one with source = "builtin" or source = "mcp.a" under [conversation.tools."read_file"]'
    ])
    const chosen = McpTools.resolve(
      config({ read_file: { source: "builtin" }, note: { command: "./note.sh" }, off: { enable: false } }),
      servers,
      builtins
    )
    expect(chosen).toStrictEqual({ tools: [], problems: [] })
    expect(offered(McpTools.resolve(config({ read_file: { source: "mcp.a" } }), servers, builtins))).toStrictEqual([
      ["read_file", "a", "read_file from a"],
      ["note", "a", "note from a"],
      ["off", "a", "off from a"]
    ])
  })

  it("a tool pinned to a server that does not offer it is reported, not fatal", () => {
    const problems: Array<string> = []
    const r = McpTools.resolve(
      config({ ghost: { source: "mcp.a" } }),
      runtime([server("a", ["echo"])], problems),
      new Set()
    )
    expect(r.problems).toStrictEqual([])
    expect(problems).toStrictEqual([
      'conversation.tools.ghost: MCP server "a" offers no tool named "ghost" (it offers: echo).'
    ])
  })

  it("mayOffer: a table without source is not a missing built-in when a server offers the name, or a server could not start", () => {
    expect(McpTools.mayOffer(undefined, "echo")).toBe(false)
    expect(McpTools.mayOffer(runtime([server("a", ["echo"])]), "echo")).toBe(true)
    expect(McpTools.mayOffer(runtime([server("a", ["echo"])]), "typo")).toBe(false)
    expect(McpTools.mayOffer(runtime([], [], ["b"]), "typo")).toBe(true)
  })

  it("a tool name models do not accept is left out, with one problem", () => {
    const problems: Array<string> = []
    const r = McpTools.resolve(config({}), runtime([server("a", ["fs.read", "ok"])], problems), new Set())
    expect(offered(r)).toStrictEqual([["ok", "a", "ok from a"]])
    expect(problems).toStrictEqual([
      "MCP server \"a\" offers a tool named \"fs.read\", which models do not accept (letters, digits, '_' and '-', at most 64); it is left out."
    ])
  })
})
