// The ids a session holds (EventId.Taken): what a plain Set of strings says, for ids in JP's format
// and any other string an entry on disk may carry, through the table's growth.
import { describe, expect, it } from "@effect/vitest"
import * as EventId from "../../../src/domain/storage/EventId.ts"

describe("EventId.Taken", () => {
  it("holds what a Set holds, JP-format ids and any other, as it grows", () => {
    const taken = new EventId.Taken()
    const set = new Set<string>()
    const others = ["", "legacy-id", "ABCDEFG", "k3m9x2", "k3m9x2a8", "zzzzzz{", "0000000 "]
    // Ids whose numbers share their low bits (the table's index): 36^7 apart is out of range, so step by 2^20.
    const colliding = Array.from({ length: 40 }, (_, i) => (i * 2 ** 20).toString(36).padStart(7, "0"))
    const ids = [...others, ...colliding, "0000000", "zzzzzzz", ...Array.from({ length: 5000 }, () => EventId.random())]
    for (const [i, id] of ids.entries()) {
      if (i % 2 === 0) {
        taken.add(id)
        set.add(id)
      }
    }
    for (const id of [...ids, "k3m9x2b", "1111111"])
      expect({ id, held: taken.has(id) }).toEqual({ id, held: set.has(id) })
    // Adding again changes nothing.
    for (const id of set) taken.add(id)
    for (const id of ids) expect(taken.has(id)).toBe(set.has(id))
  })

  it("fresh never draws a held id: a draw that collides is drawn again", () => {
    const taken = new EventId.Taken()
    taken.add("aaaaaaa")
    taken.add("bbbbbbb")
    const draws = ["aaaaaaa", "bbbbbbb", "aaaaaaa", "ccccccc"]
    expect(EventId.fresh(taken, () => draws.shift()!)).toBe("ccccccc")
    expect(draws).toEqual([])
  })

  it("Taken.fresh draws an id in JP's format that no entry holds, and holds it", () => {
    const taken = new EventId.Taken()
    const before = new Set(Array.from({ length: 3000 }, () => EventId.random()))
    for (const id of before) taken.add(id)
    const drawn = Array.from({ length: 20_000 }, () => taken.fresh())
    for (const id of drawn) {
      expect(id).toMatch(/^[0-9a-z]{7}$/)
      expect(taken.has(id)).toBe(true)
    }
    expect(new Set([...before, ...drawn]).size).toBe(before.size + drawn.length)
    // Each character at each place about equally likely: ~556 of each at each place, within 30% (7 standard deviations).
    const counts = new Map<string, number>()
    for (const id of drawn)
      for (const [i, c] of [...id].entries()) counts.set(`${i}${c}`, (counts.get(`${i}${c}`) ?? 0) + 1)
    expect(counts.size).toBe(7 * 36)
    for (const n of counts.values()) expect(Math.abs(n - 20_000 / 36)).toBeLessThan(0.3 * (20_000 / 36))
  })

  it("Taken.fresh draws again while it draws a held id", () => {
    // A source of zeros for three fills, then of 35s ("z"): every id drawn from zeros is "0000000".
    let fills = 0
    EventId.useRandomSource((buffer) => void buffer.fill(fills++ < 3 ? 0 : 35))
    try {
      // Past what the pool held before: once an id is all zeros, the pool is the source's.
      for (let i = 0; i < 1000 && EventId.random() !== "0000000"; i++);
      const taken = new EventId.Taken()
      taken.add("0000000")
      const id = taken.fresh()
      expect(id).not.toBe("0000000")
      expect(id).toMatch(/^0*z+$/)
      // It drew through the zeros of the later fills, each "0000000" again.
      expect(fills).toBeGreaterThanOrEqual(4)
    } finally {
      EventId.useRandomSource((buffer) => void globalThis.crypto.getRandomValues(buffer))
      // The rest of the last fill, drawn away.
      for (let i = 0; i < 1000; i++) EventId.random()
    }
  })
})
