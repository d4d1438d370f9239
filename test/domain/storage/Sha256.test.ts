// The SHA-256 in plain code (src/domain/storage/Sha256.ts) is SHA-256: FIPS 180-4's vectors, and
// node:crypto's digest for every length around the block edges and for text beyond ASCII.
import * as crypto from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { sha256 } from "../../../src/domain/storage/Sha256.ts"

const nodes = (text: string) => crypto.createHash("sha256").update(text, "utf8").digest("hex")

describe("sha256", () => {
  it("FIPS 180-4's examples", () => {
    expect(sha256("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    expect(sha256("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    expect(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).toBe(
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    )
  })

  it("node:crypto's digest for 0 to 300 bytes (every padding case) and for text beyond ASCII", () => {
    for (let n = 0; n <= 300; n++) {
      const text = "parley-notify\n".repeat(30).slice(0, n)
      expect(sha256(text), `length ${n}`).toBe(nodes(text))
    }
    for (const text of ["é", "日本語の質問", "emoji 🦜 in a title", "\u0000\uffff", "x".repeat(100_000)])
      expect(sha256(text)).toBe(nodes(text))
  })
})
