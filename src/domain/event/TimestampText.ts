/**
 * The text rules of JP timestamps (see `Timestamp.ts`, which re-exports
 * them): JP's `YYYY-MM-DD HH:MM:SS.f…` or RFC 3339, as epoch nanoseconds.
 * Plain functions with no effect/Schema, so a listing can sort by them
 * without loading it (start-up: docs/decisions.md#fast-start).
 *
 * @example
 * ```ts
 * import * as TimestampText from "parley/domain/event/TimestampText"
 * TimestampText.toEpochNanos("2026-03-05 19:31:45.7") // 1772739105700000000n
 * TimestampText.isTimestamp("2026-02-30 00:00:00") // false
 * ```
 *
 * @since 0.1.0
 * @internal
 */
export const NAIVE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$/
export const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:\d{2})$/

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

/** Whether `text` has a timestamp's shape with its fields in range, a month's days bounded by `maxDay`. */
const inRange = (text: string, maxDay: (month: number) => number): boolean => {
  const m = NAIVE.exec(text) ?? RFC3339.exec(text)
  if (m === null) return false
  const month = Number(m[2]),
    day = Number(m[3])
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= maxDay(month) &&
    Number(m[4]) <= 23 &&
    Number(m[5]) <= 59 &&
    Number(m[6]) <= 60
  )
}

// Module-level, so a check allocates no closure (both run once per stored entry).
const anyMonth = (): number => 31
const ofMonth = (month: number): number => DAYS[month - 1]!

/**
 * Whether {@link toEpochNanos} reads `text` (the same rule, without its BigInt
 * arithmetic; Date.UTC of these ranges is never NaN, its last check): what a
 * reader of stored entries accepts, checked once per entry of a conversation
 * that may hold a few hundred thousand of them.
 */
export const isReadable = (text: string): boolean => inRange(text, anyMonth)

/** Whether `text` is a timestamp JP reads (cheap: no allocation on the hot path). */
export const isTimestamp = (text: string): boolean => inRange(text, ofMonth)
