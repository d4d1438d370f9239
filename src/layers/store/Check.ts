/**
 * `conversation check` for one directory: decode every file, re-encode it,
 * compare the bytes. Never throws: whatever goes wrong (a damaged entry, a
 * journal line that is not a record, nesting too deep to decode, a file that
 * cannot be read) is that conversation's `error`, and the others are still
 * checked.
 *
 * @example
 * ```ts
 * import { checkOne } from "./Check.ts"
 * import type { ConversationId } from "parley"
 * declare const id: ConversationId.ConversationId, dir: string
 * const result = await checkOne(id, { dir, archived: false }) // { ok, roundtrip, error? }
 * ```
 */
import * as path from "node:path"
import type { ConversationId } from "../../domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../domain/storage/ConversationMetadata.ts"
import * as EventsFile from "../../domain/storage/EventsFile.ts"
import type { CheckResult } from "../../services/ConversationStore.ts"
import * as AtomicFile from "./AtomicFile.ts"
import * as ConversationDir from "./ConversationDir.ts"
import * as Journal from "./Journal.ts"

/** When metadata.json is missing, still say whether the event log itself is readable. */
const eventsDetail = async (dir: string): Promise<string> => {
  const eventsFile = path.join(dir, Journal.EVENTS)
  const text = await AtomicFile.readIfExists(eventsFile)
  if (text === undefined) return ""
  try {
    return `; events.json decodes (${EventsFile.parse(text, eventsFile).length} entries)`
  } catch (inner) {
    return `; ${inner instanceof Error ? inner.message : String(inner)}`
  }
}

const roundtrip = async (id: ConversationId, loc: ConversationDir.Located): Promise<CheckResult> => {
  // The bytes compared are the bytes decoded: a writer folding or closing meanwhile changes neither.
  const { conversation, source } = await ConversationDir.readSource(id, loc)
  const pairs: Array<[string | undefined, string]> = [[source.metadata, EventsFile.renderJson(ConversationMetadata.encode(conversation.metadata))]]
  if (conversation.baseConfig._tag === "File") {
    pairs.push([source.baseConfig, EventsFile.renderJson(JSON.parse(conversation.baseConfig.text))])
  }
  let identical = pairs.every(([stored, rendered]) => stored === rendered)
  // With a journal not folded yet, events.json is not the whole stream: compare it only at rest.
  // Bytes, not text: bytes that are not UTF-8 would read back as U+FFFD and compare equal.
  if (identical && !source.journaled) identical = rendersTo(conversation.entries, source.events, path.join(loc.dir, Journal.EVENTS))
  return { id, path: loc.dir, ok: true, roundtrip: identical ? "identical" : "changed" }
}

/** Whether re-encoding `entries` gives exactly `bytes`. */
const rendersTo = (entries: Parameters<typeof EventsFile.render>[0], bytes: Buffer, file: string): boolean => {
  try {
    return Buffer.from(EventsFile.render(entries), "utf8").equals(bytes)
  } catch (error) {
    // JSON.stringify recurses: what JSON.parse could read may be too deep to write back.
    if (!(error instanceof RangeError)) throw error
    throw new ConversationDir.Corrupt(file, undefined, `nested too deeply to re-encode (${error.message})`)
  }
}

/** Checks one conversation directory. */
export const checkOne = async (id: ConversationId, loc: ConversationDir.Located): Promise<CheckResult> => {
  try {
    return await roundtrip(id, loc)
  } catch (error) {
    let detail = error instanceof Error ? error.message : String(error)
    if (error instanceof ConversationDir.Corrupt && error.file.endsWith("metadata.json") && error.reason === "missing") {
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
  const results = new Array<CheckResult>(targets.length)
  let next = 0
  const worker = async () => {
    while (next < targets.length) {
      const i = next++
      results[i] = await checkOne(targets[i]![0], targets[i]![1])
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, targets.length) }, worker))
  return results
}
