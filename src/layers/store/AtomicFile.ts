/**
 * Crash-safe file writes: temp file + fsync + rename + directory fsync, and
 * skipped entirely when the bytes on disk are already identical (JP's
 * `write_json`, which keeps mtimes stable for tools that watch them).
 *
 * @example
 * ```ts
 * import * as AtomicFile from "parley/layers/store/AtomicFile"
 * await AtomicFile.writeIfChanged("/tmp/x/metadata.json", "{}\n") // true: written
 * await AtomicFile.writeIfChanged("/tmp/x/metadata.json", "{}\n") // false: identical, untouched
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { FILE_MODE } from "../../domain/storage/PrivateDir.ts"
import * as ErrorCode from "../ErrorCode.ts"
import * as FileCalls from "./FileCalls.ts"

/** Reads a file as UTF-8, or `undefined` when it does not exist. */
export const readIfExists = async (file: string): Promise<string | undefined> => {
  try {
    return await fs.readFile(file, "utf8")
  } catch (error) {
    if (isNotFound(error)) return undefined
    throw error
  }
}

export const isNotFound = (error: unknown): boolean => ErrorCode.of(error) === "ENOENT"

/** fsyncs a directory so a rename or unlink in it survives power loss. */
export const syncDir = async (dir: string, calls: FileCalls.FileCalls = FileCalls.promised): Promise<void> => {
  const handle = await calls.open(dir, "r")
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Writes `data` as a new file (`wx`: fails when the name exists, follows no link) and flushes it to disk. */
const writeNewDurable = async (file: string, data: string | Uint8Array): Promise<void> => {
  const handle = await FileCalls.promised.open(file, "wx", FILE_MODE)
  try {
    await handle.write(
      typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data.buffer, data.byteOffset, data.byteLength),
      0
    )
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/**
 * Writes `files` as new files into `dir`, a directory nothing lists yet (a conversation being
 * made), then flushes `dir` (their entries). They need no temp file and rename each, and their
 * flushes run at once: one flush's wait instead of a file's and the directory's per file. Every
 * write has settled before the first failure is thrown, so the caller may remove `dir` then.
 */
export const writeNewFiles = async (
  dir: string,
  files: ReadonlyArray<{ readonly name: string; readonly data: string | Uint8Array }>
): Promise<void> => {
  const written = await Promise.allSettled(files.map((f) => writeNewDurable(path.join(dir, f.name), f.data)))
  for (const w of written) if (w.status === "rejected") throw w.reason
  await syncDir(dir)
}

/** Writes `text` atomically; returns false (and writes nothing) when the file already holds exactly it. */
export const writeIfChanged = async (
  file: string,
  text: string,
  calls: FileCalls.FileCalls = FileCalls.promised
): Promise<boolean> => {
  const current = await calls.readText(file)
  if (current === text) return false
  await writeAtomic(file, text)
  return true
}

/**
 * Writes `text` to a temp file beside `file`, fsyncs, renames over `file`,
 * fsyncs the directory. The temp name is per process and call, so two
 * processes refreshing the same file (the listing index) never write into
 * each other's temp file. When `file` is a symlink (a person keeps
 * `events.json` elsewhere), the file it resolves to is replaced and the
 * link kept (docs/security.md#other-users-on-the-machine); a store file that is not a regular file is refused.
 */
export const writeAtomic = async (file: string, text: string): Promise<void> => {
  // Loaded on the first write, not with this module: its error class needs effect/Schema, and a
  // listing that writes nothing (`ls` of an unchanged storage) never loads that (docs/decisions.md#fast-start).
  const WriteInto = await import("../file/WriteInto.ts")
  const target = await WriteInto.resolveTarget(file)
  if (target._tag !== "Replace")
    throw new WriteInto.OutputRefused({ path: file, kind: target._tag === "Refused" ? target.kind : "other" })
  const real = target.file
  // The temp file sits beside the file it replaces (a rename never crosses
  // file systems), named `<name>.<pid>.<random>.tmp` as the store's sweeps expect.
  await WriteInto.writeInto(real, text, {
    // A new file is the user's alone, as in ~/.ssh; an existing one keeps its mode (WriteInto).
    mode: FILE_MODE,
    readOnlyToo: true,
    tempName: (f) => `${f}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`
  })
}

/** Appends `text` and waits until it is on disk (`fdatasync`). */
export const appendDurable = async (
  file: string,
  text: string,
  calls: FileCalls.FileCalls = FileCalls.promised
): Promise<void> => {
  const handle = await calls.open(file, "a", FILE_MODE)
  try {
    await handle.append(text)
    await handle.datasync()
  } finally {
    await handle.close()
  }
}
