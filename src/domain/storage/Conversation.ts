/**
 * A whole conversation as stored: id, metadata, the opaque base config and
 * the entry stream.
 *
 * The base config is either `base_config.json` (kept as its exact text) or
 * "packed" — the legacy layout where `events.json` starts with the base
 * `config_delta` (kept as that entry). parley interprets one thing in it
 * (docs/decisions.md#new-conversation-base-config): the model, JP's way — a new conversation's base config holds
 * `{"assistant":{"model":{"id":{"provider":"openai","name":"gpt-x"}}}}`, a
 * later run on another model appends a `config_delta` with the new id, and
 * {@link rememberedModel} reads the id in effect (base, then every delta in
 * order). Everything else in config stays opaque.
 *
 * @example
 * ```ts
 * import * as Conversation from "parley/domain/storage/Conversation"
 * import { ConversationId, Timestamp } from "parley"
 * const id = ConversationId.parse("17738399468")!
 * const now = Timestamp.now()
 * const c = Conversation.make({ id, title: "Hello", now })
 * c.entries.length // 0
 * ```
 *
 * @since 0.1.0
 */
import type { JsonObject } from "effect/Schema"
import { ConfigDelta, isConversationEvent, type StreamEntry } from "../event/ConversationEvent.ts"
import type { ConversationId } from "./ConversationId.ts"
import * as ConversationMetadata from "./ConversationMetadata.ts"
import type * as Timestamp from "../event/Timestamp.ts"
import * as JsonText from "./JsonText.ts"

export type BaseConfig = { readonly _tag: "File"; readonly text: string } | { readonly _tag: "Packed" }

/**
 * A whole conversation as stored: id, metadata, the opaque base config and
 * the entry stream.
 *
 * @example
 * ```ts
 * import * as Conversation from "parley/domain/storage/Conversation"
 * import { ConversationId, Timestamp } from "parley"
 * const id = ConversationId.parse("17738399468")!
 * const now = Timestamp.now()
 * const c = Conversation.make({ id, title: "Hello", now })
 * c.entries.length // 0
 * ```
 */
export interface Conversation {
  readonly id: ConversationId
  readonly archived: boolean
  readonly metadata: ConversationMetadata.ConversationMetadata
  readonly baseConfig: BaseConfig
  readonly entries: ReadonlyArray<StreamEntry>
}

/**
 * A new, empty conversation (current format: `base_config.json` holding `{}`,
 * or the model's id when `model` is given).
 */
export const make = (options: {
  id: ConversationId
  title?: string
  now: Timestamp.Timestamp
  model?: string
}): Conversation => ({
  id: options.id,
  archived: false,
  metadata: ConversationMetadata.make({
    ...(options.title !== undefined ? { title: options.title } : {}),
    last_activated_at: options.now
  }),
  baseConfig: options.model !== undefined ? baseConfigFor(options.model) : { _tag: "File", text: "{}\n" },
  entries: []
})

/** JP's model id (`ModelIdConfig`) of a parley model string: `openai/gpt-x` → `{ provider: "openai", name: "gpt-x" }`. */
export const modelId = (model: string): { readonly provider: string; readonly name: string } => {
  const slash = model.indexOf("/")
  return slash < 0 ? { provider: model, name: "" } : { provider: model.slice(0, slash), name: model.slice(slash + 1) }
}

/** The partial config that names `model` (what the base config and a model delta hold). */
const modelConfig = (model: string): JsonObject => ({ assistant: { model: { id: { ...modelId(model) } } } })

/** A new conversation's `base_config.json`: the model it starts with, pretty-printed as JP writes it. */
export const baseConfigFor = (model: string): BaseConfig => ({
  _tag: "File",
  text: JSON.stringify(modelConfig(model), null, 2) + "\n"
})

/** The `config_delta` a run on another model appends before its turn (JP's nested `{type, timestamp, delta}`). */
export const modelDelta = (at: Timestamp.Timestamp, model: string): ConfigDelta =>
  new ConfigDelta({ type: "config_delta", raw: { type: "config_delta", timestamp: at, delta: modelConfig(model) } })

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The model named by one partial config: `undefined` when it says nothing
 * about the model, `null` when it names one parley cannot read (a JP alias
 * such as `"flash"`).
 */
const modelIn = (config: unknown): string | null | undefined => {
  const model = isObject(config) && isObject(config["assistant"]) ? config["assistant"]["model"] : undefined
  if (!isObject(model) || !("id" in model)) return undefined
  const id = model["id"]
  if (isObject(id) && typeof id["provider"] === "string" && id["provider"] !== "") {
    const name = typeof id["name"] === "string" ? id["name"] : ""
    return name === "" ? id["provider"] : `${id["provider"]}/${name}`
  }
  return typeof id === "string" && id.includes("/") ? id : null
}

/**
 * The model a conversation remembers: the base config's, overridden by every
 * `config_delta` that names one, in order (nested or JP's legacy flattened
 * shape). `undefined` when none is named, or when the one in effect is an
 * alias parley cannot resolve.
 */
export const rememberedModel = (baseConfig: BaseConfig, entries: ReadonlyArray<StreamEntry>): string | undefined => {
  let model: string | null | undefined
  if (baseConfig._tag === "File") {
    try {
      model = modelIn(JsonText.parse(baseConfig.text))
    } catch {
      model = undefined // damaged base config: nothing remembered
    }
  }
  for (const e of entries) {
    if (e.type !== "config_delta") continue
    const named = modelIn(isObject(e.raw["delta"]) ? e.raw["delta"] : e.raw)
    if (named !== undefined) model = named
  }
  return model ?? undefined
}

/** Conversation events (not config deltas, compactions or unknown entries). */
export const eventCount = (entries: ReadonlyArray<StreamEntry>): number => {
  let n = 0
  for (const e of entries) if (isConversationEvent(e)) n++
  return n
}

/** The timestamp of the last entry that has one. */
export const lastEventAt = (entries: ReadonlyArray<StreamEntry>): string | undefined => {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!
    if (isConversationEvent(e)) return e.timestamp
  }
  return undefined
}

/** A title from the first message: its first line, trimmed to 80 chars (UTF-16 units; a character is never cut in half). */
export const titleFrom = (message: string): string | undefined => {
  const line = message.trim().split("\n", 1)[0]?.trim() ?? ""
  if (line.length === 0) return undefined
  if (line.length <= 80) return line
  // A cut between a surrogate pair's halves would leave a lone half, which JSON keeps as `\ud83d`.
  const cut = isHighSurrogate(line.charCodeAt(76)) ? 76 : 77
  return `${line.slice(0, cut).trimEnd()}…`
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff
