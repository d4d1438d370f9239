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

/**
 * The most of a queue file parley reads (16 MiB): far more than the messages
 * a person types, and a file grown past it by a hostile writer is refused
 * with its size instead of read into memory.
 */
export const MAX_BYTES = 16 * 1024 * 1024

/** `O_NOFOLLOW` where the platform has it: the queue file is never read or written through a symlink. */
export const NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0

/**
 * Reads queue file `file` without following a symlink and at most
 * {@link MAX_BYTES}: its text, `undefined` when it does not exist, or the
 * size it has when it is larger.
 */
export const readCapped = (file: string): string | undefined | { readonly tooLarge: number } => {
  let fd: number
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | NOFOLLOW)
  } catch (error) {
    if (error instanceof Error && "code" in error && error.code === "ENOENT") return undefined
    throw error
  }
  try {
    const size = fs.fstatSync(fd).size
    if (size > MAX_BYTES) return { tooLarge: size }
    const buffer = Buffer.alloc(size)
    let at = 0
    while (at < size) {
      const n = fs.readSync(fd, buffer, at, size - at, at)
      if (n === 0) break
      at += n
    }
    return buffer.subarray(0, at).toString("utf8")
  } finally {
    fs.closeSync(fd)
  }
}

/** A parsed line that has the shape of a record (the full decoding is `QueuedMessage.parse`'s). */
const isRecord = (v: unknown): v is Record =>
  typeof v === "object" &&
  v !== null &&
  ("op" in v ? (v.op === "queue" ? "message" in v : (v.op === "take" || v.op === "withdraw") && "id" in v) : false)

/** The messages queued in `dir` and not yet taken by a run (0 without a queue). */
export const queuedIn = (dir: string): number => {
  let text: string
  try {
    const read = readCapped(path.join(dir, FILE))
    // A listing counts what it can read: a missing, unreadable or oversized queue counts none (`send` says why).
    if (read === undefined || typeof read !== "string") return 0
    text = read
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
