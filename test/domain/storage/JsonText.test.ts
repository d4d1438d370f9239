/**
 * JSON text at any depth (docs/decisions.md#json-depth): the iterative writer gives
 * exactly `JSON.stringify`'s text, and `stringify` survives a depth at which
 * the native writer overflows the stack.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as JsonText from "../../../src/domain/storage/JsonText.ts"

const nested = (depth: number, leaf: string) =>
  JSON.parse('[{"k":'.repeat(depth) + leaf + "}]".repeat(depth)) as unknown

describe("JsonText", () => {
  it("property: the iterative writer gives JSON.stringify's text, compact and indented", () => {
    const value = fc.oneof(
      fc.jsonValue(),
      fc.object({ values: [fc.constant(undefined), fc.string(), fc.double(), fc.constant(null)] }),
      fc.array(fc.constant(undefined))
    )
    fc.assert(
      fc.property(value, fc.constantFrom(0, 2, 4), (v, indent) => {
        expect(JsonText.stringifyIterative(v, indent)).toBe(JSON.stringify(v, null, indent))
      })
    )
  })

  it("follows toJSON and skips what JSON skips, as JSON.stringify does", () => {
    const v = {
      a: undefined,
      b: () => 1,
      c: [undefined, () => 1],
      d: { toJSON: (k: string) => `key ${k}` },
      e: new Date(0),
      f: {}
    }
    for (const indent of [0, 2]) expect(JsonText.stringifyIterative(v, indent)).toBe(JSON.stringify(v, null, indent))
    expect(JsonText.stringifyIterative(undefined)).toBe(JSON.stringify(undefined))
  })

  it("writes 100,000 levels that JSON.parse read and JSON.stringify cannot write", () => {
    const deep = nested(100_000, '"leaf"')
    expect(() => JSON.stringify(deep)).toThrow(RangeError)
    expect(JsonText.stringify(deep)).toBe('[{"k":'.repeat(100_000) + '"leaf"' + "}]".repeat(100_000))
    // Indented, the text grows with the square of the depth: 3,000 levels are 18 MB.
    const text = JsonText.stringify(nested(3_000, "1"), 2)
    expect(text).toBe(JsonText.stringifyIterative(nested(3_000, "1"), 2))
    expect(text.replace(/\s+/g, "")).toBe('[{"k":'.repeat(3_000) + "1" + "}]".repeat(3_000))
    expect(JsonText.stringify(nested(3, "1"), 2)).toBe(JSON.stringify(nested(3, "1"), null, 2))
  })
})
