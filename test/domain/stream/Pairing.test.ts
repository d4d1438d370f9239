import { describe, expect, it } from "@effect/vitest"
import * as Pairing from "../../../src/domain/stream/Pairing.ts"
import { streams } from "../_streams.ts"

describe("Pairing (docs/decisions.md#one-home-for-each-stream-rule)", () => {
  it("a response closes the oldest open request with its id", () => {
    const b = streams()
    const p = Pairing.make<number>()
    expect(p.step(b.call("a"), 0)).toEqual({ _tag: "Opened", kind: "tool" })
    p.step(b.call("b"), 1)
    p.step(b.call("a"), 2)
    expect(p.step(b.result("a"), 3)).toEqual({ _tag: "Closed", kind: "tool", request: 0 })
    expect(p.step(b.result("a"), 4)).toEqual({ _tag: "Closed", kind: "tool", request: 2 })
    expect(p.open("tool")).toEqual([1])
  })

  it("tells a response with no request from one whose requests are all answered", () => {
    const b = streams()
    const p = Pairing.make<number>()
    expect(p.step(b.result("a"), 0)).toEqual({ _tag: "Unrequested", kind: "tool", id: "a" })
    p.step(b.call("a"), 1)
    p.step(b.result("a"), 2)
    expect(p.step(b.result("a"), 3)).toEqual({ _tag: "Exhausted", kind: "tool", id: "a" })
    // An orphan never uses up a later request.
    p.step(b.call("a"), 4)
    expect(p.step(b.result("a"), 5)).toEqual({ _tag: "Closed", kind: "tool", request: 4 })
  })

  it("pairs tool calls and inquiries apart, even with equal ids", () => {
    const b = streams()
    const p = Pairing.make<number>()
    p.step(b.call("x"), 0)
    expect(p.step(b.answer("x"), 1)).toEqual({ _tag: "Unrequested", kind: "inquiry", id: "x" })
    expect(p.step(b.ask("x"), 2)).toEqual({ _tag: "Opened", kind: "inquiry" })
    expect(p.step(b.cancel("x"), 3)).toEqual({ _tag: "Closed", kind: "inquiry", request: 2 })
    expect(p.open("tool")).toEqual([0])
    expect(p.open("inquiry")).toEqual([])
  })

  it("ignores everything else, turn_start included; reset starts a new turn", () => {
    const b = streams()
    const p = Pairing.make<number>()
    p.step(b.call("a"), 0)
    for (const e of [b.ts(), b.cr("q"), b.msg("m"), b.delta(), b.unknown()])
      expect(p.step(e, 9)).toEqual({ _tag: "Unpaired" })
    expect(p.openCount("tool", "a")).toBe(1)
    p.reset()
    expect(p.openCount("tool", "a")).toBe(0)
    expect(p.step(b.result("a"), 1)).toEqual({ _tag: "Unrequested", kind: "tool", id: "a" })
  })

  it("a tentative pairer reads through its base and leaves it untouched", () => {
    const b = streams()
    const base = Pairing.make<number>()
    base.step(b.call("a"), 0)
    base.step(b.call("a"), 1)
    base.step(b.ask("q"), 2)
    const t = base.tentative()
    expect(t.step(b.result("a"), 3)).toEqual({ _tag: "Closed", kind: "tool", request: 0 })
    t.step(b.call("a"), 4)
    expect(t.open("tool")).toEqual([1, 4])
    expect(t.step(b.result("a"), 5)).toEqual({ _tag: "Closed", kind: "tool", request: 1 })
    expect(t.step(b.result("a"), 6)).toEqual({ _tag: "Closed", kind: "tool", request: 4 })
    expect(t.step(b.result("a"), 7)).toEqual({ _tag: "Exhausted", kind: "tool", id: "a" })
    expect(t.step(b.answer("q"), 8)).toEqual({ _tag: "Closed", kind: "inquiry", request: 2 })
    expect(base.open("tool")).toEqual([0, 1])
    expect(base.open("inquiry")).toEqual([2])
    expect(base.step(b.result("a"), 9)).toEqual({ _tag: "Closed", kind: "tool", request: 0 })
  })

  it("orphan tells what step would of a response, recording nothing", () => {
    const b = streams()
    const p = Pairing.make<number>()
    expect(p.orphan(b.result("a"))).toEqual({ _tag: "Unrequested", kind: "tool", id: "a" })
    p.step(b.call("a"), 0)
    expect(p.orphan(b.result("a"))).toBeUndefined()
    expect(p.orphan(b.result("a"))).toBeUndefined()
    expect(p.orphan(b.answer("a"))).toEqual({ _tag: "Unrequested", kind: "inquiry", id: "a" })
    expect(p.orphan(b.call("b"))).toBeUndefined()
    expect(p.openCount("tool", "a")).toBe(1)
    p.step(b.result("a"), 1)
    expect(p.orphan(b.result("a"))).toEqual({ _tag: "Exhausted", kind: "tool", id: "a" })
    p.step(b.ask("q"), 2)
    expect(p.tentative().orphan(b.answer("q"))).toBeUndefined()
  })

  it("a tentative pairer's reset forgets its base", () => {
    const b = streams()
    const base = Pairing.make<number>()
    base.step(b.call("a"), 0)
    const t = base.tentative()
    t.reset()
    expect(t.step(b.result("a"), 1)).toEqual({ _tag: "Unrequested", kind: "tool", id: "a" })
    expect(base.openCount("tool", "a")).toBe(1)
  })

  it("agrees with a plain FIFO per id on random steps, through a tentative layer too, with undefined values", () => {
    const b = streams()
    // A small deterministic generator (xorshift): the same steps every run.
    let seed = 0x9e3779b9
    const rand = (n: number) => {
      seed ^= seed << 13
      seed ^= seed >>> 17
      seed ^= seed << 5
      return (seed >>> 0) % n
    }
    type Model = Map<string, Array<number | undefined>>
    const copy = (m: Model): Model => new Map([...m].map(([k, v]) => [k, [...v]]))
    for (let trial = 0; trial < 200; trial++) {
      let pairer = Pairing.make<number | undefined>()
      let model: { tool: Model; inquiry: Model } = { tool: new Map(), inquiry: new Map() }
      let base: { pairer: Pairing.Pairer<number | undefined>; open: Array<number | undefined> } | undefined
      for (let i = 0; i < 40; i++) {
        const id = ["a", "b", "c"][rand(3)]!
        const kind = rand(2) === 0 ? "tool" : "inquiry"
        const value = rand(4) === 0 ? undefined : i
        if (base === undefined && rand(10) === 0) {
          // From here on a tentative layer over what was recorded so far; the base must not change.
          base = { pairer, open: pairer.open("tool") }
          pairer = pairer.tentative()
          model = { tool: copy(model.tool), inquiry: copy(model.inquiry) }
        }
        const queue = model[kind].get(id)
        if (rand(2) === 0) {
          const step = pairer.step(kind === "tool" ? b.call(id) : b.ask(id), value)
          expect(step).toEqual({ _tag: "Opened", kind })
          if (queue === undefined) model[kind].set(id, [value])
          else queue.push(value)
        } else {
          const step = pairer.step(kind === "tool" ? b.result(id) : b.answer(id), value)
          const expected =
            queue === undefined
              ? { _tag: "Unrequested", kind, id }
              : queue.length === 0
                ? { _tag: "Exhausted", kind, id }
                : { _tag: "Closed", kind, request: queue.shift() }
          expect(step).toEqual(expected)
        }
        for (const k of ["tool", "inquiry"] as const) {
          expect(pairer.open(k)).toEqual([...model[k].values()].flat())
          for (const x of ["a", "b", "c"]) expect(pairer.openCount(k, x)).toBe(model[k].get(x)?.length ?? 0)
        }
      }
      if (base !== undefined) expect(base.pairer.open("tool")).toEqual(base.open)
    }
  })
})
