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

  it("a wait counts from now, ends at 0, and is never longer than the longest step", () => {
    const backoff = { failures: 3, until: 5_000 }
    expect([0, 4_000, 5_000, 9_000].map((now) => Delivery.waitMs(backoff, now))).toStrictEqual([5_000, 1_000, 0, 0])
    expect(Delivery.waitMs(undefined, 0)).toBe(0)
    // A clock set back, or a file edited by hand, cannot stop a receiver's tries for longer.
    expect(Delivery.waitMs({ failures: 1, until: 10 ** 15 }, 0)).toBe(30_000)
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
