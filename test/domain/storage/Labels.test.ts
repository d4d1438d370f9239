// Conversation labels as today's JP writes them (JP RFD 101, jp_conversation/src/labels.rs):
// a key maps to a value or a list of values; both shapes read, what was read is written back.
import { describe, expect, it } from "@effect/vitest"
import * as ConversationMetadata from "../../../src/domain/storage/ConversationMetadata.ts"
import * as EventsFile from "../../../src/domain/storage/EventsFile.ts"
import * as Labels from "../../../src/domain/storage/Labels.ts"

const roundtrip = (text: string): string =>
  EventsFile.renderJson(ConversationMetadata.encode(ConversationMetadata.decode(JSON.parse(text), "metadata.json")))

describe("Labels (JP RFD 101)", () => {
  it("reads a scalar as a one-value set and a list as its distinct values, first occurrence winning", () => {
    expect(Labels.normalize(Labels.decode({ branch: "main", crate: ["jp_llm", "jp_config", "jp_llm"] }))).toStrictEqual(
      [
        { key: "branch", values: ["main"] },
        { key: "crate", values: ["jp_llm", "jp_config"] }
      ]
    )
  })

  it("as JP: an empty list drops its key, the presence value goes beside a real one, keys sort, a line break is a space", () => {
    const raw = Labels.decode({
      team: ["platform"],
      crate: [],
      draft: ["", "urgent"],
      bare: [""],
      note: "a\r\nb\nc\rd"
    })
    expect(Labels.normalize(raw)).toStrictEqual([
      { key: "bare", values: [""] },
      { key: "draft", values: ["urgent"] },
      { key: "note", values: ["a b c d"] },
      { key: "team", values: ["platform"] }
    ])
    expect(Labels.text(Labels.normalize(raw))).toBe("bare draft=urgent note=a b c d team=platform")
    // A key named `__proto__` (JSON.parse makes it an own key) stays a label, never a prototype.
    const json = Labels.toJson(Labels.normalize(Labels.decode(JSON.parse('{"__proto__":["x"],"crate":["a","b"]}'))))
    expect(JSON.stringify(json)).toBe('{"__proto__":["x"],"crate":["a","b"]}')
  })

  it("a value that is neither a string nor a list of strings is an error naming the key (JP's wording)", () => {
    expect(() => Labels.decode({ crate: 42 })).toThrow(
      `key "crate": expected a string or an array of strings, got number 42`
    )
    expect(() => Labels.decode({ crate: ["jp_config", 42] })).toThrow(
      `key "crate": expected an array of strings, found number 42`
    )
    expect(() => Labels.decode(["x"])).toThrow("must be an object, got an array")
    expect(() =>
      ConversationMetadata.decode({ last_activated_at: "2026-01-01 00:00:00.0", labels: { a: null } }, "m")
    ).toThrow(`field "labels": key "a": expected a string or an array of strings, got null`)
  })

  it("metadata.json with labels in either shape (and unsorted, empty or mixed) is written back byte for byte", () => {
    for (const labels of [
      { branch: ["main"], crate: ["jp_config", "jp_llm"] },
      { branch: "main", draft: "" },
      { team: ["platform"], branch: "main", crate: ["jp_llm", "jp_llm"], empty: [] },
      {}
    ]) {
      const text = EventsFile.renderJson({ title: "t", last_activated_at: "2026-05-19 10:00:00.123456", labels })
      expect(roundtrip(text)).toBe(text)
    }
    // Labels before the title (another writer's order) keep their place too.
    const odd = EventsFile.renderJson({ labels: { b: ["1"] }, last_activated_at: "2026-05-19 10:00:00.0", title: "t" })
    expect(roundtrip(odd)).toBe(odd)
  })
})
