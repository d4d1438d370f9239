/**
 * One MCP server, connected with the official SDK client (issue 13): stdio
 * (parley starts `command` under the {@link Supervisor} watchdog) or
 * streamable HTTP (`url`, `headers`).
 *
 * The client declares the elicitation capability (form and URL mode) and
 * hands every `elicitation/create` to whoever holds the server's {@link Lock}:
 * MCP does not say which tool call an elicitation belongs to (over stdio
 * nothing in the message links them), so parley runs one call per server at
 * a time and the call in flight is the one that asked. Calls to different
 * servers, and to other tools, still run in parallel.
 *
 * The SDK is imported on first use, so runs without MCP servers never load it.
 * `PARLEY_MCP_TRACE=FILE` appends every JSON-RPC message, both ways, to FILE
 * (one JSON object a line) for debugging a server.
 *
 * @example
 * ```ts
 * import * as McpServer from "parley/layers/mcp/McpServer"
 * const server = await McpServer.connect("everything", { command: "node", args: ["index.js", "stdio"] }, {
 *   root: process.cwd(), clientInfo: { name: "parley", version: "0.1.0" }, timeoutMs: 10_000, onDown: () => {}
 * })
 * server.tools.map((t) => t.name) // ["echo", "get-sum", …]
 * await server.close()
 * ```
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { CallToolResult, ElicitResult, JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import type * as Schema from "effect/Schema"
import type { McpServerConfig } from "../../domain/tool/Config.ts"
import * as Supervisor from "./Supervisor.ts"

/** A tool as the server lists it. */
export interface ServerTool {
  readonly name: string
  readonly description: string
  /** Its input schema, without `$schema` (providers and ajv need no dialect marker). */
  readonly inputSchema: Schema.JsonObject
}

/** An `elicitation/create` the server sent; answer it exactly once. */
export interface Elicited {
  readonly params: unknown
  readonly respond: (result: ElicitResult) => void
  /** Answers with a JSON-RPC error instead (a request parley cannot ask). */
  readonly refuse: (message: string) => void
  /** Aborted when the server withdraws the request (its own timeout, a cancelled call). */
  readonly signal: AbortSignal
}

/** First come, first served: one tool call per server at a time. */
export class Lock {
  private busy = false
  private readonly waiters: Array<() => void> = []

  /** Calls `granted` once the lock is this caller's; the returned function withdraws a waiting request. */
  acquire(granted: () => void): () => void {
    if (!this.busy) {
      this.busy = true
      granted()
      return () => {}
    }
    this.waiters.push(granted)
    return () => {
      const i = this.waiters.indexOf(granted)
      if (i >= 0) this.waiters.splice(i, 1)
    }
  }

  release(): void {
    const next = this.waiters.shift()
    if (next === undefined) this.busy = false
    else next()
  }
}

/** How {@link connect} starts a server. */
export interface ConnectOptions {
  /** The project root: a stdio server's working directory (or what its `cwd` is relative to). */
  readonly root: string
  readonly clientInfo: { readonly name: string; readonly version: string }
  /** How long starting and listing tools may take. */
  readonly timeoutMs: number
  /** Called once if the server goes away while parley still needs it. */
  readonly onDown: (reason: string) => void
  /** Append the JSON-RPC traffic to this file. */
  readonly traceFile?: string
}

/** A started server: its tools, its lock, and how to call and stop it. */
export interface Connection {
  readonly name: string
  readonly tools: ReadonlyArray<ServerTool>
  readonly lock: Lock
  /** Receives the server's elicitations; set by the call that holds {@link lock}. */
  onElicit: ((e: Elicited) => void) | undefined
  /** Calls a tool; rejects with the SDK's error (an `McpError`, or the transport's). */
  callTool(name: string, args: Readonly<Record<string, Schema.Json>>, signal: AbortSignal): Promise<CallToolResult>
  /** Why the server can no longer be used, or `undefined` while it is up. */
  readonly down: () => string | undefined
  /** Stops the server (stdio) or ends the session (HTTP). Safe to call twice. */
  readonly close: () => Promise<void>
}

/** A connection that failed; the message says which server and what to do. */
export class StartError extends Error {}

/** The last `max` bytes written to a stream, for messages about a dead server. */
const tail = (max = 2000) => {
  let text = ""
  return {
    push: (chunk: Buffer | string) => {
      text = (text + chunk.toString()).slice(-max)
    },
    get: () => text.trim()
  }
}

const traced = (inner: Transport, file: string, server: string): Transport => {
  const log = (direction: "send" | "receive", message: JSONRPCMessage) =>
    fs.appendFileSync(file, JSON.stringify({ at: new Date().toISOString(), server, direction, message }) + "\n")
  const outer: Transport = {
    start: () => inner.start(),
    send: (message, options) => {
      log("send", message)
      return inner.send(message, options)
    },
    close: () => inner.close(),
    get sessionId() {
      return inner.sessionId
    },
    ...(inner.setProtocolVersion !== undefined ? { setProtocolVersion: (v: string) => inner.setProtocolVersion!(v) } : {})
  }
  inner.onmessage = (message, extra) => {
    log("receive", message)
    outer.onmessage?.(message, extra)
  }
  inner.onclose = () => outer.onclose?.()
  inner.onerror = (e) => outer.onerror?.(e)
  return outer
}

const withoutDialect = (schema: unknown): Schema.JsonObject => {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return { type: "object", properties: {} }
  const { $schema: _, ...rest } = schema as Record<string, Schema.Json>
  return rest
}

const withTimeout = <A>(promise: Promise<A>, ms: number, what: string): Promise<A> =>
  new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms)
    promise.then((a) => (clearTimeout(timer), resolve(a)), (e: unknown) => (clearTimeout(timer), reject(e)))
  })

const describeError = (e: unknown): string => (e instanceof Error ? e.message : String(e))

interface Transported {
  readonly transport: Transport
  readonly stderr: () => string
  /** What to say about the server's end: its stderr, for a stdio server. */
  readonly where: string
}

const makeTransport = async (config: McpServerConfig, options: ConnectOptions): Promise<Transported> => {
  if (config.url !== undefined) {
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js")
    const transport = new StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers: { ...(config.headers ?? {}) } },
      // A server that drops the SSE stream is reported, not retried for ever.
      reconnectionOptions: { initialReconnectionDelay: 200, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 2, maxRetries: 2 }
    })
    return { transport, stderr: () => "", where: config.url }
  }
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js")
  const wrapped = Supervisor.wrap(config.command!, config.args ?? [])
  const transport = new StdioClientTransport({
    command: wrapped.command,
    args: wrapped.args,
    ...(config.env !== undefined ? { env: { ...config.env } } : {}),
    cwd: config.cwd === undefined ? options.root : path.resolve(options.root, config.cwd),
    stderr: "pipe"
  })
  const errors = tail()
  transport.stderr?.on("data", (chunk: Buffer) => errors.push(chunk))
  return { transport, stderr: errors.get, where: [config.command, ...(config.args ?? [])].join(" ") }
}

const listTools = async (client: Client): Promise<Array<ServerTool>> => {
  const tools: Array<ServerTool> = []
  let cursor: string | undefined
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor })
    for (const tool of page.tools) {
      // A tool that can only run as a task needs the tasks API, which parley does not speak.
      if (tool.execution?.taskSupport === "required") continue
      tools.push({ name: tool.name, description: tool.description ?? tool.title ?? "", inputSchema: withoutDialect(tool.inputSchema) })
    }
    cursor = page.nextCursor
  } while (cursor !== undefined)
  return tools
}

/** The request timeout parley gives the SDK: none to speak of (parley times calls itself, and questions can take a person minutes). */
const NO_TIMEOUT_MS = 2 ** 31 - 1

type SdkTypes = typeof import("@modelcontextprotocol/sdk/types.js")

/** Hands each `elicitation/create` to the call that holds the server; declines it when no call is running. */
const routeElicitations = (client: Client, connection: Connection, types: SdkTypes): void => {
  client.setRequestHandler(types.ElicitRequestSchema, (request, extra) =>
    new Promise<ElicitResult>((resolve, reject) => {
      const target = connection.onElicit
      // Nobody to ask: no call of this server is running, so nothing can record the question.
      if (target === undefined) return resolve({ action: "decline" })
      target({
        params: request.params,
        respond: resolve,
        refuse: (message) => reject(new types.McpError(types.ErrorCode.InvalidParams, message)),
        signal: extra.signal
      })
    }))
}

/** Where a connection is in its life. */
interface State {
  up: boolean
  closing: boolean
  down: string | undefined
  tools: ReadonlyArray<ServerTool>
}

const makeConnection = (name: string, config: McpServerConfig, client: Client, raw: Transport, state: State): Connection => ({
  name,
  get tools() {
    return state.tools
  },
  lock: new Lock(),
  onElicit: undefined,
  callTool: (tool, args, signal) =>
    client.callTool({ name: tool, arguments: { ...args } }, undefined, { signal, timeout: NO_TIMEOUT_MS }) as Promise<CallToolResult>,
  down: () => state.down,
  close: async () => {
    if (state.closing) return
    state.closing = true
    // Ending an HTTP session is a courtesy; a server that is gone must not hold parley up.
    const session = raw as { terminateSession?: () => Promise<void> }
    if (config.url !== undefined && session.terminateSession !== undefined) {
      await withTimeout(session.terminateSession(), 1000, "ending the session").catch(() => {})
    }
    await client.close().catch(() => {})
  }
})

const saying = (said: string): string => (said === "" ? "" : `; it said:\n${said}`)

/**
 * Starts or connects to a server, initializes the session and lists its
 * tools. Fails with a {@link StartError} whose message names the server and
 * carries what it printed on stderr.
 */
export const connect = async (name: string, config: McpServerConfig, options: ConnectOptions): Promise<Connection> => {
  // The transport (a stdio server starting) and the client code load in parallel.
  const [{ Client: ClientClass }, types, { transport: raw, stderr, where }] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/types.js"),
    makeTransport(config, options)
  ])
  const transport = options.traceFile === undefined ? raw : traced(raw, options.traceFile, name)
  const client = new ClientClass({ name: options.clientInfo.name, version: options.clientInfo.version }, {
    capabilities: { elicitation: { form: {}, url: {} } }
  })
  const state: State = { up: false, closing: false, down: undefined, tools: [] }
  const connection = makeConnection(name, config, client, raw, state)
  routeElicitations(client, connection, types)
  client.onclose = () => {
    // Before `up`, a failure to start is reported by `connect` itself.
    if (!state.up || state.closing || state.down !== undefined) return
    state.down = `MCP server "${name}" stopped${saying(stderr())}`
    options.onDown(state.down)
  }
  try {
    await withTimeout(client.connect(transport), options.timeoutMs, "starting it")
    state.tools = await withTimeout(listTools(client), options.timeoutMs, "listing its tools")
    state.up = true
  } catch (e) {
    state.closing = true
    // A server that failed to start gets no grace: SIGTERM makes its watchdog stop it at once.
    const pid = (raw as { pid?: number | null }).pid
    if (typeof pid === "number") {
      try {
        process.kill(pid, "SIGTERM")
      } catch {
        // Already gone.
      }
    }
    await client.close().catch(() => {})
    throw new StartError(
      `MCP server "${name}" (${where}) could not be started: ${describeError(e)}${saying(stderr())}\nIts tools are unavailable in this run; check [mcp.servers.${name}] in config.toml.`
    )
  }
  return connection
}
