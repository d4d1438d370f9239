/**
 * Writing INTO a path a person named, never replacing what is there (issue
 * 30 item 0). A temp file renamed over the path is right only for a regular
 * file or a path that does not exist yet; anything else the path names is
 * the person's, and replacing it does damage (a symlink loses its target, a
 * FIFO's reader gets nothing, root replaced `/dev/null` with a regular file).
 *
 * What the path names decides how it is written ({@link Target}):
 * - a regular file or nothing: temp file beside it + fsync + rename, so a
 *   reader never sees half of it; through a symlink the resolved file is
 *   replaced and the link kept (an existing file keeps its mode and owner);
 * - a FIFO or a character device (`/dev/null`, a terminal): opened and
 *   written directly;
 * - one of our own descriptors (`/dev/stdout`, `/dev/fd/3`,
 *   `/proc/self/fd/1`): written to that descriptor, so a `>>` redirect
 *   appends and a pipe gets the bytes;
 * - a directory, a socket or a block device: {@link OutputRefused}.
 *
 * @example
 * ```ts
 * import * as WriteInto from "parley/layers/file/WriteInto"
 * await WriteInto.writeInto("page.html", "<!doctype html>…") // through a link: its target
 * await WriteInto.writeInto("/dev/stdout", "hello\n") // our stdout, as it is
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as fs from "node:fs/promises"
import * as fsSync from "node:fs"
import * as path from "node:path"
import * as Schema from "effect/Schema"
import * as ErrorCode from "../ErrorCode.ts"
import { isTerminal } from "./IsTerminal.ts"

/** A named path parley will not write into, and what it turned out to be. */
export class OutputRefused extends Schema.TaggedError<OutputRefused>()("OutputRefused", {
  path: Schema.String,
  kind: Schema.Literals(["directory", "socket", "block device", "other"])
}) {
  override get message() {
    return `${this.path} is a ${this.kind === "other" ? "special file" : this.kind}`
  }
}

/** How a path is written (see the module comment). */
export type Target =
  | { readonly _tag: "Replace"; readonly file: string; readonly stat: fsSync.Stats | undefined }
  | { readonly _tag: "Direct"; readonly file: string }
  | { readonly _tag: "Descriptor"; readonly fd: number }
  | { readonly _tag: "Refused"; readonly kind: OutputRefused["kind"] }

/**
 * A path that is one of this process's descriptors: `/proc/<our pid>/fd/N`
 * (what `/dev/stdout` and `/dev/fd/N` link to), and those names themselves,
 * whatever is on disk there: a `/dev/stdout` some program replaced with a
 * regular file must not be replaced again, nor written as a file.
 */
const descriptorOf = (file: string): number | undefined => {
  const named = /^\/dev\/(?:(stdin|stdout|stderr)|fd\/(\d+))$/.exec(file)
  if (named !== null) return named[1] !== undefined ? ["stdin", "stdout", "stderr"].indexOf(named[1]) : Number(named[2])
  const m = /^\/proc\/(\d+|self|thread-self)\/fd\/(\d+)$/.exec(file)
  if (m === null || (m[1] !== "self" && m[1] !== "thread-self" && Number(m[1]) !== process.pid)) return undefined
  return Number(m[2])
}

const kindOf = (stat: fsSync.Stats): Target => {
  if (stat.isDirectory()) return { _tag: "Refused", kind: "directory" }
  if (stat.isSocket()) return { _tag: "Refused", kind: "socket" }
  if (stat.isBlockDevice()) return { _tag: "Refused", kind: "block device" }
  return { _tag: "Refused", kind: "other" }
}

const MAX_HOPS = 40

/**
 * What `file` names, following symlinks one hop at a time (the kernel's
 * rules: each link is read relative to the real directory it sits in), so
 * that a regular file is replaced where it really is, and a link into
 * `/proc/<pid>/fd` is seen as the descriptor it is before `stat` follows it
 * to a pipe or a file of the shell's.
 */
export const resolveTarget = async (file: string): Promise<Target> => {
  let current = path.resolve(file)
  const named = descriptorOf(current)
  if (named !== undefined) return { _tag: "Descriptor", fd: named }
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    current = path.join(await fs.realpath(path.dirname(current)), path.basename(current))
    const fd = descriptorOf(current)
    if (fd !== undefined) return { _tag: "Descriptor", fd }
    const stat = await fs.lstat(current).catch((error: unknown) => {
      if (ErrorCode.of(error) === "ENOENT") return undefined
      throw error
    })
    if (stat === undefined || stat.isFile()) return { _tag: "Replace", file: current, stat }
    if (stat.isFIFO() || stat.isCharacterDevice()) return { _tag: "Direct", file: current }
    if (!stat.isSymbolicLink()) return kindOf(stat)
    current = path.resolve(path.dirname(current), await fs.readlink(current))
  }
  throw Object.assign(new Error(`too many levels of symbolic links: ${file}`), { code: "ELOOP" })
}

/** Options for {@link writeInto}. */
export interface WriteOptions {
  /** Mode of a file that does not exist yet (before the umask); default 0o666. */
  readonly mode?: number
  /** Temp file name beside `file` (default `.<name>.<pid>.<random>.tmp`). */
  readonly tempName?: (file: string) => string
  /** Replace a file even when its permissions say it may not be written (the store's own files). */
  readonly readOnlyToo?: boolean
  /** The text to write when the target is a terminal (e.g. control characters made visible). */
  readonly forTerminal?: (text: string) => string
}

const defaultTemp = (file: string) =>
  path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`)

/** fsyncs a directory so a rename in it survives power loss. */
const syncDir = async (dir: string): Promise<void> => {
  const handle = await fs.open(dir, "r")
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Temp file + fsync + rename over `file` (the resolved regular file, or a new one). */
const replace = async (
  file: string,
  stat: fsSync.Stats | undefined,
  text: string,
  options: WriteOptions
): Promise<void> => {
  // Written into, not around: a file we may not write is refused as `cp` would refuse it.
  if (stat !== undefined && options.readOnlyToo !== true) await fs.access(file, fsSync.constants.W_OK)
  const temp = (options.tempName ?? defaultTemp)(file)
  try {
    const handle = await fs.open(temp, "wx", options.mode ?? 0o666)
    try {
      // An existing file keeps its permission bits and, when root writes it, its owner.
      if (stat !== undefined) await handle.chmod(stat.mode & 0o7777)
      if (stat !== undefined && process.getuid?.() === 0) await handle.chown(stat.uid, stat.gid)
      await handle.writeFile(text, "utf8")
      await handle.sync()
    } finally {
      await handle.close()
    }
    await fs.rename(temp, file)
  } catch (error) {
    await fs.rm(temp, { force: true })
    throw error
  }
  await syncDir(path.dirname(file))
}

/** Writes all of `bytes` to `fd`, waiting when a non-blocking pipe is full. */
const writeAll = async (fd: number, bytes: Uint8Array): Promise<void> => {
  let done = 0
  while (done < bytes.length) {
    try {
      done += fsSync.writeSync(fd, bytes, done, bytes.length - done)
    } catch (error) {
      if (ErrorCode.of(error) !== "EAGAIN") throw error
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  }
}

// node:tty is loaded only when asked, and only for a descriptor that may be a terminal (IsTerminal.ts: the
// store's files come through here, and `ls` needs no terminal; docs/decisions.md#fast-start).
const textFor = (fd: number, text: string, options: WriteOptions) =>
  options.forTerminal !== undefined && isTerminal(fd) ? options.forTerminal(text) : text

/**
 * Writes `text` into the path a person named (see the module comment).
 * Rejects with {@link OutputRefused} for a directory, socket or block
 * device, and with the system error (`code`) when the path cannot be written.
 */
export const writeInto = async (file: string, text: string, options: WriteOptions = {}): Promise<void> => {
  const target = await resolveTarget(file)
  switch (target._tag) {
    case "Refused":
      throw new OutputRefused({ path: file, kind: target.kind })
    case "Replace":
      return replace(target.file, target.stat, text, options)
    case "Descriptor":
      return writeAll(target.fd, Buffer.from(textFor(target.fd, text, options), "utf8"))
    case "Direct": {
      // No O_TRUNC surprises: a FIFO and a device have no content to cut, and
      // O_NOCTTY keeps a terminal from becoming ours.
      const handle = await fs.open(target.file, fsSync.constants.O_WRONLY | fsSync.constants.O_NOCTTY)
      try {
        await writeAll(handle.fd, Buffer.from(textFor(handle.fd, text, options), "utf8"))
      } finally {
        await handle.close()
      }
    }
  }
}
