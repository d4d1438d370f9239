// Text from outside shown on a terminal (docs/security.md#text-from-the-model-tools-and-servers): every control
// character and every character that reorders text is made visible.
import { describe, expect, it } from "@effect/vitest"
import { printable } from "../../../src/domain/render/TerminalText.ts"

describe("printable", () => {
  it("shows C0 controls as control pictures, DEL as ␡, a tab as a space", () => {
    expect(printable("a\x1b[2J\x1b]0;title\x07b")).toBe("a␛[2J␛]0;title␇b")
    expect(printable("a\r\nb\x00\x7f")).toBe("a␍␊b␀␡")
    expect(printable("a\tb")).toBe("a b")
  })

  it("shows C1 controls and bidi overrides and isolates as their code points", () => {
    expect(printable("\x9b2J")).toBe("<U+009B>2J")
    expect(printable("\u202egnp.exe\u2066\u200f")).toBe("<U+202E>gnp.exe<U+2066><U+200F>")
  })

  it("keeps what it is told to keep, and everything printable", () => {
    expect(printable("line 1\nline\x1b 2", "\n")).toBe("line 1\nline␛ 2")
    const plain = "Überschreiben? 日本語 ✓ → “quoted” — ok"
    expect(printable(plain)).toBe(plain)
  })
})
