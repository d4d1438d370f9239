// Test support for the MCP tests (not a test file): the real
// @modelcontextprotocol/server-everything (dev dependency), started over stdio
// by parley or over streamable HTTP by the test, and a way to find every
// process a test started so "nothing is left running" can be asserted.
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { repoRoot } from "../../support/Fixtures.ts"

/** server-everything's entry point: `node EVERYTHING stdio | streamableHttp`. */
export const EVERYTHING = path.join(
  repoRoot,
  "node_modules",
  "@modelcontextprotocol",
  "server-everything",
  "dist",
  "index.js"
)

let counter = 0
/** A value for `PARLEY_MCP_TEST` unique to one test: every process started with it can be found. */
export const newMark = (): string => `mcp-${process.pid}-${Date.now()}-${++counter}`

/** `[mcp.servers.NAME]` for server-everything over stdio, marked. */
export const stdioServer = (mark: string) => ({
  command: process.execPath,
  args: [EVERYTHING, "stdio"],
  env: { PARLEY_MCP_TEST: mark }
})

/** The same as TOML. */
export const stdioToml = (name: string, mark: string) =>
  `[mcp.servers.${name}]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(EVERYTHING)}, "stdio"]\nenv = { PARLEY_MCP_TEST = ${JSON.stringify(mark)} }\n`

/** Live (not zombie) processes whose environment holds `PARLEY_MCP_TEST=mark`. */
export const marked = (mark: string): Array<number> => {
  const needle = Buffer.from(`PARLEY_MCP_TEST=${mark}\0`)
  const pids: Array<number> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]
      if (state === "Z" || state === "X") continue
      if (fs.readFileSync(`/proc/${entry}/environ`).includes(needle)) pids.push(Number(entry))
    } catch {
      // gone, or not ours to read
    }
  }
  return pids
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** Polls until no marked process is left (or `ms` passed); returns what is still running. */
export const waitGone = async (mark: string, ms = 10_000): Promise<Array<number>> => {
  const deadline = Date.now() + ms
  for (;;) {
    const left = marked(mark)
    if (left.length === 0 || Date.now() > deadline) return left
    await sleep(25)
  }
}

/** SIGKILLs every marked process (test cleanup). */
export const killMarked = (mark: string): void => {
  for (const pid of marked(mark)) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // gone
    }
  }
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

export interface HttpServer {
  readonly url: string
  readonly child: ChildProcess
  readonly stop: () => Promise<void>
}

/**
 * server-everything in streamableHttp mode on a free port (it binds every
 * interface; the tests only talk to 127.0.0.1), marked like a stdio one.
 */
export const startHttp = async (mark: string): Promise<HttpServer> => {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort()
    const child = spawn(process.execPath, [EVERYTHING, "streamableHttp"], {
      env: { ...process.env, PORT: String(port), PARLEY_MCP_TEST: mark },
      stdio: ["ignore", "ignore", "pipe"]
    })
    const listening = await new Promise<boolean>((resolve) => {
      let err = ""
      child.stderr!.on("data", (d: Buffer) => {
        err += d.toString()
        if (err.includes("listening on port")) resolve(true)
      })
      child.on("exit", () => resolve(false))
    })
    if (listening) {
      return {
        url: `http://127.0.0.1:${port}/mcp`,
        child,
        stop: async () => {
          if (child.exitCode !== null || child.signalCode !== null) return
          const gone = new Promise<void>((r) => child.on("exit", () => r()))
          child.kill("SIGKILL")
          await gone
        }
      }
    }
    // The port was taken between finding and binding it: try another.
    if (attempt >= 3) throw new Error("server-everything (streamableHttp) did not start")
  }
}

/** One line of a `PARLEY_MCP_TRACE` file. */
export interface Traced {
  readonly server: string
  readonly direction: "send" | "receive"
  readonly message: Record<string, unknown>
}

export const readTrace = (file: string): Array<Traced> =>
  fs.existsSync(file)
    ? fs
        .readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as Traced)
    : []

/** The results parley sent back to the server's `elicitation/create` requests, in order. */
export const elicitResults = (trace: ReadonlyArray<Traced>): Array<unknown> => {
  const ids = new Set(
    trace
      .filter((t) => t.direction === "receive" && t.message["method"] === "elicitation/create")
      .map((t) => t.message["id"])
  )
  return trace
    .filter((t) => t.direction === "send" && ids.has(t.message["id"]) && "result" in t.message)
    .map((t) => t.message["result"])
}

/** The text of the server's `tools/call` results, in order. */
export const callResults = (trace: ReadonlyArray<Traced>): Array<string> => {
  const calls = new Set(
    trace.filter((t) => t.direction === "send" && t.message["method"] === "tools/call").map((t) => t.message["id"])
  )
  return trace
    .filter((t) => t.direction === "receive" && calls.has(t.message["id"]) && "result" in t.message)
    .map((t) =>
      ((t.message["result"] as { content?: Array<{ text?: string }> }).content ?? [])
        .map((c) => c.text ?? "")
        .join("\n")
    )
}

/** server-everything's form fields, in schema order, with answers parley can send. */
export const FORM: ReadonlyArray<readonly [string, unknown]> = [
  ["name", "Ada Lovelace"],
  ["check", true],
  ["firstLine", ""],
  ["email", "ada@example.com"],
  ["homepage", "https://ada.dev"],
  ["birthdate", "1815-12-10"],
  ["integer", 7],
  ["number", "3.5"],
  ["untitledSingleSelectEnum", "Joey"],
  ["untitledMultipleSelectEnum", ["Piano", "Drums"]],
  ["titledSingleSelectEnum", "hero-2"],
  ["titledMultipleSelectEnum", "Tuna"],
  ["legacyTitledEnum", "pet-2"]
]

/** What server-everything receives for {@link FORM} (typed values; the blank optional field left out). */
export const ACCEPTED_CONTENT = {
  name: "Ada Lovelace",
  check: true,
  email: "ada@example.com",
  homepage: "https://ada.dev",
  birthdate: "1815-12-10",
  integer: 7,
  number: 3.5,
  untitledSingleSelectEnum: "Joey",
  untitledMultipleSelectEnum: ["Piano", "Drums"],
  titledSingleSelectEnum: "hero-2",
  titledMultipleSelectEnum: ["fish-1"],
  legacyTitledEnum: "pet-2"
}

const tomlValue = (v: unknown): string => (Array.isArray(v) ? `[${v.map(tomlValue).join(", ")}]` : JSON.stringify(v))

/**
 * `[conversation.tools."trigger-elicitation-request"]` answering the form
 * question and every field of {@link FORM} statically, except `except`
 * (those get `target = "assistant"` or nothing).
 */
export const formAnswersToml = (
  options: { readonly except?: ReadonlyArray<string>; readonly toAssistant?: ReadonlyArray<string> } = {}
): string => {
  // A form is the person's unless the tool lets the model fill it in too (docs/decisions.md#mcp-forms-are-the-persons).
  const lines = [
    ...(options.toAssistant !== undefined
      ? [`[conversation.tools."trigger-elicitation-request"]`, `forms = "assistant"`, ""]
      : []),
    `[conversation.tools."trigger-elicitation-request".questions]`,
    "elicitation = { answer = true }"
  ]
  for (const [field, value] of FORM) {
    if (options.toAssistant?.includes(field)) lines.push(`${field} = { target = "assistant" }`)
    else if (!options.except?.includes(field)) lines.push(`${field} = { answer = ${tomlValue(value)} }`)
  }
  return lines.join("\n") + "\n"
}
