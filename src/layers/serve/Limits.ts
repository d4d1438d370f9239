/**
 * The bounds of `parley serve`'s HTTP server, set on Node's `http.Server`
 * before Effect serves on it (`NodeHttpServer.layer` takes the factory):
 *
 * - at most `maxConnections` connections at once: at the cap, connections
 *   idle between requests are closed first, then the oldest that has not
 *   finished a request's headers; one whose request is being answered is
 *   never closed for a new one, which is closed when it still does not fit;
 * - a request's headers within `headersTimeoutMs`, the whole request (its
 *   body too) within `bodyTimeoutMs`, else a 408 and the connection closes;
 *   a connection that sends nothing is closed after `headersTimeoutMs`;
 * - what Node answers itself (a request that is not HTTP, headers over its
 *   limit, a timeout) carries the same security headers and JSON error body
 *   as every other answer (`Guard.ts`).
 *
 * @example
 * ```ts
 * import * as Limits from "parley/layers/serve/Limits"
 * const createServer = Limits.httpServer(Limits.defaults) // for NodeHttpServer.layer(createServer, { host, port })
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as http from "node:http"
import type * as net from "node:net"
import { SECURITY_HEADERS } from "./Guard.ts"

export { defaults, type Limits } from "../ServeLimits.ts"
import type { Limits } from "../ServeLimits.ts"

/** How often Node looks for requests over their time (its default, 30 s, would let a 10 s bound run to 40 s). */
const CHECK_EVERY_MS = 1_000

/** A raw answer on a connection Node gave up on: the security headers, a JSON error, then the end. */
const rawAnswer = (status: number, reason: string, error: string, message: string): string => {
  const body = JSON.stringify({ error, message })
  const headers = {
    ...SECURITY_HEADERS,
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    connection: "close"
  }
  return `HTTP/1.1 ${status} ${reason}\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("")}\r\n${body}`
}

/** What a connection Node refused is answered, by Node's error code (as Node's own `clientError` default picks). */
const answerFor = (code: string | undefined, limits: Limits): string => {
  switch (code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return rawAnswer(
        408,
        "Request Timeout",
        "RequestTimeout",
        `A request's headers arrive within ${limits.headersTimeoutMs / 1000} s and its body within ${limits.bodyTimeoutMs / 1000} s.`
      )
    case "HPE_HEADER_OVERFLOW":
      return rawAnswer(
        431,
        "Request Header Fields Too Large",
        "HeadersTooLarge",
        "The request's headers are too large."
      )
    default:
      return rawAnswer(400, "Bad Request", "BadRequest", "The request is not HTTP this server reads.")
  }
}

/** The response a connection is writing, if any (Node keeps it on the socket; not in its types). */
const inFlight = (socket: net.Socket): { readonly headersSent: boolean } | undefined =>
  (socket as net.Socket & { _httpMessage?: { headersSent: boolean } | null })._httpMessage ?? undefined

/**
 * A connection Node gave up on (not HTTP, a timeout, a reset): answered as
 * Node would answer it — only when nothing of a response was written yet —
 * but with the security headers; then closed.
 */
const onClientError = (limits: Limits) => (error: Error & { code?: string }, socket: net.Socket) => {
  const response = inFlight(socket)
  if (error.code !== "ECONNRESET" && socket.writable && (response === undefined || !response.headersSent))
    socket.write(answerFor(error.code, limits))
  socket.destroy(error)
}

/**
 * The connection cap. Room for a new connection is made by closing, in
 * order: connections idle between requests (a keep-alive client opens
 * another when it needs one), then those answered before their request's
 * body had arrived (refused, the body still dripping), then the oldest
 * connection that has not finished a request's headers (a slowloris: a
 * client with a request to make sends its headers at once). A connection whose request is being
 * answered (Node's `request` event fired: its headers were read) is never
 * closed for another; when every connection is one, the new one is closed.
 * Without this, sockets that never finish their headers hold every place
 * and every user is locked out until the attacker stops.
 */
const capConnections = (server: http.Server, max: number) => {
  const open = new Set<net.Socket>()
  // Connections not past a request's headers, oldest first (a Set keeps insertion order).
  const waiting = new Set<net.Socket>()
  // Answered before their request's body arrived whole (a refusal: 401, 413, …), closed before any in `waiting`:
  // re-added at the end of `waiting`, a flood of them dripping bodies stayed younger than a new connection
  // whose headers were not parsed yet, which became the oldest and was closed for the next of the flood.
  const unfinished = new Set<net.Socket>()
  const answering = new Map<net.Socket, number>()
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket
    waiting.delete(socket)
    unfinished.delete(socket)
    answering.set(socket, (answering.get(socket) ?? 0) + 1)
    res.once("close", () => {
      const left = (answering.get(socket) ?? 1) - 1
      if (left > 0) return void answering.set(socket, left)
      answering.delete(socket)
      if (socket.destroyed) return
      // Between requests again: the next request's headers (or this one's body first) are what it waits for.
      if (req.complete) waiting.add(socket)
      else unfinished.add(socket)
    })
  })
  const forget = (s: net.Socket) => {
    open.delete(s)
    waiting.delete(s)
    unfinished.delete(s)
    answering.delete(s)
  }
  server.on("connection", (socket: net.Socket) => {
    open.add(socket)
    waiting.add(socket)
    socket.once("close", () => forget(socket))
    if (open.size <= max) return
    server.closeIdleConnections()
    for (const s of open) if (s.destroyed) open.delete(s)
    for (const s of [...unfinished, ...waiting]) {
      if (open.size <= max) break
      if (s === socket) continue
      s.destroy()
      forget(s)
    }
    if (open.size > max) socket.destroy()
  })
}

/** A factory of Node servers with these limits, for `NodeHttpServer.layer`. */
export const httpServer = (limits: Limits) => (): http.Server => {
  const server = http.createServer({
    headersTimeout: limits.headersTimeoutMs,
    // Node wants the headers' bound within the whole request's.
    requestTimeout: Math.max(limits.bodyTimeoutMs, limits.headersTimeoutMs),
    connectionsCheckingInterval: Math.min(CHECK_EVERY_MS, limits.headersTimeoutMs)
  })
  server.on("clientError", onClientError(limits))
  capConnections(server, limits.maxConnections)
  return server
}
