/**
 * What every request to `parley serve` passes before any route
 * (docs/serve.md#security, docs/security.md#http-server):
 *
 * - the `Host` header names the bound address (a page on another site that
 *   rebinds its DNS name to 127.0.0.1 sends its own name): else 421;
 * - the token, as `Authorization: Bearer …` or the `parley_token` cookie
 *   (HttpOnly, SameSite=Strict), which a page opened with `?token=…` gets,
 *   redirected to the same path without the token in its address: else 401,
 *   with nothing else said (a browser asking for a page gets a small page
 *   that says where the token is; a cluster also takes `$PARLEY_TOKEN` as a bearer,
 *   `Options.bearers`, never in an address or a cookie);
 * - a `POST` or `DELETE` from a browser names this server as its `Origin`: else 403;
 * - a body of at most 1 MiB (a larger one is a 413 from the server), and a
 *   JSON body nested at most {@link MAX_JSON_DEPTH} deep (a deeper one would
 *   overflow the stack of the schema that reads it: a 400);
 * - every response carries a CSP that allows scripts from this server only
 *   (no inline script), no framing, no referrer, no caching: an error's, and
 *   a defect's too, which is answered here as a JSON 500 rather than left to
 *   the server (whose empty 500 had none of these headers).
 *
 * @example
 * ```ts
 * import * as Guard from "parley/layers/serve/Guard"
 * const layer = Guard.layer({ token: "…", hosts: Guard.hostsFor("127.0.0.1", 3141) })
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as ByteSize from "effect/ByteSize"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRespondable from "effect/http/HttpServerRespondable"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Token from "./Token.ts"
import { TOKEN_COOKIE } from "../../services/ServeApi.ts"

/** The largest request body taken. */
export const MAX_BODY_BYTES = 1024 * 1024

/** The cookie that carries the token for the page. */
export const COOKIE = TOKEN_COOKIE

/** The policy of every response: scripts and connections to this server only, nothing inline but styles (the viewer's stylesheet is inline). */
export const CSP =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/** The JSON nesting a request body may have: an answer is a flat value; far below where a recursive reader runs out of stack. */
export const MAX_JSON_DEPTH = 64

/** The headers of every response (`Limits.ts` writes them on the answers Node gives itself). */
export const SECURITY_HEADERS = {
  "content-security-policy": CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "x-frame-options": "DENY"
}

/** Whether `host` (a Host header's name) is an IP address literal: no DNS name can be rebound to it. */
const isIpLiteral = (host: string): boolean => /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || /^\[[0-9a-f:.]+\]$/.test(host)

/** A Host header's name and port (`undefined`: none given); none when it is not one. */
const split = (header: string): { readonly name: string; readonly port: string | undefined } | undefined => {
  const m = /^(\[[^\]]*\]|[^:[\]]+)(?::(\d+))?$/.exec(header.toLowerCase())
  return m === null ? undefined : { name: m[1]!, port: m[2] }
}

/**
 * The Host headers a server bound to `host:port` accepts: its own address,
 * `localhost`, `127.0.0.1` and `[::1]` for a loopback one, any IP literal
 * and `localhost` for a wildcard one — never another name, which is what a
 * rebound DNS name sends. Names are compared without case; a browser leaves
 * out the port when it is 80.
 */
export const hostsFor = (host: string, port: number): ((header: string | undefined) => boolean) => {
  const bound = host.toLowerCase()
  const loopback = bound === "127.0.0.1" || bound === "::1" || bound === "localhost"
  const wildcard = bound === "0.0.0.0" || bound === "::"
  const own = bound.includes(":") ? `[${bound}]` : bound
  return (header) => {
    const given = header === undefined ? undefined : split(header)
    if (given === undefined) return false
    if (given.port === undefined ? port !== 80 : given.port !== String(port)) return false
    const { name } = given
    if (name === own) return true
    if (loopback) return name === "localhost" || name === "127.0.0.1" || name === "[::1]"
    return wildcard && (name === "localhost" || isIpLiteral(name))
  }
}

/** What the guard knows. */
export interface Options {
  /** The page's token: what `?token=` and the cookie carry (and a bearer may). */
  readonly token: string
  /**
   * Other tokens a request may carry as `Authorization: Bearer …` only, never
   * in an address or a cookie: a cluster's `$PARLEY_TOKEN`, which its page
   * does not show (`cluster/RunnerChannel.webTokenOf`).
   */
  readonly bearers?: ReadonlyArray<string> | undefined
  readonly hosts: (header: string | undefined) => boolean
}

const refuse = (status: number, error: string, message: string) =>
  HttpServerResponse.jsonUnsafe({ error, message }, { status })

/**
 * The 401 a browser gets for a page (not `/api/`) without its token: a small
 * page that says where the token is, instead of JSON nobody reads. Static
 * text (it says nothing of this server, the storage's path included).
 */
const TOKEN_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark"><title>parley: the token is needed</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}code{overflow-wrap:anywhere}</style></head>
<body><main><h1>This page needs its token</h1>
<p>Open the address <code>parley serve</code> printed as its first line: it ends in <code>?token=…</code>. The page keeps the token in a cookie from then on.</p>
<p>The token is also kept in the file <code>&lt;storage&gt;/serve-token</code> (readable only by the user who runs <code>parley serve</code>); open this address with <code>?token=</code> and that value.</p>
</main></body>
</html>
`

/** A refused token: the page above for a browser asking for a page, the API's JSON for anything else. */
const unauthorized = (request: HttpServerRequest.HttpServerRequest, pathname: string) =>
  request.method === "GET" && !pathname.startsWith("/api/") && (request.headers["accept"] ?? "").includes("text/html")
    ? HttpServerResponse.html(TOKEN_PAGE).pipe(HttpServerResponse.setStatus(401))
    : refuse(401, "Unauthorized", "A valid token is needed.")

/**
 * Whether `given` is one of `tokens`: each compared in constant time
 * (`Token.matches`), and every one of them compared, so the time says
 * neither where a token differs nor which one matched.
 */
export const matchesAny = (tokens: ReadonlyArray<string>, given: string | undefined): boolean =>
  tokens.reduce((found, t) => Token.matches(t, given) || found, false)

/** Whether a request carries a token: a bearer any of the page's and the bearers' tokens, or the page's cookie. */
const authorized = (options: Options, request: HttpServerRequest.HttpServerRequest): boolean => {
  const auth = request.headers["authorization"]
  const bearer = auth !== undefined && /^Bearer /i.test(auth) ? auth.slice(7).trim() : undefined
  const byBearer = matchesAny([options.token, ...(options.bearers ?? [])], bearer)
  return Token.matches(options.token, request.cookies[COOKIE]) || byBearer
}

/** The checks, then the route, then the headers. */
const check =
  (options: Options) =>
  <E, R>(route: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const host = request.headers["host"]
      if (!options.hosts(host))
        return refuse(421, "MisdirectedRequest", "This server does not answer for that host name.")
      // Parsed as a path on this server whatever it looks like (`//x` is not another host).
      const url =
        URL.parse(`http://server${request.url.startsWith("/") ? "" : "/"}${request.url}`) ?? new URL("http://server/")
      const given = url.searchParams.get("token")
      if (given !== null && request.method === "GET" && !url.pathname.startsWith("/api/")) {
        if (!Token.matches(options.token, given)) return unauthorized(request, url.pathname)
        // The token leaves the address bar (and the history) at once; the cookie carries it from now on.
        // To a path on this server: `//host/` would be another server's address (`\\` is a `/` once parsed).
        return HttpServerResponse.redirect(`/${url.pathname.replace(/^\/+/, "")}`, { status: 303 }).pipe(
          HttpServerResponse.setCookieUnsafe(COOKIE, options.token, { httpOnly: true, sameSite: "strict", path: "/" })
        )
      }
      if (!authorized(options, request)) return unauthorized(request, url.pathname)
      if (request.method !== "GET" && request.method !== "HEAD") {
        const origin = request.headers["origin"]
        if (origin !== undefined && origin !== `http://${host}`)
          return refuse(403, "ForeignOrigin", "Requests from other sites are refused.")
      }
      const tooDeep = yield* nestedTooDeep(request).pipe(
        Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(MAX_BODY_BYTES))
      )
      if (tooDeep)
        return HttpServerResponse.jsonUnsafe(
          { error: "BadRequest", kind: "Payload", message: `A JSON body is nested at most ${MAX_JSON_DEPTH} deep.` },
          { status: 400 }
        )
      const answered = yield* route.pipe(
        Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(MAX_BODY_BYTES)),
        // A route's failure (no such route, a body over the limit) becomes its response here, so it gets the headers below.
        Effect.catchCause(answerOf),
        // Anything else (a defect) is a 500 with the headers and the JSON error, not the server's empty one.
        Effect.catchCause((cause) => internalError(request, cause))
      )
      return answered.status >= 400 && !isJson(answered) ? explained(answered, url.pathname) : answered
    }).pipe(Effect.map(HttpServerResponse.setHeaders(SECURITY_HEADERS)))

/**
 * A route's failure that says its own response (no such route; a body over
 * the limit, which the API's body reader turns into a defect) as that
 * response; any other failure goes on to the server as it was.
 */
const answerOf = <E>(cause: Cause.Cause<E>): Effect.Effect<HttpServerResponse.HttpServerResponse, E> => {
  for (const reason of cause.reasons) {
    const error = reason._tag === "Fail" ? reason.error : reason._tag === "Die" ? reason.defect : undefined
    if (HttpServerResponse.isHttpServerResponse(error)) return Effect.succeed(error)
    if (HttpServerRespondable.isRespondable(error))
      return HttpServerRespondable.toResponseOrElse(error, HttpServerResponse.empty({ status: 500 }))
  }
  return Effect.failCause(cause)
}

/** A failure no route answered: said on stderr in one line, answered as a JSON 500; a request its client dropped is just ended. */
const internalError = <E>(
  request: HttpServerRequest.HttpServerRequest,
  cause: Cause.Cause<E>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E> => {
  if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
  const first = cause.reasons[0]
  const what = first === undefined ? "" : first._tag === "Fail" ? first.error : first._tag === "Die" ? first.defect : ""
  // The defect's own words only, on one line (a request's body is never repeated: it may hold a secret answer).
  const line = (what instanceof Error ? `${what.name}: ${what.message}` : String(what)).split("\n", 1)[0]
  return Console.error(`parley serve: ${request.method} ${request.url.split("?", 1)[0]} failed: ${line}`).pipe(
    Effect.as(refuse(500, "InternalError", "The server failed to answer this request."))
  )
}

/** How deep `text` (JSON, or anything) nests `[` and `{` outside strings; stops counting past `limit`. */
export const nesting = (text: string, limit: number): number => {
  let depth = 0
  let deepest = 0
  for (let i = 0; i < text.length && deepest <= limit; i++) {
    const c = text.charCodeAt(i)
    if (c === 34) {
      // A string: to its closing quote, escapes skipped.
      for (i++; i < text.length && text.charCodeAt(i) !== 34; i++) if (text.charCodeAt(i) === 92) i++
    } else if (c === 91 || c === 123) deepest = Math.max(deepest, ++depth)
    else if (c === 93 || c === 125) depth--
  }
  return deepest
}

/** Whether a request's JSON body nests deeper than the limit (read once: the route reads the same, cached, body). */
const nestedTooDeep = (request: HttpServerRequest.HttpServerRequest) => {
  if (!/^application\/json\b/i.test(request.headers["content-type"] ?? "")) return Effect.succeed(false)
  // A body that cannot be read (over 1 MiB) is the route's to answer, with its own status.
  return request.text.pipe(
    Effect.map((text) => nesting(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH),
    Effect.orElseSucceed(() => false)
  )
}

/** Whether a response's body is JSON (the API's errors are). */
const isJson = (response: HttpServerResponse.HttpServerResponse): boolean =>
  response.body._tag !== "Empty" &&
  "contentType" in response.body &&
  /^application\/json\b/.test(response.body.contentType ?? "")

/** An error answered with no body (or with text), as the API's JSON error (`{ error, message }`), keeping a 413's `connection: close` (the rest of its body is not read). */
const explained = (
  response: HttpServerResponse.HttpServerResponse,
  path: string
): HttpServerResponse.HttpServerResponse => {
  // Only `connection` is kept: the old body's length and type are not this one's.
  const connection = response.headers["connection"]
  const json = (error: string, message: string) => {
    const refused = refuse(response.status, error, message)
    return connection === undefined ? refused : HttpServerResponse.setHeader(refused, "connection", connection)
  }
  switch (response.status) {
    case 404:
      return json("NotFound", `Nothing is at ${path}.`)
    case 413:
      return json("PayloadTooLarge", "A request body is at most 1 MiB.")
    case 415:
      return json("UnsupportedMediaType", "A request body is JSON (content-type: application/json).")
    default:
      return response.status >= 500
        ? json("InternalError", "The server failed to answer this request.")
        : json("BadRequest", "The request could not be read.")
  }
}

/** The guard, in front of every route. */
export const layer = (options: Options) => HttpRouter.middleware(check(options), { global: true })
