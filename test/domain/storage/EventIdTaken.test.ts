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
})
