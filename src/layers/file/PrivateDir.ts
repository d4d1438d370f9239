/**
 * The one place that looks at a runtime path before parley uses it: `lstat`
 * and the domain's rule (`domain/storage/PrivateDir`). A host makes its
 * socket's directories with {@link ensure} (each missing one created 0700;
 * each, new or old, checked); a client checks the socket and its
 * directories with {@link socketProblem} before it sends a byte. Nothing
 * here changes a path that fails: another user's directory is theirs, and a
 * `chmod` of a directory someone else may already have filled proves
 * nothing.
 *
 * Without `process.getuid` (Windows) there is no owner to compare: no check.
 *
 * @example
 * ```ts
 * import * as PrivateDir from "parley/layers/file/PrivateDir"
 * PrivateDir.ensure("/run/user/1000/parley") // throws NotPrivate when it is not ours alone
 * PrivateDir.socketProblem("/run/user/1000/parley/abc-17738399468.sock") // undefined | "absent" | NotPrivate
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { NotPrivate } from "../../domain/storage/NotPrivate.ts"
import * as ErrorCode from "../ErrorCode.ts"
import {
  ancestorProblem,
  ancestorsOf,
  chainOf,
  DIR_MODE,
  problemOf,
  type Seen,
  type Want
} from "../../domain/storage/PrivateDir.ts"

export { NotPrivate }

const kindOf = (stat: fs.Stats): Seen["kind"] =>
  stat.isSymbolicLink()
    ? "symlink"
    : stat.isDirectory()
      ? "directory"
      : stat.isSocket()
        ? "socket"
        : stat.isFile()
          ? "file"
          : "other"

/** What `lstat` sees at `file`; `undefined` when nothing is there. */
export const inspect = (file: string): Seen | undefined => {
  try {
    const stat = fs.lstatSync(file)
    return { kind: kindOf(stat), uid: stat.uid, mode: stat.mode & 0o7777 }
  } catch (error) {
    if (ErrorCode.of(error) === "ENOENT") return undefined
    throw error
  }
}

/** The refusal for `seen` at `file` (wanted as `want` by user `uid`), if it is one. */
const judged = (file: string, seen: Seen, want: Want, uid: number): NotPrivate | undefined => {
  const problem = problemOf(seen, want, uid)
  return problem === undefined
    ? undefined
    : new NotPrivate({ path: file, want, problem, owner: seen.uid, mode: seen.mode, uid })
}

/**
 * The refusal for the first ancestor of the temp-dir fallback `dir` that
 * another user could rename things in (`ancestorProblem`); `"absent"` when
 * one is missing.
 */
const ancestorsProblem = (dir: string, uid: number): NotPrivate | "absent" | undefined => {
  for (const a of ancestorsOf(dir, uid)) {
    const seen = inspect(a)
    if (seen === undefined) return "absent"
    const problem = ancestorProblem(seen, uid)
    if (problem !== undefined)
      return new NotPrivate({ path: a, want: "directory", problem, owner: seen.uid, mode: seen.mode, uid })
  }
  return undefined
}

/**
 * Makes `dir` (and, for the temp-dir fallback, its `parley-<uid>` parent)
 * when missing — mode 0700, so never more than that whatever the umask —
 * and checks each with `lstat`; for the fallback, every directory above it
 * too (`ancestorProblem`). Throws {@link NotPrivate} for one that fails, or
 * the system error when one cannot be made.
 */
export const ensure = (dir: string): void => {
  const uid = process.getuid?.()
  if (uid === undefined) return void fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE })
  const resolved = path.resolve(dir)
  const ancestors = ancestorsOf(resolved, uid)
  if (ancestors.length > 0) {
    fs.mkdirSync(ancestors.at(-1)!, { recursive: true, mode: DIR_MODE })
    const refused = ancestorsProblem(resolved, uid)
    if (refused !== undefined && refused !== "absent") throw refused
  }
  for (const d of chainOf(resolved, uid)) {
    let seen = inspect(d)
    if (seen === undefined) {
      fs.mkdirSync(path.dirname(d), { recursive: true, mode: DIR_MODE })
      try {
        // Not recursive: when someone else makes it first, this fails and what they made is judged below.
        fs.mkdirSync(d, { mode: DIR_MODE })
      } catch (error) {
        if (ErrorCode.of(error) !== "EEXIST") throw error
      }
      seen = inspect(d)
    }
    const refused = seen === undefined ? undefined : judged(d, seen, "directory", uid)
    if (refused !== undefined) throw refused
  }
}

/**
 * Whether a client may send to `socketPath`: `undefined` when its
 * directories are this user's alone and the socket is this user's;
 * {@link NotPrivate} naming the first that is not (for the temp-dir
 * fallback, or a directory above it that others may rename things in);
 * `"absent"` when one is missing (nothing to talk to — and a missing private
 * directory could be made by anyone before the connection, so do not
 * connect).
 */
export const socketProblem = (socketPath: string): NotPrivate | "absent" | undefined => {
  const uid = process.getuid?.()
  if (uid === undefined) return undefined
  const file = path.resolve(socketPath)
  const above = ancestorsProblem(path.dirname(file), uid)
  if (above !== undefined) return above
  for (const d of chainOf(path.dirname(file), uid)) {
    const seen = inspect(d)
    if (seen === undefined) return "absent"
    const refused = judged(d, seen, "directory", uid)
    if (refused !== undefined) return refused
  }
  const seen = inspect(file)
  return seen === undefined ? "absent" : judged(file, seen, "socket", uid)
}

/**
 * The modes of a storage directory and of its `conversations/` (when there),
 * through links (a `.jp` linked elsewhere is judged where it is); none for a
 * directory that cannot be read.
 */
export const storageModes = (storage: string): ReadonlyArray<number> => {
  const modes: Array<number> = []
  for (const dir of [storage, path.join(storage, "conversations")]) {
    try {
      modes.push(fs.statSync(dir).mode & 0o7777)
    } catch {
      break
    }
  }
  return modes
}
