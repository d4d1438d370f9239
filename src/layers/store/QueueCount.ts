/**
 * How many messages wait in a conversation directory's queue
 * (`MessageQueueFile.ts`), read without decoding the log with effect/Schema:
 * what `conversation ls` shows ("1 message queued") at its fast start
 * (docs/decisions.md#fast-start). A line that is not a record is skipped.
 *
 * @example
 * ```ts
 * import * as QueueCount from "parley/layers/store/QueueCount"
 * QueueCount.queuedIn("/home/me/project/.parley/conversations/17738399468-fix-the-parser") // 0
 * ```
 *
 * @since 0.1.0
 */
import * as JsonText from "../../domain/storage/JsonText.ts"
import * as fs from "node:fs"
import * as path from "node:path"
import type { Record } from "../../domain/storage/QueuedMessage.ts"
import * as QueueLog from "../../domain/storage/QueueLog.ts"

/** The queue's file in a conversation's directory. */
export const FILE = ".parley-queue.jsonl"

/** A parsed line that has the shape of a record (the full decoding is `QueuedMessage.parse`'s). */
const isRecord = (v: unknown): v is Record =>
  typeof v === "object" &&
  v !== null &&
  ("op" in v ? (v.op === "queue" ? "message" in v : (v.op === "take" || v.op === "withdraw") && "id" in v) : false)

/** The messages queued in `dir` and not yet taken by a run (0 without a queue). */
export const queuedIn = (dir: string): number => {
  let text: string
  try {
    text = fs.readFileSync(path.join(dir, FILE), "utf8")
  } catch {
    return 0
  }
  const records = text.split("\n").flatMap((line) => {
    try {
      const v: unknown = JsonText.parse(line)
      return isRecord(v) ? [v] : []
    } catch {
      return []
    }
  })
  return QueueLog.fold(records).messages.filter((m) => m.state === "queued").length
}
