import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import * as StorageBase64 from "../../../src/domain/storage/StorageBase64.ts"

describe("StorageBase64 (JP's lenient storage decoding)", () => {
  it("decodes canonical padded standard base64 of UTF-8", () => {
    expect(StorageBase64.decode("aGVsbG8=")).toBe("hello")
    expect(StorageBase64.decode(StorageBase64.encode("héllo ✓ 🎉"))).toBe("héllo ✓ 🎉")
    expect(StorageBase64.decode("")).toBe("")
    // A byte-order mark is content and survives the round trip.
    expect(StorageBase64.decode("77u/YQ==")).toBe("\uFEFFa")
    expect(StorageBase64.encode("\uFEFFa")).toBe("77u/YQ==")
  })

  it("keeps URL-safe, unpadded, non-canonical and non-UTF-8 values raw", () => {
    expect(StorageBase64.decode("a-_b")).toBeUndefined() // URL-safe alphabet
    expect(StorageBase64.decode("aGVsbG8")).toBeUndefined() // missing padding
    expect(StorageBase64.decode("aGVsbG9=")).toBeUndefined() // non-zero padding bits
    expect(StorageBase64.decode("/w==")).toBeUndefined() // 0xFF is not UTF-8
    expect(StorageBase64.decode("src/main.rs")).toBeUndefined()
    expect(StorageBase64.decodeLenient("src/main.rs")).toBe("src/main.rs")
  })

  it("encodes padded standard base64", () => {
    expect(StorageBase64.encode("hello")).toBe("aGVsbG8=")
    expect(StorageBase64.encode("?>")).toBe("Pz4=")
  })
})

// The reference rule, char by char (what decode() implemented before it used
// a native re-encode check): canonical padded standard base64 of UTF-8.
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
const referenceDecode = (s: string): string | undefined => {
  const n = s.length
  if (n % 4 !== 0) return undefined
  const pad = s.endsWith("==") ? 2 : s.endsWith("=") ? 1 : 0
  for (let i = 0; i < n - pad; i++) if (!ALPHABET.includes(s[i]!)) return undefined
  if (pad === 1 && (ALPHABET.indexOf(s[n - 2]!) & 0b11) !== 0) return undefined
  if (pad === 2 && (ALPHABET.indexOf(s[n - 3]!) & 0b1111) !== 0) return undefined
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(Buffer.from(s, "base64"))
  } catch {
    return undefined
  }
}

describe("StorageBase64.decode agrees with the char-by-char rule", () => {
  it("on hand-picked near misses", () => {
    const cases = [
      "",
      "====",
      "a===",
      "ab==",
      "abc=",
      "abcd",
      "ab=c",
      "a=bc",
      "ab c",
      "abc\n",
      "ab\u00e9c",
      "ab.c",
      "ab-_",
      "YQ==",
      "YR==",
      "YWE=",
      "YWF=",
      "YWJj",
      " YWJj",
      "YWJj ",
      "YW Jj",
      "YWJj====",
      "YWJjZA=="
    ]
    for (const s of cases) expect([s, StorageBase64.decode(s)]).toEqual([s, referenceDecode(s)])
  })

  it("on random strings over the base64 alphabet and its neighbours", () => {
    const char = fc.constantFrom(
      ..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".split(""),
      "=",
      "-",
      "_",
      " ",
      "\n",
      "é",
      ".",
      "\u0000"
    )
    const quads = fc
      .array(
        fc.tuple(char, char, char, char).map((q) => q.join("")),
        { maxLength: 6 }
      )
      .map((qs) => qs.join(""))
    const encoded = fc.string({ unit: "binary" }).map((t) => Buffer.from(t, "utf8").toString("base64"))
    const bytes = fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b).toString("base64"))
    fc.assert(
      fc.property(fc.oneof(quads, encoded, bytes, fc.string()), (s) => {
        expect(StorageBase64.decode(s)).toBe(referenceDecode(s))
      }),
      { numRuns: 3000 }
    )
  })
})
