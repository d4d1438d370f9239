// Conversations in today's JP shapes (test/fixtures/jp-today, written by hand from JP's
// labels.rs, event_id.rs, stream/entry.rs, patch.rs and stream.rs): every file round-trips
// byte for byte, event ids are read as JP reads them, and the provider view applies event
// overlays exactly as JP's projection does (expected/<id>.provider.json, one per overlay rule).
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import { ChatResponse } from "../../../src/domain/event/ChatResponse.ts"
import * as EventOverlay from "../../../src/domain/event/EventOverlay.ts"
import * as ConversationMetadata from "../../../src/domain/storage/ConversationMetadata.ts"
import * as EntryCodec from "../../../src/domain/storage/EntryCodec.ts"
import * as EventId from "../../../src/domain/storage/EventId.ts"
import * as EventsFile from "../../../src/domain/storage/EventsFile.ts"
import * as Labels from "../../../src/domain/storage/Labels.ts"
import { providerView } from "../../../src/domain/stream/Thread.ts"
import * as AnthropicProvider from "../../../src/layers/provider/Anthropic.ts"
import { repoRoot } from "../../support/Fixtures.ts"

const root = path.join(repoRoot, "test", "fixtures", "jp-today")
const conversations = path.join(root, "conversations")
const dirOf = (id: string) => path.join(conversations, fs.readdirSync(conversations).find((n) => n.startsWith(id))!)
const entriesOf = (id: string) => {
  const file = path.join(dirOf(id), "events.json")
  return EventsFile.parse(fs.readFileSync(file, "utf8"), file)
}

/** A provider event as JP's projection sends it: no timestamp, no id (key order kept). */
const sent = (id: string): string =>
  JSON.stringify(
    providerView(entriesOf(id)).events.map((e) => {
      const { event_id: _id, timestamp: _at, ...rest } = EntryCodec.toPlainJson(e)
      return rest
    })
  )
const expected = (id: string): string =>
  JSON.stringify(JSON.parse(fs.readFileSync(path.join(root, "expected", `${id}.provider.json`), "utf8")))

describe("today's JP shapes (fixtures from JP's source)", () => {
  it("every file of every fixture conversation is written back byte for byte", () => {
    for (const name of fs.readdirSync(conversations)) {
      const dir = path.join(conversations, name)
      const events = fs.readFileSync(path.join(dir, "events.json"), "utf8")
      expect(EventsFile.render(EventsFile.parse(events, "events.json"))).toBe(events)
      const metadata = fs.readFileSync(path.join(dir, "metadata.json"), "utf8")
      const decoded = ConversationMetadata.decode(JSON.parse(metadata), "metadata.json")
      expect(EventsFile.renderJson(ConversationMetadata.encode(decoded))).toBe(metadata)
    }
  })

  it("event ids are read as JP reads them: kept where they stand, missing, null and empty alike are none", () => {
    const a = entriesOf("17900000001")
    expect(a.map(EntryCodec.eventIdOf)).toStrictEqual([
      "a1cfg01",
      "a1turn0",
      "a1req00",
      "a1rsn00",
      "a1call0",
      "a1res00",
      "a1msg00",
      "a1fut00"
    ])
    expect(entriesOf("17900000004").map(EntryCodec.eventIdOf)).toStrictEqual([undefined, undefined, undefined])
    // Any other non-string id is a corrupt entry, as in JP (stream/entry.rs).
    for (const id of [1, true, [], {}]) {
      expect(() =>
        EntryCodec.decodeEntry({ event_id: id, timestamp: "2026-08-01 10:00:00.0", type: "turn_start" })
      ).toThrow(`field "event_id" must be a string`)
      expect(() => EntryCodec.decodeEntry({ event_id: id, type: "future_event" })).toThrow(`field "event_id"`)
    }
  })

  it("a new entry is written as JP writes it: its id first, then the writer shape", () => {
    const e = EntryCodec.withEventId(
      new ChatResponse({
        timestamp: "2026-08-01 10:00:00.5" as never,
        type: "chat_response",
        message: "hi",
        metadata: {}
      }),
      "k3m9x2a"
    )
    expect(JSON.stringify(EntryCodec.encodeEntry(e))).toBe(
      `{"event_id":"k3m9x2a","timestamp":"2026-08-01 10:00:00.5","type":"chat_response","message":"hi"}`
    )
    // The id is the entry's, out of sight of its fields (not in JSON or its keys), and not inherited by a rebuild.
    expect(EntryCodec.eventIdOf(e)).toBe("k3m9x2a")
    expect(JSON.stringify(e)).not.toContain("k3m9x2a")
    expect(Object.keys(e)).toStrictEqual(Object.keys(new ChatResponse({ ...e })))
    expect(EntryCodec.eventIdOf(new ChatResponse({ ...e }))).toBeUndefined()
    // An id given is kept; one given again is not taken.
    expect(EntryCodec.eventIdOf(EntryCodec.withEventId(e, "zzzzzzz"))).toBe("k3m9x2a")
    // A generated id: 7 of 0-9a-z, never one the stream holds (drawn again on a collision).
    expect(EventId.random()).toMatch(/^[0-9a-z]{7}$/)
    const draws = ["taken01", "taken02", "fresh01"]
    expect(EventId.fresh(new Set(["taken01", "taken02"]), () => draws.shift()!)).toBe("fresh01")
  })

  it("labels in both shapes read as JP reads them", () => {
    const labels = (id: string) =>
      Labels.text(
        Labels.normalize(
          ConversationMetadata.decode(
            JSON.parse(fs.readFileSync(path.join(dirOf(id), "metadata.json"), "utf8")),
            "metadata.json"
          ).labels
        )
      )
    expect(labels("17900000001")).toBe("branch=main crate=jp_config crate=jp_llm draft")
    expect(labels("17900000003")).toBe("crate=jp_conversation team=platform team=storage")
    expect(labels("17900000004")).toBe("branch=main team=platform")
  })

  it("an overlay dropping a stale reasoning signature: the provider view is JP's projection (the key goes as serde's swap_remove)", () => {
    expect(sent("17900000002")).toBe(expected("17900000002"))
    // Anthropic is sent the reasoning it can still verify only: the stale one has no signature left.
    const view = providerView(entriesOf("17900000002"))
    const params = AnthropicProvider.toMessagesParams(
      { model: "anthropic/claude-x", systemParts: view.systemParts, events: view.events, tools: [] },
      "claude-x"
    )
    const thinking = params.messages.flatMap((m) =>
      Array.isArray(m.content) ? m.content.filter((b) => b.type === "thinking") : []
    )
    expect(thinking).toStrictEqual([{ type: "thinking", thinking: "more", signature: "fresh-sig" }])
  })

  it("an overlay before the events it matches, patches that chain, and compactions: the provider view is JP's projection", () => {
    expect(sent("17900000003")).toBe(expected("17900000003"))
  })

  it("a malformed overlay fails the load naming the entry and the field, as serde fails JP's", () => {
    const overlay = (patches: unknown) => ({ type: "event_overlay", timestamp: "2026-08-01 10:00:00.0", patches })
    expect(() =>
      EventsFile.parse(
        JSON.stringify([overlay([{ matcher: { matcher: "regex", key: "k", value: "v" }, action: {} }])]),
        "e"
      )
    ).toThrow(`e: entry 0: event_overlay: patches[0].matcher: unknown matcher "regex"`)
    expect(() => EventsFile.parse(JSON.stringify([overlay("x")]), "e")).toThrow(`field "patches" must be an array`)
    expect(() =>
      EventsFile.parse(
        JSON.stringify([
          overlay([
            {
              matcher: { matcher: "metadata_value", key: "k", value: 1 },
              action: { action: "remove_metadata", key: "k" }
            }
          ])
        ]),
        "e"
      )
    ).toThrow(`patches[0].matcher: field "value" must be a string, got number 1`)
    // Matching alone is no change (JP's would_change): the metadata object itself comes back.
    const parsed = EventOverlay.parse(
      overlay([
        {
          matcher: { matcher: "metadata_value", key: "a", value: "x" },
          action: { action: "remove_metadata", key: "b" }
        }
      ]) as never
    )
    const metadata = { a: "x" }
    expect(EventOverlay.applyAll(Result.getOrThrow(parsed).patches, metadata)).toBe(metadata)
  })
})
