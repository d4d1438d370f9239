/**
 * The SDK transport to one MCP server (docs/mcp.md): stdio under the
 * {@link Supervisor} watchdog, or streamable HTTP with the configured
 * headers and, unless they carry their own `Authorization`, the OAuth
 * provider of `McpOAuth` (a server that answers 401 with OAuth metadata is
 * signed in to). `PARLEY_MCP_TRACE` tracing is {@link trace}.
 *
 * @example
 * ```ts
 * import * as McpTransport from "parley/layers/mcp/McpTransport"
 * const made = await McpTransport.make("everything", { command: "node", args: ["index.js", "stdio"] }, { root: process.cwd() })
 * made.where // "node index.js stdio"
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client"
import * as JsonText from "../../domain/storage/JsonText.ts"
import type { McpServerConfig } from "../../domain/tool/Config.ts"
import * as McpOAuth from "./McpOAuth.ts"
import * as Supervisor from "./Supervisor.ts"
import * as ErrorCode from "../ErrorCode.ts"

/** What {@link make} needs beyond the server's config. */
export interface Options {
  /** A stdio server's working directory (or what its `cwd` is relative to). */
  readonly root: string
  /** OAuth for HTTP servers: where the state files go, and how the person is sent to sign in (absent: nobody can). */
  readonly oauth?: { readonly dir: string; readonly signIn?: (url: URL) => void }
  readonly clientName?: string
}

/** A transport, and what to say about the server if it fails. */
export interface Made {
  readonly transport: Transport
  /** What a stdio server printed on stderr (its last 2000 bytes). */
  readonly stderr: () => string
  /** The server as the person configured it: its URL or command line. */
  readonly where: string
  /** The OAuth provider of an HTTP server. */
  readonly oauth?: McpOAuth.FileProvider
}

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

/** How a kept-alive connection the server has just dropped fails a request sent on it. */
const DROPPED = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE"])

/**
 * `fetch`, once more when the connection turns out closed before any answer
 * came ("other side closed", a reset): the server dropped the idle
 * kept-alive connection just as parley reused it (Node servers drop them
 * after 5 s). Seen under load with the conformance suite's servers. A
 * server that is really gone fails the second try as well (refused).
 */
export const retryDroppedConnection =
  (inner: typeof fetch): typeof fetch =>
  async (input, init) => {
    try {
      return await inner(input, init)
    } catch (e) {
      const code = e instanceof Error ? ErrorCode.codeOf(e.cause) : undefined
      if (typeof code !== "string" || !DROPPED.has(code) || init?.signal?.aborted === true) throw e
      return inner(input, init)
    }
  }

const hasAuthorization = (headers: Readonly<Record<string, string>> | undefined): boolean =>
  Object.keys(headers ?? {}).some((h) => h.toLowerCase() === "authorization")

/** The transport for `config` (not started: the SDK client starts it). */
export const make = async (name: string, config: McpServerConfig, options: Options): Promise<Made> => {
  if (config.url !== undefined) {
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client")
    const oauth =
      options.oauth === undefined || hasAuthorization(config.headers)
        ? undefined
        : await McpOAuth.make({
            file: path.join(options.oauth.dir, `${name}.json`),
            serverUrl: config.url,
            clientName: options.clientName ?? "parley",
            ...(options.oauth.signIn !== undefined ? { signIn: options.oauth.signIn } : {})
          })
    const transport = new StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers: { ...(config.headers ?? {}) } },
      // A server that drops the SSE stream is reported, not retried for ever.
      reconnectionOptions: {
        initialReconnectionDelay: 200,
        maxReconnectionDelay: 1000,
        reconnectionDelayGrowFactor: 2,
        maxRetries: 2
      },
      fetch: retryDroppedConnection(globalThis.fetch),
      ...(oauth !== undefined ? { authProvider: oauth } : {})
    })
    return { transport, stderr: () => "", where: config.url, ...(oauth !== undefined ? { oauth } : {}) }
  }
  const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio")
  const { parseJSONRPCMessage } = await import("@modelcontextprotocol/client")
  const wrapped = Supervisor.wrap(config.command!, config.args ?? [])
  // A subclass, so the SDK asks about the protocol in place (see `McpServer`).
  const transport = new (class InPlace extends StdioClientTransport {})({
    command: wrapped.command,
    args: wrapped.args,
    ...(config.env !== undefined ? { env: { ...config.env } } : {}),
    cwd: config.cwd === undefined ? options.root : path.resolve(options.root, config.cwd),
    stderr: "pipe"
  })
  readsRight(transport, parseJSONRPCMessage)
  const errors = tail()
  transport.stderr?.on("data", (chunk: Buffer) => errors.push(chunk))
  return { transport, stderr: errors.get, where: [config.command, ...(config.args ?? [])].join(" ") }
}

/** The SDK's line buffer of a stdio transport (its `ReadBuffer`, a field the SDK does not type for us). */
interface LineBuffer {
  _buffer?: Buffer | undefined
  readMessage: () => JSONRPCMessage | null
}

/**
 * Makes a stdio transport read each line with `JsonText.parse` (docs/decisions.md#json-read-around-a-v8-bug):
 * the SDK's `JSON.parse` can misread an escaped object key on Node 24 and
 * 26 (V8 bug issues.chromium.org/issues/521080746;
 * docs/decisions.md#json-read-around-a-v8-bug), and tool results, input schemas and elicitation
 * field names are keyed by what a server sends. The SDK's line handling is
 * kept as it is: a line that is not JSON is skipped, one that is not a
 * JSON-RPC message fails. False when the SDK no longer has the buffer this
 * patches (then its own reader stays; a test fails on that).
 */
export const readsRight = (transport: object, validate: (value: unknown) => JSONRPCMessage): boolean => {
  const buffer = (transport as { _readBuffer?: unknown })._readBuffer
  if (typeof buffer !== "object" || buffer === null || typeof (buffer as LineBuffer).readMessage !== "function")
    return false
  ;(buffer as LineBuffer).readMessage = function (this: LineBuffer) {
    while (this._buffer) {
      const index = this._buffer.indexOf("\n")
      if (index === -1) return null
      const line = this._buffer.toString("utf8", 0, index).replace(/\r$/, "")
      this._buffer = this._buffer.subarray(index + 1)
      let value: unknown
      try {
        value = JsonText.parse(line)
      } catch (error) {
        if (error instanceof SyntaxError) continue
        throw error
      }
      return validate(value)
    }
    return null
  }
  return true
}

/**
 * Appends the transport's traffic to `file`, one JSON object a line, by
 * patching the instance, not wrapping it: the SDK treats its own transports
 * by their class, and a wrapper would change what is traced.
 */
export const trace = (transport: Transport, file: string, server: string): void => {
  const log = (direction: "send" | "receive", message: JSONRPCMessage) =>
    // The traffic may carry what a person typed (a sign-in, an answer): a new trace file is theirs alone.
    fs.appendFileSync(file, JSON.stringify({ at: new Date().toISOString(), server, direction, message }) + "\n", {
      mode: 0o600
    })
  const send = transport.send.bind(transport)
  transport.send = (message, options) => {
    log("send", message)
    return send(message, options)
  }
  let receive: Transport["onmessage"]
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    get: () => receive,
    set: (handler: Transport["onmessage"]) => {
      receive =
        handler === undefined
          ? undefined
          : (message, extra) => {
              log("receive", message)
              handler(message, extra)
            }
    }
  })
}
