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
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { isTimestamp, toEpochNanos } from "./TimestampText.ts"

// The text rules live in TimestampText.ts (no effect/Schema there, so `conversation ls` can use them
// without loading it; docs/decisions.md#fast-start); they are part of this module's API as before.
export { isTimestamp, toEpochNanos }

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

/**
 * A text this module has just formatted in JP's shape: branded without the
 * check {@link make} runs (events are stamped often, and the shape is ours).
 */
const formatted = (text: string): Timestamp => text as Timestamp

/** Formats epoch nanoseconds the way JP writes (`2026-03-05 19:31:45.7`, `.0` for whole seconds). */
export const fromEpochNanos = (nanos: bigint): Timestamp => {
  const ms = nanos / 1_000_000n
  const sub = Number(((nanos % 1_000_000_000n) + 1_000_000_000n) % 1_000_000_000n)
  const iso = new Date(Number(ms)).toISOString() // YYYY-MM-DDTHH:MM:SS.mmmZ
  const frac = String(sub).padStart(9, "0").replace(/0+$/, "") || "0"
  return formatted(`${iso.slice(0, 10)} ${iso.slice(11, 19)}.${frac}`)
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
  if (frac === 0) return formatted(`${cachedPrefix}.0`)
  let digits = 6
  while (frac % 10 === 0) {
    frac /= 10
    digits--
  }
  // Joined, not concatenated: `+` makes a chain of pieces V8 keeps as long as the text (every recorded event
  // holds its timestamp); `join` makes one flat string.
  return formatted([cachedPrefix, String(frac).padStart(digits, "0")].join("."))
}

/**
 * How Effect's own clock (`Clock.Clock`'s default) reads the time: a clock
 * that reads it so is told apart from a test's or a caller's, which read it
 * their own way (one made from Effect's with this method replaced too).
 */
const systemNanos = Clock.Clock.defaultValue().currentTimeNanosUnsafe

let origin: number | undefined

/**
 * Monotonic milliseconds: Node's `process.hrtime` where there is one, since the first read of the
 * global `performance` makes Node load its perf_hooks (~1.5 ms of a command's start, and every
 * recorded event reads the time); `performance.now()` elsewhere (a browser).
 */
const monotonicMs: () => number =
  typeof process === "object" && typeof process.hrtime === "function"
    ? () => {
        const [seconds, nanos] = process.hrtime()
        return seconds * 1000 + nanos / 1e6
      }
    : () => performance.now()

/**
 * The wall-clock time in microseconds, kept as Effect's own clock keeps it
 * (monotonic time from an origin on the wall clock, anchored again when
 * the two drift more than a second apart), in doubles (0.2 µs apart at
 * most): read through Effect's clock, in BigInts, it was six allocations
 * a timestamp, and every recorded event takes one.
 */
const systemMicros = (): number => {
  const monotonic = monotonicMs()
  const wall = Date.now()
  if (origin === undefined || Math.abs(wall - (origin + monotonic)) > 1000) origin = wall - monotonic
  return Math.round((origin + monotonic) * 1000)
}

/** The time of `clock`, with microsecond precision. */
export const fromClock = (clock: Clock.Clock): Timestamp =>
  fromEpochMicros(
    clock.currentTimeNanosUnsafe === systemNanos ? systemMicros() : Number(clock.currentTimeNanosUnsafe() / 1000n)
  )

/** The current time from Effect's `Clock` (`TestClock` in tests), with microsecond precision. */
export const current: Effect.Effect<Timestamp> = Clock.clockWith((clock) => Effect.sync(() => fromClock(clock)))

/**
 * The wall-clock time, outside Effect. Programs use {@link current}; this is
 * for plain callers (examples, defaults of non-Effect helpers).
 */
export const now = (): Timestamp => fromEpochMicros(systemMicros())

/** RFC 3339 (`Z`, fraction only when non-zero) — what JSON listings expose. */
export const toRfc3339 = (t: Timestamp | string): string => {
  const nanos = toEpochNanos(t)
  if (nanos === undefined) return t
  const f = fromEpochNanos(nanos)
  const space = f.indexOf(" ")
  const date = f.slice(0, space)
  const time = f.slice(space + 1)
  return `${date}T${time.endsWith(".0") ? time.slice(0, -2) : time}Z`
}

/** Orders two timestamps by instant. */
export const compare = (a: Timestamp | string, b: Timestamp | string): number => {
  const x = toEpochNanos(a) ?? 0n,
    y = toEpochNanos(b) ?? 0n
  return x < y ? -1 : x > y ? 1 : 0
}
