/**
 * JP timestamps, kept exactly as written.
 *
 * JP writes `YYYY-MM-DD HH:MM:SS.f…` (UTC, no zone, fraction with trailing
 * zeros trimmed, at least one digit) and reads that or RFC 3339. JS `Date`
 * drops microseconds, so a timestamp is its text: decoding validates it and
 * keeps every byte, and time arithmetic goes through epoch nanoseconds.
 *
 * @example
 * ```ts
 * import * as Timestamp from "parley/domain/event/Timestamp"
 * const t = Timestamp.make("2026-03-05 19:31:45.7")
 * Timestamp.toRfc3339(t) // "2026-03-05T19:31:45.7Z"
 * ```
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const NAIVE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$/
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:\d{2})$/

/** Epoch nanoseconds of a timestamp text, or `undefined` when it is not one. */
export const toEpochNanos = (text: string): bigint | undefined => {
  const m = NAIVE.exec(text) ?? RFC3339.exec(text)
  if (m === null) return undefined
  const [, y, mo, d, h, mi, s, frac, zone] = m
  const month = Number(mo),
    day = Number(d),
    hour = Number(h),
    minute = Number(mi),
    second = Number(s)
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined
  const ms = Date.UTC(Number(y), month - 1, day, hour, minute, second)
  if (Number.isNaN(ms)) return undefined
  let offsetMinutes = 0
  if (zone !== undefined && zone !== "Z" && zone !== "z") {
    const sign = zone[0] === "-" ? -1 : 1
    offsetMinutes = sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)))
  }
  const nanosFrac = frac === undefined ? 0n : BigInt(frac.padEnd(9, "0"))
  return (BigInt(ms) - BigInt(offsetMinutes) * 60_000n) * 1_000_000n + nanosFrac
}

const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** Whether `text` is a timestamp JP reads (cheap: no allocation on the hot path). */
export const isTimestamp = (text: string): boolean => {
  const m = NAIVE.exec(text) ?? RFC3339.exec(text)
  if (m === null) return false
  const month = Number(m[2]),
    day = Number(m[3])
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= DAYS[month - 1]! &&
    Number(m[4]) <= 23 &&
    Number(m[5]) <= 59 &&
    Number(m[6]) <= 60
  )
}

/** A JP timestamp: the exact text from disk, validated. */
export const Timestamp = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter(
      (s: string) =>
        isTimestamp(s) || `Expected a JP timestamp ("YYYY-MM-DD HH:MM:SS.f" or RFC 3339), got ${JSON.stringify(s)}`
    )
  ),
  Schema.brand("Timestamp")
)
export type Timestamp = typeof Timestamp.Type

/** Validates and brands a timestamp text (throws on bad input). */
export const make = (text: string): Timestamp => Timestamp.make(text)

/** Formats epoch nanoseconds the way JP writes (`2026-03-05 19:31:45.7`, `.0` for whole seconds). */
export const fromEpochNanos = (nanos: bigint): Timestamp => {
  const ms = nanos / 1_000_000n
  const sub = Number(((nanos % 1_000_000_000n) + 1_000_000_000n) % 1_000_000_000n)
  const iso = new Date(Number(ms)).toISOString() // YYYY-MM-DDTHH:MM:SS.mmmZ
  const frac = String(sub).padStart(9, "0").replace(/0+$/, "") || "0"
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${frac}` as Timestamp
}

let cachedSecond = -1
let cachedPrefix = ""

/**
 * Formats epoch microseconds (JP's clock resolution on disk). Events are
 * stamped often (every inquiry and tool result): this formats without BigInt
 * or Date allocations, reusing the "YYYY-MM-DD HH:MM:SS" of the second.
 */
export const fromEpochMicros = (micros: number): Timestamp => {
  const second = Math.floor(micros / 1_000_000)
  if (second !== cachedSecond) {
    const iso = new Date(second * 1000).toISOString()
    cachedPrefix = `${iso.slice(0, 10)} ${iso.slice(11, 19)}`
    cachedSecond = second
  }
  // The fraction without trailing zeros, by arithmetic rather than a regex.
  let frac = micros - second * 1_000_000
  if (frac === 0) return `${cachedPrefix}.0` as Timestamp
  let digits = 6
  while (frac % 10 === 0) {
    frac /= 10
    digits--
  }
  return `${cachedPrefix}.${String(frac).padStart(digits, "0")}` as Timestamp
}

/** The time of `clock`, with microsecond precision. */
export const fromClock = (clock: Clock.Clock): Timestamp =>
  fromEpochMicros(Number(clock.currentTimeNanosUnsafe() / 1000n))

/** The current time from Effect's `Clock` (`TestClock` in tests), with microsecond precision. */
export const current: Effect.Effect<Timestamp> = Clock.clockWith((clock) => Effect.sync(() => fromClock(clock)))

/**
 * The wall-clock time, outside Effect. Programs use {@link current}; this is
 * for plain callers (examples, defaults of non-Effect helpers).
 */
export const now = (): Timestamp => fromEpochMicros(Math.round((performance.timeOrigin + performance.now()) * 1000))

/** RFC 3339 (`Z`, fraction only when non-zero) — what JSON listings expose. */
export const toRfc3339 = (t: Timestamp | string): string => {
  const nanos = toEpochNanos(t)
  if (nanos === undefined) return t
  const f = fromEpochNanos(nanos)
  const [date, time] = f.split(" ") as [string, string]
  return `${date}T${time.endsWith(".0") ? time.slice(0, -2) : time}Z`
}

/** Orders two timestamps by instant. */
export const compare = (a: Timestamp | string, b: Timestamp | string): number => {
  const x = toEpochNanos(a) ?? 0n,
    y = toEpochNanos(b) ?? 0n
  return x < y ? -1 : x > y ? 1 : 0
}
