/**
 * An `event_overlay` entry (JP `jp_conversation/src/patch.rs`): a repair a
 * provider asked for, recorded instead of rewriting history — most often
 * "drop this stale reasoning signature". The stored events never change; the
 * overlay's patches rewrite how matching events are projected for a request
 * (`Projection.project`).
 *
 * On disk: `{"type":"event_overlay","timestamp":T,"patches":[{"matcher":
 * {"matcher":"metadata_value","key":K,"value":V},"action":{"action":
 * "remove_metadata","key":K2}}…]}` (with today's `event_id` first). Keys JP
 * does not know are ignored, as serde does; a matcher or action of a kind
 * JP does not know, or a field of the wrong type, fails the conversation's
 * load, as it does in JP (serde's tagged enums).
 *
 * A patch matches an event whose `metadata[K]` is the string `V` (the
 * decoded value, as JP compares it), and removes `metadata[K2]` from the
 * projected copy. Matching is by content, not position: every overlay of the
 * stream applies to every event, overlays in stream order and patches in
 * order, so one patch can remove the key a later one would have matched.
 *
 * parley keeps the entry as the raw JSON it read (an entry of the stream
 * every pass leaves where it is, like an unknown kind: `UnknownEntry` with
 * `kind` `event_overlay`), checked when it is read and applied by the
 * projection.
 *
 * @example
 * ```ts
 * import * as EventOverlay from "parley/domain/event/EventOverlay"
 * import * as Result from "effect/Result"
 * const overlay = EventOverlay.parse({
 *   type: "event_overlay",
 *   timestamp: "2026-08-01 10:00:00.0",
 *   patches: [{ matcher: { matcher: "metadata_value", key: "provider", value: "anthropic" }, action: { action: "remove_metadata", key: "anthropic_thinking_signature" } }]
 * })
 * Result.isSuccess(overlay) // true
 * ```
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import { describeValue } from "./Describe.ts"
import * as Timestamp from "./Timestamp.ts"

type JsonObject = { readonly [key: string]: Schema.Json }

/** The entry type on disk. */
export const TYPE = "event_overlay"

/** One matcher/action pair (JP's only kinds so far: `metadata_value` and `remove_metadata`). */
export interface OverlayPatch {
  readonly matcher: { readonly matcher: "metadata_value"; readonly key: string; readonly value: string }
  readonly action: { readonly action: "remove_metadata"; readonly key: string }
}

/** What an `event_overlay` entry says. */
export interface EventOverlayRule {
  readonly timestamp: Timestamp.Timestamp
  readonly patches: ReadonlyArray<OverlayPatch>
}

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v)

const isTimestamp = (text: string): text is Timestamp.Timestamp => Timestamp.toEpochNanos(text) !== undefined

const stringField = (obj: JsonObject, key: string, where: string): Result.Result<string, string> => {
  const v = obj[key]
  if (typeof v === "string") return Result.succeed(v)
  return Result.fail(
    v === undefined
      ? `${where}: missing field "${key}"`
      : `${where}: field "${key}" must be a string, got ${describeValue(v)}`
  )
}

/** The object field `key` of a patch, or why it is not one. */
const objectField = (raw: JsonObject, key: string, where: string): Result.Result<JsonObject, string> => {
  const v = raw[key]
  return isObject(v)
    ? Result.succeed(v)
    : Result.fail(`${where}: field "${key}" must be an object, got ${describeValue(v ?? null)}`)
}

const patchAt = (raw: unknown, i: number): Result.Result<OverlayPatch, string> =>
  Result.gen(function* () {
    const where = `patches[${i}]`
    if (!isObject(raw)) return yield* Result.fail(`${where}: expected an object, got ${describeValue(raw)}`)
    const matcher = yield* objectField(raw, "matcher", where)
    const action = yield* objectField(raw, "action", where)
    const kind = yield* stringField(matcher, "matcher", `${where}.matcher`)
    if (kind !== "metadata_value")
      return yield* Result.fail(`${where}.matcher: unknown matcher ${JSON.stringify(kind)}`)
    const does = yield* stringField(action, "action", `${where}.action`)
    if (does !== "remove_metadata") return yield* Result.fail(`${where}.action: unknown action ${JSON.stringify(does)}`)
    return {
      matcher: {
        matcher: "metadata_value",
        key: yield* stringField(matcher, "key", `${where}.matcher`),
        value: yield* stringField(matcher, "value", `${where}.matcher`)
      },
      action: { action: "remove_metadata", key: yield* stringField(action, "key", `${where}.action`) }
    } as const
  })

/** Reads an `event_overlay` entry, or says why it is not one (the caller names the file and entry). */
export const parse = (raw: JsonObject): Result.Result<EventOverlayRule, string> => {
  const timestamp = raw["timestamp"]
  if (typeof timestamp !== "string" || !isTimestamp(timestamp)) {
    return Result.fail(
      timestamp === undefined
        ? `missing field "timestamp"`
        : `field "timestamp" is not a timestamp: ${describeValue(timestamp)}`
    )
  }
  const patches = raw["patches"]
  if (!Array.isArray(patches)) {
    return Result.fail(
      patches === undefined
        ? `missing field "patches"`
        : `field "patches" must be an array, got ${describeValue(patches)}`
    )
  }
  const read = Result.all(patches.map(patchAt))
  return Result.isFailure(read) ? Result.fail(read.failure) : Result.succeed({ timestamp, patches: read.success })
}

/**
 * JP's `OverlayPatch::apply`: when `metadata[matcher.key]` is the string
 * `matcher.value` and `metadata` holds `action.key`, a copy without that key;
 * otherwise `metadata` itself (matching alone changes nothing). The key goes
 * as serde_json's ordered map removes one (`swap_remove`): the last key takes
 * its place.
 */
export const applyPatch = (patch: OverlayPatch, metadata: JsonObject): JsonObject => {
  const { key, value } = patch.matcher
  if (!Object.hasOwn(metadata, key) || metadata[key] !== value) return metadata
  const keys = Object.keys(metadata)
  const at = keys.indexOf(patch.action.key)
  if (at < 0) return metadata
  keys[at] = keys[keys.length - 1]!
  keys.pop()
  const out: { [key: string]: Schema.Json } = {}
  for (const k of keys) Object.defineProperty(out, k, { value: metadata[k], enumerable: true, writable: true })
  return out
}

/** Every patch in order over `metadata`: the same object when none of them changes it. */
export const applyAll = (patches: ReadonlyArray<OverlayPatch>, metadata: JsonObject): JsonObject => {
  let out = metadata
  for (const p of patches) out = applyPatch(p, out)
  return out
}

/**
 * What an overlay entry does, for a reader (`for the model, drops
 * \`signature\` where \`signature\` is "x"`), or `undefined` when `raw` is
 * not an overlay parley reads.
 */
export const describe = (raw: JsonObject): string | undefined => {
  if (raw["type"] !== TYPE) return undefined
  const parsed = parse(raw)
  if (Result.isFailure(parsed)) return undefined
  const parts = parsed.success.patches.map(
    (p) => `drops \`${p.action.key}\` where \`${p.matcher.key}\` is ${JSON.stringify(p.matcher.value)}`
  )
  return parts.length === 0 ? "for the model, changes nothing" : `for the model, ${parts.join("; ")}`
}
