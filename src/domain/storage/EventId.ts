/**
 * Stream entry ids (JP RFD 097, `jp_conversation/src/event_id.rs` and
 * `stream/entry.rs`): every entry today's JP writes carries `event_id`, an
 * opaque string unique within its stream, written first in the entry
 * (`{"event_id":"k3m9x2a","timestamp":…,"type":…}`).
 *
 * JP's rules, as parley follows them:
 *
 * - A generated id is 7 characters of `0-9a-z`, each equally likely (OS
 *   randomness; a byte of 252 or more is drawn again), and is never one the
 *   stream holds already: a colliding draw is drawn again.
 * - Reading: a missing, `null` or empty `event_id` is a legacy entry without
 *   one; any other string is kept verbatim, whatever its format; anything
 *   else is a corrupt entry (an error naming it).
 * - JP also gives a legacy entry (and the later of two entries sharing an id)
 *   a fresh id at load, written on its next save. parley does not: an entry
 *   it did not change is written back byte for byte (contract §2), so only
 *   the entries parley appends get ids, never one the file holds.
 *
 * @example
 * ```ts
 * import * as EventId from "parley/domain/storage/EventId"
 * const id = EventId.fresh(new Set(["k3m9x2a"]))
 * const ok = /^[0-9a-z]{7}$/.test(id) // true
 * ```
 *
 * @since 0.1.0
 */
const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
const LENGTH = 7 // `random` passes the seven codes by position

// Random bytes drawn 4 KiB at a time: a call into Web Crypto costs far more than the 7 bytes it
// returns (one per id was ~a fifth of the coordinator bench's time, docs/benchmarks.md).
const pool = new Uint8Array(4096)
let next = pool.length

/** Fills a buffer with OS random bytes (a process that has none throws). */
export type RandomSource = (buffer: Uint8Array) => void

// Web Crypto (a global in every Node parley supports): the OS random source JP also draws from.
const webCrypto: RandomSource = (buffer) => {
  globalThis.crypto.getRandomValues(buffer)
}
let source: RandomSource = webCrypto

/**
 * Draws ids from `fill` instead of Web Crypto (the CLI's `/dev/urandom`, `layers/file/Urandom.ts`:
 * Node loads its whole Web Crypto stack on the first use of `globalThis.crypto`, about 4% of a
 * scripted query turn, issue 50). When `fill` throws, Web Crypto answers from then on.
 */
export const useRandomSource = (fill: RandomSource): void => {
  source = fill
}

const refill = (): void => {
  try {
    source(pool)
  } catch {
    source = webCrypto
    source(pool)
  }
}

const randomByte = (): number => {
  if (next === pool.length) {
    refill()
    next = 0
  }
  return pool[next++]!
}

/** The alphabet's character codes, and the codes of the id being drawn (one id at a time: no await between). */
const CODES = Array.from(ALPHABET, (c) => c.charCodeAt(0))
const drawn: Array<number> = new Array(LENGTH).fill(0)

/**
 * Draws an id's seven codes into `drawn` (rejection sampling, as JP: no
 * character is likelier than another) and returns the number they spell.
 */
const draw = (): number => {
  let value = 0
  for (let n = 0; n < LENGTH; ) {
    const b = randomByte()
    if (b < 252) {
      drawn[n++] = CODES[b % 36]!
      value = value * 36 + (b % 36)
    }
  }
  return value
}

/**
 * The id just drawn, as one flat string: built by `+=` it was a chain of seven, flattened again by every lookup of
 * the id. The seven codes as arguments: spread from the array, the call cost about five times as much.
 */
const spell = (): string =>
  String.fromCharCode(drawn[0]!, drawn[1]!, drawn[2]!, drawn[3]!, drawn[4]!, drawn[5]!, drawn[6]!)

/** One random id in JP's generated format. */
export const random = (): string => {
  draw()
  return spell()
}

/** An id none of `taken` holds (JP's `fresh`: draw again on a collision). */
export const fresh = (taken: Pick<ReadonlySet<string>, "has">, draw: () => string = random): string => {
  for (;;) {
    const id = draw()
    if (id !== "" && !taken.has(id)) return id
  }
}

/** A JP-format id (7 of `0-9a-z`) as the number it spells in base 36 (below 36^7, exact in a double); else `undefined`. */
const spelled = (id: string): number | undefined => {
  if (id.length !== LENGTH) return undefined
  let value = 0
  for (let i = 0; i < LENGTH; i++) {
    const c = id.charCodeAt(i)
    const digit = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 122 ? c - 87 : -1
    if (digit < 0) return undefined
    value = value * 36 + digit
  }
  return value
}

/** Where `value` is in `slots` (each a number plus one, 0 empty, linear probing), or the empty slot it would go in. */
const probe = (slots: Float64Array, value: number): number => {
  const mask = slots.length - 1
  let i = value & mask
  while (slots[i] !== 0 && slots[i] !== value + 1) i = (i + 1) & mask
  return i
}

/** Puts `value` in `slots`: `false` when it was there already. */
const insert = (slots: Float64Array, value: number): boolean => {
  const i = probe(slots, value)
  if (slots[i] !== 0) return false
  slots[i] = value + 1
  return true
}

/**
 * The ids a stream holds, for drawing fresh ones ({@link fresh}). An id in
 * JP's format is kept as the number it spells, in an open-addressing table
 * indexed by its low bits (a drawn id is uniformly random, so they spread
 * as they are); any other id, in a `Set`. A `Set` of every id cost two hash
 * lookups of a new string per appended entry, about a twentieth of the
 * coordinator bench (docs/benchmarks.md#coordinator).
 *
 * @example
 * ```ts
 * import * as EventId from "parley/domain/storage/EventId"
 * const taken = new EventId.Taken()
 * taken.add("k3m9x2a")
 * const id = EventId.fresh(taken) // never "k3m9x2a"
 * taken.add(id)
 * ```
 */
export class Taken {
  /** Each held JP-format id's number plus one (0: an empty slot). */
  private slots = new Float64Array(1024)
  private count = 0
  /** The held ids not in JP's format (read from disk: any string is kept verbatim). */
  private readonly others = new Set<string>()

  has(id: string): boolean {
    const value = spelled(id)
    if (value === undefined) return this.others.has(id)
    return this.slots[probe(this.slots, value)] !== 0
  }

  add(id: string): void {
    const value = spelled(id)
    if (value === undefined) {
      this.others.add(id)
      return
    }
    if (insert(this.slots, value)) this.count++
    // Half full at most: a probe stays short.
    if (this.count * 2 > this.slots.length) this.grow()
  }

  /**
   * A fresh id ({@link fresh}, drawn the same way), now held: drawn as the
   * number it spells, so it is looked up and kept in one probe, and spelled
   * once (every appended entry takes one).
   */
  fresh(): string {
    for (;;) {
      const value = draw()
      const i = probe(this.slots, value)
      if (this.slots[i] !== 0) continue
      this.slots[i] = value + 1
      if (++this.count * 2 > this.slots.length) this.grow()
      return spell()
    }
  }

  private grow(): void {
    const old = this.slots
    this.slots = new Float64Array(old.length * 2)
    for (const slot of old) if (slot !== 0) insert(this.slots, slot - 1)
  }
}
