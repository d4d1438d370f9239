// A notifier's end (src/layers/notify/NotifierLive.ts): a command that ends with its run waits, at most a second,
// for the first try of what it spooled; a long-lived process (a cluster runner) does not wait for it. The
// receiver's backoff is kept in the spool: a notifier made after another's failed try (the storage's next
// process) keeps to it, and the receiver's answer ends it.
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as NotifierLive from "../../../src/layers/notify/NotifierLive.ts"
import * as Spool from "../../../src/layers/notify/Spool.ts"
import * as RunEvent from "../../../src/domain/run/RunEvent.ts"

interface Slow {
  readonly url: string
  readonly bodies: Array<string>
  readonly close: () => Promise<void>
}

/** A receiver on 127.0.0.1 whose requests `handle` takes, recording into `bodies`. */
const listening = (handle: (req: http.IncomingMessage, res: http.ServerResponse, bodies: Array<string>) => void) =>
  new Promise<Slow>((resolve) => {
    const bodies: Array<string> = []
    const server = http.createServer((req, res) => handle(req, res, bodies))
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

/** A receiver that answers 200 after `delayMs`, recording each body as it arrives. */
const slowReceiver = (delayMs: number): Promise<Slow> =>
  listening((req, res, bodies) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      setTimeout(() => {
        bodies.push(Buffer.concat(chunks).toString("utf8"))
        res.writeHead(200).end()
      }, delayMs)
    })
  })

/** A receiver that takes each request and never answers it (a hung service behind a live port), counting them. */
const hungReceiver = (): Promise<Slow> =>
  listening((req, _res, bodies) => {
    req.on("data", () => {})
    req.on("end", () => bodies.push("taken"))
  })

const events = Stream.make(
  RunEvent.make.ConversationKnown({ conversation_id: "17", created: true, title: "t" }),
  RunEvent.make.Stopped({ ending: "deferred", incomplete: { state: "waiting-for-input" } })
)

/** Attaches a notifier to one run's events and closes its scope: how long the close took. */
const runAndClose = (
  storage: string,
  url: string,
  firstTriesBeforeEnd: boolean,
  notify: NotifierLive.Settings["notify"] = { webhook: { url } }
) =>
  Effect.gen(function* () {
    const notifier = yield* NotifierLive.make({
      storage,
      notify,
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

describe("the receiver's backoff, kept in the spool", () => {
  const entries = (storage: string) => fs.readdirSync(Spool.dirOf(storage)).filter((n) => n.endsWith(".json"))
  const keep = (dir: string, backoff: { failures: number; until: number }) => {
    Spool.ensure(Spool.dirOf(dir))
    Spool.writeBackoff(Spool.dirOf(dir), "webhook", backoff)
  }
  /** `body` with a fresh storage and a receiver, both gone after it. */
  const withSpool = <A>(
    receiving: () => Promise<Slow>,
    body: (dir: string, receiver: Slow) => Effect.Effect<A>
  ): Effect.Effect<void> =>
    Effect.gen(function* () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-notifier-"))
      const receiver = yield* Effect.promise(receiving)
      try {
        yield* body(dir, receiver)
      } finally {
        yield* Effect.promise(() => receiver.close())
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })

  it.live("a receiver that hangs holds one run's end, not the next one's", () =>
    withSpool(hungReceiver, (dir, receiver) =>
      Effect.gen(function* () {
        // The first run waits its second for the first try, which is never answered: a failure, kept.
        const first = yield* runAndClose(dir, receiver.url, true)
        expect(first).toBeGreaterThanOrEqual(900)
        expect(receiver.bodies).toStrictEqual(["taken"])
        expect(Spool.readBackoff(Spool.dirOf(dir), "webhook")?.failures).toBe(1)
        // The storage's next process, while the receiver backs off (a receiver that kept failing: 7 times, 10 s
        // left of its 16): it does not try it, and its end does not wait (about 0 ms against the second above).
        keep(dir, { failures: 7, until: Date.now() + 10_000 })
        const next = yield* runAndClose(dir, receiver.url, true)
        expect(next).toBeLessThan(600)
        expect(receiver.bodies).toStrictEqual(["taken"])
        // Nothing is lost: both runs' notifications wait in the spool.
        expect(entries(dir)).toHaveLength(2)
      })
    )
  )

  it.live("once the backoff ends, the next process delivers what waited, and the receiver's answer ends it", () =>
    withSpool(
      () => slowReceiver(0),
      (dir, receiver) =>
        Effect.gen(function* () {
          keep(dir, { failures: 7, until: Date.now() + 10_000 })
          yield* runAndClose(dir, receiver.url, true)
          expect([receiver.bodies.length, entries(dir).length]).toStrictEqual([0, 1])
          // Ended (by the clock): the next run delivers the waiting entry and its own, and keeps no backoff.
          keep(dir, { failures: 7, until: Date.now() })
          yield* runAndClose(dir, receiver.url, true)
          expect(receiver.bodies.map((b) => JSON.parse(b).event)).toStrictEqual(["run_waiting", "run_waiting"])
          expect(entries(dir)).toStrictEqual([])
          expect(fs.existsSync(path.join(Spool.dirOf(dir), "webhook.backoff"))).toBe(false)
        })
    )
  )

  it.live("a backoff that ends further ahead than its own step (a clock set back) holds nothing off", () =>
    withSpool(
      () => slowReceiver(0),
      (dir, receiver) =>
        Effect.gen(function* () {
          // One failure is a 250 ms step; an hour ahead is no backoff this process keeps to.
          keep(dir, { failures: 1, until: Date.now() + 3_600_000 })
          yield* runAndClose(dir, receiver.url, true)
          expect([receiver.bodies.length, entries(dir).length]).toStrictEqual([1, 0])
          expect(Spool.readBackoff(Spool.dirOf(dir), "webhook")).toBeUndefined()
        })
    )
  )

  it.live("a command still running when its run ends keeps no backoff: a command is run once, never retried", () =>
    withSpool(hungReceiver, (dir) =>
      Effect.gen(function* () {
        const closeMs = yield* runAndClose(dir, "", true, { command: ["sh", "-c", "cat > /dev/null; sleep 5"] })
        expect(closeMs).toBeGreaterThanOrEqual(900)
        expect(fs.readdirSync(Spool.dirOf(dir)).filter((n) => n.includes("backoff"))).toStrictEqual([])
      })
    )
  )

  it.live("`flush` (parley inbox) waits out a backoff that ends within its bound, and not one that ends after it", () =>
    withSpool(
      () => slowReceiver(0),
      (dir, receiver) =>
        Effect.gen(function* () {
          const notify = { webhook: { url: receiver.url } }
          const settings = { storage: dir, notify, cwd: dir, answerCommand: () => "", url: () => null }
          keep(dir, { failures: 7, until: Date.now() + 10_000 })
          yield* runAndClose(dir, receiver.url, false)
          expect(entries(dir)).toHaveLength(1)
          // Ends 10 s from now: past the 2 s bound, so the flush ends at once, sending nothing.
          const t0 = Date.now()
          yield* NotifierLive.flush(settings, 2_000)
          expect(Date.now() - t0).toBeLessThan(1_000)
          expect([receiver.bodies.length, entries(dir).length]).toStrictEqual([0, 1])
          // Ends 400 ms from now (a second failure's step is 500 ms): waited out, then delivered.
          keep(dir, { failures: 2, until: Date.now() + 400 })
          const t1 = Date.now()
          yield* NotifierLive.flush(settings, 5_000)
          expect(Date.now() - t1).toBeGreaterThanOrEqual(350)
          expect([receiver.bodies.length, entries(dir).length]).toStrictEqual([1, 0])
        })
    )
  )
})
