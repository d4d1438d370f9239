import { describe, expect, it } from "@effect/vitest"
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
