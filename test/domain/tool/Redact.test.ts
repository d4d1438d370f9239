/**
 * The secret scrubber (docs/security.md#secrets), property-tested: for
 * random secrets placed at random in random output, in every encoding of
 * the table (encoded here by Node's own encoders, not the scrubber's), and
 * broken across lines at random places, exactly the encoded secret is
 * replaced and everything around it is kept; text without the secret comes
 * back unchanged.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Redact from "../../../src/domain/tool/Redact.ts"
import * as SecretForms from "../../../src/domain/tool/SecretForms.ts"

const M = Redact.MARKER

/** Characters a secret is made of: ASCII, a space, JSON's and URL's specials, and beyond ASCII. */
const secretChar = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(..."ABCXYZabcxyz0189-_.~!*'()/+=&%?#\"\\") },
  { weight: 2, arbitrary: fc.constantFrom(" ", "\t", "\n", "é", "ÿ", "€", "😀", "\u202e") }
)

/** A secret with no border (no proper prefix that is also a suffix), so it cannot overlap itself. */
const secretArb = (minLength: number) =>
  fc
    .array(secretChar, { minLength, maxLength: 40 })
    .map((cs) => cs.join(""))
    .filter((s) => {
      // Blanks at a secret's edges could join the blanks around it (both read as a line break).
      if (new Set(s).size < 4 || /^\s|\s$/.test(s)) return false
      for (let k = 1; k < s.length; k++) if (s.slice(0, k) === s.slice(-k)) return false
      return true
    })

/** Text around an encoded secret: characters no encoding of the table can start or end with. */
const neutral = fc
  .array(fc.constantFrom(" ", "\n", "\t", "Ω", "Ж", "→", "|", ",", "<", ">"), { maxLength: 12 })
  .map((cs) => cs.join(""))

/** How an encoded secret is broken across lines: by the tools that wrap, indent or label lines. */
const BREAKS = ["\n", "\r\n", "\n    ", "\n\t", "  \n", "\npart2 ", "\r\n  part2: ", "\n00000010: ", "\\n", "\\r\\n"]

/** `text` with breaks inserted before the given indices, anywhere (inside an escape too, as `fold` cuts). */
const broken = (text: string, cuts: ReadonlyArray<[number, number]>): string => {
  const at = new Map(cuts.filter(([i]) => i > 0 && i < text.length).map(([i, b]) => [i, BREAKS[b % BREAKS.length]!]))
  return [...text].map((c, i) => (at.get(i) ?? "") + c).join("")
}

const cutsArb = fc.array(fc.tuple(fc.nat(200), fc.nat(BREAKS.length - 1)), { maxLength: 4 })

const hexCase = (hex: string, upper: ReadonlyArray<boolean>) =>
  [...hex].map((c, i) => (upper[i % upper.length] ? c.toUpperCase() : c)).join("")
const percentAll = (s: string, upper: boolean) =>
  [...Buffer.from(s)]
    .map((b) => `%${b.toString(16).padStart(2, "0")}`)
    .map((e) => (upper ? e.toUpperCase() : e))
    .join("")
const jsonAscii = (s: string) =>
  [...s]
    .map((c) =>
      /[A-Za-z0-9]/.test(c)
        ? c
        : c
            .split("")
            .map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, "0")}`)
            .join("")
    )
    .join("")

/** The text encodings of the table, written by Node's encoders (and a few hand-rolled tool styles). */
const TEXT_ENCODERS: ReadonlyArray<[string, (s: string, upper: ReadonlyArray<boolean>) => string]> = [
  ["plain", (s) => s],
  ["JSON.stringify", (s) => JSON.stringify(s).slice(1, -1)],
  ["JSON, ASCII only", (s) => jsonAscii(s)],
  ["encodeURIComponent", (s) => encodeURIComponent(s)],
  ["form-urlencoded (+ for space)", (s) => new URLSearchParams({ a: s }).toString().slice(2)],
  ["percent-encoded, upper case", (s) => percentAll(s, true)],
  ["percent-encoded, lower case", (s) => percentAll(s, false)],
  ["hex", (s, upper) => hexCase(Buffer.from(s).toString("hex"), upper)],
  [
    "hex bytes spaced (hexdump)",
    (s, upper) => hexCase(Buffer.from(s).toString("hex"), upper).replace(/(..)(?!$)/g, "$1 ")
  ],
  [
    "hex in pairs (xxd)",
    (s) =>
      Buffer.from(s)
        .toString("hex")
        .replace(/(....)(?!$)/g, "$1 ")
  ]
]

describe("Redact.scrub, property-tested", () => {
  for (const [name, encode] of TEXT_ENCODERS) {
    it(`${name}: exactly the encoded secret is replaced, also broken across lines`, () => {
      fc.assert(
        fc.property(
          secretArb(3),
          neutral,
          neutral,
          fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
          cutsArb,
          (secret, before, after, upper, cuts) => {
            const encoded = encode(secret, upper)
            const text = before + broken(encoded, cuts) + after
            expect(Redact.scrub(text, [secret])).toBe(before + M + after)
          }
        )
      )
    })
  }

  for (const url of [false, true]) {
    it(`base64${url ? "url" : ""} at every alignment, wrapped: every character holding a bit of the secret is replaced, no edge left`, () => {
      const bytesArb = fc.uint8Array({ maxLength: 7 })
      fc.assert(
        fc.property(
          secretArb(3),
          bytesArb,
          bytesArb,
          cutsArb,
          fc.integer({ min: 0, max: 3 }),
          (secret, head, tail, cuts, width) => {
            const secretBytes = Buffer.from(secret)
            const encoded = Buffer.concat([head, secretBytes, tail]).toString(url ? "base64url" : "base64")
            // Characters [first, last] hold bits of the secret; the others only their neighbours'.
            const bits = [head.length * 8, (head.length + secretBytes.length) * 8]
            const first = Math.floor(bits[0]! / 6)
            const last = Math.ceil(bits[1]! / 6) - 1
            const whole = Math.floor(bits[1]! / 6) - Math.ceil(bits[0]! / 6)
            // Breaks at random places, and every 4·width characters like `base64 -w`.
            const before = new Map<number, string>(cuts.map(([i, b]) => [i, BREAKS[b]!]))
            if (width > 0) for (let i = 4 * width; i < encoded.length; i += 4 * width) before.set(i, "\n")
            const piece = (from: number, to: number) =>
              [...encoded.slice(from, to)]
                .map((c, k) => (from + k > 0 ? (before.get(from + k) ?? "") : "") + c)
                .join("")
            const wrapped = piece(0, encoded.length)
            const out = Redact.scrub(wrapped, [secret])
            if (whole < SecretForms.MIN_ENCODED) return expect(out).toBe(wrapped)
            const headText = piece(0, first) + (first > 0 ? (before.get(first) ?? "") : "")
            let tailText = piece(last + 1, encoded.length)
            // Padding right after the secret's last character goes with it.
            if (tail.length === 0) tailText = tailText.replace(/^={1,2}/, "")
            expect(out).toBe(headText + M + tailText)
          }
        )
      )
    })
  }

  it("a secret cut by something no form foresees leaves no run of more than half of it", () => {
    fc.assert(
      fc.property(
        secretArb(16),
        fc.nat(),
        neutral,
        neutral,
        fc.string({ minLength: 1, maxLength: 30 }),
        (secret, at, before, after, junk) => {
          const cut = 1 + (at % (secret.length - 1))
          const out = Redact.scrub(before + secret.slice(0, cut) + junk + "\u0001" + secret.slice(cut) + after, [
            secret
          ])
          const half = Math.floor(secret.length / 2)
          for (let i = 0; i + half + 1 <= secret.length; i++)
            expect(out.includes(secret.slice(i, i + half + 1))).toBe(false)
        }
      )
    )
  })

  it("text without the secret comes back unchanged", () => {
    const unit = fc.oneof(
      fc.constantFrom("\n", "\r\n", "  ", "\\n", "part2 "),
      secretChar,
      fc.string({ unit: "binary", minLength: 1, maxLength: 1 })
    )
    const text = fc.string({ unit, maxLength: 300 })
    fc.assert(
      fc.property(secretArb(3), text, (secret, output) => {
        fc.pre(!output.includes(secret.slice(0, Math.min(secret.length, Redact.MIN_RUN))))
        expect(Redact.scrub(output, [secret])).toBe(output)
      })
    )
  })
})

describe("Redact.scrub, examples", () => {
  it("leaves no decodable edge beside a base64 secret (docs/security.md#secrets)", () => {
    const secret = "hunter22"
    const byIssue = Buffer.from(`xy${secret}`).toString("base64") // eHlodW50ZXIyMg==: the sweep saw "eH…[redacted]Mg=="
    expect(Redact.scrub(byIssue, [secret])).toBe(`eH${M}`)
    for (const prefix of ["", "a", "ab"]) {
      for (const suffix of ["", "x", "xy"]) {
        const encoded = Buffer.from(`${prefix}${secret}${suffix}`).toString("base64")
        const kept = encoded.slice(0, Math.floor((prefix.length * 8) / 6))
        const after = encoded.slice(Math.ceil(((prefix.length + secret.length) * 8) / 6))
        expect(Redact.scrub(encoded, [secret])).toBe(kept + M + (suffix === "" ? "" : after))
      }
    }
  })

  it("scrubs every table encoding of a secret in one output", () => {
    const secret = "s3cr3t Value/42!"
    const text = [
      secret,
      JSON.stringify({ t: secret }),
      encodeURIComponent(secret),
      new URLSearchParams({ t: secret }).toString(),
      Buffer.from(secret).toString("hex").toUpperCase(),
      Buffer.from(`ab${secret}`).toString("base64"),
      Buffer.from(`a${secret}`).toString("base64url"),
      `${secret.slice(0, 5)}\r\n   part2 ${secret.slice(5)}`
    ].join("\n")
    expect(Redact.scrub(text, [secret])).toBe([M, `{"t":"${M}"}`, M, `t=${M}`, M, `YW${M}`, `Y${M}`, M].join("\n"))
  })

  it("handles a long secret (a private key): plain, wrapped at 64 columns, and base64-wrapped at 76", () => {
    let key = ""
    for (let i = 0; key.length < 3000; i++) key += ((i * 2654435761) >>> 0).toString(36)
    const secret = `-----BEGIN KEY-----\n${key}\n-----END KEY-----`
    const wrapped = secret.replace(/(.{64})/g, "$1\n")
    const b64 = Buffer.from(`key: ${secret}\n`)
      .toString("base64")
      .replace(/(.{76})/g, "$1\n")
    expect(Redact.scrub(`a ${secret} b`, [secret])).toBe(`a ${M} b`)
    expect(Redact.scrub(`a ${wrapped} b`, [secret])).toBe(`a ${M} b`)
    // "key: " holds the first 6 characters alone; the newline after the key, the last (and padding).
    expect(Redact.scrub(b64, [secret])).toMatch(/^a2V5Oi\[redacted\][A-Za-z0-9+/]={0,2}$/)
  })

  it("leaves ordinary output alone for very short secrets and when no secret was given", () => {
    expect(Redact.scrub("a banana", ["a"])).toBe("a banana")
    expect(Redact.scrub("ab cd ab", ["ab"])).toBe("ab cd ab")
    expect(Redact.scrub("nothing secret", [])).toBe("nothing secret")
    expect(SecretForms.ENCODINGS.flatMap((e) => e.forms("ab"))).toStrictEqual([])
  })
})
