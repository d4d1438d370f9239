/**
 * `conversation check` for one directory: decode every file, re-encode it,
 * compare the bytes. Never throws: whatever goes wrong (a damaged entry, a
 * journal line that is not a record, nesting too deep to decode, a file that
 * cannot be read) is that conversation's `error`, and the others are still
 * checked.
 *
 * Memory scales with one conversation, not a multiple of it (docs/benchmarks.md, `conversation check`): the
 * bytes of `events.json` read for decoding are compared with each
 * re-encoded entry as it is rendered (never one string of the whole file),
 * and conversations are checked a few at a time.
 *
 * @example
 * ```ts
 * import { checkOne } from "parley/layers/store/Check"
 * import type { ConversationId } from "parley"
 * declare const id: ConversationId.ConversationId, dir: string
 * const result = await checkOne(id, { dir, archived: false }) // { ok, roundtrip, error? }
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Result from "effect/Result"
import type { StreamEntry } from "../../domain/event/ConversationEvent.ts"
import type { ConversationId } from "../../domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../domain/storage/ConversationMetadata.ts"
import * as EventsFile from "../../domain/storage/EventsFile.ts"
import type { CheckResult } from "../../services/ConversationStore.ts"
import * as ConversationDir from "./ConversationDir.ts"
import * as ConversationRead from "./ConversationRead.ts"
import * as Journal from "./Journal.ts"
import * as JsonText from "../../domain/storage/JsonText.ts"

/** When metadata.json is missing, still say whether the event log itself is readable. */
const eventsDetail = async (dir: string): Promise<string> => {
  const eventsFile = path.join(dir, Journal.EVENTS)
  let bytes: Buffer
  try {
    bytes = await fs.readFile(eventsFile)
  } catch {
    return ""
  }
  let events: ReturnType<typeof EventsFile.read>
  try {
    events = EventsFile.read(bytes, eventsFile)
  } catch (inner) {
    // The runtime's own limit (nesting too deep), not a codec error.
    return `; ${inner instanceof Error ? inner.message : String(inner)}`
  }
  return Result.isSuccess(events)
    ? `; events.json decodes (${events.success.length} entries)`
    : `; ${events.failure.message}`
}

const roundtrip = async (id: ConversationId, loc: ConversationDir.Located): Promise<CheckResult> => {
  // The bytes compared are the bytes decoded: a writer folding or closing meanwhile changes neither.
  const { conversation, source } = await ConversationRead.readSource(id, loc)
  const pairs: Array<[string | undefined, string]> = [
    [source.metadata, EventsFile.renderJson(ConversationMetadata.encode(conversation.metadata))]
  ]
  if (conversation.baseConfig._tag === "File") {
    pairs.push([source.baseConfig, EventsFile.renderJson(JsonText.parse(conversation.baseConfig.text))])
  }
  let identical = pairs.every(([stored, rendered]) => stored === rendered)
  // With a journal not folded yet, events.json is not the whole stream: compare it only at rest.
  // Bytes, not text: bytes that are not UTF-8 would read back as U+FFFD and compare equal.
  if (identical && !source.journaled)
    identical = rendersTo(conversation.entries, source.events, path.join(loc.dir, Journal.EVENTS))
  return { id, path: loc.dir, ok: true, roundtrip: identical ? "identical" : "changed" }
}

/** Whether re-encoding `entries` gives exactly `bytes`, compared one entry at a time. */
const rendersTo = (entries: ReadonlyArray<StreamEntry>, bytes: Buffer, file: string): boolean => {
  try {
    let at = 0
    for (const piece of EventsFile.renderPieces(entries)) {
      const encoded = Buffer.from(piece, "utf8")
      const end = at + encoded.length
      if (end > bytes.length || bytes.compare(encoded, 0, encoded.length, at, end) !== 0) return false
      at = end
    }
    return at === bytes.length
  } catch (error) {
    // JSON.stringify recurses: what JSON.parse could read may be too deep to write back.
    if (!(error instanceof RangeError)) throw error
    throw new ConversationDir.Corrupt(file, undefined, `nested too deeply to re-encode (${error.message})`)
  }
}

/** Checks one conversation directory (followed when a writer renames it meanwhile); undefined when it was removed meanwhile. */
export const checkOne = async (id: ConversationId, loc: ConversationDir.Located): Promise<CheckResult | undefined> => {
  try {
    return await ConversationDir.following(id, loc, (at) => roundtrip(id, at))
  } catch (error) {
    if (error instanceof ConversationDir.Gone) return undefined
    let detail = error instanceof Error ? error.message : String(error)
    if (
      error instanceof ConversationDir.Corrupt &&
      error.file.endsWith("metadata.json") &&
      error.reason === "missing"
    ) {
      detail += await eventsDetail(loc.dir)
    }
    return { id, path: loc.dir, ok: false, roundtrip: null, error: detail }
  }
}

/**
 * Checks conversations a few at a time, results in order: only a couple of
 * conversations are ever in memory (all at once, ten 100 MB conversations
 * would need ten times the memory and finish no sooner).
 */
export const checkAll = async (
  targets: ReadonlyArray<readonly [ConversationId, ConversationDir.Located]>,
  concurrency = 2
): Promise<Array<CheckResult>> => {
  const results = new Array<CheckResult | undefined>(targets.length)
  let next = 0
  const worker = async () => {
    while (next < targets.length) {
      const i = next++
      results[i] = await checkOne(targets[i]![0], targets[i]![1])
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, targets.length) }, worker))
  return results.filter((r): r is CheckResult => r !== undefined)
}
