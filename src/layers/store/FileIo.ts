/**
 * File I/O as Effects for the file store (docs/storage.md#layout): a failed read or write
 * is a `StoreIoError` naming the file and the reason (the errno code when
 * there is one).
 *
 * @example
 * ```ts
 * import * as fs from "node:fs/promises"
 * import { io } from "parley/layers/store/FileIo"
 * io("/p/.parley/conversations", () => fs.readdir("/p/.parley/conversations"))
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import { StoreIoError } from "../../services/StoreErrors.ts"
import * as ConversationDir from "./ConversationDir.ts"
import * as ErrorCode from "../ErrorCode.ts"

/** `error` (from reading or writing `file`) as a store error. */
export const ioError = (file: string, error: unknown): StoreIoError => {
  if (error instanceof ConversationDir.Corrupt) return new StoreIoError({ path: error.file, reason: error.reason })
  return new StoreIoError({ path: file, reason: ErrorCode.of(error) ?? ErrorCode.messageOf(error) ?? String(error) })
}

/** Runs file I/O. */
export const io = <A>(file: string, f: () => Promise<A>) =>
  Effect.tryPromise({ try: f, catch: (error) => ioError(file, error) })
