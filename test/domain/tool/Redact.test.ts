import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Redact from "../../../src/domain/tool/Redact.ts"

const b64 = (s: string) => Buffer.from(s).toString("base64")
const b64url = (s: string) => Buffer.from(s).toString("base64url")

describe("Redact.scrub", () => {
  it("removes the secret in plain text, JSON-escaped, and base64 at every alignment (standard and URL-safe)", () => {
    const secret = "hunter2-ÿ/\"x"
    for (const prefix of ["", "a", "ab", "abc", "token=\n"]) {
      const text = `${prefix}${secret} and ${JSON.stringify({ v: secret })}`
      for (const encoded of [text, b64(text), b64url(text)]) {
        const out = Redact.scrub(encoded, [secret])
        expect(out).toContain(Redact.MARKER)
        expect(out).not.toContain(secret)
        for (const form of Redact.formsOf(secret)) expect(out).not.toContain(form)
      }
    }
  })

  it("property: no form of a secret survives in any text that embeds it, plain or base64", () => {
    fc.assert(fc.property(fc.string({ minLength: 6, maxLength: 40 }), fc.string({ maxLength: 20 }), fc.string({ maxLength: 20 }), (secret, before, after) => {
      const text = before + secret + after
      expect(Redact.scrub(text, [secret])).not.toContain(secret)
      const decoded = Buffer.from(Redact.scrub(b64(text), [secret]).replaceAll(Redact.MARKER, ""), "base64").toString("utf8")
      // What is left of the encoding no longer decodes to the secret.
      expect(decoded.includes(secret)).toBe(false)
    }))
  })

  it("leaves ordinary output alone for very short secrets and when no secret was given", () => {
    expect(Redact.scrub("a banana", ["a"])).toBe("a banana")
    expect(Redact.scrub("nothing secret", [])).toBe("nothing secret")
    expect(Redact.formsOf("ab")).toStrictEqual([])
  })
})
