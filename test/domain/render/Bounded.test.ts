import { describe, expect, it } from "@effect/vitest"
import { Bounded } from "../../../src/domain/render/Bounded.ts"

describe("Bounded: the most recently used entries within a count and a size", () => {
  it("drops the least recently used past the count or the size; a read makes an entry recent; a large one is not kept", () => {
    const kept = new Bounded<string, number>({ maxEntries: 2, maxSize: 10, maxEntrySize: 6 })
    kept.set("a", 1, 3)
    kept.set("b", 2, 3)
    expect(kept.get("a")).toBe(1) // "b" is now the least recently used
    kept.set("c", 3, 3) // a third entry: "b" goes
    expect([kept.get("a"), kept.get("b"), kept.get("c")]).toStrictEqual([1, undefined, 3])
    kept.set("d", 4, 6) // 3 + 6 = 9 within the size, but a third entry: "a" (read before "c") goes
    expect([kept.get("a"), kept.get("c"), kept.get("d")]).toStrictEqual([undefined, 3, 4])
    kept.set("c", 5, 5) // replaced: 5 + 6 = 11 over the size: "d", now the least recently used, goes
    expect([kept.get("c"), kept.get("d")]).toStrictEqual([5, undefined])
    kept.set("e", 6, 7) // over its own bound: not kept, and nothing else dropped
    expect([kept.get("e"), kept.get("c")]).toStrictEqual([undefined, 5])
    kept.delete("c")
    kept.set("f", 7, 6)
    kept.set("g", 8, 4) // 6 + 4 = 10: both fit once "c" is gone
    expect([kept.get("f"), kept.get("g")]).toStrictEqual([7, 8])
  })
})
