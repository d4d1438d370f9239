// A notifier's end (src/layers/notify/NotifierLive.ts): a command that ends with its run waits, at most a second,
// for the first try of what it spooled; a long-lived process (a cluster runner) does not wait for it.
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as NotifierLive from "../../../src/layers/notify/NotifierLive.ts"
import * as RunEvent from "../../../src/domain/run/RunEvent.ts"

interface Slow {
  readonly url: string
  readonly bodies: Array<string>
  readonly close: () => Promise<void>
}

/** A receiver that answers 200 after `delayMs`, recording each body as it arrives. */
const slowReceiver = (delayMs: number): Promise<Slow> =>
  new Promise((resolve) => {
    const bodies: Array<string> = []
    const server = http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        setTimeout(() => {
          bodies.push(Buffer.concat(chunks).toString("utf8"))
          res.writeHead(200).end()
        }, delayMs)
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port // a TCP listen always gives an AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}/hook`,
        bodies,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

const events = Stream.make(
  RunEvent.make.ConversationKnown({ conversation_id: "17", created: true, title: "t" }),
  RunEvent.make.Stopped({ ending: "deferred", incomplete: { state: "waiting-for-input" } })
)

/** Attaches a notifier to one run's events and closes its scope: how long the close took. */
const runAndClose = (storage: string, url: string, firstTriesBeforeEnd: boolean) =>
  Effect.gen(function* () {
    const notifier = yield* NotifierLive.make({
      storage,
      notify: { webhook: { url } },
      cwd: storage,
      answerCommand: () => "",
      url: () => null,
      firstTriesBeforeEnd
    })
    yield* notifier.attach(events)
    // The run's events are spooled as the scope ends (its finalizer waits for them).
    return Date.now()
  }).pipe(
    Effect.scoped,
    Effect.map((lastStep) => Date.now() - lastStep)
  )

describe("NotifierLive's end", () => {
  it.live.each([true, false])("firstTriesBeforeEnd %s", (wait) =>
    Effect.gen(function* () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-notifier-"))
      const receiver = yield* Effect.promise(() => slowReceiver(300))
      try {
        const closeMs = yield* runAndClose(dir, receiver.url, wait)
        if (wait) {
          // The first try's reply came before the end: the receiver has it, and the spool no longer holds it.
          expect(closeMs).toBeGreaterThanOrEqual(250)
          expect(closeMs).toBeLessThan(1500)
          expect(receiver.bodies.length).toBeGreaterThan(0)
        } else {
          // No wait for the slow receiver: the close takes what spooling the events takes.
          expect(closeMs).toBeLessThan(250)
          expect(receiver.bodies).toEqual([])
        }
      } finally {
        yield* Effect.promise(() => receiver.close())
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })
  )
})
