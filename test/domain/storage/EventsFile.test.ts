/**
 * `events.json` reading (docs/benchmarks.md): JP's layout is parsed element by element
 * from the bytes, any other layout as a whole; both give the same entries,
 * the same errors, and write unchanged entries with foreign number lexemes
 * back byte for byte.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { isDeepStrictEqual } from "node:util"
import { describe, expect, it } from "@effect/vitest"
import type { StreamEntry } from "../../../src/domain/event/ConversationEvent.ts"
import * as EventsFile from "../../../src/domain/storage/EventsFile.ts"

const corpus = path.resolve(import.meta.dirname, "..", "..", "fixtures", "corpus", "jp", "conversations")
const corpusFiles = (): Array<string> => {
  const out: Array<string> = []
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(dir, e.name))
      else if (e.name === "events.json") out.push(path.join(dir, e.name))
    }
  }
  walk(corpus)
  return out.sort()
}

const plain = (entries: ReadonlyArray<StreamEntry>) => entries.map((e) => ({ type: e.type, fields: { ...e } }))

/** Thrown error message, or "" when `f` does not throw. */
const errorOf = (f: () => unknown): string => {
  try {
    f()
    return ""
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

describe("EventsFile.parseBytes", () => {
  it("decodes every corpus file to the same entries as the whole-file parse, and renders it back byte for byte", () => {
    const files = corpusFiles()
    expect(files.length).toBeGreaterThanOrEqual(6)
    for (const file of files) {
      const bytes = fs.readFileSync(file)
      const pieces = EventsFile.parseBytes(bytes, file)
      // A leading space is JSON whitespace but not JP's layout: the whole-file path.
      const whole = EventsFile.parse(" " + bytes.toString("utf8"), file)
      expect(isDeepStrictEqual(plain(pieces), plain(whole)), file).toBe(true)
      expect(EventsFile.render(pieces) === bytes.toString("utf8"), file).toBe(true)
    }
  })

  it("reads non-ASCII text (two-byte strings, astral characters) and an empty file", () => {
    const text = `[\n  {\n    "timestamp": "2026-01-01 00:00:00.0",\n    "type": "chat_request",\n    "content": "é — 日本語 🎉, \\"q\\" ,\\n  {"\n  },\n  {\n    "timestamp": "2026-01-01 00:00:00.1",\n    "type": "turn_start"\n  }\n]\n`
    const entries = EventsFile.parseBytes(Buffer.from(text), "events.json")
    expect(entries.map((e) => e.type)).toStrictEqual(["chat_request", "turn_start"])
    expect((entries[0] as { content: string }).content).toBe('é — 日本語 🎉, "q" ,\n  {')
    expect(EventsFile.render(entries)).toBe(text)
    expect(EventsFile.parseBytes(Buffer.from("[]\n"), "events.json")).toStrictEqual([])
  })

  it("a `,\\n  {` inside an element of another layout does not split it", () => {
    const text = `[\n  {"type": "config_delta", "timestamp": "2026-01-01 00:00:00.0", "delta": [1,\n  {"b": 2.0}]}\n]\n`
    const entries = EventsFile.parseBytes(Buffer.from(text), "events.json")
    expect(entries).toHaveLength(1)
    expect(entries[0]!.type).toBe("config_delta")
    // Unchanged and holding `2.0`: written back from its own bytes.
    expect(EventsFile.render(entries)).toBe(text)
  })

  it("names a syntax error by line and column, even after an entry that does not decode", () => {
    const text = `[\n  {\n    "type": 5\n  },\n  {\n    "timestamp": "2026-01-01 00:00:00.1",\n    "type": "turn_start",\n  }\n]\n`
    const expected = errorOf(() => EventsFile.parse(" " + text, "events.json")).replace("line 8, column 3", "")
    const message = errorOf(() => EventsFile.parseBytes(Buffer.from(text), "events.json"))
    expect(message).toMatch(/^events\.json: invalid JSON at line 8, column 3/)
    expect(message.replace("line 8, column 3", "")).toBe(expected.replace(/line \d+, column \d+/, ""))
  })

  it("names the entry that does not decode, as the whole-file parse does", () => {
    const text = `[\n  {\n    "timestamp": "2026-01-01 00:00:00.1",\n    "type": "turn_start"\n  },\n  {\n    "type": 5\n  }\n]\n`
    expect(errorOf(() => EventsFile.parseBytes(Buffer.from(text), "events.json"))).toBe(
      'events.json: entry 1: field "type" must be a string, got number 5'
    )
    expect(errorOf(() => EventsFile.parse(" " + text, "events.json"))).toBe(
      'events.json: entry 1: field "type" must be a string, got number 5'
    )
  })
})

describe("EventsFile.hasForeignNumber", () => {
  it("finds number tokens JS prints differently, and only outside strings", () => {
    for (const n of [
      "1.0",
      "0.50",
      "1e16",
      "1E5",
      "12345678901234567890",
      "-0",
      "0.0000001",
      "123456789012345.12345"
    ]) {
      expect([n, EventsFile.hasForeignNumber(`{"a": ${n}}`)]).toStrictEqual([n, true])
    }
    for (const n of ["1", "0.5", "1e-7", "1e+21", "-1", "0", "123.25"]) {
      expect([n, EventsFile.hasForeignNumber(`{"a": [${n}]}`)]).toStrictEqual([n, false])
    }
    // Inside strings (prose, base64, escaped quotes) nothing counts.
    expect(EventsFile.hasForeignNumber(`{"a": "version 1.0", "b": "M3e5AA==", "c": "\\" 1.0 \\\\", "d": 2}`)).toBe(
      false
    )
    expect(EventsFile.hasForeignNumber(`{"a": "\\\\", "b": 1.50}`)).toBe(true)
  })
})

describe("EventsFile.parse: escaped keys (docs/decisions.md#json-read-around-a-v8-bug)", () => {
  it("an entry's metadata keys `\\t` and `\"` read back as written after texts that make V8 misread them", () => {
    // The EntryCodec round-trip property failed on Node 24 with exactly this: V8 read `\t` as `\\`.
    const entry = (key: string) => ({
      timestamp: "2026-01-01 00:00:00.0",
      type: "inquiry_response",
      outcome: "answered",
      id: "c1.q",
      answer: true,
      metadata: { "0": { "": true, [key]: 1 } }
    })
    const text = (key: string) => "[\n  " + JSON.stringify(entry(key), null, 2).replaceAll("\n", "\n  ") + "\n]\n"
    JSON.parse('{"h":[],"\\\\\\\\":0}')
    JSON.parse('{"0":{"":[],"\\\\\\\\":0}}')
    for (const key of ["\t", '"', "\\t", "\u0000"]) {
      for (const read of [
        EventsFile.parse(text(key), "events.json"),
        EventsFile.parseBytes(Buffer.from(text(key)), "events.json")
      ]) {
        expect(Object.keys((read[0] as unknown as { metadata: { "0": object } }).metadata["0"])).toStrictEqual([
          "",
          key
        ])
        expect(EventsFile.render(read)).toBe(text(key))
      }
    }
  })
})
