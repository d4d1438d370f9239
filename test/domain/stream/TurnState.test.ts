import { describe, expect, it } from "@effect/vitest"
import * as Equal from "effect/Equal"
import * as Hash from "effect/Hash"
import * as TurnState from "../../../src/domain/stream/TurnState.ts"

/** A small deterministic generator (mulberry32), so a failing case is the same on every run. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

describe("TurnState", () => {
  it("allocates ids one after another per (call, question), and stops at max", () => {
    let state = TurnState.make()
    const ids: Array<string | undefined> = []
    for (let i = 0; i < 3; i++) {
      const [id, next] = TurnState.allocateInquiryId(state, "call_1", "q", 2)
      ids.push(id)
      state = next
    }
    expect(ids).toEqual(["call_1.q.1", "call_1.q.2", undefined])
    expect(TurnState.attempts(state, "call_1", "q")).toBe(2)
    expect(TurnState.attempts(state, "call_1", "other")).toBe(0)
  })

  it("is a value: an older state allocates as it did, and its change starts apart from the newer ones", () => {
    const start = TurnState.make(new Map([["call_1\u0000q", 4]]))
    const [first, one] = TurnState.nextInquiryId(start, "call_1", "q")
    const [second, two] = TurnState.nextInquiryId(one, "call_1", "q")
    // The same state, asked again: the same id, whatever was made from it since.
    expect(TurnState.nextInquiryId(start, "call_1", "q")[0]).toBe(first)
    expect([first, second]).toEqual(["call_1.q.5", "call_1.q.6"])
    const [branched, other] = TurnState.nextInquiryId(one, "call_2", "q")
    expect(branched).toBe("call_2.q.1")
    expect(TurnState.attempts(other, "call_1", "q")).toBe(5)
    expect(TurnState.attempts(two, "call_2", "q")).toBe(0)
    expect(TurnState.attempts(two, "call_1", "q")).toBe(6)
    expect(new Map(start.inquiryAttempts)).toEqual(new Map([["call_1\u0000q", 4]]))
  })

  it("agrees with a copied Map for every version, on random changes from random versions", () => {
    const next = random(97)
    const keys = ["a", "b", "c", "d", "e"]
    for (let round = 0; round < 50; round++) {
      const versions: Array<{ readonly attempts: TurnState.Attempts; readonly model: Map<string, number> }> = [
        // Any count, even one no turn allocates.
        { attempts: TurnState.Attempts.from([["a", -1]]), model: new Map([["a", -1]]) }
      ]
      // Long enough for a line's journal to start again (twice its map, and 64, past).
      for (let step = 0; step < 200; step++) {
        // Mostly the newest version (as a Ref holds it), sometimes an older one.
        const from = next() < 0.7 ? versions.length - 1 : Math.floor(next() * versions.length)
        const { attempts, model } = versions[from]!
        const key = keys[Math.floor(next() * keys.length)]!
        const count = Math.floor(next() * 9) + 1
        versions.push({ attempts: attempts.set(key, count), model: new Map(model).set(key, count) })
        // Every version still reads as it was made, by key, by size and whole.
        const check = versions[Math.floor(next() * versions.length)]!
        for (const k of keys) expect(check.attempts.get(k)).toBe(check.model.get(k))
        expect(check.attempts.size).toBe(check.model.size)
        expect(new Map(check.attempts)).toEqual(check.model)
        // Equal to counters made with the same counts, however they were made; shown as they are.
        const same = TurnState.Attempts.from(check.model)
        expect(Equal.equals(check.attempts, same)).toBe(true)
        expect(Hash.hash(check.attempts)).toBe(Hash.hash(same))
        expect(JSON.parse(JSON.stringify(check.attempts))).toEqual(Object.fromEntries(check.model))
      }
      for (const v of versions) expect(new Map(v.attempts)).toEqual(v.model)
    }
  })

  it("a key asked again and again: the journal starts again, and every earlier version still reads as it was", () => {
    let attempts = TurnState.Attempts.from([["other", 1]])
    const versions = [attempts]
    for (let i = 1; i <= 500; i++) {
      attempts = attempts.set("call_1\u0000q", i)
      versions.push(attempts)
    }
    versions.forEach((v, i) => {
      expect(v.get("call_1\u0000q")).toBe(i === 0 ? undefined : i)
      expect(new Map(v)).toEqual(new Map([["other", 1], ...(i === 0 ? [] : [["call_1\u0000q", i] as const])]))
    })
  })
})
