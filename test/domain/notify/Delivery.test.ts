// The rules of delivery (src/domain/notify/Delivery.ts): what a status means, and the receiver's backoff
// that every process of a storage keeps to.
import { describe, expect, it } from "@effect/vitest"
import * as Delivery from "../../../src/domain/notify/Delivery.ts"

describe("Delivery", () => {
  it("a status: 2xx delivered; 5xx, 408, 429 retried; any other given up", () => {
    expect([200, 204, 299, 500, 503, 408, 429, 301, 400, 404].map(Delivery.outcomeOf)).toStrictEqual([
      "delivered",
      "delivered",
      "delivered",
      "retry",
      "retry",
      "retry",
      "retry",
      "failed",
      "failed",
      "failed"
    ])
  })

  it("each try the receiver does not take doubles the wait, from 250 ms to at most 30 s", () => {
    let backoff: Delivery.Backoff | undefined
    const waits: Array<number> = []
    for (let i = 0; i < 10; i++) {
      backoff = Delivery.afterFailure(backoff, 1_000)
      waits.push(Delivery.waitMs(backoff, 1_000))
    }
    expect(waits).toStrictEqual([250, 500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000])
    expect(backoff?.failures).toBe(10)
  })

  it("a wait counts from now and ends at 0; one further ahead than its own step is not kept to", () => {
    const backoff = { failures: 3, until: 5_000 }
    expect([4_000, 4_500, 5_000, 9_000].map((now) => Delivery.waitMs(backoff, now))).toStrictEqual([1_000, 500, 0, 0])
    expect(Delivery.waitMs(undefined, 0)).toBe(0)
    // A clock set back, or a file edited by hand, cannot hold a receiver's tries off: its step is 1 s.
    expect(Delivery.waitMs(backoff, 3_999)).toBe(0)
    expect(Delivery.waitMs({ failures: 1, until: 10 ** 15 }, 0)).toBe(0)
  })

  it("failures count on while they follow each other; after a long quiet they start again", () => {
    const after3 = { failures: 3, until: 5_000 }
    // Within the next step (2 s) of the backoff's end: the fourth failure, a 2 s wait.
    expect(Delivery.afterFailure(after3, 7_000)).toStrictEqual({ failures: 4, until: 9_000 })
    expect(Delivery.afterFailure(after3, 7_001)).toStrictEqual({ failures: 1, until: 7_251 })
  })

  it("a backoff read back is taken only when well formed", () => {
    expect(Delivery.backoffOf({ failures: 2, until: 1_234 })).toStrictEqual({ failures: 2, until: 1_234 })
    for (const bad of [
      null,
      "x",
      {},
      { failures: 0, until: 1 },
      { failures: 1.5, until: 1 },
      { failures: "2", until: 1 },
      { failures: 2, until: Number.NaN },
      { failures: 2 }
    ])
      expect(Delivery.backoffOf(bad)).toBeUndefined()
  })
})
