/**
 * A webhook receiver on 127.0.0.1 for notification tests: records every
 * request (headers and raw body) and answers with the next status of a
 * script (then 200), so a test can make it fail a few times first.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface Received {
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
  readonly at: number
}

export interface Receiver {
  readonly url: string
  readonly port: number
  readonly received: Array<Received>
  /** Statuses to answer with, in order, before answering 200. */
  readonly statuses: Array<number>
  readonly close: () => Promise<void>
}

/** Starts a receiver (on `port` when given, else any free port). */
export const startReceiver = (port = 0): Promise<Receiver> =>
  new Promise((resolve, reject) => {
    const received: Array<Received> = []
    const statuses: Array<number> = []
    const server = http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() })
        res.writeHead(statuses.shift() ?? 200).end()
      })
    })
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => {
      const bound = (server.address() as AddressInfo).port // listen on a TCP port always gives an AddressInfo
      resolve({
        url: `http://127.0.0.1:${bound}/hook`,
        port: bound,
        received,
        statuses,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

/** The JSON bodies received, parsed. */
export const bodies = (r: Receiver): Array<Record<string, unknown>> =>
  r.received.map((x) => JSON.parse(x.body) as Record<string, unknown>)
