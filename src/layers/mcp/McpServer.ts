/**
 * One MCP server, connected with the official SDK client, v2 (docs/mcp.md):
 * stdio (parley starts `command` under the {@link Supervisor} watchdog)
 * or streamable HTTP (`url`, `headers`).
 *
 * Protocol version (`protocol` in `[mcp.servers.NAME]`, default `auto`): the
 * SDK asks the server with `server/discover` whether it speaks the stateless
 * 2026-07-28 protocol and falls back to the 2025-11-25 `initialize`
 * handshake when it does not. A stdio server is asked in place, not through
 * the short-lived second copy the SDK would start (that doubled start-up:
 * ≈ +0.5 s with server-everything); a server that exits on the unknown
 * request (some 2025 servers do) is started again for `initialize`.
 * `protocol = "2025-11-25"` skips asking, `protocol = "2026-07-28"` insists.
 *
 * The two versions ask questions differently:
 * - **2025-11-25**: the server sends `elicitation/create` while the call is
 *   open. MCP does not say which tool call an elicitation belongs to (over
 *   stdio nothing in the message links them), so parley runs one call per
 *   server at a time ({@link Lock}) and hands every elicitation to the call
 *   in flight ({@link Connection.onElicit}). Calls to different servers, and
 *   to other tools, still run in parallel.
 * - **2026-07-28**: the call itself answers `input_required` with the
 *   requests and an opaque `requestState`; parley retries the call with the
 *   answers ({@link Retry}). Nothing stays open between rounds, so calls to
 *   one server run in parallel and need no lock.
 *
 * An HTTP server that answers 401 with OAuth metadata is signed in to
 * (`McpOAuth`): the person gets the authorization page, parley waits for the
 * loopback callback, exchanges the code and starts again with the tokens.
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
 * server.stateless // false: server-everything speaks 2025-11-25
 * await server.close()
 * ```
 *
 * @since 0.1.0
 */
import type { Client, ElicitResult as SdkElicitResult, Tool, Transport } from "@modelcontextprotocol/client"
import type { ToolResult } from "./Content.ts"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import type { McpServerConfig } from "../../domain/tool/Config.ts"
import * as EnvReference from "../../domain/tool/EnvReference.ts"
import * as ToolEnv from "../../domain/tool/ToolEnv.ts"
import * as McpOAuth from "./McpOAuth.ts"
import * as McpTransport from "./McpTransport.ts"

/** A tool as the server lists it. */
/**
 * An answer to a server's question (elicitation), as MCP shapes it: the
 * SDK's `ElicitResult`, spelled out so that parley's declarations need no
 * MCP SDK (an optional package, docs/decisions.md#optional-peer-dependencies: a consumer without it still
 * typechecks without `skipLibCheck`).
 *
 * @since 0.1.0
 */
export type ElicitResult = {
  readonly action: "accept" | "decline" | "cancel"
  readonly content?: { [key: string]: string | number | boolean | Array<string> }
}

export interface ServerTool {
  readonly name: string
  readonly description: string
  /** Its input schema, without `$schema` (providers and ajv need no dialect marker). */
  readonly inputSchema: Schema.JsonObject
}

/** An `elicitation/create` to answer exactly once: pushed by a 2025 server, or one entry of a 2026 `input_required`. */
export interface Elicited {
  readonly params: unknown
  readonly respond: (result: ElicitResult) => void
  /** Answers with a JSON-RPC error instead (a request parley cannot ask). */
  readonly refuse: (message: string) => void
  /** Aborted when the server withdraws the request (its own timeout, a cancelled call). */
  readonly signal: AbortSignal
}

/** What a 2026-07-28 server asks for instead of a result: requests by key, and the state to send back with the answers. */
export interface InputRequired {
  readonly inputRequests: Readonly<Record<string, unknown>>
  readonly requestState?: string
}

/** A retried call (2026-07-28): the answers under the keys of the server's `inputRequests`, and its `requestState` verbatim. */
export interface Retry {
  readonly inputResponses: Readonly<Record<string, ElicitResult>>
  readonly requestState?: string
}

/** How a `tools/call` came back: its result, or (2026-07-28) a request for input. */
export type Reply =
  | { readonly _tag: "Result"; readonly result: ToolResult }
  | { readonly _tag: "InputRequired"; readonly input: InputRequired }

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
  /** Where `${env:NAME}` is looked up (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>
  /**
   * OAuth for HTTP servers (`McpOAuth`): where the state files go, how the
   * person is sent to sign in (absent: nobody can), how long they may take.
   */
  readonly oauth?: { readonly dir: string; readonly signIn?: (url: URL) => void; readonly timeoutMs?: number }
  /** Stops waiting for a sign-in (an interrupted run). */
  readonly signal?: AbortSignal
}

/** A started server: its tools, its protocol, and how to call and stop it. */
export interface Connection {
  readonly name: string
  readonly tools: ReadonlyArray<ServerTool>
  /** The protocol version agreed with the server (`2026-07-28`, or a 2025 one). */
  readonly protocolVersion: string
  /** 2026-07-28: questions come back as `input_required`; calls need no {@link lock}. */
  readonly stateless: boolean
  /** 2025: held by the call in flight, whose elicitations the server's are. */
  readonly lock: Lock
  /** Receives a 2025 server's elicitations; set by the call that holds {@link lock}. */
  onElicit: ((e: Elicited) => void) | undefined
  /** Calls a tool (again, with `retry`); rejects with the SDK's error (a `ProtocolError`, or the transport's). */
  callTool(
    name: string,
    args: Readonly<Record<string, Schema.Json>>,
    signal: AbortSignal,
    retry?: Retry
  ): Promise<Reply>
  /** Why the server can no longer be used, or `undefined` while it is up. */
  readonly down: () => string | undefined
  /** Stops the server (stdio) or ends the session (HTTP). Safe to call twice. */
  readonly close: () => Promise<void>
}

/** A connection that failed; the message says which server and what to do. */
export class StartError extends Error {}

const withoutDialect = (schema: unknown): Schema.JsonObject => {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return { type: "object", properties: {} }
  const { $schema: _, ...rest } = schema as Record<string, Schema.Json>
  return rest
}

const withTimeout = <A>(promise: Promise<A>, ms: number, what: string): Promise<A> =>
  new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms)
    promise.then(
      (a) => {
        clearTimeout(timer)
        resolve(a)
      },
      (e: unknown) => {
        clearTimeout(timer)
        reject(e)
      }
    )
  })

/** An error's message, with its cause's when it has one (fetch says only "fetch failed"; the cause says why). */
const describeError = (e: unknown): string => {
  if (!(e instanceof Error)) return String(e)
  const cause = e.cause instanceof Error ? e.cause.message : undefined
  return cause === undefined || cause === "" ? e.message : `${e.message} (${cause})`
}

/** The tools parley offers, and the server's own definitions (a 2026 call is sent with its tool's). */
const listTools = async (client: Client): Promise<{ tools: Array<ServerTool>; definitions: Map<string, Tool> }> => {
  const tools: Array<ServerTool> = []
  const definitions = new Map<string, Tool>()
  // Without a cursor the SDK walks every page.
  for (const tool of (await client.listTools()).tools) {
    // A tool that can only run as a task needs the tasks API, which parley does not speak.
    if (tool.execution?.taskSupport === "required") continue
    tools.push({
      name: tool.name,
      description: tool.description ?? tool.title ?? "",
      inputSchema: withoutDialect(tool.inputSchema)
    })
    definitions.set(tool.name, tool)
  }
  return { tools, definitions }
}

/** The request timeout parley gives the SDK: none to speak of (parley times calls itself, and questions can take a person minutes). */
const NO_TIMEOUT_MS = 2 ** 31 - 1

type Sdk = typeof import("@modelcontextprotocol/client")

/** Hands each pushed `elicitation/create` to the call that holds the server; declines it when no call is running. */
const routeElicitations = (client: Client, connection: Connection, sdk: Sdk): void => {
  client.setRequestHandler(
    "elicitation/create",
    (request, ctx) =>
      new Promise<SdkElicitResult>((resolve, reject) => {
        const target = connection.onElicit
        // Nobody to ask: no call of this server is running, so nothing can record the question.
        if (target === undefined) return resolve({ action: "decline" })
        target({
          params: request.params,
          respond: resolve,
          refuse: (message) => reject(new sdk.ProtocolError(sdk.ProtocolErrorCode.InvalidParams, message)),
          signal: ctx.mcpReq.signal
        })
      })
  )
}

/** Where a connection is in its life. */
interface State {
  up: boolean
  closing: boolean
  down: string | undefined
  tools: ReadonlyArray<ServerTool>
  definitions: ReadonlyMap<string, Tool>
}

const callTool =
  (client: Client, sdk: Sdk, state: State): Connection["callTool"] =>
  async (tool, args, signal, retry) => {
    const stateless = client.getProtocolEra() === "modern"
    const definition = state.definitions.get(tool)
    const result = await client.callTool(
      {
        name: tool,
        arguments: { ...args },
        ...(retry !== undefined ? { ...retry, inputResponses: { ...retry.inputResponses } } : {})
      },
      {
        signal,
        timeout: NO_TIMEOUT_MS,
        // 2026: an `input_required` comes back to parley, which records and asks each question itself.
        allowInputRequired: true,
        // The SDK would check an `input_required` against the tool's output schema; parley reads content, not structured output.
        ...(stateless && definition !== undefined ? { toolDefinition: { ...definition, outputSchema: undefined } } : {})
      }
    )
    if (sdk.isInputRequiredResult(result)) {
      return {
        _tag: "InputRequired",
        input: {
          inputRequests: { ...(result.inputRequests ?? {}) },
          ...(result.requestState !== undefined ? { requestState: result.requestState } : {})
        }
      }
    }
    return { _tag: "Result", result }
  }

const makeConnection = (
  name: string,
  config: McpServerConfig,
  client: Client,
  sdk: Sdk,
  raw: Transport,
  state: State
): Connection => ({
  name,
  get tools() {
    return state.tools
  },
  get protocolVersion() {
    return client.getNegotiatedProtocolVersion() ?? ""
  },
  get stateless() {
    return client.getProtocolEra() === "modern"
  },
  lock: new Lock(),
  onElicit: undefined,
  callTool: callTool(client, sdk, state),
  down: () => state.down,
  close: async () => {
    if (state.closing) return
    state.closing = true
    // Ending an HTTP session is a courtesy; a server that is gone must not hold parley up.
    const session = raw as { terminateSession?: () => Promise<void>; sessionId?: string }
    if (config.url !== undefined && session.terminateSession !== undefined && session.sessionId !== undefined) {
      await withTimeout(session.terminateSession(), 1000, "ending the session").catch(() => {})
    }
    await client.close().catch(() => {})
  }
})

/**
 * `env` and `headers` with `${env:NAME}` replaced; a variable that is not
 * set, or a value carrying `$PARLEY_TOKEN`'s value (a copy of the token under
 * another name, contract §8), stops the start with a message naming the key.
 */
const withSecrets = (
  name: string,
  config: McpServerConfig,
  env: Readonly<Record<string, string | undefined>>
): McpServerConfig => {
  // parley's own variables are never handed to a server (a config naming one does not load; this is the last word).
  const lookup = (variable: string) => (ToolEnv.isParleys(variable) ? undefined : env[variable])
  const token = ToolEnv.searchableToken(env)
  const out: { -readonly [K in keyof McpServerConfig]: McpServerConfig[K] } = { ...config }
  for (const key of ["env", "headers"] as const) {
    const table = config[key]
    if (table === undefined) continue
    const expanded = EnvReference.expandAll(table, lookup)
    if (Result.isFailure(expanded)) {
      const { key: entry, name: variable } = expanded.failure
      throw new StartError(
        `MCP server "${name}": ${key}.${entry} names \${env:${variable}}, which is not set in parley's environment.\nIts tools are unavailable in this run; set ${variable} or change [mcp.servers.${name}] in config.toml.`
      )
    }
    const carrier = Object.keys(expanded.success).find((entry) => ToolEnv.carriesToken(expanded.success[entry]!, token))
    if (carrier !== undefined)
      throw new StartError(
        `MCP server "${name}": ${key}.${carrier} carries the value of $${ToolEnv.TOKEN}, which parley never hands to a server.\nIts tools are unavailable in this run; give the server its own credential in [mcp.servers.${name}] in config.toml.`
      )
    out[key] = expanded.success
  }
  return out
}

const saying = (said: string): string => (said === "" ? "" : `; it said:\n${said}`)

type Negotiation = NonNullable<import("@modelcontextprotocol/client").ClientOptions["versionNegotiation"]>

/** The SDK's version negotiation for `protocol` (see the module comment); `legacy` after a server exited on the question. */
const negotiation = (config: McpServerConfig, timeoutMs: number, legacy: boolean): Negotiation => {
  switch (legacy ? "2025-11-25" : (config.protocol ?? "auto")) {
    case "2025-11-25":
      return { mode: "legacy" }
    case "2026-07-28":
      return { mode: { pin: "2026-07-28" } }
    default:
      // A stdio server that ignores the unknown request is a 2025 one: do not wait the whole start-up for it.
      // Over HTTP silence is an outage, not an answer (the SDK fails the start): wait as long as starting may take.
      return {
        mode: "auto",
        probe: { timeoutMs: config.url === undefined ? Math.min(5000, Math.ceil(timeoutMs / 2)) : timeoutMs }
      }
  }
}

/** Why one attempt to start a server failed, with what it printed. */
class Failed {
  constructor(
    readonly error: unknown,
    readonly said: string,
    readonly where: string,
    readonly exited: boolean,
    readonly made?: McpTransport.Made
  ) {}
}

/** One attempt: transport, client, protocol, tools. Cleans up and throws {@link Failed} when it does not work out. */
const open = async (
  sdk: Sdk,
  name: string,
  config: McpServerConfig,
  options: ConnectOptions,
  legacy: boolean
): Promise<Connection> => {
  const made = await McpTransport.make(name, config, {
    root: options.root,
    clientName: options.clientInfo.name,
    ...(options.oauth !== undefined ? { oauth: options.oauth } : {})
  })
  const { transport: raw, stderr, where } = made
  if (options.traceFile !== undefined) McpTransport.trace(raw, options.traceFile, name)
  const client = new sdk.Client(
    { name: options.clientInfo.name, version: options.clientInfo.version },
    {
      capabilities: { elicitation: { form: {}, url: {} } },
      versionNegotiation: negotiation(config, options.timeoutMs, legacy),
      // parley answers `input_required` itself: every question is recorded, and a resumed turn retries with its answers.
      inputRequired: { autoFulfill: false }
    }
  )
  const state: State = { up: false, closing: false, down: undefined, tools: [], definitions: new Map() }
  const connection = makeConnection(name, config, client, sdk, raw, state)
  routeElicitations(client, connection, sdk)
  let exited = false
  client.onclose = () => {
    exited = true
    // Before `up`, a failure to start is reported by `connect` itself.
    if (!state.up || state.closing || state.down !== undefined) return
    state.down = `MCP server "${name}" stopped${saying(stderr())}`
    options.onDown(state.down)
  }
  try {
    await withTimeout(client.connect(raw), options.timeoutMs, "starting it")
    const listed = await withTimeout(listTools(client), options.timeoutMs, "listing its tools")
    state.tools = listed.tools
    state.definitions = listed.definitions
    state.up = true
    // Started without a sign-in: the callback port held for one is let go (a later sign-in listens when it starts).
    made.oauth?.releasePort()
    return connection
  } catch (e) {
    state.closing = true
    // A server that failed to start gets no grace: SIGTERM makes its watchdog stop it at once.
    // The transport's child process, when it has one (stdio): its pid, or null once it failed to spawn.
    const pid = Predicate.hasProperty(raw, "pid") ? raw.pid : undefined
    if (typeof pid === "number") {
      try {
        process.kill(pid, "SIGTERM")
      } catch {
        // Already gone.
      }
    }
    await client.close().catch(() => {})
    throw new Failed(e, stderr(), where, exited || pid === null, made)
  }
}

/** A stdio server that exits when asked about the protocol speaks only 2025: start it again and skip the question. */
const exitedOnTheQuestion = (sdk: Sdk, config: McpServerConfig, e: unknown): boolean =>
  e instanceof Failed &&
  config.url === undefined &&
  (config.protocol ?? "auto") === "auto" &&
  e.exited &&
  e.error instanceof sdk.SdkError &&
  e.error.code === sdk.SdkErrorCode.EraNegotiationFailed

/**
 * The person signs in (the provider sent them to the page when the server
 * answered 401): waits for the callback, exchanges the code for tokens and
 * starts again with them. Anything else is rethrown.
 */
const afterSignIn = async (
  sdk: Sdk,
  e: unknown,
  options: ConnectOptions,
  again: () => Promise<Connection>
): Promise<Connection> => {
  const oauth = e instanceof Failed ? e.made?.oauth : undefined
  if (
    oauth === undefined ||
    !oauth.signingIn ||
    !(e instanceof Failed) ||
    !(e.error instanceof sdk.UnauthorizedError)
  ) {
    oauth?.close()
    throw e
  }
  try {
    const params = await oauth.awaitCallback(options.oauth?.timeoutMs ?? McpOAuth.SIGN_IN_TIMEOUT_MS, options.signal)
    await (e.made!.transport as InstanceType<Sdk["StreamableHTTPClientTransport"]>).finishAuth(params)
  } catch (signIn) {
    throw new Failed(new Error(`signing in failed: ${describeError(signIn)}`), "", e.where, false)
  }
  return again()
}

/**
 * Starts or connects to a server, agrees on the protocol, and lists its
 * tools. Fails with a {@link StartError} whose message names the server and
 * carries what it printed on stderr.
 */
export const connect = async (
  name: string,
  configured: McpServerConfig,
  options: ConnectOptions
): Promise<Connection> => {
  const config = withSecrets(name, configured, options.env ?? process.env)
  const sdk = await import("@modelcontextprotocol/client")
  const attempt = (legacy: boolean) =>
    open(sdk, name, config, options, legacy).catch((e: unknown) =>
      afterSignIn(sdk, e, options, () => open(sdk, name, config, options, legacy))
    )
  try {
    return await attempt(false).catch((e: unknown) => {
      if (exitedOnTheQuestion(sdk, config, e)) return attempt(true)
      throw e
    })
  } catch (e) {
    const { error, said, where } =
      e instanceof Failed ? e : new Failed(e, "", config.url ?? config.command ?? name, false)
    throw new StartError(
      `MCP server "${name}" (${where}) could not be started: ${describeError(error)}${saying(said)}\nIts tools are unavailable in this run; check [mcp.servers.${name}] in config.toml.`
    )
  }
}
