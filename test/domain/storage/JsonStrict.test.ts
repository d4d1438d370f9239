/**
 * Reading JSON right whatever V8 parsed before (docs/decisions.md#json-read-around-a-v8-bug). V8 12.8–14.6
 * (Node 24 and 26) misreads an object key that holds an escape once another
 * text had a key its raw text starts with (V8 bug issues.chromium.org/issues/521080746): EntryCodec's
 * round-trip property failed "at random" on Node 24 because of it, with
 * `\t` and `\u0000` keys coming back as `\\`. `JsonText.parse` must give
 * what `JSON.parse` should, on every Node.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as JsonStrict from "../../../src/domain/storage/JsonStrict.ts"
import * as JsonText from "../../../src/domain/storage/JsonText.ts"

/** Keys made of the characters that need escapes, and some that do not. */
const key = fc.string({
  unit: fc.constantFrom("\t", "\\", '"', "\u0000", "\u0001", "\n", "/", "\b", "a", "é", "😀", "\ud800", "_"),
  maxLength: 4
})
const json: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(fc.string(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null)),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(key, tie("value"), { maxKeys: 4 }),
    fc.jsonValue()
  )
})).value

/** What a text must read back as: its own text again (keys, their order, every character). */
const readsBack = (read: (text: string) => unknown) => (value: unknown, indent: number) => {
  const text = JSON.stringify(value, null, indent)
  expect(JSON.stringify(read(text), null, indent)).toBe(text)
}

/** Texts that had V8 misread a later escaped key, and the keys that then came back wrong. */
const poison = () => {
  JSON.parse('{"h":[],"\\\\\\\\":0}')
  JSON.parse('{"\\\\\\\\":0}')
}

describe("JsonStrict.parse", () => {
  it("property: reads back every JSON text as written, compact and indented", () => {
    fc.assert(fc.property(json, fc.constantFrom(0, 2), readsBack(JsonStrict.parse)), { numRuns: 2000 })
  })

  it("gives what JSON.parse gives on texts V8 reads right: duplicate keys, __proto__, integer keys, numbers, escapes", () => {
    for (const text of [
      '{"a":1,"b":2,"a":3}',
      '{"__proto__":{"x":1},"y":[]}',
      '{"b":1,"2":2,"1":3,"a":4}',
      "[0,-0,1.5e300,-2.4260854731280536e+79,1E-7,123456789012345678901234567890]",
      '"\\ud800\\uDC00\\u00e9\\/\\b\\f\\n\\r\\t"',
      ' \t\n\r{ "a" : [ ] , "b" : { } } \n',
      "true",
      "null"
    ]) {
      const strict = JsonStrict.parse(text)
      expect(strict).toStrictEqual(JSON.parse(text))
      expect(Object.keys(strict ?? {})).toStrictEqual(Object.keys(JSON.parse(text) ?? {}))
    }
    const proto = JsonStrict.parse('{"__proto__":1}') as object
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype)
    expect(Object.getOwnPropertyNames(proto)).toStrictEqual(["__proto__"])
  })

  it("fails where JSON.parse fails, naming the position", () => {
    for (const text of [
      '{"a":1,}',
      "[1,]",
      "01",
      "1.",
      "-",
      '"a\tb"',
      '"\\x"',
      '"\\u12g4"',
      '{"a" 1}',
      "[1 2]",
      "nul"
    ]) {
      expect(() => JSON.parse(text), text).toThrow(SyntaxError)
      expect(() => JsonStrict.parse(text), text).toThrow(/in JSON at position \d+$/)
    }
    for (const text of ["", "[", '{"a":', '"abc', "[1,"]) {
      expect(() => JSON.parse(text), text).toThrow(SyntaxError)
      expect(() => JsonStrict.parse(text), text).toThrow("Unexpected end of JSON input")
    }
    expect(() => JsonStrict.parse('{"\\t": 1} x')).toThrow("Unexpected token 'x' in JSON at position 10")
  })

  it("property: a text with one character changed fails exactly when JSON.parse fails", () => {
    const edited = fc
      .tuple(json, fc.nat(), fc.constantFrom("", ",", "]", "}", '"', "\\", ":", "1", "e", "-", " ", "\u0001"))
      .map(([v, at, put]) => {
        const text = JSON.stringify(v)
        const i = at % (text.length + 1)
        return text.slice(0, i) + put + text.slice(i + 1)
      })
    fc.assert(
      fc.property(edited, (text) => {
        const native = (() => {
          try {
            JSON.parse(text)
            return true
          } catch {
            return false
          }
        })()
        if (native) expect(() => JsonStrict.parse(text)).not.toThrow()
        else expect(() => JsonStrict.parse(text)).toThrow(SyntaxError)
      }),
      { numRuns: 3000 }
    )
  })

  it("reads any depth (iterative): 100,000 levels", () => {
    const text = '{"\\t":['.repeat(100_000) + "]}".repeat(100_000)
    expect(JsonText.depth(JsonStrict.parse(text))).toBe(200_000)
  })
})

describe("JsonText.parse", () => {
  it("reads escaped keys right after texts that make V8 misread them", () => {
    // This order misreads both keys with Node 24's JSON.parse (V8 13.6): `\"` and `\t` both come back as `\\`.
    JSON.parse('{"h":[],"\\\\\\\\":0}')
    expect(Object.keys(JsonText.parse('{"h":1,"\\\\\\"":2}') as object)).toStrictEqual(["h", '\\"'])
    JSON.parse('{"\\\\\\\\":0}')
    expect(Object.keys(JsonText.parse('{"\\\\t":2}') as object)).toStrictEqual(["\\t"])
    expect(Object.keys((JsonText.parse('[{"\\\\t":2}]') as Array<object>)[0]!)).toStrictEqual(["\\t"])
  })

  it("property: reads back every JSON text as written, after the poisoning texts", () => {
    poison()
    fc.assert(fc.property(json, fc.constantFrom(0, 2), readsBack(JsonText.parse)), { numRuns: 2000 })
  })

  it("a text it rejects fails with JSON.parse's own words, escaped keys or not", () => {
    for (const text of ['{"\\t": 1} x', '{"\\t": "\\u12"}', '{"\\t": 1e}', '{"\\t"']) {
      let native = ""
      try {
        JSON.parse(text)
      } catch (error) {
        native = String(error)
      }
      expect(native).not.toBe("")
      expect(() => JsonText.parse(text)).toThrow(native.replace(/^SyntaxError: /, ""))
    }
  })

  it("defines keys past a setter or a read-only property on Object.prototype, as JSON.parse does", () => {
    let called = 0
    Object.defineProperty(Object.prototype, "polluted", { configurable: true, set: () => void called++ })
    Object.defineProperty(Object.prototype, "fixed", { configurable: true, writable: false, value: 0 })
    try {
      const v = JsonText.parse('{"\\t":1,"polluted":2,"fixed":3}') as Record<string, unknown>
      expect(Object.keys(v)).toStrictEqual(["\t", "polluted", "fixed"])
      expect([v["polluted"], v["fixed"], called]).toStrictEqual([2, 3, 0])
    } finally {
      delete (Object.prototype as Record<string, unknown>)["polluted"]
      delete (Object.prototype as Record<string, unknown>)["fixed"]
    }
  })

  it("property: hasEscapedKey says exactly whether some key holds an escape (values with escapes are not keys)", () => {
    fc.assert(
      fc.property(json, (v) => {
        const text = JSON.stringify(v)
        const keys: Array<string> = []
        const todo = [v]
        while (todo.length > 0) {
          const x = todo.pop()
          if (typeof x === "object" && x !== null)
            for (const [k, y] of Object.entries(x)) {
              if (!Array.isArray(x)) keys.push(k)
              todo.push(y)
            }
        }
        const escaped = keys.some((k) => JSON.stringify(k).includes("\\"))
        expect(JsonText.hasEscapedKey(text)).toBe(escaped)
        expect(JsonText.hasEscapedKey(JSON.stringify(v, null, 2))).toBe(escaped)
      }),
      { numRuns: 3000 }
    )
    expect(JsonText.hasEscapedKey('{"a":"x\\ny","b":["\\"",{"c":"\\\\"}]}')).toBe(false)
    expect(JsonText.hasEscapedKey('{"a\\"b" :1}')).toBe(true)
    expect(JsonText.hasEscapedKey('[{"\\\\":1}]')).toBe(true)
  })
})

describe("every JSON text parley reads goes through JsonText.parse", () => {
  it("no JSON.parse in src/ but JsonText's own, a string copy, and the page's script (which runs in the browser)", async () => {
    const fs = await import("node:fs")
    const path = await import("node:path")
    const allowed = new Set([
      "src/domain/storage/JsonText.ts",
      "src/domain/storage/JsonStrict.ts",
      "src/layers/serve/AppScript.ts"
    ])
    const found: Array<string> = []
    const walk = (dir: string): void => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name)
        if (e.isDirectory()) walk(p)
        else if (p.endsWith(".ts") && !allowed.has(p))
          fs.readFileSync(p, "utf8")
            .split("\n")
            .forEach((line, i) => {
              const code = line.trim()
              if (code.startsWith("*") || code.startsWith("//") || !code.includes("JSON.parse(")) return
              if (code.includes("JSON.parse(JSON.stringify(s))")) return // a string value, no key to misread
              found.push(`${p}:${i + 1}: ${code}`)
            })
      }
    }
    walk("src")
    expect(found).toStrictEqual([])
  })
})
