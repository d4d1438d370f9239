// What a tool can read of parley's environment, from outside: the built
// binary runs a real turn with the scripted model while parley has
// PARLEY_TOKEN, PARLEY_STORAGE, PARLEY_SCRIPT, PARLEY_MCP_TRACE and a copy
// of the token under another name set. Local tools (`print_env.mjs`) and a
// stdio MCP server (`env-server.mjs`) write or answer their whole
// environment: no PARLEY_* variable and no trace of the token is in it;
// `env = "clear"` + `env_keep` + `env_set` give exactly that set (plus what
// `sh` itself sets, measured here); config naming parley's variables does
// not load.
import { spawnSync } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, afterEach, describe, expect, it } from "@effect/vitest"
import { bundle, type RunResult } from "../support/Cli.ts"
import * as Cluster from "../support/Cluster.ts"
import { repoRoot, tempDir } from "../support/Fixtures.ts"
import { freshDatabase, type PgServer, pgSkip, startPg } from "../support/Pg.ts"
import { makeProject, persisted, type Project, writeScript } from "../support/Project.ts"

const NODE = process.execPath
const PRINT_ENV = path.join(repoRoot, "test", "fixtures", "tools", "print_env.mjs")
const ENV_SERVER = path.join(repoRoot, "test", "layers", "mcp", "fixtures", "env-server.mjs")
const tool = (file: string) => JSON.stringify(`"${NODE}" "${PRINT_ENV}" ${file}`)

const CONFIG = `
[conversation.tools.inherited]
command = ${tool("inherited.json")}
run = "unattended"

[conversation.tools.inherit_set]
command = ${tool("inherit_set.json")}
run = "unattended"
env_set = { KEEP_ME = "replaced", ADDED = "added" }

[conversation.tools.cleared]
command = ${tool("cleared.json")}
run = "unattended"
env = "clear"
env_keep = ["KEEP_ME", "NOT_SET_ANYWHERE"]
env_set = { SET_ME = "set", FROM_PARENT = "\${env:SOURCE_VAR}" }

[mcp.servers.envsrv]
command = ${JSON.stringify(NODE)}
args = [${JSON.stringify(ENV_SERVER)}]
env = { GIVEN = "\${env:SOURCE_VAR}" }

[conversation.tools.environment]
run = "unattended"
`

/**
 * Runs this worktree's bundle (not `Cli.binary`: that link lives in
 * node_modules, which may be shared with another checkout, and resolves
 * to that checkout's bundle).
 */
const runParley = (
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env: Record<string, string | undefined> }
): RunResult => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries({ ...process.env, ...options.env }))
    if (value !== undefined) env[name] = value
  const r = spawnSync(NODE, [bundle, ...args], { cwd: options.cwd, env, input: "", encoding: "utf8", timeout: 60_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

const projects: Array<string> = []
afterEach(() => {
  for (const d of projects.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})

const project = (config: string): Project => {
  const p = makeProject()
  projects.push(p.root)
  fs.writeFileSync(path.join(p.storage, "config.toml"), config)
  return p
}

/** parley's environment for a run: the test's, with every PARLEY_* of its own replaced by these. */
const parleyEnv = (p: Project, token: string, script: string): Record<string, string | undefined> => {
  const env: Record<string, string | undefined> = {}
  for (const name of Object.keys(process.env)) if (name.startsWith("PARLEY_")) env[name] = undefined
  return {
    ...env,
    PARLEY_TOKEN: token,
    PARLEY_STORAGE: p.storage,
    PARLEY_SCRIPT: script,
    PARLEY_MCP_TRACE: path.join(p.root, "trace.jsonl"),
    PARLEY_SOMETHING_NEW: "parley's too",
    COPY_OF_TOKEN: `Bearer ${token}`,
    OPENAI_API_KEY: "sk-test-inherited",
    KEEP_ME: "kept",
    SOURCE_VAR: "from-parent"
  }
}

/** Every way the dump could hold parley's secrets or variables: names starting PARLEY_, the token's value anywhere. */
const leaks = (dump: Record<string, string>, token: string): Array<string> => [
  ...Object.keys(dump).filter((name) => name.startsWith("PARLEY_")),
  ...Object.entries(dump)
    .filter(([name, value]) => name.includes(token) || value.includes(token))
    .map(([name]) => `${name} holds the token`)
]

const readDump = (p: Project, file: string): Record<string, string> =>
  JSON.parse(fs.readFileSync(path.join(p.root, file), "utf8"))

/** The variables `sh -c` and node add on their own to an empty environment (PWD, for dash): measured, not assumed. */
const shellAdds = (p: Project): Array<string> => {
  const r = spawnSync("sh", ["-c", `"${NODE}" "${PRINT_ENV}" baseline.json`], { cwd: p.root, env: {} })
  expect(r.status).toBe(0)
  return Object.keys(readDump(p, "baseline.json"))
}

describe("what a tool inherits", () => {
  it("no local tool nor stdio MCP server gets a PARLEY_* variable or the token; clear/keep/set are exact", () => {
    const p = project(CONFIG)
    const token = crypto.randomBytes(32).toString("hex")
    const script = writeScript(p, "s.json", [
      {
        message: "Reading the environment.",
        tool_calls: [
          { id: "c1", name: "inherited", arguments: {} },
          { id: "c2", name: "inherit_set", arguments: {} },
          { id: "c3", name: "cleared", arguments: {} },
          { id: "c4", name: "environment", arguments: {} }
        ]
      },
      { message: "Done." }
    ])
    const r = runParley(["query", "--model", "scripted", "read the environment"], {
      cwd: p.root,
      env: parleyEnv(p, token, script)
    })
    expect({ code: r.code, stderr: r.stderr }).toMatchObject({ code: 0 })

    // The default (inherit): parley's environment, less its own variables and the token's copy.
    const inherited = readDump(p, "inherited.json")
    expect(leaks(inherited, token)).toStrictEqual([])
    expect(inherited).toMatchObject({ OPENAI_API_KEY: "sk-test-inherited", KEEP_ME: "kept", SOURCE_VAR: "from-parent" })
    expect(inherited["PATH"]).toBe(process.env["PATH"])
    expect("COPY_OF_TOKEN" in inherited).toBe(false)

    // inherit + env_set: set over the inherited ones.
    const set = readDump(p, "inherit_set.json")
    expect(leaks(set, token)).toStrictEqual([])
    expect(set).toMatchObject({ KEEP_ME: "replaced", ADDED: "added", OPENAI_API_KEY: "sk-test-inherited" })

    // clear: env_keep (those set) and env_set, and only what sh/node add themselves.
    const cleared = readDump(p, "cleared.json")
    const adds = shellAdds(p)
    expect(adds.every((name) => !name.startsWith("PARLEY_"))).toBe(true)
    expect(Object.keys(cleared).sort()).toStrictEqual(
      [...new Set([...adds, "KEEP_ME", "SET_ME", "FROM_PARENT"])].sort()
    )
    expect(cleared).toMatchObject({ KEEP_ME: "kept", SET_ME: "set", FROM_PARENT: "from-parent" })

    // The stdio MCP server: the SDK's few variables and its own env map, as documented.
    const response = persisted(p).find((e) => e.type === "tool_call_response" && e["id"] === "c4")
    expect(response?.["is_error"]).toBe(false)
    const content = Buffer.from(String(response?.["content"]), "base64").toString("utf8")
    expect(content.includes(token)).toBe(false)
    const served = JSON.parse(JSON.parse(content)[0]?.text ?? content) as Record<string, string>
    expect(leaks(served, token)).toStrictEqual([])
    const sdk = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"].filter((n) => process.env[n] !== undefined)
    expect(Object.keys(served).sort()).toStrictEqual([...sdk, "GIVEN"].sort())
    expect(served["GIVEN"]).toBe("from-parent")

    // Nothing parley recorded or traced carries the token either.
    for (const file of ["trace.jsonl"])
      expect(fs.readFileSync(path.join(p.root, file), "utf8").includes(token)).toBe(false)
  })

  it("config naming parley's variables, or bad env values, does not load: the error names tool and key", () => {
    const p = project(`
[conversation.tools.a]
command = "true"
env_set = { TOKEN = "\${env:PARLEY_TOKEN}", PARLEY_STORAGE = "/x" }

[conversation.tools.b]
command = "true"
env = "foo"
env_keep = "PATH"
env_set = { N = 3 }

[mcp.servers.s]
command = "node"
env = { T = "\${env:PARLEY_TOKEN}" }
`)
    const script = writeScript(p, "s.json", [{ message: "never" }])
    const r = runParley(["query", "--model", "scripted", "hi"], {
      cwd: p.root,
      env: parleyEnv(p, crypto.randomBytes(32).toString("hex"), script)
    })
    expect(r.code).not.toBe(0)
    for (const line of [
      "conversation.tools.a.env_set.TOKEN: ${env:PARLEY_TOKEN} names parley's own variable",
      "conversation.tools.a.env_set.PARLEY_STORAGE: PARLEY_STORAGE is parley's own variable",
      'conversation.tools.b.env: expected "inherit" | "clear", got "foo"',
      'conversation.tools.b.env_keep: expected array, got "PATH"',
      "conversation.tools.b.env_set.N: expected string, got 3",
      "mcp.servers.s.env.T: ${env:PARLEY_TOKEN} names parley's own variable"
    ])
      expect(r.stderr).toContain(line)
  })
})

describe.skipIf(pgSkip !== undefined)("what a cluster turn's tool inherits", () => {
  let pg: PgServer | undefined
  let cluster: Cluster.Cluster | undefined
  afterAll(async () => {
    await cluster?.stop()
    pg?.stop()
  }, 60_000)

  it("a runner has $PARLEY_TOKEN; the tool its turn runs does not (nor any PARLEY_* variable)", async () => {
    pg = await startPg()
    // The harness runs its tool as `<python> deferrable.py`: this "python" writes its environment first.
    const dir = tempDir("parley-cluster-env-")
    projects.push(dir)
    const wrapper = path.join(dir, "python-printing-env")
    fs.writeFileSync(
      wrapper,
      `#!/bin/sh\n"${NODE}" "${PRINT_ENV}" cluster-tool-env.json > /dev/null\nexec python3 "$@"\n`,
      {
        mode: 0o755
      }
    )
    cluster = await Cluster.project(freshDatabase(pg), { PARLEY_SOMETHING_NEW: "parley's too" }, bundle, wrapper)
    const runner = await cluster.runner()
    const created = await runner.post("/api/conversations", { message: "deploy c1" })
    expect(created.status).toBeLessThan(300)
    const dump = path.join(cluster.root, "cluster-tool-env.json")
    const deadline = Date.now() + 30_000
    while (!fs.existsSync(dump) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    const env = JSON.parse(fs.readFileSync(dump, "utf8")) as Record<string, string>
    expect(leaks(env, Cluster.TOKEN)).toStrictEqual([])
    expect(env["OPENAI_API_KEY"]).toBe("sk-test")
  }, 120_000)
})
