// A conversation's directory name (JP's `ConversationId::to_dirname`): ASCII titles are slugged
// without compiling the Unicode regex (issue 50, start-up); the answer must be the regex's.
import { describe, expect, it } from "@effect/vitest"
import * as ConversationIdText from "../../../src/domain/storage/ConversationIdText.ts"

/** The rule as it was written before the ASCII shortcut: the reference. */
const reference = (id: string, title: string): string => {
  const len = Buffer.byteLength(title, "utf8")
  const slug = Array.from(title.trim())
    .slice(0, 60)
    .map((c) => (/^[\p{Alphabetic}\p{Nd}\p{Nl}\p{No}]$/u.test(c) ? c : "-"))
    .join("")
    .replace(/-+$/, "")
    .toLowerCase()
  if (slug.length === 0) return id
  const joined = `${id}-${slug}`
  return len > 60 ? joined.slice(0, joined.lastIndexOf("-")) : joined
}

describe("ConversationIdText.dirname", () => {
  it("slugs titles as JP does", () => {
    expect(ConversationIdText.dirname("17758406187", "Missing date in version string")).toBe(
      "17758406187-missing-date-in-version-string"
    )
    expect(ConversationIdText.dirname("1", "Café ² Ⅻ — 日本語!")).toBe("1-café-²-ⅻ---日本語")
    expect(ConversationIdText.dirname("1", "  !!  ")).toBe("1")
    expect(ConversationIdText.dirname("1", undefined)).toBe("1")
  })

  it("answers every ASCII character and a sample of others as the Unicode rule does", () => {
    const chars: Array<string> = []
    for (let code = 0; code < 0x3000; code += code < 0x100 ? 1 : 7) chars.push(String.fromCodePoint(code))
    chars.push("😀", "𝟘", "𐍈")
    for (const c of chars) expect(ConversationIdText.dirname("1", `a${c}b`)).toBe(reference("1", `a${c}b`))
  })
})
