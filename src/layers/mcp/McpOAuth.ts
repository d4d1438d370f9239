/**
 * OAuth for MCP servers over HTTP (docs/mcp.md#secrets-out-of-config, "secrets out of config"): a
 * server that answers 401 with OAuth metadata (RFC 9728) is signed in to
 * through the SDK's OAuth client — discovery, dynamic client registration,
 * authorization code with PKCE — instead of failing to start.
 *
 * This module is the SDK's `OAuthClientProvider`: where its state lives and
 * how the person reaches the authorization page.
 * - **Storage**: one JSON file per server, `<storage>/mcp-oauth/<name>.json`,
 *   mode 0600 in a 0700 directory, written atomically: the client
 *   registration (per authorization server issuer), the tokens, the
 *   discovery result and, during a sign-in, the PKCE verifier. A file made
 *   for another URL is ignored. The SDK refreshes an expired access token
 *   with the refresh token on a 401 and saves the new tokens here.
 * - **Redirect**: a loopback URI, `http://127.0.0.1:<port>/callback` (RFC
 *   8252), chosen once per server and kept with the registration. parley
 *   listens on it during a sign-in, for one callback, and, for a new
 *   registration, from the port's choice until the server started or its
 *   sign-in began (at most 60 s), answering 404 to anything before.
 * - **The person**: {@link Options.signIn} gets the authorization page's
 *   URL (the CLI prints it). Without a person a server that needs signing
 *   in cannot start ({@link SignInNeeded}); a stored or refreshed token
 *   still works.
 *
 * @example
 * ```ts
 * import * as McpOAuth from "parley/layers/mcp/McpOAuth"
 * const provider = await McpOAuth.make({ file: "/work/.parley/mcp-oauth/remote.json", serverUrl: "https://mcp.example.com/mcp", clientName: "parley" })
 * provider.redirectUrl // "http://127.0.0.1:<port>/callback"
 * ```
 *
 * @since 0.1.0
 */
import * as Predicate from "effect/Predicate"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import type { RequestListener, Server } from "node:http"
import * as path from "node:path"
import type {
  OAuthClientInformationContext,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens
} from "@modelcontextprotocol/client"
import * as JsonText from "../../domain/storage/JsonText.ts"

/** How long a sign-in may take before the server's start fails: the person has to log in. */
export const SIGN_IN_TIMEOUT_MS = 300_000

/** What a provider needs. */
export interface Options {
  /** The state file (`<storage>/mcp-oauth/<name>.json`). */
  readonly file: string
  /** The MCP server's URL: the state is for this server only. */
  readonly serverUrl: string
  readonly clientName: string
  /** Sends the person to the authorization page; absent when nobody can be asked. */
  readonly signIn?: (url: URL) => void
}

/** The server needs a sign-in and nobody is there to do it. */
export class SignInNeeded extends Error {}

/** What the state file holds. */
interface State {
  server_url: string
  redirect_uri?: string
  clients: Record<string, StoredOAuthClientInformation>
  /** Issuer of the latest tokens, and the tokens. */
  tokens?: StoredOAuthTokens
  discovery?: OAuthDiscoveryState
  code_verifier?: string
}

/**
 * Whether a state file's JSON is the state of `serverUrl`: its own url and a clients table. What the table and
 * the tokens hold is the SDK's to check (it refuses a client or tokens that do not fit, and signs in again).
 */
const isStateOf =
  (serverUrl: string) =>
  (v: unknown): v is State =>
    Predicate.isObject(v) && v["server_url"] === serverUrl && Predicate.isObject(v["clients"])

const load = (file: string, serverUrl: string): State => {
  try {
    const state = JsonText.parse(fs.readFileSync(file, "utf8"))
    if (isStateOf(serverUrl)(state)) return state
  } catch {
    // No file yet, or not ours to read: start empty.
  }
  return { server_url: serverUrl, clients: {} }
}

/** Written to a 0600 temporary file in a 0700 directory, then renamed: never half a file, never readable by others. */
const save = (file: string, state: State): void => {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  const scratch = `${file}.${process.pid}.tmp`
  fs.writeFileSync(scratch, JSON.stringify(state, null, 2) + "\n", { mode: 0o600 })
  fs.renameSync(scratch, file)
}

/**
 * node:http on first use: importing it as a module makes Node evaluate its lazy
 * `WebSocket`/fetch exports, loading all of undici (≈ 40 ms of every start-up that
 * reaches this module, and a query does; docs/startup.md#start-up-of-a-query).
 */
const loadHttp = () => import("node:http")

/**
 * Where a callback port is looked for: below Linux's ephemeral range
 * (32768–60999). The port is chosen when the client registers (held then:
 * {@link Reserved}) and used again by later sign-ins; an ephemeral one could
 * meanwhile be handed to any outgoing connection (the MCP request itself),
 * and the sign-in would fail with EADDRINUSE.
 */
const CALLBACK_PORTS = { from: 20_000, to: 32_767 } as const

type Http = typeof import("node:http")

/** How long a new callback port stays held for a sign-in (a sign-in starts within a connection's first seconds). */
const RESERVE_MS = 60_000

/**
 * A loopback server on a callback port, held from the moment the port is
 * chosen until the sign-in answers on it: a port only probed free and
 * listened on later was taken meanwhile by another sign-in that chose it too
 * (two conformance scenarios at once: EADDRINUSE). Until a sign-in takes it,
 * every request is a 404, and it keeps no process alive.
 */
export interface Reserved {
  port: number
  readonly server: Server
  handler: RequestListener
}

const notYet: RequestListener = (_req, res) => void res.writeHead(404).end()

/** A server held on `port` if it is free on the loopback now (0: any), else `undefined`. */
const tryPort = (http: Http, port: number): Promise<Reserved | undefined> =>
  new Promise((resolve) => {
    const server = http.createServer((req, res) => reserved.handler(req, res))
    const reserved: Reserved = { port, server, handler: notYet }
    server.once("error", () => resolve(undefined))
    server.listen(port, "127.0.0.1", () => {
      const address = server.address()
      // Listening on a TCP port: the address is an AddressInfo (a string only for a pipe or a unix socket).
      reserved.port = typeof address === "object" && address !== null ? address.port : 0
      // An error after listening (a failed accept) must not be an unhandled 'error' event; the sign-in's own is added.
      server.on("error", () => {})
      server.unref()
      resolve(reserved)
    })
  })

/** A loopback port nothing listens on right now, held, outside the ephemeral range when one is free there. */
const freePort = async (): Promise<Reserved> => {
  const http = await loadHttp()
  const span = CALLBACK_PORTS.to - CALLBACK_PORTS.from + 1
  for (let attempt = 0; attempt < 20; attempt++) {
    // Not a secret: the state parameter and PKCE guard the callback, the port only has to be free.
    const port = await tryPort(http, CALLBACK_PORTS.from + Math.floor(Math.random() * span))
    if (port !== undefined) return port
  }
  const any = await tryPort(http, 0)
  if (any === undefined) throw new Error("no loopback port is free for the sign-in's callback")
  return any
}

const page = (title: string) =>
  `<!doctype html><meta charset="utf-8"><title>parley</title><p>${title}</p><p>You can close this page and go back to the terminal.</p>`

/** One sign-in in progress: the callback server, and the query it receives. */
interface Pending {
  readonly callback: Promise<URLSearchParams>
  readonly close: () => void
}

/** Listens on the redirect URI (on `reserved`, when it holds that port) for one callback carrying `state`. */
const listen = async (redirect: URL, state: string | undefined, reserved?: Reserved): Promise<Pending> => {
  const http = await loadHttp()
  return new Promise((resolve, reject) => {
    let done: (params: URLSearchParams) => void = () => {}
    let failed: (e: Error) => void = () => {}
    const callback = new Promise<URLSearchParams>((ok, ko) => {
      done = ok
      failed = ko
    })
    callback.catch(() => {})
    const handler: RequestListener = (req, res) => {
      const url = new URL(req.url ?? "/", redirect)
      if (url.pathname !== redirect.pathname) return void res.writeHead(404).end()
      const params = url.searchParams
      // A page the flow did not start (another tab, a forged link) is not our answer.
      if (params.get("state") !== (state ?? null))
        return void res
          .writeHead(400, { "content-type": "text/html" })
          .end(page("This sign-in link is not the one parley is waiting for."))
      if (params.get("error") !== null) {
        res.writeHead(200, { "content-type": "text/html" }).end(page("Sign-in failed."))
        return failed(new Error(`the authorization server answered ${params.get("error")}`))
      }
      res.writeHead(200, { "content-type": "text/html" }).end(page("Signed in."))
      done(params)
    }
    if (reserved !== undefined && reserved.port === Number(redirect.port)) {
      reserved.handler = handler
      reserved.server.on("error", failed)
      reserved.server.ref()
      return resolve({ callback, close: () => reserved.server.close() })
    }
    reserved?.server.close()
    const server = http.createServer(handler)
    server.on("error", reject)
    server.listen(Number(redirect.port), "127.0.0.1", () => resolve({ callback, close: () => server.close() }))
  })
}

/** The SDK's provider, backed by the state file; {@link FileProvider.awaitCallback} finishes a sign-in it started. */
export class FileProvider implements OAuthClientProvider {
  private lastState: string | undefined
  private pending: Pending | undefined

  constructor(
    private readonly options: Options,
    private readonly data: State,
    /** The callback port chosen for this provider, held until a sign-in takes it (or `close`). */
    private reserved?: Reserved
  ) {
    // A server that never asks for a sign-in must not keep a listener for the connection's life: after
    // RESERVE_MS a sign-in listens when it starts, as for a client registered before.
    if (reserved !== undefined) this.lapse = setTimeout(() => this.releasePort(), RESERVE_MS).unref()
  }

  private lapse: NodeJS.Timeout | undefined

  /** Lets go of the callback port held for a first sign-in (the server started without one, or too late). */
  releasePort(): void {
    clearTimeout(this.lapse)
    this.reserved?.server.close()
    this.reserved = undefined
  }

  get redirectUrl(): string {
    return this.data.redirect_uri!
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.options.clientName,
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      // A CLI keeps no client secret (RFC 8252): PKCE protects the code.
      token_endpoint_auth_method: "none",
      application_type: "native"
    }
  }

  state(): string {
    this.lastState = crypto.randomBytes(16).toString("base64url")
    return this.lastState
  }

  clientInformation(ctx?: OAuthClientInformationContext): StoredOAuthClientInformation | undefined {
    return ctx === undefined ? undefined : this.data.clients[ctx.issuer]
  }

  saveClientInformation(info: StoredOAuthClientInformation, ctx?: OAuthClientInformationContext): void {
    if (ctx === undefined) return
    this.data.clients[ctx.issuer] = info
    this.persist()
  }

  tokens(): StoredOAuthTokens | undefined {
    return this.data.tokens
  }

  saveTokens(tokens: StoredOAuthTokens): void {
    this.data.tokens = tokens
    delete this.data.code_verifier
    this.persist()
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.data.discovery = state
    this.persist()
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.data.discovery
  }

  saveCodeVerifier(verifier: string): void {
    this.data.code_verifier = verifier
    this.persist()
  }

  codeVerifier(): string {
    if (this.data.code_verifier === undefined) throw new Error("no sign-in is in progress (no PKCE verifier)")
    return this.data.code_verifier
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    if (scope === "all" || scope === "client") this.data.clients = {}
    if (scope === "all" || scope === "tokens") delete this.data.tokens
    if (scope === "all" || scope === "verifier") delete this.data.code_verifier
    if (scope === "all" || scope === "discovery") delete this.data.discovery
    this.persist()
  }

  /** Starts listening for the callback, then sends the person to the page; without a person, fails. */
  async redirectToAuthorization(url: URL): Promise<void> {
    const signIn = this.options.signIn
    if (signIn === undefined) {
      throw new SignInNeeded(
        `it needs you to sign in (OAuth), and nobody is at a terminal to do it; run parley at a terminal once: the tokens are then kept in ${this.options.file}`
      )
    }
    this.pending?.close()
    const reserved = this.reserved
    this.reserved = undefined
    clearTimeout(this.lapse)
    try {
      this.pending = await listen(new URL(this.redirectUrl), this.lastState, reserved)
    } catch (e) {
      const redirect = this.redirectUrl
      // Another program holds the port this client was registered with: register again next time.
      this.invalidateCredentials("client")
      delete this.data.redirect_uri
      this.persist()
      throw new Error(
        `cannot listen on ${redirect} for the sign-in: ${e instanceof Error ? e.message : String(e)}; try again`
      )
    }
    signIn(url)
  }

  /** Whether a sign-in was started and waits for its callback. */
  get signingIn(): boolean {
    return this.pending !== undefined
  }

  /** The callback's query, once the person has signed in; fails after `ms`, or when `signal` aborts. */
  async awaitCallback(ms: number, signal?: AbortSignal): Promise<URLSearchParams> {
    const pending = this.pending
    if (pending === undefined) throw new Error("no sign-in was started")
    let timer: NodeJS.Timeout | undefined
    const stop = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`nobody signed in within ${Math.round(ms / 1000)} s`)), ms)
      signal?.addEventListener("abort", () => reject(new Error("the sign-in was interrupted")), { once: true })
    })
    try {
      return await Promise.race([pending.callback, stop])
    } finally {
      clearTimeout(timer)
      pending.close()
      this.pending = undefined
    }
  }

  /** Stops waiting for a callback (the start failed or was interrupted). */
  close(): void {
    this.pending?.close()
    this.pending = undefined
    this.releasePort()
  }

  private persist(): void {
    save(this.options.file, this.data)
  }
}

/** The provider for one server: its state loaded, a loopback redirect URI chosen if it has none yet. */
export const make = async (options: Options): Promise<FileProvider> => {
  const data = load(options.file, options.serverUrl)
  if (data.redirect_uri !== undefined) return new FileProvider(options, data)
  const reserved = await freePort()
  data.redirect_uri = `http://127.0.0.1:${reserved.port}/callback`
  return new FileProvider(options, data, reserved)
}
