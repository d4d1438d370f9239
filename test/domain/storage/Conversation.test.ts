// The model a conversation remembers (docs/decisions.md#new-conversation-base-config): JP's base config
// shape, model deltas in order, JP's legacy shapes, and what parley cannot read.
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { ConfigDelta, type StreamEntry } from "../../../src/domain/event/ConversationEvent.ts"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"
import * as Conversation from "../../../src/domain/storage/Conversation.ts"
import * as EntryCodec from "../../../src/domain/storage/EntryCodec.ts"
import * as EventsFile from "../../../src/domain/storage/EventsFile.ts"
import { fixtureCorpusRoot } from "../../support/Fixtures.ts"

const at = Timestamp.make("2026-03-01 10:00:00.5")
const file = (value: unknown): Conversation.BaseConfig => ({ _tag: "File", text: JSON.stringify(value) })
const delta = (raw: Record<string, unknown>) =>
  new ConfigDelta({ type: "config_delta", raw: { type: "config_delta", ...raw } as never })

describe("Conversation: the remembered model", () => {
  it("a new conversation's base config holds JP's model id, pretty-printed", () => {
    expect(Conversation.baseConfigFor("openai/gpt-x")).toStrictEqual({
      _tag: "File",
      text: '{\n  "assistant": {\n    "model": {\n      "id": {\n        "provider": "openai",\n        "name": "gpt-x"\n      }\n    }\n  }\n}\n'
    })
    const made = Conversation.make({ id: "17000000001" as never, now: at, model: "anthropic/claude-x" })
    expect(Conversation.rememberedModel(made.baseConfig, [])).toBe("anthropic/claude-x")
    expect(Conversation.make({ id: "17000000001" as never, now: at }).baseConfig).toStrictEqual({
      _tag: "File",
      text: "{}\n"
    })
  })

  it("a model delta is JP's nested config_delta, type first, and overrides the base", () => {
    const d = Conversation.modelDelta(at, "scripted")
    expect(JSON.stringify(EntryCodec.encodeEntry(d))).toBe(
      `{"type":"config_delta","timestamp":"2026-03-01 10:00:00.5","delta":{"assistant":{"model":{"id":{"provider":"scripted","name":""}}}}}`
    )
    const base = Conversation.baseConfigFor("openai/gpt-x")
    expect(Conversation.rememberedModel(base, [d])).toBe("scripted")
    expect(Conversation.rememberedModel(base, [d, Conversation.modelDelta(at, "openai/gpt-y")])).toBe("openai/gpt-y")
  })

  it("deltas that do not name a model change nothing; the legacy flattened shape and a packed base are read", () => {
    const entries: Array<StreamEntry> = [
      delta({ assistant: { model: { id: { provider: "anthropic", name: "claude-a" } } } }), // packed base, flattened
      delta({ timestamp: "2026-03-01 10:00:00.5", delta: { assistant: { system_prompt: "hi" } } })
    ]
    expect(Conversation.rememberedModel({ _tag: "Packed" }, entries)).toBe("anthropic/claude-a")
  })

  it("nothing is remembered for `{}`, a damaged base config, or an alias parley cannot resolve", () => {
    expect(Conversation.rememberedModel({ _tag: "File", text: "{}\n" }, [])).toBeUndefined()
    expect(Conversation.rememberedModel({ _tag: "File", text: "{not json" }, [])).toBeUndefined()
    expect(Conversation.rememberedModel(file({ assistant: { model: { id: "flash" } } }), [])).toBeUndefined()
    // An alias in a later delta replaces the earlier id: nothing readable is in effect.
    expect(
      Conversation.rememberedModel(file({ assistant: { model: { id: { provider: "openai", name: "a" } } } }), [
        delta({ delta: { assistant: { model: { id: "google" } } } })
      ])
    ).toBeUndefined()
    expect(Conversation.rememberedModel(file({ assistant: { model: { id: "openai/gpt-z" } } }), [])).toBe(
      "openai/gpt-z"
    )
  })

  it("every fixture corpus conversation (base_config.json or packed) remembers the model JP recorded", () => {
    const dir = path.join(fixtureCorpusRoot, "jp", "conversations")
    const models = fs
      .readdirSync(dir)
      .filter((n) => /^\d/.test(n))
      .sort()
      .map((name) => {
        const base = path.join(dir, name, "base_config.json")
        const entries = EventsFile.parse(fs.readFileSync(path.join(dir, name, "events.json"), "utf8"), name)
        const baseConfig: Conversation.BaseConfig = fs.existsSync(base)
          ? { _tag: "File", text: fs.readFileSync(base, "utf8") }
          : { _tag: "Packed" }
        return Conversation.rememberedModel(baseConfig, entries)
      })
    expect(models).toStrictEqual([
      undefined, // a flattened legacy base naming the model `"google"`, an alias parley cannot resolve
      "anthropic/claude-opus-4-6",
      "anthropic/claude-opus-4-6",
      "anthropic/claude-opus-4-6",
      "anthropic/claude-opus-4-6"
    ])
  })
})

describe("Conversation: the title from the first message", () => {
  it("its first line, trimmed; over 80 UTF-16 units cut to 77 and an ellipsis, never between a surrogate pair's halves", () => {
    expect(Conversation.titleFrom("  deploy it\nwith care ")).toBe("deploy it")
    expect(Conversation.titleFrom(" \n ")).toBeUndefined()
    expect(Conversation.titleFrom("a".repeat(80))).toBe("a".repeat(80))
    expect(Conversation.titleFrom("a".repeat(81))).toBe(`${"a".repeat(77)}…`)
    // An emoji across the cut: left out whole, not halved (JSON would keep a lone `\ud83d`).
    const title = Conversation.titleFrom(`${"a".repeat(76)}${"😀".repeat(4)}`)!
    expect(title).toBe(`${"a".repeat(76)}…`)
    expect(title.isWellFormed()).toBe(true)
    expect(Conversation.titleFrom(`${"a".repeat(75)}${"😀".repeat(4)}`)).toBe(`${"a".repeat(75)}😀…`)
  })
})
