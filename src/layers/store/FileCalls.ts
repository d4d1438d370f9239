/**
 * The file calls of a session's close (docs/storage.md#durable-appends): folding
 * the journal, comparing the metadata, releasing the lock. Written once
 * against {@link FileCalls} and made one of two ways:
 *
 * - {@link promised} (the default): `node:fs`'s callback forms, each call a
 *   round trip through libuv's thread pool, so a server's other requests go
 *   on while a close waits for the disk;
 * - {@link blocking}: `node:fs`'s synchronous calls, for a command that
 *   exits once its session is closed (nothing else is left to run then).
 *   A close makes about thirty calls; their round trips were about 2.5 ms
 *   of a scripted `query` and of `parley ask`'s answer to its exit
 *   (docs/startup.md).
 *
 * Both give the same values and throw the same errors (class, `code`,
 * `syscall`, `path`). The code that uses them `await`s every call, so it
 * reads the same either way: awaiting a value that is not a promise costs
 * a microtask, not a trip to the thread pool.
 *
 * @internal
 * @example
 * ```ts
 * import * as FileCalls from "parley/layers/store/FileCalls"
 * const calls = FileCalls.blocking
 * const text = await calls.readText("/s/conversations/1/events.json.journal") // undefined: no such file
 * ```
 */
import * as fs from "node:fs"
import * as ErrorCode from "../ErrorCode.ts"

/** A value now, or later. */
export type Maybe<A> = A | Promise<A>

/** An open file. */
export interface Handle {
  readonly size: () => Maybe<number>
  /** Reads `length` bytes at `position` into `buffer` from its start. */
  readonly read: (buffer: Buffer, length: number, position: number) => Maybe<unknown>
  /** Writes all of `bytes` at `position`. */
  readonly write: (bytes: Buffer, position: number) => Maybe<unknown>
  /** Appends `text` (a file opened with `a`). */
  readonly append: (text: string) => Maybe<unknown>
  readonly truncate: (length: number) => Maybe<unknown>
  readonly datasync: () => Maybe<unknown>
  readonly sync: () => Maybe<unknown>
  readonly close: () => Maybe<unknown>
}

/** The calls a close makes. */
export interface FileCalls {
  /** The file's text, `undefined` when there is no such file. */
  readonly readText: (file: string) => Maybe<string | undefined>
  readonly open: (file: string, flags: string, mode?: number) => Maybe<Handle>
  /** Cuts `file` to `length` bytes. */
  readonly truncate: (file: string, length: number) => Maybe<unknown>
  /** Removes `file`; one already gone is no error. */
  readonly remove: (file: string) => Maybe<unknown>
  /** When `file` was last modified (ms since the epoch). */
  readonly mtimeMs: (file: string) => Maybe<number>
}

const isNotFound = (error: unknown): boolean => ErrorCode.of(error) === "ENOENT"

/**
 * `node:fs`'s callback form of a call as a promise. Not `node:fs/promises`: its first use makes
 * Node load readline, the REPL's history and file watchers with it (~2 ms of a scripted turn's
 * start, docs/startup.md); the callback forms make the same calls through the same thread pool and
 * fail with the same errors.
 */
const call = <A>(f: (done: (error: NodeJS.ErrnoException | null, value: A) => void) => void): Promise<A> =>
  new Promise((resolve, reject) => f((error, value) => (error === null ? resolve(value) : reject(error))))

/** Writes all of `bytes` to `fd` at `position` through the thread pool (a short write goes on where it stopped). */
const writeAllLater = async (fd: number, bytes: Buffer, position: number | null): Promise<void> => {
  for (let done = 0; done < bytes.length; ) {
    const at = position === null ? null : position + done
    done += await call<number>((cb) => fs.write(fd, bytes, done, bytes.length - done, at, cb))
  }
}

/** Every call through the thread pool. */
export const promised: FileCalls = {
  readText: (file) =>
    call<string>((cb) => fs.readFile(file, "utf8", cb)).catch((error: unknown) => {
      if (isNotFound(error)) return undefined
      throw error
    }),
  open: async (file, flags, mode) => {
    const fd = await call<number>((cb) => fs.open(file, flags, mode, cb))
    return {
      size: async () => (await call<fs.Stats>((cb) => fs.fstat(fd, cb))).size,
      read: (buffer, length, position) => call<number>((cb) => fs.read(fd, buffer, 0, length, position, cb)),
      write: (bytes, position) => writeAllLater(fd, bytes, position),
      append: (text) => writeAllLater(fd, Buffer.from(text, "utf8"), null),
      truncate: (length) => call<void>((cb) => fs.ftruncate(fd, length, cb)),
      datasync: () => call<void>((cb) => fs.fdatasync(fd, cb)),
      sync: () => call<void>((cb) => fs.fsync(fd, cb)),
      close: () => call<void>((cb) => fs.close(fd, cb))
    }
  },
  truncate: (file, length) => call<void>((cb) => fs.truncate(file, length, cb)),
  remove: (file) => call<void>((cb) => fs.rm(file, { force: true }, cb)),
  mtimeMs: async (file) => (await call<fs.Stats>((cb) => fs.stat(file, cb))).mtimeMs
}

/** Writes all of `bytes` to `fd` at `position` (a short write goes on where it stopped). */
const writeAll = (fd: number, bytes: Buffer, position: number | null): void => {
  for (let done = 0; done < bytes.length; ) {
    done += fs.writeSync(fd, bytes, done, bytes.length - done, position === null ? null : position + done)
  }
}

/** `node:fs`'s synchronous calls: for a process that has nothing else to run meanwhile. */
export const blocking: FileCalls = {
  readText: (file) => {
    try {
      return fs.readFileSync(file, "utf8")
    } catch (error) {
      if (isNotFound(error)) return undefined
      throw error
    }
  },
  open: (file, flags, mode) => {
    const fd = fs.openSync(file, flags, mode)
    return {
      size: () => fs.fstatSync(fd).size,
      read: (buffer, length, position) => fs.readSync(fd, buffer, 0, length, position),
      write: (bytes, position) => writeAll(fd, bytes, position),
      append: (text) => writeAll(fd, Buffer.from(text, "utf8"), null),
      truncate: (length) => fs.ftruncateSync(fd, length),
      datasync: () => fs.fdatasyncSync(fd),
      sync: () => fs.fsyncSync(fd),
      close: () => fs.closeSync(fd)
    }
  },
  truncate: (file, length) => fs.truncateSync(file, length),
  remove: (file) => fs.rmSync(file, { force: true }),
  mtimeMs: (file) => fs.statSync(file).mtimeMs
}
