/**
 * The MCP servers of a run and the tools they offer (docs/mcp.md; contract §5).
 *
 * Lifecycle: {@link start} connects every enabled `[mcp.servers.NAME]` at
 * once when the executor is built — that is when the tool definitions are
 * first needed (the first model request carries them) — and the run waits
 * for all of them (each bounded by `startup_timeout_ms`, default
 * {@link DEFAULT_STARTUP_TIMEOUT_MS}). A server that fails to start is one
 * message through `onProblem`; its tools are simply not offered. The
 * servers are reused for the whole run and stopped when the scope closes,
 * whatever closes it (normal exit, error, SIGINT/SIGTERM/SIGHUP): open
 * elicitations are answered `cancel`, calls get up to
 * {@link SHUTDOWN_GRACE_MS} to settle, then each client is closed (a stdio
 * server's stdin ends; its watchdog stops it if it does not exit).
 *
 * Names ({@link resolve}): a server's tools are offered under their MCP
 * names. `[conversation.tools."<name>"]` configures them like any tool
 * (no `source` needed); `source = "mcp.NAME"` pins the name to one server.
 * A name offered by two servers, or by a server and a built-in, is a config
 * error naming both, unless a `source` picks one.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import type * as ConfigData from "parley/domain/tool/Config"
 * import * as McpTools from "parley/layers/mcp/McpTools"
 * declare const config: ConfigData.Config
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const mcp = yield* McpTools.start(config, { root: process.cwd(), interactive: false, onProblem: console.error })
 *   return mcp.servers.map((s) => s.name)
 * }))
 * ```
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Schema from "effect/Schema"
import * as ConfigData from "../../domain/tool/Config.ts"
import type { ToolDefinition } from "../../domain/tool/ToolDefinition.ts"
import type { Answers, ExecutionContext, ExecutorResult, ToolCall } from "../../services/Executor.ts"
import { error } from "../../services/Executor.ts"
import * as McpCall from "./McpCall.ts"
import * as McpRound from "./McpRound.ts"
import * as McpServer from "./McpServer.ts"

/** How long a server may take to start and list its tools, unless `startup_timeout_ms` says otherwise. */
export const DEFAULT_STARTUP_TIMEOUT_MS = 10_000

/** Server time one MCP call may take, unless the tool's `timeout_ms` says otherwise (questions do not count). */
export const DEFAULT_CALL_TIMEOUT_MS = 300_000

/** How long stopping waits for calls that were answered `cancel` to finish. */
export const SHUTDOWN_GRACE_MS = 1000

/** How {@link start} runs the servers. */
export interface Options {
  /** The project root: stdio servers run here. */
  readonly root: string
  /** Whether a person is at a terminal (without one, URL requests are declined and forms sent unreviewed unless a call is given `ExecutionContext.approvals`). */
  readonly interactive: boolean
  /** One line per problem: a server that failed to start or stopped, a pinned tool no server offers. */
  readonly onProblem: (message: string) => void
  readonly clientInfo?: { readonly name: string; readonly version: string }
  /** Where to append the JSON-RPC traffic (default `$PARLEY_MCP_TRACE`). */
  readonly traceFile?: string
  /** The storage directory: OAuth state of HTTP servers goes to its `mcp-oauth/` (none without it). */
  readonly storage?: string
  /** Sends the person to an HTTP server's sign-in page (used only when {@link interactive}). */
  readonly signIn?: (server: string, url: URL) => void
}

/** An MCP tool as the executor offers it. */
export interface McpTool {
  readonly definition: ToolDefinition
  readonly serverName: string
}

/** The connected servers of a run. */
export interface Runtime {
  readonly servers: ReadonlyArray<McpServer.Connection>
  /** Where problems found later go (see {@link Options.onProblem}). */
  readonly onProblem: (message: string) => void
  /** Servers that were configured but could not be started (their tool names are unknown). */
  readonly failed: ReadonlyArray<string>
  /** Runs one call of `tool` (arguments already validated); see `McpCall.ts`. */
  readonly execute: (
    tool: McpTool,
    call: ToolCall,
    args: Readonly<Record<string, Schema.Json>>,
    answers: Answers,
    context: ExecutionContext
  ) => Effect.Effect<ExecutorResult>
}

/** OAuth for HTTP servers: state under the storage directory, and the person sent to sign in when there is one. */
const oauthOf = (name: string, options: Options) =>
  options.storage === undefined
    ? undefined
    : {
        dir: path.join(options.storage, "mcp-oauth"),
        ...(options.interactive && options.signIn !== undefined
          ? { signIn: (url: URL) => options.signIn!(name, url) }
          : {})
      }

const connectOne = (name: string, config: ConfigData.McpServerConfig, options: Options) =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function* () {
      const abort = new AbortController()
      const oauth = oauthOf(name, options)
      const started = McpServer.connect(name, config, {
        root: options.root,
        clientInfo: options.clientInfo ?? { name: "parley", version: "0.1.0" },
        timeoutMs: config.startup_timeout_ms ?? DEFAULT_STARTUP_TIMEOUT_MS,
        onDown: (reason) => options.onProblem(`${reason}\nIts tools are unavailable for the rest of this run.`),
        signal: abort.signal,
        ...(oauth !== undefined ? { oauth } : {}),
        ...(options.traceFile !== undefined ? { traceFile: options.traceFile } : {})
      }).then(
        (connection) => ({ name, connection }) as const,
        (e: unknown) => ({ name, problem: e instanceof Error ? e.message : String(e) }) as const
      )
      // Interrupted while starting (Ctrl-C during a sign-in): stop waiting for the person, and stop what did start.
      const result = yield* restore(Effect.promise(() => started)).pipe(
        Effect.onInterrupt(() =>
          Effect.promise(async () => {
            abort.abort()
            const settled = await started
            if ("connection" in settled) await settled.connection.close()
          })
        )
      )
      yield* Effect.addFinalizer(() =>
        "connection" in result ? Effect.promise(() => result.connection.close()) : Effect.void
      )
      return result
    })
  )

/** Waits for the lock of `server`; an interrupt while waiting withdraws the request. */
const acquire = (server: McpServer.Connection): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    let cancelled = false
    const withdraw = server.lock.acquire(() => {
      // Granted after the wait was interrupted: hand the lock straight on.
      if (cancelled) server.lock.release()
      else resume(Effect.void)
    })
    return Effect.sync(() => {
      cancelled = true
      withdraw()
    })
  })

const within = (promise: Promise<unknown>, ms: number): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    void promise.then(() => {
      clearTimeout(timer)
      resolve()
    })
  })

/**
 * Starts every enabled server of `config` in parallel, in the current
 * scope: closing the scope stops them (see the module comment).
 */
export const start = (config: ConfigData.Config, options: Options): Effect.Effect<Runtime, never, Scope.Scope> =>
  Effect.gen(function* () {
    const traceFile = options.traceFile ?? process.env["PARLEY_MCP_TRACE"]
    const opts: Options = traceFile === undefined || traceFile === "" ? options : { ...options, traceFile }
    const started = yield* Effect.forEach(
      ConfigData.mcpServers(config),
      ([name, server]) => connectOne(name, server, opts),
      { concurrency: "unbounded" }
    )
    const servers: Array<McpServer.Connection> = []
    const failed: Array<string> = []
    for (const s of started) {
      if ("connection" in s) servers.push(s.connection)
      else {
        failed.push(s.name)
        options.onProblem(s.problem)
      }
    }
    const calls = new Map<string, McpCall.LiveCall>()
    // Runs before the servers are closed (finalizers run in reverse order).
    yield* Effect.addFinalizer(() =>
      Effect.promise(() => {
        const live = [...calls.values()]
        for (const call of live) McpCall.abandon(call)
        return within(Promise.all(live.map((c) => c.settled)), SHUTDOWN_GRACE_MS)
      })
    )
    const byName = new Map(servers.map((s) => [s.name, s] as const))
    const execute: Runtime["execute"] = (tool, call, args, answers, context) =>
      Effect.suspend(() => {
        const key = `${context.conversationId}/${call.id}`
        const live = calls.get(key)
        if (live !== undefined) return McpCall.run(live, answers, context.approvals === true)
        const server = byName.get(tool.serverName)!
        const down = server.down()
        if (down !== undefined) return Effect.succeed(error(`Tool '${call.name}' is unavailable: ${down}.`))
        const spec: McpCall.CallSpec = {
          server,
          serverName: server.name,
          tool: call.name,
          args,
          timeoutMs: ConfigData.toolConfig(config, call.name)?.timeout_ms ?? DEFAULT_CALL_TIMEOUT_MS,
          interactive: options.interactive,
          maxRounds: ConfigData.maxRounds(config, call.name),
          formsExclusive: ConfigData.formsTo(config, call.name, server.name) === "person"
        }
        return Effect.uninterruptibleMask((restore) =>
          Effect.gen(function* () {
            // A 2025 server's elicitations belong to the call in flight: one at a time.
            if (!server.stateless) yield* restore(acquire(server))
            const started = McpCall.start(
              spec,
              answers,
              () => calls.delete(key),
              McpRound.fromState(context.resume, server.name)
            )
            calls.set(key, started)
            return yield* restore(McpCall.run(started, answers, context.approvals === true))
          })
        )
      })
    return { servers, failed, execute, onProblem: options.onProblem }
  })

/** A config problem at a key path (as `ExecutorLive` reports them). */
export interface Problem {
  readonly path: string
  readonly message: string
}

/** The MCP tools to offer, and the config problems found on the way. */
export interface Resolved {
  readonly tools: ReadonlyArray<McpTool>
  readonly problems: ReadonlyArray<Problem>
}

/** Tool names the Anthropic and OpenAI APIs accept. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/

const toolPath = (name: string) => ConfigData.formatPath(["conversation", "tools", name])

/** Whether a configured tool table explicitly belongs to a built-in or local tool. */
const claimedElsewhere = (tool: ConfigData.ToolConfig | undefined): boolean =>
  tool !== undefined && (tool.source === "local" || tool.source === "builtin" || tool.command !== undefined)

/**
 * Which MCP tools the executor offers, given the built-ins it already
 * offers. A tool table disabled with `enable = false`, or claimed by a
 * built-in or local tool, hides the MCP tool of that name.
 */
export const resolve = (config: ConfigData.Config, runtime: Runtime, builtins: ReadonlySet<string>): Resolved => {
  const offers = new Map<string, Array<{ server: McpServer.Connection; tool: McpServer.ServerTool }>>()
  for (const server of runtime.servers) {
    for (const tool of server.tools) {
      if (!TOOL_NAME.test(tool.name)) {
        runtime.onProblem(
          `MCP server "${server.name}" offers a tool named ${JSON.stringify(tool.name)}, which models do not accept (letters, digits, '_' and '-', at most 64); it is left out.`
        )
        continue
      }
      offers.set(tool.name, [...(offers.get(tool.name) ?? []), { server, tool }])
    }
  }
  const tools: Array<McpTool> = []
  const problems: Array<Problem> = []
  for (const [name, offered] of offers) {
    const configured = ConfigData.toolConfig(config, name)
    if (configured?.enable === false || claimedElsewhere(configured)) continue
    const pinned = ConfigData.pinnedServer(configured)
    const candidates = pinned === undefined ? offered : offered.filter((o) => o.server.name === pinned)
    if (candidates.length === 0) continue
    if (pinned === undefined && (candidates.length > 1 || builtins.has(name))) {
      const who = [
        ...(builtins.has(name) ? ["the built-in tools"] : []),
        ...candidates.map((c) => `MCP server "${c.server.name}"`)
      ]
      const choices = [
        ...(builtins.has(name) ? [`source = "builtin"`] : []),
        ...candidates.map((c) => `source = "mcp.${c.server.name}"`)
      ]
      problems.push({
        path: toolPath(name),
        message: `the tool name "${name}" is offered by ${who.join(" and ")}; pick one with ${choices.join(" or ")} under [conversation.tools.${JSON.stringify(name)}]`
      })
      continue
    }
    const { server, tool } = candidates[0]!
    tools.push({
      serverName: server.name,
      definition: { name, description: configured?.description ?? tool.description, parameters: tool.inputSchema }
    })
  }
  for (const [name, tool] of ConfigData.configuredTools(config)) {
    const pinned = ConfigData.pinnedServer(tool)
    const server = runtime.servers.find((s) => s.name === pinned)
    if (
      pinned !== undefined &&
      server !== undefined &&
      !server.tools.some((t) => t.name === name) &&
      tool.enable !== false
    ) {
      runtime.onProblem(
        `${toolPath(name)}: MCP server "${pinned}" offers no tool named "${name}" (it offers: ${server.tools.map((t) => t.name).join(", ") || "none"}).`
      )
    }
  }
  return { tools, problems }
}

/** Whether a tool table without `source` or `command` may be for an MCP tool (so it is not a missing built-in). */
export const mayOffer = (runtime: Runtime | undefined, name: string): boolean =>
  runtime !== undefined &&
  (runtime.failed.length > 0 || runtime.servers.some((s) => s.tools.some((t) => t.name === name)))
