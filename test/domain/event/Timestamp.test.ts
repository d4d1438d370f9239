import { describe, expect, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"

describe("Timestamp", () => {
  it("keeps JP's text exactly, with microseconds", () => {
    expect(Timestamp.make("2026-03-05 19:31:45.7")).toBe("2026-03-05 19:31:45.7")
    expect(Timestamp.make("2025-12-04 09:28:23.202081")).toBe("2025-12-04 09:28:23.202081")
  })

  it("reads RFC 3339 with offsets", () => {
    expect(Timestamp.toEpochNanos("2026-03-05T20:31:45.7+01:00")).toBe(Timestamp.toEpochNanos("2026-03-05 19:31:45.7"))
    expect(Timestamp.toRfc3339("2026-03-05T20:31:45+01:00")).toBe("2026-03-05T19:31:45Z")
  })

  it("rejects what is not a timestamp", () => {
    expect(() => Timestamp.make("yesterday")).toThrow()
    expect(Timestamp.toEpochNanos("2026-13-01 00:00:00")).toBeUndefined()
  })

  it("formats like JP: trailing zeros trimmed, whole seconds as .0", () => {
    const base = Timestamp.toEpochNanos("2026-03-05 19:31:45.0")!
    expect(Timestamp.fromEpochNanos(base)).toBe("2026-03-05 19:31:45.0")
    expect(Timestamp.fromEpochNanos(base + 120_000n)).toBe("2026-03-05 19:31:45.00012")
    expect(Timestamp.fromEpochNanos(base + 700_000_000n)).toBe("2026-03-05 19:31:45.7")
  })

  it("renders RFC 3339 for listings, fraction only when non-zero", () => {
    expect(Timestamp.toRfc3339("2026-03-18 15:52:24.727287")).toBe("2026-03-18T15:52:24.727287Z")
    expect(Timestamp.toRfc3339("2026-03-18 15:52:24.0")).toBe("2026-03-18T15:52:24Z")
  })

  it("now() has microsecond precision and orders correctly", () => {
    const a = Timestamp.now()
    expect(a).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{1,6}$/)
    expect(Timestamp.compare(a, "2020-01-01 00:00:00.0")).toBe(1)
  })

  it.effect("the current time: the wall clock's, in order, to the microsecond; a test clock's when one is given", () =>
    Effect.gen(function* () {
      const before = BigInt(Date.now()) * 1_000_000n
      const read = Array.from({ length: 1000 }, () => Effect.runSync(Timestamp.current))
      const after = BigInt(Date.now() + 1) * 1_000_000n
      for (let i = 1; i < read.length; i++) expect(Timestamp.compare(read[i - 1]!, read[i]!)).toBeLessThanOrEqual(0)
      // Within the wall clock's milliseconds around the readings (plus its own rounding).
      expect(Timestamp.toEpochNanos(read[0]!)! >= before - 1_000_000n).toBe(true)
      expect(Timestamp.toEpochNanos(read.at(-1)!)! <= after + 1_000_000n).toBe(true)
      expect(read.some((t) => t.split(".")[1]!.length === 6)).toBe(true) // microseconds: a clock of milliseconds never has six digits
      // A clock made from Effect's own, reading the time its own way, is read its way.
      const own = Object.create(Effect.runSync(Clock.clockWith(Effect.succeed)), {
        currentTimeNanosUnsafe: { value: () => 1_700_000_000_123_456_000n }
      })
      expect(Timestamp.fromClock(own)).toBe("2023-11-14 22:13:20.123456")
      // A test clock's time, not the wall clock's.
      yield* TestClock.setTime(Date.UTC(2026, 2, 5, 19, 31, 45, 700))
      expect(yield* Timestamp.current).toBe("2026-03-05 19:31:45.7")
    })
  )
})
